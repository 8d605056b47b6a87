def area(r):
    """Area of a circle
    of radius r.
    """
    return 3 * r * r


total = area(1) + area(
    2,
)
print(total)
