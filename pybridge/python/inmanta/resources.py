"""The resource API: `@resource("mod::Entity", agent="host.name", id_attribute="name")` on a class listing
its `fields`, with `get_<field>(exporter, obj)` static mappers (or a `map` dict of callables). Registered
classes are read by the compiler after import and registered with the exporter like the built-in ones;
`IgnoreResourceException` from a mapper drops the instance."""

import re

import _inm

ResourceIdStr = str  # "type[agent,attr=value]"
ResourceVersionIdStr = str  # "type[agent,attr=value],v=N"


class ResourceException(Exception):
    pass


class ResourceNotFoundExcpetion(Exception):  # the reference's spelling, which modules import
    """A resource is not found."""


ResourceNotFoundException = ResourceNotFoundExcpetion


class HostNotFoundException(Exception):
    def __init__(self, hostname, user, error):
        super().__init__("could not reach %s as %s: %s" % (hostname, user, error))
        self.hostname, self.user, self.error = hostname, user, error


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


_PARSE_ID = re.compile(
    r"^(?P<id>(?P<type>(?P<ns>[\w-]+(::[\w-]+)*)::(?P<class>[\w-]+))\[(?P<hostname>[^,]+),"
    r"(?P<attr>[^=]+)=(?P<value>[^\]]+)\])(,v=(?P<version>[0-9]+))?$")


class Id:
    """A resource id: `type[agent,attribute=value]`, with `,v=version` when the version is set (> 0)."""

    def __init__(self, entity_type, agent_name, attribute, attribute_value, version=0):
        self._entity_type = entity_type
        self._agent_name = agent_name
        self._attribute = attribute
        self._attribute_value = attribute_value
        self._version = version

    def get_entity_type(self):
        return self._entity_type

    def get_agent_name(self):
        return self._agent_name

    def get_attribute(self):
        return self._attribute

    def get_attribute_value(self):
        return self._attribute_value

    def get_version(self):
        return self._version

    def set_version(self, version):
        if self._version > 0 and version != self._version:
            raise AttributeError("can't set attribute version")
        self._version = version

    entity_type = property(get_entity_type)
    agent_name = property(get_agent_name)
    attribute = property(get_attribute)
    attribute_value = property(get_attribute_value)
    version = property(get_version, set_version)

    def to_dict(self):
        return {"entity_type": self._entity_type, "agent_name": self._agent_name, "attribute": self._attribute,
                "attribute_value": self._attribute_value, "version": self._version}

    def copy(self, *, version):
        return Id(self._entity_type, self._agent_name, self._attribute, self._attribute_value, version)

    def resource_str(self):
        return "%s[%s,%s=%s]" % (self._entity_type, self._agent_name, self._attribute, self._attribute_value)

    def resource_version_str(self):
        return self.resource_str() + ",v=%s" % self._version

    def is_resource_version_id_obj(self):
        return self._version != 0

    def get_instance(self):
        cls = next((c for c in registered if c.__inmanta_resource__[0] == self._entity_type), None)
        if cls is None:
            return None
        obj = cls(self)
        setattr(obj, self._attribute, self._attribute_value)
        return obj

    def __str__(self):
        return self.resource_version_str() if self._version > 0 else self.resource_str()

    def __repr__(self):
        return str(self)

    def __eq__(self, other):
        return str(self) == str(other) and type(self) is type(other)

    def __hash__(self):
        return hash(str(self))

    @classmethod
    def parse_id(cls, text, version=None):
        m = _PARSE_ID.search(text)
        if m is None:
            raise ValueError("Invalid id for resource %s" % text)
        if version is None:
            version = int(m.group("version")) if m.group("version") is not None else 0
        return cls(m.group("type"), m.group("hostname"), m.group("attr"), m.group("value"), version)

    @classmethod
    def parse_resource_version_id(cls, text):
        rid = cls.parse_id(text)
        if rid.version == 0:
            raise ValueError("Version is missing from resource id: %s" % text)
        return rid

    @classmethod
    def is_resource_version_id(cls, value):
        m = _PARSE_ID.search(value)
        return m is not None and m.group("version") is not None

    @classmethod
    def is_resource_id(cls, value):
        return _PARSE_ID.search(value) is not None

    @classmethod
    def set_version_in_id(cls, id_str, new_version):
        return cls.parse_id(id_str).copy(version=new_version).resource_version_str()


class _ResourceMeta(type):
    """Merges `fields` over the bases into each class's `fields` (ordered, without duplicates), as the
    reference's metaclass does."""

    def __new__(mcs, name, bases, dct):
        merged = []
        for base in bases:
            for f in getattr(base, "fields", ()):
                if f not in merged:
                    merged.append(f)
        own = dct.get("fields", ())
        if not isinstance(own, (tuple, list)):
            raise Exception("fields attribute of %s should be a tuple or list" % name)
        for f in own:
            if f not in merged:
                merged.append(f)
        dct["fields"] = tuple(merged)
        return type.__new__(mcs, name, bases, dct)


class Resource(metaclass=_ResourceMeta):
    """Base of every resource class; instances (in handlers) carry the exported fields as attributes."""

    fields = ("send_event",)
    map = {}

    def __init__(self, _id=None):
        self.id = _id
        self.requires = set()
        self.resource_requires = set()
        self.unknowns = set()
        for f in type(self).fields:
            setattr(self, f, None)
        self.send_event = False
        self.version = _id.version if _id else 0

    def clone(self, **kwargs):
        r = self.__class__.__new__(self.__class__)
        r.__dict__.update(self.__dict__)
        r.requires = set(self.requires)
        r.__dict__.update(kwargs)
        return r

    def set_version(self, version):
        self.version = version
        self.id.version = version

    def serialize(self):
        out = {f: getattr(self, f, None) for f in type(self).fields}
        out["requires"] = [str(x) for x in self.requires]
        out["version"] = self.version
        out["id"] = self.id.resource_version_str()
        return out

    def items(self):
        for f in type(self).fields:
            yield f, getattr(self, f, None)

    def populate(self, fields, force_fields=False):
        for f in type(self).fields:
            if f in fields or force_fields:
                setattr(self, f, fields[f])
            else:
                raise Exception("Resource with id %s does not have field %s" % (fields.get("id"), f))

    def __getitem__(self, key):
        if key in type(self).fields:
            return getattr(self, key)
        raise KeyError(key)

    def __setitem__(self, key, value):
        if key in type(self).fields:
            return setattr(self, key, value)
        raise KeyError(key)

    def __str__(self):
        return str(self.id)

    def __repr__(self):
        return str(self)

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
