def parse(s):
    try:
        return int(s)
    except ValueError:
        return -1


def safe_div(a, b):
    if b == 0:
        raise ZeroDivisionError("b is zero")
    return a / b


nums = [parse(x) for x in ["1", "x", "3"]]
try:
    safe_div(1, 0)
except ZeroDivisionError as e:
    msg = str(e)
r = safe_div(nums[0], nums[2])
