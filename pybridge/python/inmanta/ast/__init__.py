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
    pass


class ExternalException(RuntimeException):
    pass


class ExplicitPluginException(RuntimeException):
    pass


class TypingException(RuntimeException):
    pass


class AttributeException(RuntimeException):
    pass
