"""The executor's side of the bridge (private): the `@provider` classes of the imported modules, a fresh handler
per action, the Python HandlerContext of an action (backed by the C++ context through a capsule), and one handler
method call whose outcome is a tagged tuple the C++ handler turns into the framework's signals (ResourcePurged,
SkipResource, …) or a failure carrying the Python traceback."""

import json
import traceback

from inmanta import resources
from inmanta.agent import handler
from inmanta.execute.proxy import DynamicProxy

_classes = []


def providers():
    """[(resource_type, index, is_crud)] of every registered provider (registration order: the last wins)."""
    out = []
    for resource_type, cls in handler._providers.items():
        if cls not in _classes:
            _classes.append(cls)
        out.append((resource_type, _classes.index(cls), issubclass(cls, handler.CRUDHandler)))
    return out


def new(index):
    cls = _classes[index]
    try:
        return cls(None, handler.LocalIO())
    except TypeError:
        return cls()


def context(capsule, dry_run):
    return handler.HandlerContext(dry_run=dry_run, _capsule=capsule)


def _resource(resource_json):
    data = json.loads(resource_json)
    rid = resources.Id.parse_id(data["id"])
    cls = next((c for c in resources.registered if c.__inmanta_resource__[0] == rid.entity_type), resources.Resource)
    obj = cls.__new__(cls)
    resources.Resource.__init__(obj, rid)
    for name, value in data["attributes"].items():
        setattr(obj, name, value)
    return obj


def _attributes(obj, names):
    return json.dumps({n: DynamicProxy.unwrap(getattr(obj, n, None)) for n in names}, default=str)


def call(h, method, ctx, resource_json, extra_json):
    """Runs h.<method>. Returns ("ok", json) | ("purged",) | ("skip", msg) | ("skipdep", msg) |
    ("error", text with the Python traceback)."""
    try:
        if method in ("can_reload", "close"):
            return ("ok", json.dumps(getattr(h, method)()))
        resource = _resource(resource_json)
        extra = json.loads(extra_json) if extra_json else None
        if method == "read_resource":
            names = list(json.loads(resource_json)["attributes"])
            h.read_resource(ctx, resource)
            return ("ok", _attributes(resource, names))
        if method == "update_resource":
            result = h.update_resource(ctx, extra, resource)
        elif method == "execute":
            result = h.execute(ctx, resource, bool(extra))
        else:
            result = getattr(h, method)(ctx, resource)
        return ("ok", json.dumps(result if method == "facts" else None, default=str))
    except handler.ResourcePurged:
        return ("purged",)
    except handler.SkipResourceForDependencies as e:
        return ("skipdep", str(e))
    except handler.SkipResource as e:
        return ("skip", str(e))
    except BaseException as e:  # noqa: B036 - every failure of module code becomes a failed action
        return ("error", "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip())
