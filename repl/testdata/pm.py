def inner(d, k):
    v = k * 2
    return d[k]


def outer(d):
    key = "x"
    return inner(d, key)


data = {"a": 1}
print("before")
outer(data)
