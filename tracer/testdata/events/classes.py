import functools

def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        return result + 1
    return wrapper

class Box:
    def __init__(self, v):
        self.v = v

    @property
    def double(self):
        return self.v * 2

    def __repr__(self):
        return "Box(%r)" % (self.v,)

@deco
def make(v):
    b = Box(v)
    return b.double

def counter():
    count = 0
    def inc():
        nonlocal count
        count += 1
        return count
    return inc

inc = counter()
inc()
x = make(
    4,
)
with open("f.txt", "w") as fh:
    fh.write("hi")
items = [Box(1), Box(2)]
items[0].v = 10
