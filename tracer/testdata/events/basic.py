def f(n):
    xs = []
    for i in range(n):
        xs.append(i * i)
    total = sum(xs)
    del i
    return total
f(3)
