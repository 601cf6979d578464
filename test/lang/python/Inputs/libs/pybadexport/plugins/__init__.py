"""Python resources whose agent, id or field mapping fails at export (test of the exporter's errors)."""

from inmanta.resources import PurgeableResource, resource


@resource("pybadexport::NullAgent", agent="maybe", id_attribute="name")
class NullAgent(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::EmptyAgent", agent="agent", id_attribute="name")
class EmptyAgent(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::EmptyListAgent", agent="holders.name", id_attribute="name")
class EmptyListAgent(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::StringStepAgent", agent="agent.name", id_attribute="name")
class StringStepAgent(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::EntityId", agent="agent", id_attribute="holder")
class EntityId(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::MissingId", agent="agent", id_attribute="nothere")
class MissingId(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::FailingField", agent="agent", id_attribute="name")
class FailingField(PurgeableResource):
    fields = ("name", "broken")

    @staticmethod
    def get_broken(exporter, obj):
        raise ValueError("no value for broken")


@resource("pybadexport::MissingField", agent="agent", id_attribute="name")
class MissingField(PurgeableResource):
    fields = ("name", "nothere")


@resource("pybadexport::EntityField", agent="agent", id_attribute="name")
class EntityField(PurgeableResource):
    fields = ("name", "holder")


@resource("pybadexport::Plain", agent="agent", id_attribute="name")
class Plain(PurgeableResource):
    fields = ("name",)


@resource("pybadexport::MissingAgent", agent="nothere", id_attribute="name")
class MissingAgent(PurgeableResource):
    fields = ("name",)
