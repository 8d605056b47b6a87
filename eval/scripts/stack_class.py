class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    @property
    def size(self):
        return len(self.items)

s = Stack()
for word in ["a", "bb", "ccc"]:
    s.push(word)
top = s.pop()
print(top, s.size)
