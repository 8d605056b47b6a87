import os
import sys

import helper

with open("data.txt") as f:
    data = f.read().strip()
greeting = helper.shout(helper.GREETING)
name = os.path.basename(__file__)
absolute = os.path.isabs(__file__)
args = sys.argv[1:]
folder = os.path.basename(sys.path[0])
lines = sys.stdin.read().splitlines()
try:
    with open("written.txt", "w") as f:
        f.write("x")
    written = "written " + open("written.txt").read()
except OSError as e:
    written = "write refused " + type(e).__name__
print(greeting, data, "| file", name, absolute, "| argv", args, "| path0", folder, "| stdin", lines, "|", written)
