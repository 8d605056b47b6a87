def walk(words):
    seen = []
    for w in words:
        seen.append(w)
        if len(w) > 4:
            print(w)
    return seen


class Node:
    def __init__(self, v):
        self.v = v

    def find(self, x):
        if self.v == x:
            return self
        return None


words = ["apple", "mango", "melon", "kiwi", "mint", "fig", "moss"]
walk(words)
n = Node(3)
n.find(3)
n.find(4)
print(len(walk(words[:2])))
