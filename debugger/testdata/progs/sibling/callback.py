import helper


def square(x):
    y = x * x
    return y


def run():
    a = helper.apply(square, 3)
    b = helper.apply(lambda v: v - 1, a)
    return a + b


print(run())
