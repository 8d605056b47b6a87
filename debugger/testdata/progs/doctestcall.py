import doctest


def double(x):
    """
    >>> double(2)
    4
    >>> double(3) + 1
    7
    """
    y = x * 2
    return y


def twice(x):
    r = double(x)
    return double(r)


def run():
    ns = {"double": double, "twice": twice, "__name__": "doctests"}
    a = eval("twice(1)", ns)
    exec("b = double(5)", ns)
    doctest.run_docstring_examples(double, ns, name="doctests")
    return a, ns["b"]


print(run())
