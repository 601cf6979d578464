"""Test module for the Python bridge: plugins of every form, a Python resource with mappers."""

import os
from typing import Annotated

from inmanta.execute.proxy import UnknownException
from inmanta.execute.util import Unknown
from inmanta.agent.handler import CRUDHandler, HandlerContext, ResourcePurged, SkipResource, cache, provider
from inmanta.export import dependency_manager
from inmanta.plugins import Context, ModelType, PluginException, plugin
from inmanta.resources import IgnoreResourceException, PurgeableResource, resource

from . import helpers
from .sub import deep


@plugin
def greet(name: "string", greeting: "string" = "hello") -> "string":
    return "%s %s" % (greeting, name)


@plugin("renamed")
def original_name(x: "int") -> "int":
    return x * 2


@plugin
def total(*values: "int", **extra: "int") -> "int":
    return sum(values) + sum(extra.values())


@plugin
def weighted(base: "int", *steps: "int", scale: "int", **bonus: "int") -> "int":
    return base + scale * sum(steps) + sum(bonus.values())


@plugin
def joined(ctx: Context, sep: "string", *words: "string") -> "string":
    return sep.join(words)


@plugin
def native(items: list[str], mapping: dict[str, int], maybe: str | None = None) -> dict[str, str]:
    return {"first": sorted(items)[0], "keys": ",".join(sorted(mapping)), "maybe": str(maybe)}


@plugin
def keyword_only(a: "int", *, b: "int" = 10) -> "int":
    return a + b


@plugin
def keywords_required(a: "int", *, b: "int", c: "int") -> "int":
    return a + b + c


@plugin
def data_dir_exists(ctx: Context) -> "bool":
    return os.path.isdir(ctx.get_data_dir())


@plugin
def shout(text: "string") -> "string":
    return helpers.upper(text) + deep.bang()


@plugin
def module_file(name: "string") -> "string":
    path = os.path.join(os.path.dirname(__file__), "..", "files", name)
    with open(path) as f:
        return f.read().strip()


@plugin
def item_names(box: "pyplug::Box") -> "string[]":
    return sorted(i.name for i in box.items)


@plugin
def first_item(box: "pyplug::Box") -> "pyplug::Item":
    return sorted(box.items, key=lambda i: i.name)[0]


@plugin
def wrong_return() -> "int":
    return "not an int"


@plugin
def bad_type_return() -> "any":
    return object()


@plugin
def self_list() -> "list":
    x = []
    x.append(x)
    return x


@plugin
def divide(a: "int", b: "int") -> "int":
    return helpers.div(a, b)


@plugin
def refuse(why: "string") -> None:
    raise PluginException("refused: " + why)


@plugin
def make_unknown() -> "any":
    return Unknown(None)


@plugin
def count_args(value: "any") -> "int":
    return 1


@plugin(allow_unknown=True)
def is_unknown(value: "any") -> "bool":
    return isinstance(value, Unknown)


@plugin
def known_items(values: "list") -> "int":
    n = 0
    it = iter(values)
    while True:
        try:
            next(it)
            n += 1
        except UnknownException:
            pass
        except StopIteration:
            return n


@resource("pyplug::Item", agent="agent", id_attribute="name")
class Item(PurgeableResource):
    fields = ("name", "size", "doubled", "labels_text")

    @staticmethod
    def get_doubled(exporter, obj):
        if obj.skip:
            raise IgnoreResourceException()
        return obj.size * 2

    @staticmethod
    def get_labels_text(exporter, obj):
        return ",".join(key + "=" + value for key, value in sorted(obj.labels.items()))


@dependency_manager
def small_items_first(config_model, resource_model):
    """Every Item of size > 1 requires the Items of size 1 of the same agent."""
    items = [r for r in resource_model.values() if r.id.get_entity_type() == "pyplug::Item"]
    for big in items:
        for small in items:
            if big.size > 1 and small.size == 1 and big.id.get_agent_name() == small.id.get_agent_name():
                big.requires.add(small)


@resource("pyplug::Note", agent="agentname", id_attribute="path")
class Note(PurgeableResource):
    fields = ("path", "content")


CONNECTIONS = [0]


@provider("pyplug::Note", name="note")
class NoteHandler(CRUDHandler):
    """Keeps a text file at `path` with `content`; `@cache` shares one "connection" per executor."""

    @cache(timeout=60, ignore=["ctx"])
    def connection(self, ctx, agent):
        CONNECTIONS[0] += 1
        return {"number": CONNECTIONS[0]}

    def read_resource(self, ctx: HandlerContext, resource: Note) -> None:
        conn = self.connection(ctx, resource.id.get_agent_name())
        ctx.debug("reading %(path)s over connection %(number)s", path=resource.path, number=conn["number"])
        if "skip" in resource.path:
            raise SkipResource("paths with skip are skipped")
        if not os.path.exists(resource.path):
            raise ResourcePurged()
        with open(resource.path) as f:
            resource.content = f.read()

    def create_resource(self, ctx: HandlerContext, resource: Note) -> None:
        self._write(resource)
        ctx.info("created %(path)s", path=resource.path, size=len(resource.content))
        ctx.set_created()

    def update_resource(self, ctx: HandlerContext, changes: dict, resource: Note) -> None:
        if "content" not in changes:
            raise ValueError("unexpected changes %s" % sorted(changes))
        self._write(resource)
        ctx.set_updated()

    def delete_resource(self, ctx: HandlerContext, resource: Note) -> None:
        os.remove(resource.path)
        ctx.set_purged()

    def _write(self, resource):
        if resource.content == "fail":
            raise RuntimeError("refusing to write 'fail'")
        with open(resource.path, "w") as f:
            f.write(resource.content)


# Typedef-constrained arguments and return values: checked against the constraint like an assignment.
@plugin
def next_port(port: "std::port") -> "std::port":
    return port + 1


@plugin
def annotated_port(port: Annotated[int, ModelType["std::port"]]) -> "int":
    return port


@plugin
def initials(name: "pyplug::shortname") -> "string":
    return name[:1]


@plugin
def too_long() -> "pyplug::shortname":
    return "much too long"
