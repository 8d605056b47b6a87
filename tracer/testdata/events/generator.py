def gen(n):
    i = 0
    while i < n:
        got = yield i
        i += 1
    return "done"

def consume():
    g = gen(3)
    first = next(g)
    second = g.send("x")
    g.close()
    return [first, second] + list(gen(2))

result = consume()
