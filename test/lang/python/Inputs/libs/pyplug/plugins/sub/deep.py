from ..helpers import upper


def bang():
    return upper("!")
