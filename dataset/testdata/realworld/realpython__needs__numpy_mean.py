import numpy as np


def mean(xs):
    """
    >>> mean([1, 2, 3])
    2.0
    """
    return float(np.mean(xs))


print(mean([1, 2, 3]))
