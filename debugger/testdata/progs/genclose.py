def numbers():
    try:
        yield 1
        yield 2
    finally:
        print("cleanup")


def count(n):
    i = 0
    while i < n:
        yield i
        i += 1
    return "end"


def first(g):
    return next(g)


def pair():
    g = numbers()
    return next(g), g.close()


def run():
    g = numbers()
    a = first(g)
    g.close()
    p = pair()
    c = count(2)
    s = next(c) + next(c), c.close()
    return a, p, s


print(run())
