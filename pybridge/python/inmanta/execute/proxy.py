"""Read-only views of model values handed to Python code: an instance (attributes fetched from the compiler
on access), a list and a dict. Reading an unknown value raises UnknownException; reading an attribute that is
not final yet aborts the call, which the compiler runs again later."""

from collections.abc import Mapping, Sequence

import _inm
from inmanta.execute.util import Unknown


class UnknownException(Exception):
    """Raised when Python code reads a value that is unknown."""

    def __init__(self, unknown=None):
        super().__init__("unknown value")
        self.unknown = unknown


class UnsetException(Exception):
    """Raised when an attribute has no value."""

    def __init__(self, msg, instance=None, attribute=None):
        super().__init__(msg)
        self.msg = msg
        self.instance = instance
        self.attribute = attribute

    def get_result_variable(self):
        return None


class AttributeNotFound(AttributeError):
    pass


def _wrap(value):
    """A converted model value -> what Python code sees (raises UnknownException for an unknown)."""
    if isinstance(value, Unknown):
        raise UnknownException(value)
    if isinstance(value, list):
        return SequenceProxy(value)
    if isinstance(value, dict):
        return DictProxy(value)
    return value


class DynamicProxy:
    """Base of every proxy; `unwrap` turns a proxy back into a plain value."""

    @classmethod
    def unwrap(cls, item):
        if isinstance(item, SequenceProxy):
            return [cls.unwrap(x) for x in item._items]
        if isinstance(item, DictProxy):
            return {k: cls.unwrap(v) for k, v in item._items.items()}
        if isinstance(item, (list, tuple)):
            return [cls.unwrap(x) for x in item]
        if isinstance(item, dict):
            return {k: cls.unwrap(v) for k, v in item.items()}
        return item

    @classmethod
    def return_value(cls, value):
        return _wrap(value)


class InstanceProxy(DynamicProxy):
    """An entity instance of the model, identified by its handle in the compiler."""

    __slots__ = ("_handle",)

    def __init__(self, handle):
        object.__setattr__(self, "_handle", handle)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _wrap(_inm.attr(self._handle, name))

    def __setattr__(self, name, value):
        raise AttributeError("the model is read-only for plugins: cannot set %s" % name)

    def __eq__(self, other):
        return isinstance(other, InstanceProxy) and other._handle == self._handle

    def __hash__(self):
        return hash(("instance", self._handle))

    def __repr__(self):
        return _inm.describe(self._handle)

    def __str__(self):
        return _inm.describe(self._handle)

    def _get_instance(self):
        return self

    def _type(self):
        return _EntityType(_inm.entity(self._handle))

    def is_unknown(self):
        return False


class _EntityType:
    """What `instance._type()` returns: just enough of the reference's Entity type (name, namespace)."""

    def __init__(self, full_name):
        self._full = full_name
        self.name = full_name.rsplit("::", 1)[-1]
        self.namespace = _Namespace(full_name.rsplit("::", 1)[0])

    def get_full_name(self):
        return self._full

    def __str__(self):
        return self._full


class _Namespace:
    def __init__(self, name):
        self._name = name

    def get_full_name(self):
        return self._name

    def __str__(self):
        return self._name


class SequenceProxy(DynamicProxy, Sequence):
    """A model list; unknown items raise UnknownException when read."""

    __slots__ = ("_items",)

    def __init__(self, items):
        self._items = items

    def __getitem__(self, index):
        if isinstance(index, slice):
            return SequenceProxy(self._items[index])
        return _wrap(self._items[index])

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return _ProxyIterator(self._items)

    def __eq__(self, other):
        if isinstance(other, SequenceProxy):
            return self._items == other._items
        if isinstance(other, (list, tuple)):
            return self._items == list(other)
        return NotImplemented

    def __repr__(self):
        return repr(self._items)


class _ProxyIterator:
    """Iterates a model list; an unknown item raises UnknownException and iteration can go on after it
    (a generator would be finished by the exception)."""

    __slots__ = ("_items", "_next")

    def __init__(self, items):
        self._items = items
        self._next = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._next >= len(self._items):
            raise StopIteration
        item = self._items[self._next]
        self._next += 1
        return _wrap(item)


class DictProxy(DynamicProxy, Mapping):
    """A model dict; unknown values raise UnknownException when read."""

    __slots__ = ("_items",)

    def __init__(self, items):
        self._items = items

    def __getitem__(self, key):
        return _wrap(self._items[key])

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __eq__(self, other):
        if isinstance(other, DictProxy):
            return self._items == other._items
        if isinstance(other, dict):
            return self._items == other
        return NotImplemented

    def __repr__(self):
        return repr(self._items)


# The reference's other proxy names, importable by module code. IteratorProxy is what iterating a model list
# yields here; CallProxy wraps a callable for the model (not produced by this compiler's plugin calls).
IteratorProxy = _ProxyIterator


class CallProxy(DynamicProxy):
    def __init__(self, instance):
        self._instance = instance

    def __call__(self, *args, **kwargs):
        return _wrap(self._instance(*[DynamicProxy.unwrap(a) for a in args],
                                    **{k: DynamicProxy.unwrap(v) for k, v in kwargs.items()}))


class ProxyContext:
    """Where a proxy was created (the reference's debugging aid); carried, not interpreted."""

    def __init__(self, path="", validated=True):
        self.path = path
        self.validated = validated
