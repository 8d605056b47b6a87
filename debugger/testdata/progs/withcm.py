class Box:
    def __init__(self, name):
        self.name = name
        self.log = []

    def __enter__(self):
        self.log.append("in")
        return self

    def __exit__(self, et, ev, tb):
        self.log.append("out")
        return et is KeyError


def work(n):
    with Box("a") as b:
        b.log.append(n)
        with Box("b") as c:
            c.log.append(n * 2)
    with Box("k") as k:
        k.log.append(1)
        raise KeyError(n)
    return b.log + c.log + k.log


print(work(3))
