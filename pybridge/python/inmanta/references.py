"""`inmanta.references`: the reference's reference/mutator API (newer std versions import it) is not supported by
this compiler; importing the names works, using them raises a clear error."""


class Reference:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("inmanta.references.Reference is not supported by this compiler")

    def __class_getitem__(cls, item):
        return cls


def reference(name):
    def register(cls):
        return cls

    return register


class Mutator(Reference):
    pass


def mutator(name):
    return reference(name)
