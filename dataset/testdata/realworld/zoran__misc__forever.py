def spin(n):
    i = 0
    while True:
        i += n
    return i


spin(1)
