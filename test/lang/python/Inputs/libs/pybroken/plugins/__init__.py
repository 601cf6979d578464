from inmanta.plugins import plugin

import module_that_does_not_exist  # noqa: F401


@plugin
def never() -> "int":
    return 1
