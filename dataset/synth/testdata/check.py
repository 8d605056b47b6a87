"""Batch checker for generated programs (used by the Go tests).

Reads JSON lines {"id", "source", "calls", "except_lines", "run"} on stdin and
writes one JSON line per request: whether the source compiles, and for each
call (when "run" is true) how it ended, under a time and event bound, whether
an except clause ran, the deepest recursion of any function, and the
repr() of the returned value.
"""
import ast
import json
import resource
import signal
import sys

EVENT_LIMIT = 200_000
TIME_LIMIT_S = 1.0

try:  # a memory bomb stops near 2 GiB instead of taking the machine down
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
except (ValueError, OSError):
    pass


class Bound(BaseException):
    """Raised from the tracer or the alarm: not catchable by `except Exception`."""


def on_alarm(signum, frame):
    raise Bound("timeout")


signal.signal(signal.SIGALRM, on_alarm)


def literal_call(call):
    """The call is f(<literal>, ...): every argument is a Python literal."""
    tree = ast.parse(call, mode="eval").body
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and tree.func.id == "f"):
        return False
    if tree.keywords:
        return False
    for a in tree.args:
        ast.literal_eval(a)
    return True


def run_call(code, call, except_lines):
    ns = {"__name__": "synth"}
    exec(code, ns)
    hit = False
    events = 0
    max_rec = 0

    def tracer(frame, event, arg):
        nonlocal hit, events, max_rec
        if frame.f_code.co_filename != "<synth>":
            return None
        events += 1
        if events > EVENT_LIMIT:
            raise Bound("events")
        if event == "call":
            depth, fr = 0, frame
            while fr is not None:
                if fr.f_code is frame.f_code:
                    depth += 1
                fr = fr.f_back
            max_rec = max(max_rec, depth)
        elif event == "line" and frame.f_lineno in except_lines:
            hit = True
        return tracer

    status, exc, result = "ok", None, None
    compiled_call = compile(call, "<call>", "eval")
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    sys.settrace(tracer)
    try:
        value = eval(compiled_call, ns)
        sys.settrace(None)
        result = repr(value)[:300]
    except Bound as b:
        status = str(b)
    except MemoryError:
        status = "memory"
    except Exception as e:  # the program's own error: data
        status, exc = "error", type(e).__name__
    finally:
        sys.settrace(None)
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"status": status, "exc": exc, "result": result, "except_hit": hit, "max_rec": max_rec, "events": events}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        res = {"id": req["id"], "compile": None, "bad_calls": [], "calls": []}
        try:
            code = compile(req["source"], "<synth>", "exec")
        except SyntaxError as e:
            res["compile"] = f"{e.msg} (line {e.lineno})"
            print(json.dumps(res), flush=True)
            continue
        for call in req["calls"]:
            try:
                if not literal_call(call):
                    res["bad_calls"].append(call)
            except (SyntaxError, ValueError):
                res["bad_calls"].append(call)
        if req.get("run"):
            lines = set(req.get("except_lines") or [])
            for call in req["calls"]:
                res["calls"].append(run_call(code, call, lines))
        print(json.dumps(res), flush=True)


main()
