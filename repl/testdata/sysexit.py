import sys


def check(n):
    if n > 2:
        sys.exit(3)
    return n


for i in range(5):
    check(i)
