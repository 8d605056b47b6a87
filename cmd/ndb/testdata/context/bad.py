def f(n):
    return n +
