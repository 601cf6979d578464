"""`inmanta.util`: the helpers modules import from the reference's util package (`hash_file`,
`api_boundary_json_encoder`, `get_compiler_version`, `groupby`, `ensure_directory_exist`). Any other name raises
an AttributeError saying it is not supported here."""

import datetime
import enum
import hashlib
import itertools
import json
import os
import uuid


def hash_file(content):
    """sha1 hex of bytes (the file store's key)."""
    return hashlib.sha1(content if isinstance(content, bytes) else content.encode("utf-8")).hexdigest()


def api_boundary_json_encoder(o):
    """`default=` for json.dumps: the reference's encoding of values crossing the API."""
    from inmanta.execute.proxy import DynamicProxy

    if isinstance(o, DynamicProxy):
        return DynamicProxy.unwrap(o)
    if isinstance(o, uuid.UUID):
        return str(o)
    if isinstance(o, datetime.datetime):
        return o.astimezone(datetime.timezone.utc).isoformat(timespec="microseconds")
    if isinstance(o, enum.Enum):
        return o.value
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "model_dump"):
        return o.model_dump()
    raise TypeError("%s is not JSON serializable" % type(o).__name__)


def json_encode(value):
    return json.dumps(value, default=api_boundary_json_encoder)


def get_compiler_version():
    return "2024.3"


def groupby(iterable, key):
    return itertools.groupby(sorted(iterable, key=key), key)


def ensure_directory_exist(directory, *subdirs):
    path = os.path.join(directory, *subdirs)
    os.makedirs(path, exist_ok=True)
    return path


def __getattr__(name):
    raise AttributeError("inmanta.util.%s is not supported here (only the helpers module code uses are provided)"
                         % name)
