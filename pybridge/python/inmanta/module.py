"""`inmanta.module`: `Project.get()` as plugins use it — `project_path`, and `modules` ({name: Module} of the
loaded modules, each with `name` and `path`). Project loading and module installation are the compiler's own
(tools/), not offered here: other members raise an AttributeError saying so."""

import _inm


class InvalidModuleException(Exception):
    pass


class ModuleNotFoundException(Exception):
    pass


class Module:
    def __init__(self, name, path):
        self.name = name
        self.path = path
        self._path = path

    def get_name(self):
        return self.name

    def __repr__(self):
        return "Module(%s, %s)" % (self.name, self.path)


class _Modules(dict):
    """Loaded modules by name, resolved on demand through the compiler."""

    def __missing__(self, name):
        path = _inm.module_dir(name)
        if not path:
            raise KeyError(name)
        self[name] = Module(name, path)
        return self[name]

    def __contains__(self, name):
        try:
            self[name]
            return True
        except KeyError:
            return False

    def keys(self):
        self._fill()
        return super().keys()

    def items(self):
        self._fill()
        return super().items()

    def values(self):
        self._fill()
        return super().values()

    def __iter__(self):
        self._fill()
        return super().__iter__()

    def _fill(self):
        for name in (_inm.module_names() if hasattr(_inm, "module_names") else ()):
            if name not in dict.keys(self):
                self.__missing__(name)


class Project:
    _instance = None

    def __init__(self):
        self.project_path = _inm.project_dir()
        self.modules = _Modules()

    @classmethod
    def get(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def __getattr__(self, name):
        raise AttributeError("inmanta.module.Project.%s is not supported here: module code can read project_path "
                             "and modules" % name)
