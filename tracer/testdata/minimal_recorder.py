# The benchmark's baseline: the least a sys.settrace recorder can do, storing
# only (event, lineno) for every event. Usage: python minimal_recorder.py FILE
# Prints "EVENTS SECONDS CPU_SECONDS" for the traced run alone (no start-up).
import sys, time

src = open(sys.argv[1]).read()
code = compile(src, "<program>", "exec")
events = []
add = events.append


def tr(frame, event, arg):
    if frame.f_code.co_filename != "<program>":
        return None
    add((event, frame.f_lineno))
    return tr2


def tr2(frame, event, arg):
    add((event, frame.f_lineno))
    return tr2


g = {"__name__": "__main__"}
t = time.perf_counter()
c = time.process_time()
sys.settrace(tr)
exec(code, g)
sys.settrace(None)
print(len(events), time.perf_counter() - t, time.process_time() - c)
