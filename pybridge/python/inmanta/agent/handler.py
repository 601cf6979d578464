"""The handler API modules import: `@provider`, `CRUDHandler`, `ResourceHandler`, `HandlerContext`, `cache`,
`ResourcePurged`, `SkipResource`, `Commander`. Names and defaults follow the reference (inmanta-core
`inmanta.agent.handler`): `list_changes` = `check_resource` + `_diff` over the resource class's merged fields,
`check_facts` = pre/facts/post, `get_file`/`stat_file`/`upload_file` reach the server's file store (in an executor
through its file frames). Several providers of one type are kept; the executor uses the one whose
`available(resource)` holds (docs/pybridge.md)."""

import json
import logging
import os
import subprocess
import threading
import time
import uuid

import _inm
from inmanta import const
from inmanta.agent.io.local import IOBase, LocalIO  # noqa: F401 - handlers import LocalIO from here too


class SkipResource(Exception):
    pass


class SkipResourceForDependencies(SkipResource):
    pass


class ResourcePurged(Exception):
    pass


class InvalidOperation(Exception):
    pass


class HandlerNotAvailableException(Exception):
    pass


class AttributeStateChange(dict):
    """One change: {"current": …, "desired": …} (a dict here, attribute access for the reference's model)."""

    def __init__(self, current=None, desired=None):
        super().__init__(current=current, desired=desired)

    @property
    def current(self):
        return self["current"]

    @property
    def desired(self):
        return self["desired"]


class LoggerABC:
    def debug(self, msg, *args, **kwargs):
        self._log("DEBUG", msg, args, kwargs)

    def info(self, msg, *args, **kwargs):
        self._log("INFO", msg, args, kwargs)

    def warning(self, msg, *args, **kwargs):
        self._log("WARNING", msg, args, kwargs)

    def error(self, msg, *args, **kwargs):
        self._log("ERROR", msg, args, kwargs)

    def critical(self, msg, *args, **kwargs):
        self._log("CRITICAL", msg, args, kwargs)

    def exception(self, msg, *args, **kwargs):
        self._log("ERROR", msg, args, kwargs)

    def _log(self, level, msg, args, kwargs):
        raise NotImplementedError


class PythonLogger(LoggerABC):
    def __init__(self, logger=None):
        self._logger = logger or logging.getLogger("inmanta.handler")

    def _log(self, level, msg, args, kwargs):
        self._logger.log(getattr(logging, level), msg % (kwargs or args) if (kwargs or args) else msg)


class HandlerContext(LoggerABC):
    """Per-resource state of one handler action: status, change, changes, logs with kwargs, facts and a scratch
    store. In an executor it is backed by the C++ HandlerContext of the action (`_inm.ctx_*`), so everything a
    Python handler reports ends up in the action's result exactly like a C++ handler's; standalone (tests of
    module code) it keeps the data itself."""

    def __init__(self, resource=None, dry_run=False, action_id=None, logger=None, _capsule=None):
        self._resource = resource
        self._action_id = action_id if action_id is not None else uuid.uuid4()
        self.logger = logger if logger is not None else logging.getLogger("inmanta.agent.handler")
        self._dry_run = dry_run
        self._capsule = _capsule
        self._changes = {}
        self.logs = []
        self._status = None
        self._change = const.Change.nochange
        self._scratch = {}
        self.facts = []

    def is_dry_run(self):
        return self._dry_run

    @property
    def action_id(self):
        return self._action_id

    def set_status(self, status):
        name = status.value if hasattr(status, "value") else str(status)
        if self._capsule is not None:
            _inm.ctx_status(self._capsule, name)
        self._status = name

    def set_resource_state(self, state):
        self.set_status(state)

    @property
    def status(self):
        return self._status

    def _set_change(self, change):
        if self._capsule is not None:
            _inm.ctx_change(self._capsule, change.value)
        elif self._change != const.Change.nochange:
            raise InvalidOperation("the change of this action is already set")
        self._change = change

    def set_created(self):
        self._set_change(const.Change.created)

    def set_updated(self):
        self._set_change(const.Change.updated)

    def set_purged(self):
        self._set_change(const.Change.purged)

    @property
    def change(self):
        return self._change

    @property
    def changed(self):
        return self._change != const.Change.nochange

    def add_change(self, name, desired, current=None):
        self.update_changes({name: {"current": current, "desired": desired}})

    def add_changes(self, **kwargs):
        self.update_changes({k: {"current": None, "desired": v} for k, v in kwargs.items()})

    def fields_updated(self, fields):
        """Reports fields as changed without their values (a change with current and desired None)."""
        if isinstance(fields, str):
            fields = [fields]
        self.update_changes({f: {"current": None, "desired": None} for f in fields if f not in self._changes})

    def update_changes(self, changes):
        if not changes:
            return
        normal = {}
        for name, change in changes.items():
            if isinstance(change, dict):
                normal[name] = {"current": change.get("current"), "desired": change.get("desired")}
            elif isinstance(change, tuple):
                if len(change) != 2:
                    raise InvalidOperation("Reported changes for %s not valid. Tuple changes should contain 2 "
                                           "element." % name)
                normal[name] = {"current": change[0], "desired": change[1]}
            else:
                raise InvalidOperation("Reported changes for %s not in a type that is recognized." % name)
        changes = normal
        if self._capsule is not None:
            _inm.ctx_changes(self._capsule, json.dumps(changes, default=str))
        self._changes.update(changes)

    @property
    def changes(self):
        return self._changes

    def set_fact(self, fact_id, value, expires=True):
        if self._capsule is not None:
            _inm.ctx_fact(self._capsule, str(fact_id), str(value), bool(expires))
        self.facts.append({"id": fact_id, "value": value})

    def set(self, key, value):
        self._scratch[key] = value

    def get(self, key):
        return self._scratch[key]

    def contains(self, key):
        return key in self._scratch

    def _log(self, level, msg, args, kwargs):
        kwargs.pop("exc_info", None)
        if self._capsule is not None:
            _inm.ctx_log(self._capsule, level, str(msg), json.dumps(kwargs, default=repr))
        try:
            text = msg % kwargs if kwargs else (msg % args if args else msg)
        except Exception:
            text = msg
        self.logs.append({"level": level, "msg": text, "kwargs": kwargs})

    def exception(self, msg, *args, exc_info=True, **kwargs):
        import traceback

        kwargs.setdefault("traceback", traceback.format_exc())
        self._log("ERROR", msg, args, kwargs)


_providers = {}  # resource type -> {provider name: class}, in registration order


def provider(resource_type, name):
    """Registers a handler class for a resource type under `name`; a later class of the same type and name
    replaces the earlier one, other names are kept side by side (chosen by `available`)."""

    def register(cls):
        Commander.add_provider(resource_type, name, cls)
        cls.__inmanta_provider__ = (resource_type, name)
        return cls

    return register


class Commander:
    """The provider registry (the reference's class methods)."""

    @classmethod
    def get_handlers(cls):
        return _providers

    @classmethod
    def reset(cls):
        _providers.clear()

    @classmethod
    def close(cls):
        pass

    @classmethod
    def add_provider(cls, resource, name, provider):
        by_name = _providers.setdefault(resource, {})
        by_name.pop(name, None)
        by_name[name] = provider

    @classmethod
    def get_providers(cls):
        for resource_type, by_name in _providers.items():
            for klass in by_name.values():
                yield resource_type, klass

    @classmethod
    def get_provider_class(cls, resource_type, name):
        return _providers.get(resource_type, {}).get(name)

    @classmethod
    def get_provider(cls, cache, agent, resource):
        """A handler instance for `resource`: the one provider whose available(resource) holds."""
        resource_type = resource.id.get_entity_type()
        io = LocalIO("local:", {})
        chosen = []
        for klass in _providers.get(resource_type, {}).values():
            h = klass(agent, io)
            if h.available(resource):
                chosen.append(h)
            else:
                h.close()
        if len(chosen) > 1:
            raise Exception("More than one handler selected for resource %s" % resource.id)
        if not chosen:
            raise Exception("No resource handler registered for resource of type %s" % resource_type)
        return chosen[0]


class _CacheEntry:
    __slots__ = ("value", "created", "accessed", "timeout", "on_delete")


_cache_lock = threading.RLock()
_cache_store = {}


def _cache_cleanup(now):
    for key in [k for k, e in _cache_store.items() if now - e.created > e.timeout]:
        entry = _cache_store.pop(key)
        if entry.on_delete is not None:
            try:
                entry.on_delete(entry.value)
            except Exception:
                logging.getLogger("inmanta.handler").exception("call_on_delete of a cached value failed")


def cache(func=None, ignore=(), timeout=5000, for_version=True, cache_none=True, cacheNone=True,
          call_on_delete=None, evict_after_creation=0.0):
    """Memoises a handler method on its arguments (minus `ignore`), for `timeout` seconds, in the executor
    process (one per agent and code version, so entries are per version like the reference's for_version);
    `call_on_delete` runs when an entry expires; `cache_none=False` does not store None."""
    keep_none = cache_none and cacheNone
    lifetime = evict_after_creation or timeout

    def decorate(f):
        names = f.__code__.co_varnames[1:f.__code__.co_argcount]

        def wrapper(self, *args, **kwargs):
            bound = dict(zip(names, args))
            bound.update(kwargs)
            key = (f.__qualname__,) + tuple(
                (k, str(getattr(v, "id", v))) for k, v in sorted(bound.items()) if k not in ignore)
            now = time.monotonic()
            with _cache_lock:
                _cache_cleanup(now)
                entry = _cache_store.get(key)
                if entry is not None:
                    entry.accessed = now
                    return entry.value
            value = f(self, *args, **kwargs)
            if value is None and not keep_none:
                return value
            entry = _CacheEntry()
            entry.value, entry.created, entry.accessed = value, now, now
            entry.timeout, entry.on_delete = lifetime, call_on_delete
            with _cache_lock:
                _cache_store[key] = entry
            return value

        wrapper.__name__ = f.__name__
        wrapper.__qualname__ = f.__qualname__
        wrapper.__doc__ = f.__doc__
        return wrapper

    if func is None:
        return decorate
    return decorate(func)


class HandlerAPI:
    def __init__(self, agent=None, io=None):
        self._agent = agent
        self._io = io if io is not None else LocalIO("local:", {})
        self._client = None
        self._capsule = None  # the executor's handler (file frames), set when the executor makes the handler

    def close(self):
        pass

    def set_cache(self, cache):
        self.cache = cache

    def available(self, resource):
        return True

    def pre(self, ctx, resource):
        pass

    def post(self, ctx, resource):
        pass

    def can_reload(self):
        return False

    def do_reload(self, ctx, resource):
        pass

    def facts(self, ctx, resource):
        return {}

    def check_facts(self, ctx, resource):
        facts = {}
        try:
            self.pre(ctx, resource)
            facts = self.facts(ctx, resource)
        finally:
            try:
                self.post(ctx, resource)
            except Exception as e:
                ctx.exception("An error occurred after getting facts about %(resource_id)s (exception: "
                              "%(exception)s)", resource_id=str(resource.id),
                              exception="%s('%s')" % (type(e).__name__, e))
        return facts

    def deploy(self, ctx, resource, requires=None):
        """Executes the resource (the executor applies the dependency gate and reload itself)."""
        self.execute(ctx, resource, ctx.is_dry_run())

    def run_sync(self, func):
        """Runs `func()`; an awaitable result (a client call) is awaited to its value."""
        result = func()
        if hasattr(result, "__await__"):
            import asyncio

            return asyncio.run(_await(result))
        return result

    def get_client(self):
        """A client for the server as the handler's agent: file calls go through the executor's file frames;
        other endpoints are not reachable from an executor and raise a clear error."""
        if self._client is None:
            self._client = _ExecutorClient(self)
        return self._client

    def get_file(self, hash_id):
        """The bytes stored on the server under `hash_id`, None when it has none (sha1 verified)."""
        if self._capsule is None:
            raise NotImplementedError("get_file: this handler is not running in an executor (no file source)")
        content = _inm.handler_get_file(self._capsule, hash_id)
        if content is None:
            return None
        import hashlib

        actual = hashlib.sha1(content).hexdigest()
        if actual != hash_id:
            raise Exception("File hash verification failed, expected: %s but got %s" % (hash_id, actual))
        return content

    def stat_file(self, hash_id):
        """Whether the server stores a file under `hash_id`."""
        if self._capsule is None:
            raise NotImplementedError("stat_file: this handler is not running in an executor (no file source)")
        return _inm.handler_get_file(self._capsule, hash_id) is not None

    def upload_file(self, hash_id, content):
        """Stores `content` on the server under `hash_id`."""
        if self._capsule is None:
            raise NotImplementedError("upload_file: this handler is not running in an executor (no file source)")
        try:
            _inm.handler_put_file(self._capsule, hash_id, content if isinstance(content, bytes) else content.encode())
        except Exception:
            raise Exception("Unable to upload file to the server.") from None


async def _await(awaitable):
    return await awaitable


class _ExecutorClient:
    """`get_client()` in an executor: the file endpoints (get_file, stat_file, upload_file) as awaitable calls
    returning a protocol Result; any other endpoint raises NotImplementedError naming it."""

    def __init__(self, handler):
        self._handler = handler

    def __getattr__(self, name):
        from inmanta.protocol.common import Result

        h = self._handler

        async def get_file(id):
            content = h.get_file(id)
            if content is None:
                return Result(404, {"message": "file %s not found" % id})
            import base64

            return Result(200, {"content": base64.b64encode(content).decode("ascii")})

        async def stat_file(id):
            return Result(200 if h.stat_file(id) else 404, {})

        async def upload_file(id, content):
            import base64

            h.upload_file(id, base64.b64decode(content))
            return Result(200, {})

        calls = {"get_file": get_file, "stat_file": stat_file, "upload_file": upload_file}
        if name in calls:
            return calls[name]
        if name.startswith("_"):
            raise AttributeError(name)

        def unsupported(*args, **kwargs):
            raise NotImplementedError(
                "get_client().%s: handlers in this executor reach only the server's file store (get_file, "
                "stat_file, upload_file); %s is not supported here" % (name, name))

        return unsupported


class ResourceHandler(HandlerAPI):
    def _diff(self, current, desired):
        """{field: {"current", "desired"}} for the fields of the resource class (merged over its bases) that
        differ and are desired (a desired None is not a change)."""
        changes = {}
        for field in _fields_of(type(current)):
            a = getattr(current, field, None)
            b = getattr(desired, field, None)
            if a != b and b is not None:
                changes[field] = {"current": a, "desired": b}
        return changes

    def check_resource(self, ctx, resource):
        raise NotImplementedError("%s implements neither check_resource nor list_changes" % type(self).__name__)

    def list_changes(self, ctx, resource):
        current = self.check_resource(ctx, resource)
        return self._diff(current, resource)

    def do_changes(self, ctx, resource, changes):
        raise NotImplementedError("%s does not implement do_changes" % type(self).__name__)

    def execute(self, ctx, resource, dry_run=False):
        """check/list/do: the changes list_changes finds are recorded; do_changes runs unless dry run."""
        self.pre(ctx, resource)
        try:
            changes = self.list_changes(ctx, resource)
            ctx.update_changes(changes)
            if dry_run:
                ctx.set_status(const.ResourceState.dry)
                return
            self.do_changes(ctx, resource, changes)
        finally:
            self.post(ctx, resource)


def _fields_of(cls):
    out = []
    for klass in reversed(cls.__mro__):
        for f in klass.__dict__.get("fields", ()):
            if f not in out:
                out.append(f)
    return out


class CRUDHandler(ResourceHandler):
    def read_resource(self, ctx, resource):
        pass

    def create_resource(self, ctx, resource):
        pass

    def delete_resource(self, ctx, resource):
        pass

    def update_resource(self, ctx, changes, resource):
        pass

    def execute(self, ctx, resource, dry_run=False):
        """The CRUD algorithm (used when this provider shares its type with a non-CRUD one; a type with only
        CRUD providers runs the executor's own implementation of the same steps)."""
        self.pre(ctx, resource)
        try:
            current = resource.clone()
            current.purged = False
            try:
                self.read_resource(ctx, current)
                changes = self.calculate_diff(ctx, current, resource)
            except ResourcePurged:
                current.purged = True
                changes = self.calculate_diff(ctx, current, resource)
            ctx.update_changes(changes)
            if dry_run:
                ctx.set_status(const.ResourceState.dry)
                return
            if not changes:
                return
            if "purged" in changes:
                if not changes["purged"]["desired"]:
                    self.create_resource(ctx, resource)
                else:
                    self.delete_resource(ctx, resource)
            elif not getattr(resource, "purged", False):
                self.update_resource(ctx, changes, resource)
        finally:
            self.post(ctx, resource)

    def calculate_diff(self, ctx, current, desired):
        changes = {}
        for field, b in vars(desired).items():
            if field.startswith("_") or field in ("id", "version", "requires"):
                continue
            a = getattr(current, field, None)
            if a != b:
                changes[field] = {"current": a, "desired": b}
        return changes


CRUDHandlerGeneric = CRUDHandler
ResourceHandlerGeneric = ResourceHandler
DiscoveryHandler = ResourceHandler
