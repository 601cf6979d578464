"""The plugins, resource and handler of the test std (written for this project): plugins whose names the
native std also has (print, upper), its own (flavour, and from_caller / plugin_names using the resolver and
the compiler's plugins), a dependency manager reading resource.model, std::File exported with a field the native std::File
does not have (note, from a mapper) and a handler that writes the file and a marker next to it."""

import os

from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, provider
from inmanta.export import dependency_manager
from inmanta.plugins import Context, plugin
from inmanta.resources import PurgeableResource, resource


@plugin("print")
def print_line(message: "any") -> None:
    print(message, flush=True)


@plugin
def flavour() -> "string":
    return "the project's own std, from its Python"


@plugin("upper")
def upper_case(string: "string") -> "string":
    return "own-std:" + string.upper()


@plugin
def from_caller(ctx: Context, name: "string") -> "string":
    """A variable of the calling scope, as the public std's template reads them (get_resolver().lookup)."""
    return "%s=%s" % (name, ctx.get_resolver().lookup(name).get_value())


@plugin
def plugin_names(ctx: Context) -> "string":
    """The plugins the compiler offers (get_compiler().get_plugins(), as the public std's template filters)."""
    plugins = ctx.get_compiler().get_plugins()
    return ",".join(sorted(plugins)) + " / " + plugins["std::upper"]("called")


@dependency_manager
def check_models(model, resources):
    """Each resource carries the instance it was exported from (`resource.model`, as std's dir_before_file)."""
    for res in resources.values():
        if res.model.host.name != "localhost" or res.model.path != res.path:
            raise Exception("resource.model of %s is %r" % (res.id, res.model))


@resource("std::File", agent="host.name", id_attribute="path")
class File(PurgeableResource):
    fields = ("path", "content", "note")

    @staticmethod
    def get_note(exporter, obj):
        return "exported by the project's std for " + obj.host.name


@provider("std::File", name="own_std_file")
class FileHandler(CRUDHandler):
    def read_resource(self, ctx: HandlerContext, resource: File) -> None:
        if not os.path.exists(resource.path):
            raise ResourcePurged()
        with open(resource.path) as f:
            resource.content = f.read()

    def create_resource(self, ctx: HandlerContext, resource: File) -> None:
        self._write(resource)
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: File) -> None:
        self._write(resource)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: File) -> None:
        os.remove(resource.path)
        ctx.set_purged()

    def _write(self, resource):
        with open(resource.path, "w") as f:
            f.write(resource.content)
        with open(resource.path + ".own-std-handler", "w") as f:
            f.write(resource.note)
