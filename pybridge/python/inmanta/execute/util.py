"""Marker values of the model as Python sees them: an unknown value and the model's null."""


class Unknown:
    """A value that is not known at compile time (e.g. a fact not yet collected)."""

    def __init__(self, source=None):
        self.source = source

    def __repr__(self):
        return "Unknown"

    def __bool__(self):
        return False


class NoneValue:
    """The model's `null` where a value object is needed."""

    def __repr__(self):
        return "null"

    def __eq__(self, other):
        return other is None or isinstance(other, NoneValue)

    def __hash__(self):
        return hash(None)
