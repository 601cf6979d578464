"""`inmanta.ast.attribute`: the compiler's attribute classes module code tests with isinstance. This compiler's
model is not made of these Python objects, so no model value is ever an instance of them."""


class Attribute:
    pass


class RelationAttribute(Attribute):
    pass
