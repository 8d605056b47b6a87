"""Evaluates conditions for condition_test.go: reads {"locals": {name:
repr}, "conds": [...]} as JSON on stdin, writes one JSON list: per
condition "True", "False" or "error" (it raised)."""
import json
import sys

req = json.load(sys.stdin)
env = {k: eval(v) for k, v in req["locals"].items()}
out = []
for c in req["conds"]:
    try:
        out.append(str(bool(eval(c, {}, dict(env)))))
    except Exception:
        out.append("error")
json.dump(out, sys.stdout)
