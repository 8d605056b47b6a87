class Oops(Exception):
    pass


def risky(x):
    if x > 2:
        raise Oops("too big: %d" % x)
    return x * 10


def safe(xs):
    got = []
    for x in xs:
        try:
            got.append(risky(x))
        except Oops as e:
            got.append(str(e))
        finally:
            got.append(0)
    return got


def outer():
    try:
        return risky(5)
    except ValueError:
        return -1


values = safe([1, 3])
try:
    outer()
except Oops:
    values.append("caught")
print(values)
risky(9)
