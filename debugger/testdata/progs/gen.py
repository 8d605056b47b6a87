def count(n):
    i = 0
    while i < n:
        yield i
        i += 1
    return i


def squares(n):
    total = yield from count(n)
    for k in range(2):
        yield k * k
    return total


def consume():
    out = []
    for v in squares(3):
        out.append(v)
    g = count(2)
    first = next(g)
    rest = list(g)
    return out, first, rest


result = consume()
pairs = [x for x in count(3)]
print(result, pairs)
