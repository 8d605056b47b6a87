import os
import sys

import helper

with open("data.txt") as f:
    text = f.read().strip()
n = helper.double(21)
print(n, text)
print("file", __file__)
print("argv", sys.argv)
print("path0", sys.path[0])
print("cwd", os.getcwd())
try:
    open("out.txt", "w").write("x")
    print("write ok", open("out.txt").read())
except OSError as e:
    print("write refused", type(e).__name__)
print("stdin", repr(sys.stdin.read()))
