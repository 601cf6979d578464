"""`inmanta.protocol.common`: the names modules import from it (`Result`); the same class as
`inmanta.protocol.Result`."""

from inmanta.protocol import Result  # noqa: F401 - re-exported

__all__ = ["Result"]
