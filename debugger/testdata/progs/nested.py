def leaf(v):
    return v + 1


def mid(v):
    a = leaf(v)
    b = leaf(a) + leaf(a + 1)
    return a + b


def top(xs):
    acc = 0
    for x in xs:
        acc += mid(x)
    return acc


def f(xs):
    items = sorted(xs, key=lambda v: -v)
    total = top(items)
    return total
