import math

def area(r):
    a = math.pi * r * r
    return round(a, 2)

xs = [1, 2]
total = 0
for r in xs:
    total += area(r)
print(total)
