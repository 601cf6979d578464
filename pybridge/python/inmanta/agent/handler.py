"""The handler API modules import: `@provider`, `CRUDHandler`, `ResourceHandler`, `HandlerContext`, `cache`,
`ResourcePurged`, `SkipResource`. The classes are importable so that a module's plugins package loads in the
compiler; running handlers belongs to the executor (docs/pybridge.md)."""

import json
import logging
import os
import subprocess
import threading
import time

import _inm
from inmanta import const


class SkipResource(Exception):
    pass


class SkipResourceForDependencies(SkipResource):
    pass


class ResourcePurged(Exception):
    pass


class InvalidOperation(Exception):
    pass


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
        self.update_changes(kwargs)

    def update_changes(self, changes):
        if not changes:
            return
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


_providers = {}


def provider(resource_type, name):
    """Registers a handler class for a resource type."""

    def register(cls):
        _providers[resource_type] = cls
        cls.__inmanta_provider__ = (resource_type, name)
        return cls

    return register


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


class LocalIO:
    """What `self._io` offers handlers: the local machine (the executor runs on the agent's host)."""

    def file_exists(self, path):
        return os.path.exists(path)

    def readlink(self, path):
        return os.readlink(path)

    def symlink(self, source, target):
        os.symlink(source, target)

    def is_symlink(self, path):
        return os.path.islink(path)

    def read(self, path):
        with open(path) as f:
            return f.read()

    def read_binary(self, path):
        with open(path, "rb") as f:
            return f.read()

    def put(self, path, content):
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())

    def remove(self, path):
        os.remove(path)

    def mkdir(self, path):
        os.mkdir(path)

    def rmdir(self, path):
        os.rmdir(path)

    def run(self, command, arguments=(), env=None, cwd=None, timeout=None):
        p = subprocess.run([command, *arguments], env=env, cwd=cwd, timeout=timeout, capture_output=True, text=True)
        return p.stdout.strip(), p.stderr.strip(), p.returncode

    def close(self):
        pass


class HandlerAPI:
    def __init__(self, agent=None, io=None):
        self._agent = agent
        self._io = io if io is not None else LocalIO()

    def close(self):
        pass


class ResourceHandler(HandlerAPI):
    def pre(self, ctx, resource):
        pass

    def post(self, ctx, resource):
        pass

    def can_reload(self):
        return False

    def do_reload(self, ctx, resource):
        pass

    def check_resource(self, ctx, resource):
        raise NotImplementedError

    def list_changes(self, ctx, resource):
        return {}

    def do_changes(self, ctx, resource, changes):
        raise NotImplementedError

    def facts(self, ctx, resource):
        return {}

    def run_sync(self, func):
        return func()

    def available(self, resource):
        return True

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


class CRUDHandler(ResourceHandler):
    def read_resource(self, ctx, resource):
        pass

    def create_resource(self, ctx, resource):
        pass

    def delete_resource(self, ctx, resource):
        pass

    def update_resource(self, ctx, changes, resource):
        pass

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
