def square(x):
    y = x * x
    return y


def total(n):
    acc = 0
    for i in range(n):
        acc += square(i)
    return acc


def f(s, n):
    t = total(n)
    out = s * 2
    return out + str(t)
