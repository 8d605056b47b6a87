def running_max(nums):
    best = None
    out = []
    for n in nums:
        if best is None or n > best:
            best = n
        out.append(best)
    return out

readings = [3, 1, 4, 1, 5, 9, 2]
peaks = running_max(readings)
print(peaks[-1], len(peaks))
