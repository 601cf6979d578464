"""The handler API modules import: `@provider`, `CRUDHandler`, `ResourceHandler`, `HandlerContext`, `cache`,
`ResourcePurged`, `SkipResource`. The classes are importable so that a module's plugins package loads in the
compiler; running handlers belongs to the executor (docs/pybridge.md)."""

import functools
import logging

from inmanta import const


class SkipResource(Exception):
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
    """Per-resource state of one handler call: changes, status, logs with kwargs."""

    def __init__(self, resource, dry_run=False, action_id=None, logger=None):
        self._resource = resource
        self._dry_run = dry_run
        self.changes = {}
        self.logs = []
        self.status = None
        self._created = self._updated = self._purged = False
        self.facts = []

    def is_dry_run(self):
        return self._dry_run

    def set_status(self, status):
        self.status = status

    def set_created(self):
        self._created = True

    def set_updated(self):
        self._updated = True

    def set_purged(self):
        self._purged = True

    def add_change(self, name, desired, current=None):
        self.changes[name] = {"current": current, "desired": desired}

    def add_changes(self, **kwargs):
        for k, v in kwargs.items():
            self.changes[k] = v

    def update_changes(self, changes):
        self.changes.update(changes)

    def set_fact(self, fact_id, value, expires=True):
        self.facts.append({"id": fact_id, "value": value})

    @property
    def change(self):
        if self._created:
            return const.Change.created
        if self._purged:
            return const.Change.purged
        if self._updated or self.changes:
            return const.Change.updated
        return const.Change.nochange

    def _log(self, level, msg, args, kwargs):
        try:
            text = msg % kwargs if kwargs else (msg % args if args else msg)
        except Exception:
            text = msg
        self.logs.append({"level": level, "msg": text, "kwargs": kwargs})


_providers = {}


def provider(resource_type, name):
    """Registers a handler class for a resource type."""

    def register(cls):
        _providers[resource_type] = cls
        cls.__inmanta_provider__ = (resource_type, name)
        return cls

    return register


def cache(func=None, ignore=(), timeout=5000, for_version=True, cache_none=True, cacheNone=True,
          call_on_delete=None, evict_after_creation=0.0):
    """Memoises a handler method on its arguments (minus `ignore`)."""

    def decorate(f):
        store = {}

        @functools.wraps(f)
        def wrapper(self, *args, **kwargs):
            key = (args, tuple(sorted((k, repr(v)) for k, v in kwargs.items() if k not in ignore)))
            try:
                return store[repr(key)]
            except KeyError:
                value = f(self, *args, **kwargs)
                store[repr(key)] = value
                return value

        return wrapper

    if func is None:
        return decorate
    return decorate(func)


class HandlerAPI:
    def __init__(self, agent=None, io=None):
        self._agent = agent
        self._io = io


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
        for field in getattr(desired, "fields", ()):
            if field in ("send_event", "purge_on_delete", "requires"):
                continue
            a, b = getattr(current, field, None), getattr(desired, field, None)
            if a != b:
                changes[field] = {"current": a, "desired": b}
        return changes


CRUDHandlerGeneric = CRUDHandler
ResourceHandlerGeneric = ResourceHandler
DiscoveryHandler = ResourceHandler
