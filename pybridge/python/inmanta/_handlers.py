"""The executor's side of the bridge (private): the `@provider` classes of the imported modules, a fresh handler
per action
(chosen among a type's providers by `available(resource)`), the Python HandlerContext of an action (backed by the C++ context through a capsule), and one handler
method call whose outcome is a tagged tuple the C++ handler turns into the framework's signals (ResourcePurged,
SkipResource, …) or a failure carrying the Python traceback."""

import json
import os
import traceback

import _inm

from inmanta import resources
from inmanta.agent import handler
from inmanta.execute.proxy import DynamicProxy

_groups = []  # [(resource_type, [provider classes in registration order])]


def providers():
    """[(resource_type, index, all_crud)]: one entry per resource type with providers; the provider of an
    action is chosen among the type's classes when the handler is made (`new`)."""
    out = []
    for resource_type, by_name in handler._providers.items():
        classes = list(by_name.values())
        entry = next((g for g in _groups if g[0] == resource_type), None)
        if entry is None:
            entry = (resource_type, classes)
            _groups.append(entry)
        else:
            entry[1][:] = classes
        index = _groups.index(entry)
        out.append((resource_type, index, all(issubclass(c, handler.CRUDHandler) for c in classes)))
    return out


class _Agent:
    """What `self._agent` offers handlers: the agent's name, environment and URI."""

    def __init__(self, name, capsule):
        self.name = name
        self.agent_name = name
        self.environment = os.environ.get("INMANTA_ENVIRONMENT") or None
        self.uri = "local:"
        self._capsule = capsule
        self.sessionid = None

    def __repr__(self):
        return "AgentInstance(%s)" % self.name


def _io_of(capsule, agent):
    """LocalIO, or an SshIO over the executor's master for an ssh:// agent (connected on first use)."""
    uri = _inm.handler_io(capsule)
    if uri is None:
        return handler.LocalIO("local:", {})
    from inmanta.agent.io import SshIO, parse_agent_uri
    agent.uri = uri
    return SshIO(uri, parse_agent_uri(uri)[1], lambda: _inm.handler_ssh(capsule))


def new(index, capsule, resource_json, native_name=""):
    """("ok", handler) for the provider of the group `index` whose available(resource) holds; none or several
    available is an error naming the providers. `native_name`: the type also has a native handler, a provider of
    that name that is always available (unless a Python provider of the same name replaced it): ("native",)
    when it is the one chosen."""
    resource_type, classes = _groups[index]
    if any(c.__inmanta_provider__[1] == native_name for c in classes):
        native_name = ""
    try:
        agent = _Agent(_inm.handler_agent(capsule), capsule)
        io = _io_of(capsule, agent)
        data = json.loads(resource_json)
        resource = _resource(resource_json) if data else None
        chosen = []
        for cls in classes:
            h = cls(agent, io)
            h._capsule = capsule
            if resource is None or h.available(resource):
                chosen.append(h)
            if resource is None:
                break
        names = ", ".join([native_name] * bool(native_name) + [c.__inmanta_provider__[1] for c in classes])
        if native_name and resource is not None:
            if not chosen:
                return ("native",)
            raise Exception("More than one handler selected for resource %s (available: %s)" % (
                data.get("id"), ", ".join([native_name] + [h.__inmanta_provider__[1] for h in chosen])))
        if not chosen:
            raise Exception("No resource handler available for resource %s of type %s (providers tried: %s; none "
                            "is available)" % (data.get("id"), resource_type, names))
        if len(chosen) > 1:
            raise Exception("More than one handler selected for resource %s (available: %s)" % (
                data.get("id"), ", ".join(h.__inmanta_provider__[1] for h in chosen)))
        return ("ok", chosen[0])
    except BaseException as e:  # noqa: B036 - reported as the action's failure
        return _error(e)


def _error(e):
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__)).rstrip()
    return ("error", type(e).__name__, str(e), text)


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
    ("error", exception type name, message, text with the Python traceback)."""
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
        return _error(e)
