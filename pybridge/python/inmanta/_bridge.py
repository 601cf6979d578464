"""The compiler's side of the bridge (private): imports each module's `plugins/` package as
`inmanta_plugins.<module>`, reports the plugins and resource classes found, and runs one plugin call or one
field mapper, turning every outcome into a tuple the C++ code reads (it never sees a Python exception except
the compiler's own retry signal, `_inm.Retry`)."""

import importlib.machinery
import importlib.util
import inspect
import os
import sys
import traceback
import types

import _inm
from inmanta import export, plugins, resources
from inmanta.execute.proxy import DictProxy, DynamicProxy, InstanceProxy, SequenceProxy, UnknownException
from inmanta.execute.util import NoneValue, Unknown

_module_dirs = {}
_plugins = []
_resources = []
_managers = []


class _PluginFinder:
    """Finds `inmanta_plugins.<module>` in the module's plugins/ directory (submodules use its __path__)."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        parts = fullname.split(".")
        if len(parts) != 2 or parts[0] != "inmanta_plugins":
            return None
        if parts[1] in _module_dirs:
            plugin_dir = _module_dirs[parts[1]]
        elif parts[1] == "std":  # our std's plugins are native; its Python helpers live in this package
            plugin_dir = __file__.rsplit("/", 1)[0] + "/_std_plugins"
        else:
            return None
        return importlib.util.spec_from_file_location(
            fullname, plugin_dir + "/__init__.py", submodule_search_locations=[plugin_dir]
        )


_OURS = __file__.rsplit("/", 1)[0] + "/"


def _format_exception(exc):
    """The traceback of module code: frames of the import machinery and of this package are left out."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith(_OURS) and not f.filename.startswith("<frozen")
              and "/importlib/" not in f.filename]
    text = "Traceback (most recent call last):\n" if frames else ""
    text += "".join(traceback.format_list(frames))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return text.rstrip()


def _plugin_module_names(name, plugin_dir):
    """Every Python file under plugins/ is loaded, as the reference does, not only what __init__ imports:
    the package first, then its files and subpackages in a stable (sorted) order."""
    out = ["inmanta_plugins." + name]
    for root, dirs, files in os.walk(plugin_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        rel = os.path.relpath(root, plugin_dir)
        parts = [] if rel == "." else rel.split(os.sep)
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            stem = f[:-3]
            mod = parts if stem == "__init__" else parts + [stem]
            if mod:
                out.append(".".join(["inmanta_plugins", name] + mod))
    return out


# Import names whose distribution (pip) name differs.
_DISTRIBUTIONS = {"yaml": "PyYAML", "jwt": "PyJWT", "OpenSSL": "pyOpenSSL", "dateutil": "python-dateutil",
                  "google": "protobuf", "grpc": "grpcio", "jq": "jq", "keystoneauth1": "keystoneauth1"}


def _requirement_hint(exc, plugin_dir):
    """How to fix a missing Python package of a module: the requirement line of its requirements.txt when one
    names it, the Debian package and the pip command (the registries here cannot install from PyPI)."""
    top = (exc.name or "").split(".")[0]
    if not top or top in ("inmanta", "inmanta_plugins"):
        return ""
    dist = _DISTRIBUTIONS.get(top, top)
    line = None
    req_file = os.path.join(os.path.dirname(plugin_dir), "requirements.txt")
    if os.path.isfile(req_file):
        with open(req_file) as f:
            for raw in f:
                req = raw.split("#")[0].strip()
                if req and req.replace("_", "-").lower().startswith((dist.lower(), top.lower())):
                    line = req
    debian = "python3-" + dist.lower().replace("_", "-").replace("python-", "")
    return ("\nThe module's Python requirement %s is not installed for the compiler's Python (%s): install the "
            "Debian package %s (apt-get install %s) or run `pip install '%s'` into a directory on PYTHONPATH."
            % ("'%s'" % line if line else "'%s'" % dist, sys.executable or "libpython", debian, debian,
               line or dist))


def load(modules):
    """modules: [(name, plugins_dir)]. Returns (plugins, resources, errors) as plain tuples."""
    if "inmanta_plugins" not in sys.modules:
        pkg = types.ModuleType("inmanta_plugins")
        pkg.__path__ = []
        sys.modules["inmanta_plugins"] = pkg
        sys.meta_path.insert(0, _PluginFinder)
    for name, plugin_dir in modules:
        _module_dirs[name] = plugin_dir
    errors = []
    for name, plugin_dir in modules:
        try:
            for fq_name in _plugin_module_names(name, plugin_dir):
                importlib.import_module(fq_name)
        except plugins.InvalidTypeAnnotation as e:
            errors.append((name, "InvalidTypeAnnotation", str(e), _location(e)))
        except plugins.UnannotatedArgument as e:
            errors.append((name, "UnannotatedArgument", "\n".join(e.args), ("", 0)))
        except ModuleNotFoundError as e:
            errors.append((name, "ModuleLoading", _format_exception(e) + _requirement_hint(e, plugin_dir),
                           _location(e)))
        except BaseException as e:  # noqa: B036 - any failure of module code is reported, never raised
            errors.append((name, "ModuleLoading", _format_exception(e), _location(e)))
    # Plugins that failed type parsing while being decorated were reported through the import error.
    out_plugins = []
    for p in plugins.registered[len(_plugins):]:
        _plugins.append(p)
        out_plugins.append((p.full_name, p.language_signature(), bool(p.allow_unknown), bool(p.deprecated),
                            p.file, p.line))
    out_resources = []
    for cls in resources.registered[len(_resources):]:
        _resources.append(cls)
        entity, agent, id_attribute = cls.__inmanta_resource__
        fields = resources.own_fields(cls)
        mapped = [f for f in fields if hasattr(cls, "get_" + f) or f in getattr(cls, "map", {})]
        out_resources.append((entity, agent, id_attribute, fields, mapped,
                              issubclass(cls, resources.PurgeableResource),
                              issubclass(cls, resources.ManagedResource)))
    out_managers = []
    for fn in export.dependency_managers[len(_managers):]:
        _managers.append(fn)
        out_managers.append("%s.%s" % (fn.__module__, fn.__qualname__))
    return out_plugins, out_resources, errors, out_managers


def run_dependency_manager(index, exported):
    """exported: [(id, type, agent, fields, instance handle)] of every exported resource. Calls dependency manager `index`
    with (config_model, resource_model: {Id: Resource}) and returns the requires edges it added as
    [(from, to)] indexes, or raises nothing: ("error", text) on failure."""
    objects = []
    by_id = {}
    for rid, entity_type, agent, fields, handle in exported:
        cls = next((c for c in resources.registered if c.__inmanta_resource__[0] == entity_type), resources.Resource)
        parsed = resources.Id.parse_id(rid)
        obj = cls.__new__(cls)
        resources.Resource.__init__(obj, parsed)
        for name, value in fields.items():
            setattr(obj, name, _plain(value))
        obj.model = InstanceProxy(handle)  # the instance it was exported from, as the reference sets it
        objects.append(obj)
        by_id[parsed] = obj
    try:
        _managers[index]({}, by_id)
    except BaseException as e:  # noqa: B036
        return ("error", _format_exception(e))
    position = {id(o): i for i, o in enumerate(objects)}
    id_position = {o.id: i for i, o in enumerate(objects)}
    edges = []
    for i, obj in enumerate(objects):
        for req in obj.requires:
            j = position.get(id(req))
            if j is None:
                j = id_position.get(req if isinstance(req, resources.Id) else resources.Id.parse_id(str(req)))
            if j is not None:
                edges.append((i, j))
    return ("ok", edges)


def _location(exc):
    """(file, line) of the innermost frame of module code, for the diagnostic."""
    ours = __file__.rsplit("/", 1)[0] + "/"
    tb = exc.__traceback__
    where = ("", 0)
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith(ours) and not filename.startswith("<"):
            where = (filename, tb.tb_lineno)
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename:
        where = (exc.filename, exc.lineno or 0)
    return where


def _arg(value):
    if isinstance(value, list):
        return SequenceProxy(value)
    if isinstance(value, dict):
        return DictProxy(value)
    return value


def _plain(value):
    if isinstance(value, NoneValue):
        return None
    if isinstance(value, (DynamicProxy, list, tuple, dict)) and not isinstance(value, InstanceProxy):
        return DynamicProxy.unwrap(value)
    return value


def call(index, args, given):
    """Runs plugin `index` with the bound model values. Returns one of
    ("ok", value) | ("argtype", param_index, type_text, param_name, constraint_error) |
    ("rettype", type_text, value, constraint_error) |
    ("explicit", message) | ("external", traceback_text)."""
    p = _plugins[index]
    positional = []
    keywords = {}
    # Parameters before *args go positionally while no earlier one was left to its default, so that the
    # values of *args land after them rather than colliding with a keyword of the same name.
    in_order = True
    context = plugins.Context(p.full_name) if p.context_param else None
    context_pending = context is not None

    def place_context():
        # The Context parameter goes positionally in its own place when everything before it does.
        nonlocal context_pending
        if context_pending and in_order and p.context_position == len(positional):
            positional.append(context)
            context_pending = False

    for i, (name, kind, has_default, ptype) in enumerate(p.params):
        value = args[i]
        place_context()
        if kind == inspect.Parameter.VAR_POSITIONAL:
            positional.extend(_arg(v) for v in value)
            continue
        if kind == inspect.Parameter.VAR_KEYWORD:
            keywords.update({k: _arg(v) for k, v in value.items()})
            continue
        if not given[i]:
            in_order = False
            continue
        plugins.last_failure[0] = None
        if not isinstance(value, Unknown) and not ptype.check(value):
            return ("argtype", i, ptype.text, name, plugins.last_failure[0])
        if kind == inspect.Parameter.POSITIONAL_ONLY or (kind == inspect.Parameter.POSITIONAL_OR_KEYWORD and in_order):
            positional.append(_arg(value))
        else:
            keywords[name] = _arg(value)
    place_context()
    if context_pending:
        keywords[p.context_param] = context
    try:
        result = p.function(*positional, **keywords)
    except UnknownException:
        return ("ok", Unknown(None))
    except plugins.PluginException as e:
        return ("explicit", str(e.message))
    except _inm.Retry:
        raise
    except BaseException as e:  # noqa: B036
        return ("external", _format_exception(e))
    plugins.last_failure[0] = None
    try:
        result = _plain(result)
        if isinstance(result, Unknown) or p.return_type.check(result):
            return ("ok", result)
    except RecursionError:
        return ("ok", result)  # a container that contains itself: the conversion reports it
    return ("rettype", p.return_type.text, result, plugins.last_failure[0])


_exporter = export.Exporter()


def map_field(index, field, handle):
    """Runs the mapper of `field` of resource class `index` on an instance. Returns ("ok", value) |
    ("ignore",) | ("error", text)."""
    cls = _resources[index]
    obj = InstanceProxy(handle)
    mapper = getattr(cls, "get_" + field, None) or cls.map[field]
    try:
        value = mapper(_exporter, obj)
    except UnknownException:
        return ("ok", Unknown(None))
    except resources.IgnoreResourceException:
        return ("ignore",)
    except _inm.Retry:
        return ("error", "attribute of %s read by the mapper of %s is not final" % (obj, field))
    except BaseException as e:  # noqa: B036
        return ("error", _format_exception(e))
    return ("ok", _plain(value))
