"""`inmanta.agent.io`: the IO a handler gets for its agent's URI. `parse_agent_uri` reads the URI forms of the
reference (`local:`, `localhost`, `ssh://user@host:port?python=…`, a bare host name = ssh) into (scheme,
config); `get_io` gives a `LocalIO` for local URIs and an `SshIO` (remote.py: shell commands over ssh) for ssh
ones. Inside a handler, `self._io` of an ssh:// agent is an SshIO over the agent's multiplexed master."""

import re
import urllib.parse

from inmanta.agent.io.local import BashIO, IOBase, LocalIO  # noqa: F401 - re-exported
from inmanta.agent.io.remote import SshIO  # noqa: F401 - re-exported


def parse_agent_uri(uri):
    """(scheme, config) of an agent URI."""
    parts = urllib.parse.urlparse(uri)
    config = {}
    scheme = parts.scheme or "local"
    if parts.query:
        for key, values in urllib.parse.parse_qs(parts.query).items():
            config[key] = values[0]
    if parts.netloc:
        match = re.search(r"^(?:(?P<user>[^\s@]+)@)?(?P<host>[^\s:]+)(?::(?P<port>[\d]+))?", parts.netloc)
        if match is None:
            raise ValueError("invalid agent uri %r" % uri)
        config.update(match.groupdict())
    if parts.path and not parts.scheme and not parts.netloc:
        if parts.path == "localhost":
            scheme = "local"
        else:
            scheme = "ssh"
            config.update({"host": parts.path, "port": None, "user": None})
    return scheme, config


def get_io(cache=None, uri="local:", version=0, resource=None):
    """The IO for `uri`: LocalIO for a local agent, SshIO for an ssh one (direct ssh connections)."""
    scheme, config = parse_agent_uri(uri)
    if scheme == "local":
        return LocalIO(uri, config)
    if scheme == "ssh":
        return SshIO(uri, config)
    raise NotImplementedError("agent uri %r: scheme %r is not supported (expected local: or ssh://)" % (uri, scheme))
