def risky(x):
    if x > 1:
        raise ValueError("too big: %d" % x)
    return x

def safe(x):
    try:
        return risky(x)
    except ValueError as e:
        msg = str(e)
        return msg
    finally:
        done = True

a = safe(1)
b = safe(5)
c = risky(7)
