"""The resource API: `@resource("mod::Entity", agent="host.name", id_attribute="name")` on a class listing
its `fields`, with `get_<field>(exporter, obj)` static mappers (or a `map` dict of callables). Registered
classes are read by the compiler after import and registered with the exporter like the built-in ones;
`IgnoreResourceException` from a mapper drops the instance."""

import _inm


class ResourceException(Exception):
    pass


class IgnoreResourceException(Exception):
    """Raised by a mapper: this instance is not exported."""


class InvalidResourceException(ResourceException):
    pass


registered = []


def resource(name, id_attribute, agent):
    """Registers a resource class for the entity `name`."""

    def register(cls):
        cls.__inmanta_resource__ = (name, agent, id_attribute)
        registered.append(cls)
        return cls

    return register


class Id:
    """A resource id: `type[agent,attribute=value],v=version`."""

    def __init__(self, entity_type, agent_name, attribute, attribute_value, version=0):
        self.entity_type = entity_type
        self.agent_name = agent_name
        self.attribute = attribute
        self.attribute_value = attribute_value
        self.version = version

    def get_entity_type(self):
        return self.entity_type

    def get_agent_name(self):
        return self.agent_name

    def get_attribute(self):
        return self.attribute

    def get_attribute_value(self):
        return self.attribute_value

    def get_version(self):
        return self.version

    def resource_str(self):
        return "%s[%s,%s=%s]" % (self.entity_type, self.agent_name, self.attribute, self.attribute_value)

    def __str__(self):
        if self.version:
            return self.resource_str() + ",v=%d" % self.version
        return self.resource_str()

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return isinstance(other, Id) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    @classmethod
    def parse_id(cls, text, version=None):
        rest, sep, ver = text.partition("],v=")
        if not sep:
            rest = text[:-1] if text.endswith("]") else text
        entity_type, _, inner = rest.partition("[")
        agent, _, attr = inner.partition(",")
        key, _, value = attr.partition("=")
        return cls(entity_type, agent, key, value, int(ver) if ver else (version or 0))


class Resource:
    """Base of every resource class; instances (in handlers) carry the exported fields as attributes."""

    fields = ("send_event",)
    map = {}

    def __init__(self, _id=None):
        self.id = _id
        self.version = _id.version if _id else 0
        self.requires = set()
        self.send_event = False

    def clone(self, **kwargs):
        r = self.__class__(self.id)
        r.__dict__.update(self.__dict__)
        r.__dict__.update(kwargs)
        return r

    def __getitem__(self, key):
        return getattr(self, key)

    @classmethod
    def deserialize(cls, data):
        r = cls(Id.parse_id(data["id"]))
        for k, v in data.items():
            if k != "id":
                setattr(r, k, v)
        return r


class PurgeableResource(Resource):
    fields = ("purged", "purge_on_delete")


class ManagedResource(Resource):
    fields = ("managed",)


class DiscoveryResource(Resource):
    pass


_BASE_FIELDS = {"send_event", "receive_events", "purged", "purge_on_delete", "managed", "requires"}


def own_fields(cls):
    """Fields of `cls` and its resource bases, without the base-class fields the compiler adds itself."""
    out = []
    for klass in reversed(cls.__mro__):
        for f in getattr(klass, "__dict__", {}).get("fields", ()):
            if f not in _BASE_FIELDS and f not in out:
                out.append(f)
    return out


def _registration(entity):
    for cls in registered:
        if cls.__inmanta_resource__[0] == entity:
            return cls.__inmanta_resource__
    return _inm.std_resource(entity)


def to_id(entity):
    """The resource id (without version) of an instance of a registered resource entity, None otherwise."""
    from inmanta.execute.proxy import InstanceProxy

    if not isinstance(entity, InstanceProxy):
        return None
    for name in _inm.ancestors(entity._handle):
        reg = _registration(name)
        if reg is None:
            continue
        _, agent, id_attribute = reg
        value = entity
        for part in agent.split("."):
            value = getattr(value, part)
        return "%s[%s,%s=%s]" % (name, value, id_attribute, getattr(entity, id_attribute))
    return None
