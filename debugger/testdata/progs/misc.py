import contextlib


@contextlib.contextmanager
def tag(log, name):
    log.append("<" + name)
    try:
        yield len(log)
    finally:
        log.append(name + ">")


class Node:
    kind = "node"

    def __init__(self, v, nxt=None):
        self.v, self.nxt = v, nxt

    def total(self):
        return self.v + (self.nxt.total() if self.nxt else 0)


def deep(n):
    if n == 0:
        raise ValueError("bottom")
    try:
        return deep(n - 1)
    finally:
        n += 1


async def co(x):
    return x * 3


def f(k):
    log = []
    with tag(log, "a") as depth:
        log.append(depth)
    chain = Node(1, Node(2, Node(3)))
    i = 0
    while True:
        i += 1
        if i % 2:
            continue
        if i > 4:
            break
    try:
        deep(k)
    except ValueError as e:
        log.append(str(e))
    c = co(k)
    try:
        c.send(None)
    except StopIteration as stop:
        log.append(stop.value)
    return log, chain.total(), i
