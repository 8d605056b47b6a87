def gcd(a, b):
    """Greatest common divisor.

    >>> gcd(12, 18)
    6
    >>> gcd(7, 0)
    7
    >>> g = gcd(2, 4)
    >>> gcd(g, 8)
    2
    """
    while b:
        a, b = b, a % b
    return a


def lcm(a, b):
    """
    >>> lcm(4, 6)
    12
    >>> lcm(0, 0)
    Traceback (most recent call last):
    ZeroDivisionError: integer division or modulo by zero
    """
    return a * b // gcd(a, b)


if __name__ == "__main__":
    print(gcd(10, 4), lcm(10, 4))
