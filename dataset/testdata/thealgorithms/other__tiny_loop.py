def spin(n):
    """
    >>> spin(10)
    10
    """
    total = 0
    while total != n:
        total += 1
    return total


if __name__ == "__main__":
    spin(-1)
