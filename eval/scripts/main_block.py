def square_all(nums):
    return [n * n for n in nums]

def main():
    nums = [1, 2, 3]
    squares = square_all(nums)
    total = sum(squares)
    print("sum of squares:", total)
    return total

if __name__ == "__main__":
    main()
