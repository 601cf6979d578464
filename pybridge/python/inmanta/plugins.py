"""The plugin API: the `@plugin` decorator (bare, with a name, or with allow_unknown/emits_statements),
`Context`, `PluginException`, and the model types a signature may use — language type strings ("string",
"int[]?", "mod::Entity") and Python annotations (str, list[str], Optional, Union, X | None, Annotated with
ModelType). Every decorated function is recorded in `registered`; the compiler reads that list after
importing a module's plugins and checks argument and return types through `PluginType.check`."""

import inspect
import os
import types
import typing
from collections.abc import Mapping, Sequence

import _inm
from inmanta.execute.proxy import DictProxy, InstanceProxy, SequenceProxy
from inmanta.execute.util import NoneValue, Unknown


class PluginException(Exception):
    """Raised on purpose by a plugin; the message is shown as the error (ExplicitPluginException)."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message


class InvalidTypeAnnotation(Exception):
    """A plugin's annotation names no model type."""


class UnannotatedArgument(Exception):
    """A plugin parameter without an annotation: args are (plugin full name, parameter name)."""


class ModelType:
    """`Annotated[str, ModelType["mod::typedef"]]`: the model type to check against."""

    def __init__(self, name):
        self.name = name

    def __class_getitem__(cls, name):
        return cls(name)


class Context:
    """Services of the compiler offered to a plugin that declares a `Context` parameter."""

    def __init__(self, plugin_name=""):
        self._plugin = plugin_name

    def get_compiler(self):
        return _Compiler()

    def get_resolver(self):
        return _Resolver()

    def get_data_dir(self):
        """`<project>/data/<namespace of the plugin>` (the reference's layout, e.g. data/ssh), created on demand."""
        namespace = self._plugin.rpartition("::")[0] if "::" in self._plugin else self._plugin
        path = os.path.join(_inm.project_dir(), "data", namespace) if namespace else os.path.join(
            _inm.project_dir(), "data")
        os.makedirs(path, exist_ok=True)
        return path

    def get_environment_id(self):
        env = _inm.server_environment()
        return env or os.environ.get("inmanta_environment") or os.environ.get("INMANTA_ENVIRONMENT")

    def get_type(self, name):
        return name

    def get_client(self):
        from inmanta import protocol

        return protocol.Client("compiler")

    def get_sync_client(self):
        from inmanta import protocol

        return protocol.SyncClient("compiler")

    def run_sync(self, function, timeout=5):
        from inmanta import protocol

        protocol._require_server()
        return protocol.run_sync(function)

    def get_queue_scheduler(self):
        return None


class _Compiler:
    def get_data_dir(self):
        return Context().get_data_dir()

    def get_plugins(self):
        """{full name: callable} of the Python plugins (std::template registers them as Jinja filters); a call
        passes the plugin's Context itself and skips the type checks of a model call."""
        return {p.full_name: _direct_call(p) for p in registered}


def _direct_call(p):
    def call(*args, **kwargs):
        args = list(args)
        if p.context_position is not None:
            args.insert(p.context_position, Context(p.full_name))
        elif p.context_param is not None:
            kwargs[p.context_param] = Context(p.full_name)
        return p.function(*args, **kwargs)

    return call


class _Resolved:
    """What `lookup` returns: the variable's value (converted as a plugin argument) through get_value()."""

    def __init__(self, value):
        self._value = value

    def get_value(self):
        return self._value


class _Resolver:
    def lookup(self, name):
        """A variable visible at the call site (std::template without kwargs). Not final yet: the plugin call is
        retried later (`_inm.Retry`); not visible: NotFoundException."""
        found = _inm.lookup(name)
        if found is None:
            from inmanta.ast import NotFoundException

            raise NotFoundException(None, name, "variable %s not found" % name)
        return _Resolved(found[0])


# ---------------------------------------------------------------- model types

_PRIMITIVES = ("string", "int", "float", "bool", "number", "list", "dict", "any", "expression")


class PluginType:
    """A checkable model type: `check(value)` on converted values; `text` as the reference prints it."""

    def __init__(self, text, check):
        self.text = text
        self.check = check


def _primitive_check(base):
    if base == "string":
        return lambda v: isinstance(v, str)
    if base == "int":
        return lambda v: isinstance(v, int) and not isinstance(v, bool)
    if base == "float":
        return lambda v: isinstance(v, float)
    if base == "number":
        return lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if base == "bool":
        return lambda v: isinstance(v, bool)
    if base == "list":
        return lambda v: isinstance(v, (list, SequenceProxy))
    if base == "dict":
        return lambda v: isinstance(v, (dict, DictProxy))
    return lambda v: True


# The compiler's text of the last failed typedef constraint check (the "caused by" of the type error).
last_failure = [None]


def _named_check(name):
    """An entity (instance of it or a subtype) or a typedef (its base type and constraint)."""

    def check(v):
        kind = _inm.type_kind(name)
        if kind == "entity":
            return isinstance(v, InstanceProxy) and _inm.is_subtype(v._handle, name)
        if kind.startswith("typedef:"):
            if not _primitive_check(kind[len("typedef:"):])(v):
                return False
            error = _inm.typedef_ok(name, v)
            if error:
                last_failure[0] = error
            return not error
        return True

    return check


def parse_type_string(text):
    """Language notation: base [ '[]' ] [ '?' ]."""
    t = text.strip()
    if t in ("null", "None"):
        return PluginType("null", lambda v: v is None)
    nullable = t.endswith("?")
    if nullable:
        t = t[:-1].strip()
    is_list = t.endswith("[]")
    if is_list:
        t = t[:-2].strip()
    if t in _PRIMITIVES:
        base = _primitive_check(t)
    elif "::" in t or t.isidentifier():
        base = _named_check(t)
    else:
        raise InvalidTypeAnnotation("invalid type annotation %r" % text)
    check = base
    if is_list:
        el = base
        check = lambda v: isinstance(v, (list, SequenceProxy)) and all(  # noqa: E731
            isinstance(i, Unknown) or el(i) for i in (v._items if isinstance(v, SequenceProxy) else v)
        )
    if nullable:
        inner = check
        check = lambda v: v is None or inner(v)  # noqa: E731
    return PluginType(text.strip(), check)


def _union(parts):
    checks = [p.check for p in parts]
    names = [p.text for p in parts]
    return PluginType("Union[%s]" % ", ".join(names), lambda v: any(c(v) for c in checks))


def to_plugin_type(annotation, where):
    """Python annotation or type string -> PluginType (InvalidTypeAnnotation if none)."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any or annotation is object:
        return PluginType("any", lambda v: True)
    if annotation is None or annotation is type(None):
        return PluginType("null", lambda v: v is None)
    if isinstance(annotation, str):
        return parse_type_string(annotation)
    if isinstance(annotation, ModelType):
        return parse_type_string(annotation.name)
    if annotation is typing.Union or annotation is typing.Optional:
        raise InvalidTypeAnnotation("invalid type annotation %r for %s: a bare Union names no type" % (annotation, where))
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        for meta in args[1:]:
            if isinstance(meta, ModelType):
                return parse_type_string(meta.name)
        return to_plugin_type(args[0], where)
    if origin is typing.Union or (hasattr(types, "UnionType") and isinstance(annotation, types.UnionType)):
        parts = [to_plugin_type(a, where) for a in args]
        non_null = [p for p in parts if p.text != "null"]
        if len(parts) == 1:
            return parts[0]
        if len(non_null) < len(parts):
            inner = non_null[0] if len(non_null) == 1 else _union(non_null)
            return PluginType(inner.text + "?", lambda v, c=inner.check: v is None or c(v))
        return _union(parts)
    simple = {str: "string", int: "int", float: "float", bool: "bool", list: "list", dict: "dict"}
    if annotation in simple:
        return parse_type_string(simple[annotation])
    if origin in (list, Sequence, typing.List) or annotation in (Sequence, typing.List):
        if args:
            el = to_plugin_type(args[0], where)
            return PluginType(
                el.text + "[]",
                lambda v: isinstance(v, (list, SequenceProxy))
                and all(isinstance(i, Unknown) or el.check(i) for i in (v._items if isinstance(v, SequenceProxy) else v)),
            )
        return parse_type_string("list")
    if origin in (dict, Mapping, typing.Dict) or annotation in (Mapping, typing.Dict):
        return parse_type_string("dict")
    if inspect.isclass(annotation) and issubclass(annotation, Context):
        return PluginType("Context", lambda v: True)
    raise InvalidTypeAnnotation("invalid type annotation %r for %s: it names no model type" % (annotation, where))


# ---------------------------------------------------------------- the decorator


def _is_language_type(text):
    t = text.strip().rstrip("?").strip()
    if t.endswith("[]"):
        t = t[:-2].strip()
    return t in _PRIMITIVES or t in ("null", "None") or "::" in t


def _annotation(raw, evaluated):
    """A string in the language's notation stays a string ("any" is not Python's any()); other strings
    (postponed Python annotations) are used as Python evaluated them."""
    if isinstance(raw, str) and (_is_language_type(raw) or evaluated is None):
        return raw
    return evaluated if evaluated is not None else raw


def _def_line(code):
    """The line of the `def` itself (co_firstlineno is the first decorator's line)."""
    import linecache

    line = code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(code.co_filename, n).lstrip()
        if text.startswith("def ") or text.startswith("async def "):
            return n
        if not text:
            break
    return line

registered = []


class Plugin:
    """One registered plugin: its model namespace and name, its parameters and types."""

    def __init__(self, function, name=None, allow_unknown=False, emits_statements=False, deprecated=False,
                 replaced_by=None):
        self.function = function
        self.name = name or function.__name__
        self.allow_unknown = allow_unknown
        self.deprecated = deprecated
        self.replaced_by = replaced_by
        module = function.__module__
        parts = module.split(".")
        if parts[0] != "inmanta_plugins" or len(parts) < 2:
            raise InvalidTypeAnnotation("plugin %s is not defined in an inmanta_plugins package" % self.name)
        self.namespace = "::".join(parts[1:])
        self.full_name = self.namespace + "::" + self.name
        code = function.__code__
        self.file = code.co_filename
        self.line = _def_line(code)
        self.signature = inspect.signature(function)
        # Every parameter needs a type; checked in the reference's order: *args, **kwargs, then the others.
        order = {inspect.Parameter.VAR_POSITIONAL: 0, inspect.Parameter.VAR_KEYWORD: 1}
        for p in sorted(self.signature.parameters.values(), key=lambda p: order.get(p.kind, 2)):
            if p.annotation is inspect.Parameter.empty:
                raise UnannotatedArgument(self.full_name, p.name)
        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except Exception:
            hints = {}
        self.context_param = None
        self.context_position = None  # its index among the positional parameters, if it is one
        self.params = []  # (name, kind, has_default, PluginType)
        for position, p in enumerate(self.signature.parameters.values()):
            ann = _annotation(p.annotation, hints.get(p.name))
            if inspect.isclass(ann) and issubclass(ann, Context):
                self.context_param = p.name
                if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
                    self.context_position = position
                continue
            where = "argument %s of plugin %s" % (p.name, self.full_name)
            self.params.append((p.name, p.kind, p.default is not inspect.Parameter.empty, to_plugin_type(ann, where)))
        ret = _annotation(self.signature.return_annotation, hints.get("return"))
        self.return_type = to_plugin_type(ret, "the return value of plugin " + self.full_name)

    def language_signature(self):
        """The signature in the language's notation for the compiler (types are checked here, so `any`)."""
        out = []
        star = False
        for name, kind, has_default, _ in self.params:
            if kind == inspect.Parameter.VAR_POSITIONAL:
                out.append("*%s: any" % name)
                star = True
            elif kind == inspect.Parameter.VAR_KEYWORD:
                out.append("**%s: any" % name)
            else:
                if kind == inspect.Parameter.KEYWORD_ONLY and not star:
                    out.append("*")
                    star = True
                out.append("%s: any%s" % (name, " = null" if has_default else ""))
        return "%s(%s) -> any" % (self.full_name, ", ".join(out))

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)


def plugin(function=None, commands=None, emits_statements=False, allow_unknown=False, name=None, **kwargs):
    """`@plugin`, `@plugin("name")`, `@plugin(allow_unknown=True)`."""

    def register(fn, plugin_name=None):
        p = Plugin(fn, name=plugin_name or name, allow_unknown=allow_unknown, emits_statements=emits_statements)
        registered.append(p)
        fn.__inmanta_plugin__ = p
        return fn

    if function is None:
        return lambda fn: register(fn)
    if isinstance(function, str):
        return lambda fn: register(fn, function)
    return register(function)


def deprecated(function=None, *, replaced_by=None, **kwargs):
    """`@deprecated` on a plugin: marks it deprecated (a warning when called)."""

    def mark(fn):
        p = getattr(fn, "__inmanta_plugin__", None)
        if p is not None:
            p.deprecated = True
            p.replaced_by = replaced_by
        return fn

    if function is None:
        return mark
    return mark(function)


def allow_reference_values(function=None, **kwargs):
    """The reference marks plugins that accept reference values; references are not supported here, so this
    only returns the function."""
    if function is None:
        return lambda f: f
    return function
