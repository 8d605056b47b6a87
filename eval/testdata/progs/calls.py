def square(n):
    result = n * n
    return result


def total(xs):
    acc = 0
    for x in xs:
        acc += square(x)
    return acc


print(total([1, 2, 3]))
