GREETING = "hello"


def shout(text):
    return text.upper() + "!"
