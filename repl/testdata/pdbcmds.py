def square(n):
    result = n * n
    return result


def total(xs):
    acc = 0
    for i, x in enumerate(xs):
        acc += square(x)
    return acc


def deco(fn):
    return fn


@deco
def shout(word):
    """Loud."""
    loud = word.upper()
    return loud


values = [1, 2, 3]
out = total(values)
msg = shout("hi")
print(out, msg)
