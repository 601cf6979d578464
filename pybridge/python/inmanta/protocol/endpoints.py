"""`inmanta.protocol.endpoints`: the client classes modules import from here (`Client`, `SyncClient`); the same
classes as `inmanta.protocol`'s. `SessionClient` (an agent session) does not exist in this orchestrator: handlers
get theirs from `get_client()`."""

from inmanta.protocol import Client, SyncClient  # noqa: F401 - re-exported


class SessionClient:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("SessionClient is not supported here: a handler gets its client from "
                                  "self.get_client(), a plugin from Context.get_client()")
