def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def f(n):
    a = fact(n)
    b = fib(n)
    return a + b
