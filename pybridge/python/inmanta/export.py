"""The export API modules use: `dependency_manager` (recorded; see docs/pybridge.md for what runs),
`unknown_parameters` and the `Exporter` object handed to mappers (upload_file stores file content)."""

import _inm

dependency_managers = []
unknown_parameters = []


def dependency_manager(function):
    """Registers a dependency manager (called with the model and the exported resources)."""
    dependency_managers.append(function)
    return function


class Exporter:
    """What a `get_<field>` mapper receives as `exporter`."""

    def upload_file(self, *args):
        """upload_file(content) or upload_file(hash, content): stores the content, returns its sha1."""
        content = args[-1]
        if isinstance(content, bytes):
            content = content.decode("utf-8", "surrogateescape")
        return _inm.add_file(content)


class DependencyCycleException(Exception):
    pass


_exporters = {}


def export(name, *types):
    """The reference's `@export(name, *types)` registers an exporter plugin run with `inmanta export
    --export-plugin name`. Registered here so the module loads; running it is not supported by this
    compiler's exporter (the option is refused with that reason)."""

    def register(function):
        _exporters[name] = (function, types)
        return function

    return register
