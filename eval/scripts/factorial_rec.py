def factorial(n):
    if n <= 1:
        return 1
    return n * factorial(n - 1)

results = {}
for k in (3, 5):
    results[k] = factorial(k)
print(results)
