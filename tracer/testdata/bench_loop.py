def build(n):
    xs = []
    for i in range(n):
        xs.append(i * i)
    return xs

result = build(30000)
