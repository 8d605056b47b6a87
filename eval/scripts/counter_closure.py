def make_counter(start):
    count = start

    def step(by=1):
        nonlocal count
        count += by
        return count

    return step

tick = make_counter(10)
a = tick()
b = tick(5)
print(a, b)
