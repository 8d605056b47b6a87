def check(v):
    if v > 2:
        raise ValueError("too big: %d" % v)
    return v


def g(items):
    seen = []
    for v in items:
        try:
            seen.append(check(v))
        except ValueError:
            seen.append(-1)
    return seen
