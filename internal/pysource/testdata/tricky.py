"""A module docstring with def fake(): and class Fake: inside."""
import functools as ft, os.path
from collections import (OrderedDict as OD,
                         defaultdict)

s = '''
def not_a_def(x):
    return x
'''
t = f"{s!r:>{len(s)}} {{def also_not():}}"  # def in a comment():
u = rb'\'' + b"\"" ; v = 1


def deco(*dargs, key=lambda k=1: k, **dkw):
    def wrap(fn):
        @ft.wraps(fn)
        async def inner(*a, __priv=0, **kw):
            async with ctx() as (c, d), other as e:
                pass
            async for q in aiter(a):
                yield q
        return inner
    return wrap


@deco(1,
      2)
@deco()
class K(object, metaclass=type):
    """doc"""
    __slots__ = ()
    x = [i * j for i in range(3) for j in range(i) if (w := i)]
    def m(self, a: int = 1, /, b: "str" = 'x', *, c, **k) -> None: return super().m(a)
    class Inner: pass
    def n(self): \
        return self.__secret


def outer(n):
    total = 0
    def mid():
        nonlocal total
        def leaf():
            return n + total
        total += leaf()
        return {k: v for k, v in zip("ab", [n, n]) if k}
    g = (x for x in range(n))
    fs = [lambda y, n=n: y + n for _ in range(2)]
    match n:
        case [first, *rest] if first > 0:
            pass
        case {"k": val, **others}:
            pass
        case Point(x=px, y=0) | Point(x=0, y=px):
            pass
        case str() as name:
            pass
        case _:
            pass
    try:
        import json as j
    except (ValueError, TypeError) as err:
        del err
    else:
        from os import sep
    finally:
        print(f"{total=} {[z for z in (n,)]}")
    with open(s) as fh: data = fh.read()
    for (a, b), [c, *d] in []: pass
    global v
    v = 2
    return mid


def one(x): return [y for y in x]


class Empty: ...


def annotated():
    count: int
    ratio: float = 0.5
    data[0] = ratio
    obj.attr = count
    return locals()


if __name__ == "__main__":
    outer(3)
