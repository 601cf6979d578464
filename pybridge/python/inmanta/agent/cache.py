"""`inmanta.agent.cache`: `AgentCache` as handlers receive it through `set_cache`. In this executor the `@cache`
decorator keeps its own per-process store (one process per agent and code version), so this class only holds
the handler's explicit entries: `cache_value(key, value, timeout)` / `find(key)`."""

import time


class AgentCache:
    def __init__(self, agent_instance=None):
        self._entries = {}

    def cache_value(self, key, value, timeout=5000):
        self._entries[key] = (value, time.monotonic() + timeout)

    def find(self, key, resource=None, version=0):
        value, expires = self._entries[key]
        if time.monotonic() > expires:
            del self._entries[key]
            raise KeyError(key)
        return value

    def close(self):
        self._entries.clear()
