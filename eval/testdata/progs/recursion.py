def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


values = [fact(4), fib(6)]
words = {"x": values[0]}
