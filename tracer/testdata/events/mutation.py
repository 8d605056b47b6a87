# call: f()
def f():
    xs = [1]
    ys = xs
    d = {"a": [1]}
    s = set()
    xs.append(2)
    ys[0] = True
    d["a"].append(2)
    d["b"] = 1.0
    s.add(-0.0)
    t = (xs, 1)
    xs[1] = 2.0
    nested = [[0]]
    nested[0][0] = 0.0
    return t
