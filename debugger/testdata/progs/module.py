x = 1
y = [i * i
     for i in range(4)]
if x:
    z = sum(y) + \
        x
else:
    z = 0


def g(a, b=2):
    c = a + b
    return c


for i in range(2):
    z += g(i)
w = (lambda q: q + 1)(z)
s = {k: g(len(k)) for k in "ab" if k}
print(z, w)
if __name__ == "__main__":
    z = -z
