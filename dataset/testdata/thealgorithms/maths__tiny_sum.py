"""Sum helpers written for ndb's tests (thealgorithms-style, not copied)."""

from math import isqrt


def add_all(*nums: int) -> int:
    """
    >>> add_all(1, 2, 3)
    6
    >>> add_all(1,
    ...         2)  # doctest: +NORMALIZE_WHITESPACE
    3
    >>> add_all(1, 2, 3)
    6
    >>> total = add_all(4)
    >>> add_all(total)
    4
    >>> print(add_all(5))
    5
    >>> import math
    >>> list(squares(3))
    [0, 1, 4]
    """
    return sum(nums)


def squares(n):
    """
    >>> [x for x in squares(2)]
    [0, 1]
    """
    for i in range(n):
        yield i * i


def root(n):
    """
    >>> root(-1)
    Traceback (most recent call last):
        ...
    ValueError: negative
    """
    if n < 0:
        raise ValueError("negative")
    return isqrt(n)


if __name__ == "__main__":
    print(add_all(1, 2))
    # a comment inside the block

    print(root(16))
