class Stack:
    """
    >>> Stack(3).push(4)
    [3, 4]
    >>> s = Stack(1)
    >>> s.push(2)
    [1, 2]
    >>> Stack(0).size()
    1
    """

    def __init__(self, first):
        self.items = [first]

    def push(self, x):
        self.items.append(x)
        return self.items

    def size(self):
        return len(self.items)


def main():
    s = Stack(1)
    for i in range(3):
        s.push(i)
    print(s.size())


if __name__ == "__main__":
    main()
