"""`inmanta.config`: the configuration modules read (`Config.get(section, name, default)`, `getboolean`, `set`,
`is_set`, sections as a ConfigParser). Values come, later ones winning, from /etc/inmanta/inmanta.cfg,
/etc/inmanta/inmanta.d/*.cfg, ~/.inmanta.cfg and the project's .inmanta and .inmanta.cfg, then from
environment variables INMANTA_<SECTION>_<NAME> (dashes and dots as underscores, upper case), as the
reference reads them. Option names are normalised with '_' → '-'. `config.environment` defaults to the
environment of the export when one is known."""

import configparser
import glob
import os
import uuid


def _normalize(name):
    return name.replace("_", "-")


def _env_name(section, name):
    return ("INMANTA_%s_%s" % (section, name)).replace("-", "_").replace(".", "_").upper()


class _Parser(configparser.ConfigParser):
    def optionxform(self, name):
        return _normalize(name)


def _project_dir():
    try:
        import _inm

        return _inm.project_dir() if hasattr(_inm, "project_dir") else os.getcwd()
    except Exception:
        return os.getcwd()


class Config:
    _instance = None
    _options = {}

    @classmethod
    def load_config(cls, min_c_config_file=None, config_dir=None, main_cfg_file="/etc/inmanta/inmanta.cfg"):
        parser = _Parser(interpolation=configparser.Interpolation())
        project = _project_dir()
        files = [main_cfg_file]
        files += sorted(glob.glob(os.path.join(config_dir or "/etc/inmanta/inmanta.d", "*.cfg")))
        files += [os.path.expanduser("~/.inmanta.cfg"), os.path.join(project, ".inmanta"),
                  os.path.join(project, ".inmanta.cfg")]
        if min_c_config_file:
            files.append(min_c_config_file)
        parser.read([f for f in files if f and os.path.isfile(f)])
        cls._instance = parser

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls.load_config()
        return cls._instance

    @classmethod
    def _reset(cls):
        cls._instance = None

    @classmethod
    def get(cls, section=None, name=None, default_value=None):
        """The whole ConfigParser without arguments, else the value of section.name (a string, or the default)."""
        if section is None:
            return cls.get_instance()
        name = _normalize(name)
        value = os.environ.get(_env_name(section, name))
        if value is not None:
            return value
        parser = cls.get_instance()
        if parser.has_option(section, name):
            return parser.get(section, name)
        if section == "config" and name == "environment":
            env = _export_environment()
            if env:
                return env
        option = cls._options.get((section, name))
        if option is not None and default_value is None:
            return option.get_default_value()
        return default_value

    @classmethod
    def is_set(cls, section, name):
        parser = cls.get_instance()
        return parser.has_option(section, _normalize(name))

    @classmethod
    def getboolean(cls, section, name, default_value=None):
        value = cls.get(section, name, default_value)
        if value is None:
            raise ValueError("Expected boolean value. Found: None")
        return is_bool(value)

    @classmethod
    def set(cls, section, name, value):
        parser = cls.get_instance()
        if not parser.has_section(section):
            parser.add_section(section)
        parser.set(section, _normalize(name), value)

    @classmethod
    def register_option(cls, option):
        cls._options[(option.section, option.name)] = option


def _export_environment():
    try:
        import _inm

        if hasattr(_inm, "server_environment"):
            return _inm.server_environment() or None
    except Exception:
        return None
    return None


def is_int(value):
    return int(value)


def is_float(value):
    return float(value)


def is_time(value):
    return int(value)


def is_bool(value):
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in ("1", "yes", "true", "on"):
        return True
    if lowered in ("0", "no", "false", "off"):
        return False
    raise ValueError("Not a boolean: %s" % value)


def is_list(value):
    if isinstance(value, list):
        return value
    return [x.strip() for x in str(value).split(",") if x.strip()]


def is_map(value):
    out = {}
    for item in is_list(value):
        key, _, val = item.partition("=")
        out[key.strip()] = val.strip()
    return out


def is_str(value):
    return str(value)


def is_str_opt(value):
    return None if value is None else str(value)


def is_uuid_opt(value):
    return None if value is None else uuid.UUID(str(value))


class Option:
    """A named option with a default and a validator; `get()` reads it through Config."""

    def __init__(self, section, name, default, documentation="", validator=is_str, predecessor_option=None):
        self.section = section
        self.name = _normalize(name)
        self.default = default
        self.documentation = documentation
        self.validator = validator
        Config.register_option(self)

    def get_default_value(self):
        return self.default() if callable(self.default) else self.default

    def get(self):
        raw = Config.get(self.section, self.name, None)
        if raw is None:
            raw = self.get_default_value()
        return self.validator(raw) if raw is not None else None

    def validate(self, value):
        return self.validator(value)

    def set(self, value):
        Config.set(self.section, self.name, value)
