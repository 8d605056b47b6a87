def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True


def primes_below(limit):
    found = []
    for k in range(limit):
        if is_prime(k):
            found.append(k)
    return found


result = primes_below(12)
print(result)
