import sys


def scale(x, k):
    y = x * k
    return y


def main():
    total = 0
    for i, a in enumerate(sys.argv[1:]):
        total += scale(int(a), i)
    line = sys.stdin.readline().strip()
    print(line, total)


main()
