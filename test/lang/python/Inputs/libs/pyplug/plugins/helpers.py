def upper(text):
    return text.upper()


def div(a, b):
    return a // b
