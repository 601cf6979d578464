"""Constants shared by modules and the orchestrator (names and values as documented by Inmanta)."""

from enum import Enum


class ResourceState(str, Enum):
    unavailable = "unavailable"
    skipped = "skipped"
    dry = "dry"
    deployed = "deployed"
    failed = "failed"
    deploying = "deploying"
    available = "available"
    cancelled = "cancelled"
    undefined = "undefined"
    skipped_for_undefined = "skipped_for_undefined"


class ResourceAction(str, Enum):
    store = "store"
    push = "push"
    pull = "pull"
    deploy = "deploy"
    dryrun = "dryrun"
    getfact = "getfact"
    other = "other"


class Change(str, Enum):
    nochange = "nochange"
    created = "created"
    purged = "purged"
    updated = "updated"


class LogLevel(str, Enum):
    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"
    INFO = "INFO"
    DEBUG = "DEBUG"
    TRACE = "TRACE"


class HandlerResourceState(str, Enum):
    skipped = "skipped"
    skipped_for_dependency = "skipped_for_dependency"
    deployed = "deployed"
    failed = "failed"
    unavailable = "unavailable"


class ParameterSource(str, Enum):
    fact = "fact"
    plugin = "plugin"
    user = "user"
    report = "report"


UNKNOWN_STRING = "<<undefined>>"
INMANTA_URN = "urn:inmanta:"
