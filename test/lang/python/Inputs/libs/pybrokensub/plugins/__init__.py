from inmanta.plugins import plugin


@plugin
def fine() -> "int":
    return 1
