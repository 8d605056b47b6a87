def add(a, b):
    total = a + b
    return total


def f(xs):
    acc = 0
    # a comment
    for x in xs:
        acc = add(acc, x)
    if acc > 5:
        raise ValueError(acc)
    return acc
