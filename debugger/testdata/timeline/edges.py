# Steps whose inverse is not the step back: calls nested in one line
# (a return followed by a sibling call at the same depth, of the same
# function), a generator's return at each yield (pdb's next passes over
# it), yield from, and exceptions leaving a frame.
def f(x):
    y = x + 1
    return y


def gen(n):
    for i in range(n):
        yield i


def deleg():
    r = yield from gen(2)
    yield r


def boom(x):
    if x > 1:
        raise ValueError(x)
    return x


total = f(f(f(1)))
for v in gen(3):
    total += v
for w in deleg():
    total += w or 0
try:
    boom(5)
except ValueError as e:
    total += 1
vals = [f(i) for i in range(2)]
print(total, vals)
