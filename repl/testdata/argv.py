import sys

args = sys.argv[1:]
print(len(args))
