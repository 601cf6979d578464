"""Exception names of the compiler that module code imports (raised by the compiler, caught by modules)."""


class CompilerException(Exception):
    def __init__(self, msg=""):
        super().__init__(msg)
        self.msg = msg


class RuntimeException(CompilerException):
    def __init__(self, stmt=None, msg=""):
        super().__init__(msg)
        self.stmt = stmt


class OptionalValueException(RuntimeException):
    pass


class NotFoundException(RuntimeException):
    def __init__(self, stmt=None, name=None, msg=None):
        super().__init__(stmt, msg if msg is not None else "could not find value %s" % name)
        self.name = name


class ExternalException(RuntimeException):
    pass


class ExplicitPluginException(RuntimeException):
    pass


class TypingException(RuntimeException):
    pass


class AttributeException(RuntimeException):
    pass


class DuplicateException(CompilerException):
    pass


class ModuleNotFoundException(CompilerException):
    pass


class DirectExecuteException(CompilerException):
    pass


class Namespace:
    """Importable for type annotations; the compiler's namespaces are not Python objects here."""


class Location:
    def __init__(self, file="", lnr=0):
        self.file = file
        self.lnr = lnr

    def __str__(self):
        return "%s:%d" % (self.file, self.lnr)
