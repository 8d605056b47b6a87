async def agen(n):
    for i in range(n):
        yield i


async def square(x):
    return x * x


async def work(n):
    xs = [x async for x in agen(n)]
    ys = [await square(x) for x in xs]
    zs = {x: y async for x, y in pairs(xs, ys)}
    return xs, ys, zs


class Res:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


async def guarded(n):
    async with Res() as r:
        out = await work(n)
    return out, r is not None


async def pairs(a, b):
    for p in zip(a, b):
        yield p


def run(n):
    c = guarded(n)
    try:
        c.send(None)
    except StopIteration as e:
        return e.value


print(run(3))
