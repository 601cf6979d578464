"""`inmanta.validation_type`: `validate_type(fq_type_name, value, parameters)` and `regex_string(regex)` as the
reference offers them (types `pydantic.*`, `datetime.*`, `ipaddress.*`, `uuid.*`, validated by pydantic 2). The
validation needs pydantic in the interpreter the compiler embeds: without it, the call raises an ImportError
naming the Debian package (python3-pydantic)."""

import importlib
import inspect
import re
from typing import Annotated


def _pydantic():
    try:
        import pydantic

        return pydantic
    except ImportError:
        raise ImportError("inmanta.validation_type needs pydantic 2, which is not importable by the embedded "
                          "Python: install the Debian package python3-pydantic (or put pydantic on PYTHONPATH)") from None


class Regex:
    """An Annotated marker: the string must match `regex` (Python `re.match`)."""

    def __init__(self, regex):
        self.regex = regex
        self._compiled = re.compile(regex)

    def __get_pydantic_core_schema__(self, source, handler):
        from pydantic_core import core_schema

        def check(value):
            if not self._compiled.match(value):
                raise ValueError("String should match pattern '%s'" % self.regex)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))


def regex_string(regex):
    return Annotated[str, Regex(regex)]


def parametrize_type(base_type, validation_parameters=None, *, type_name=None):
    pydantic = _pydantic()
    params = dict(validation_parameters or {})
    extra = []
    if base_type is pydantic.constr and params.get("regex") is not None:
        extra.append(Regex(str(params.pop("regex"))))
    params.pop("regex", None) if base_type is pydantic.constr else None
    if inspect.isroutine(base_type):
        result = base_type(**params)
    elif params:
        raise ValueError("got validation parameters %s but %s does not accept parameters"
                         % (params, type_name or repr(base_type)))
    else:
        result = base_type
    return Annotated[(result, *extra)] if extra else result


def validate_type(fq_type_name, value, validation_parameters=None):
    if not fq_type_name.startswith(("pydantic.", "datetime.", "ipaddress.", "uuid.")):
        raise ValueError("Unknown fq_type_name: %s" % fq_type_name)
    pydantic = _pydantic()
    if hasattr(validation_parameters, "_unwrap"):
        validation_parameters = validation_parameters._unwrap()
    module_name, type_name = fq_type_name.split(".", 1)
    requested = getattr(importlib.import_module(module_name), type_name)
    adapter = pydantic.TypeAdapter(parametrize_type(requested, validation_parameters, type_name=fq_type_name))
    adapter.validate_python(value)
