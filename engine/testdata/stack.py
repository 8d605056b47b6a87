def total(xs):
    acc = 0
    for x in xs:
        acc += x
    return acc


def main():
    xs = [1, 2]
    t = total(xs)
    return t


print("start")
main()
