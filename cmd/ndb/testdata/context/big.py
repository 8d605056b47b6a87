s = "x" * 2000
for i in range(1000):
    t = s
