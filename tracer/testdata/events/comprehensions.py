# call: f([3, 1, 2])
def f(xs):
    squares = [x * x for x in xs]
    evens = {x for x in squares if x % 2 == 0}
    pairs = {k: v for k, v in zip(xs, squares)}
    total = sum(v for v in pairs.values())
    return sorted(squares, key=lambda s: -s), evens, total
