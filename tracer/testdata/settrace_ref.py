# Reference for the tracer tests: a plain sys.settrace recorder with plain
# repr(), no bounds and no caching. Usage: python settrace_ref.py FILE [CALL]
# Prints JSON: [[event, lineno, function, depth, locals or null, arg or null], ...]
import json, re, sys

ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def r(v):
    try:
        return ADDR.sub(" at 0x0", repr(v))
    except Exception as e:  # ndb's documented placeholder
        return "<repr raised %s>" % type(e).__name__

PROG = "<program>"
src = open(sys.argv[1], encoding="utf-8").read()
call = sys.argv[2] if len(sys.argv) > 2 else ""
if call:
    if src and not src.endswith("\n"):
        src += "\n"
    src += "\n\ndef main():\n    return " + call + "\n"
code = compile(src, PROG, "exec")
g = {"__name__": "__main__", "__builtins__": __builtins__}
out = []


def depth_of(frame):
    d = 0
    f = frame.f_back
    while f is not None:
        if f.f_code.co_filename == PROG:
            d += 1
        f = f.f_back
    return d


def local_items(frame):
    items = list(frame.f_locals.items())
    if not frame.f_code.co_flags & 0x2:  # module or class body: hide dunders
        items = [(k, v) for k, v in items if not (k.startswith("__") and k.endswith("__"))]
    return [[k, r(v)] for k, v in items]


def tr(frame, event, arg):
    if frame.f_code.co_filename != PROG:
        return None
    rec = [event, frame.f_lineno, frame.f_code.co_name, depth_of(frame), None, None]
    rec[4] = local_items(frame)  # every event, return and exception too
    if event == "return":
        rec[5] = r(arg)
    elif event == "exception":
        rec[5] = r(arg[1])
    out.append(rec)
    return tr


exit_ = "normal"
try:
    if call:
        exec(code, g)
        sys.settrace(tr)
        g["main"]()
    else:
        sys.settrace(tr)
        exec(code, g)
except BaseException as e:
    exit_ = r(e)
finally:
    sys.settrace(None)
print(json.dumps({"states": out, "exit": exit_}))
