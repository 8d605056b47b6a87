def evens(limit):
    n = 0
    while n < limit:
        if n % 2 == 0:
            yield n
        n += 1

total = 0
for v in evens(7):
    total += v
print("total", total)
