def inner(n):
    for i in range(n):
        yield i
    return "done"


def outer():
    for v in inner(2):
        yield v
    r = yield from inner(1)
    yield r


def closer():
    try:
        yield 1
        yield 2
    finally:
        print("closed")


def thrower():
    try:
        yield 1
    except KeyError:
        yield "caught"


def bad():
    yield 1
    raise ValueError("in gen")


def run():
    out = list(outer())
    c = closer()
    next(c)
    c.close()
    t = thrower()
    next(t)
    out.append(t.throw(KeyError))
    try:
        for x in bad():
            out.append(x)
    except ValueError as e:
        out.append(str(e))
    total = sum(x for x in range(3) if x)
    return out, total


if __name__ == "__main__":
    print(run())
