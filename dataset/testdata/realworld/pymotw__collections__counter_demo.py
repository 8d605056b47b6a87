import collections


class Tally:
    def __init__(self, words):
        self.counts = collections.Counter(words)

    def top(self, n):
        return [w for w, _ in self.counts.most_common(n)]


t = Tally("a b a c b a".split())
for word in t.top(2):
    print(word, t.counts[word])
