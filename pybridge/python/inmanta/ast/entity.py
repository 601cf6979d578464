"""`inmanta.ast.entity`: the compiler's Entity class, importable for isinstance tests; this compiler's model types
are not Python objects, so no value is an instance of it."""


class Entity:
    pass


class Implementation:
    pass
