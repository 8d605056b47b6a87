import helper
from helper import Counter, double


def work(n):
    c = Counter(n)
    for i in range(n):
        c.bump(double(i))
    t = helper.total([1, 2, 3])
    try:
        helper.risky(-1)
    except ValueError as e:
        msg = str(e)
    return c.n + t + helper.SCALE


def drain(n):
    out = []
    for v in helper.countdown(n):
        out.append(double(v))
    return out


def fails(x):
    return helper.risky(x) + 1


r = work(3)
d = drain(2)
try:
    fails(-2)
except ValueError:
    r += 1
c = Counter(r)
print(r, d, c, c.bump())
