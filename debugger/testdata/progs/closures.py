import functools


def trace_calls(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        wrapper.calls += 1
        return fn(*args)
    wrapper.calls = 0
    return wrapper


def make_adder(k):
    def add(x):
        return x + k
    return add


@trace_calls
def double(x):
    return 2 * x


class Temp:
    def __init__(self, c):
        self._c = c

    @property
    def f(self):
        return self._c * 9 / 5 + 32

    @f.setter
    def f(self, v):
        self._c = (v - 32) * 5 / 9


def f(s, n):
    add = make_adder(n)
    nums = [add(len(w)) for w in s.split()]
    t = Temp(n)
    t.f = t.f + 9
    d = {w: double(i)
         for i, w in enumerate(s.split())
         if i % 2 == 0}
    total = sum(
        nums,
        start=0,
    )
    return total, d, round(t.f, 2), double.calls
