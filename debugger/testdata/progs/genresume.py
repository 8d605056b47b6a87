def gen():
    x = yield 1
    y = yield 2
    yield x, y


def pull(g, v):
    got = g.send(v)
    return got


def drive():
    g = gen()
    a = next(g)
    b = pull(g, "x")
    c = pull(g, "y")
    return a, b, c


print(drive())
