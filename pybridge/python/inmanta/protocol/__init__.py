"""The server client plugins get from `Context.get_client()` / `get_sync_client()`: the reference client's method
names, each sent as one HTTP request through the compiler's own orchestrator client (`_inm.server_call`).

`Client` methods return an awaitable call (run it with `Context.run_sync(lambda: client.m(...))`, or `await` it
inside a coroutine given to run_sync); `SyncClient` methods return the `Result` at once. Path parameters fill
the route, the others go to the query string (GET/DELETE) or the JSON body. Without a configured server, creating
a client raises."""

import json

import _inm

# method name -> (HTTP method, path with {parameter} segments). The methods real modules call; others raise.
METHODS = {
    "list_environments": ("GET", "/api/v1/environment"),
    "get_environment": ("GET", "/api/v1/environment/{id}"),
    "environment_list": ("GET", "/api/v2/environment"),
    "environment_get": ("GET", "/api/v2/environment/{id}"),
    "list_projects": ("GET", "/api/v1/project"),
    "project_list": ("GET", "/api/v2/project"),
    "get_param": ("GET", "/api/v1/parameter/{id}"),
    "set_param": ("PUT", "/api/v1/parameter/{id}"),
    "delete_param": ("DELETE", "/api/v1/parameter/{id}"),
    "list_params": ("POST", "/api/v1/parameter"),
    "set_parameters": ("PUT", "/api/v1/parameters"),
    "get_parameters": ("GET", "/api/v2/parameters"),
    "get_facts": ("GET", "/api/v2/resource/{rid}/facts"),
    "get_fact": ("GET", "/api/v2/resource/{rid}/facts/{id}"),
    "list_settings": ("GET", "/api/v1/environment/settings"),
    "get_setting": ("GET", "/api/v1/environment/settings/{id}"),
    "set_setting": ("POST", "/api/v1/environment/settings/{id}"),
    "list_versions": ("GET", "/api/v1/version"),
    "get_version": ("GET", "/api/v1/version/{id}"),
    "get_resource": ("GET", "/api/v1/resource/{id}"),
    "resource_list": ("GET", "/api/v2/resource"),
    "notify_change": ("POST", "/api/v1/notify/{id}"),
}


class Result:
    """A server answer: `code` (HTTP status, 599 when the server could not be reached) and `result` (the
    decoded JSON body, or {"message": ...})."""

    def __init__(self, code=0, result=None):
        self.code = code
        self.result = result

    def __repr__(self):
        return "Result(code=%r, result=%r)" % (self.code, self.result)


def _segment(value):
    from urllib.parse import quote

    return quote(str(value), safe="")


def _query_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def _send(name, kwargs):
    if name not in METHODS:
        raise AttributeError("the compiler's server client has no method %r" % name)
    method, path = METHODS[name]
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    tid = str(kwargs.pop("tid", "") or "")
    for key in list(kwargs):
        marker = "{%s}" % key
        if marker in path:
            path = path.replace(marker, _segment(kwargs.pop(key)))
    if "{" in path:
        raise TypeError("%s() is missing a path argument: %s" % (name, path))
    query = []
    body = ""
    if method in ("GET", "DELETE"):
        query = [(k, _query_value(v)) for k, v in kwargs.items()]
    elif kwargs:
        body = json.dumps(kwargs, default=str)
    status, text = _inm.server_call(method, path, query, body, tid)
    if status == 0:
        return Result(599, {"message": text})
    try:
        result = json.loads(text) if text else None
    except ValueError:
        result = {"message": text}
    return Result(status, result)


def _require_server():
    if _inm.server_environment() is None:
        raise ConnectionError(
            "no server is configured for this compile: plugins can only call the orchestrator when the model is "
            "exported to a server (inmanta export -e ENV --server_address ...) or compiled by the server"
        )


class _Call:
    """One pending call of the asynchronous-style client: awaitable, or run by Context.run_sync."""

    def __init__(self, name, kwargs):
        self.name = name
        self.kwargs = kwargs

    def run(self):
        return _send(self.name, self.kwargs)

    def __await__(self):
        return self.run()
        yield  # noqa: unreachable - makes this a generator, so `await` gets the Result at once


class Client:
    """The reference's `protocol.Client`: every method returns an awaitable call."""

    def __init__(self, name="compiler", timeout=120):
        _require_server()
        self.name = name

    def __getattr__(self, method):
        if method.startswith("_") or method not in METHODS:
            raise AttributeError("the compiler's server client has no method %r" % method)
        return lambda **kwargs: _Call(method, kwargs)


class SyncClient:
    """The reference's `protocol.SyncClient`: every method returns its Result."""

    def __init__(self, name="compiler", timeout=120, client=None):
        _require_server()
        self.name = name

    def __getattr__(self, method):
        if method.startswith("_") or method not in METHODS:
            raise AttributeError("the compiler's server client has no method %r" % method)
        return lambda **kwargs: _send(method, kwargs)


def run_sync(function):
    """Runs `function()`: a pending call or a coroutine over pending calls becomes its value."""
    value = function()
    if isinstance(value, _Call):
        return value.run()
    if hasattr(value, "send") and hasattr(value, "throw"):  # a coroutine
        try:
            while True:
                value.send(None)
        except StopIteration as done:
            return done.value
    return value
