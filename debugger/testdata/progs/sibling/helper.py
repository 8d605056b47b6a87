"""Imported by main.py and callback.py from this folder (a sibling module).

Its frames are not the program's: the tracer does not record them and pdb,
with every module but __main__ skipped, does not stop in them.
"""

SCALE = 3


def double(x):
    y = 2 * x
    return y


def total(xs):
    s = 0
    for x in xs:
        s += double(x)
    return s


class Counter:
    def __init__(self, start):
        self.n = start

    def bump(self, k=1):
        self.n += k
        return self.n

    def __repr__(self):
        return "Counter(%d)" % self.n


def risky(x):
    if x < 0:
        raise ValueError("negative: %d" % x)
    return x


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def apply(fn, x):
    v = fn(x)
    return v + 1
