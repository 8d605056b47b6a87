"""Record where CPython's own pdb stops, for ndb's conformance test.

Reads jobs from stdin, one JSON object per line:
    {"path": "/tmp/x/prog.py", "call": true|false, "commands": ["s", "n", "b 7", "c", ...]}
and writes one JSON line per job:
    {"stops": [{"event": "line", "lineno": 3, "function": "f"}, ...,
               {"event": "return", ..., "arg": "repr"}, {"event": "exit"}]}

The program runs under a real pdb.Pdb in which every module but the
program's (__name__ "__main__") is skipped. A script runs as its own module
(pdb.run on its code object: the first stop is the module's first line, as
with `python -m pdb`); a --call program (its source ends with `def main()`)
is executed first without tracing, then main() is called from a frame of
this (skipped) module under Pdb.runcall, so the first stop is main's
--Call--. Each stop consumes commands until one moves (s, n, r, unt, c);
`b N` only sets a breakpoint. A stop outside the program file, or the end
of the run, is recorded as {"event": "exit"}; running out of commands quits.

Run it as a module (not as __main__, which is the program's name):
    python -c 'import sys; sys.path.insert(0, DIR); import pdbrecord; pdbrecord.main()'
"""
import bdb
import builtins
import gc
import io
import json
import pdb
import re
import sys

_ADDR = re.compile(r" at 0x[0-9a-fA-F]+")


def _repr(v):
    try:
        r = repr(v)
    except Exception as e:  # noqa: BLE001 - a repr that raises is still a value
        r = "<repr failed: %s>" % type(e).__name__
    return _ADDR.sub(" at 0x...", r)


class Recorder(pdb.Pdb):
    def __init__(self, path, commands):
        super().__init__(stdout=io.StringIO(), skip=["*"], readrc=False, nosigint=True)
        self.progfile = self.canonic(path)
        self.cmds = list(commands)
        self.stops = []
        self._ev = None
        self.out_of_commands = False

    def is_skipped_module(self, module_name):
        return module_name != "__main__"

    def user_call(self, frame, argument_list):
        self._ev = ("call", None)
        super().user_call(frame, argument_list)

    def user_line(self, frame):
        self._ev = ("line", None)
        super().user_line(frame)

    def user_return(self, frame, return_value):
        self._ev = ("return", return_value)
        super().user_return(frame, return_value)

    def user_exception(self, frame, exc_info):
        self._ev = ("exception", exc_info[1])
        super().user_exception(frame, exc_info)

    def interaction(self, frame, traceback):
        if self.canonic(frame.f_code.co_filename) != self.progfile:
            self.stops.append({"event": "exit"})
            self.set_quit()
            return
        ev, arg = self._ev
        rec = {"event": ev, "lineno": frame.f_lineno, "function": frame.f_code.co_name}
        if ev in ("return", "exception"):
            rec["arg"] = _repr(arg)
        self.stops.append(rec)
        self.setup(frame, traceback)
        try:
            while self.cmds:
                if self.onecmd(self.cmds.pop(0)):
                    break
            else:
                self.out_of_commands = True
                self.set_quit()
        finally:
            self.forget()


def _enter(g):
    return g["main"]()


def run_job(job):
    path = job["path"]
    with open(path, encoding="utf-8") as f:
        source = f.read()
    code = compile(source, path, "exec")
    g = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    rec = Recorder(path, job["commands"])
    saved = sys.stdout
    sys.stdout = io.StringIO()
    # The cyclic collector is paused during the run: when it runs depends on
    # pdb's own allocations, and a collection can finalize program objects
    # (e.g. a generator kept in a cycle through an exception pdb stopped at)
    # at an arbitrary event. Leftovers are collected after the run, untraced.
    gc.disable()
    try:
        if job.get("call"):
            exec(code, g)
            rec.runcall(_enter, g)
        else:
            rec.run(code, g)
    except bdb.BdbQuit:
        pass
    except BaseException:  # noqa: BLE001 - the program's own uncaught error ends the run
        pass
    finally:
        sys.stdout = saved
        sys.settrace(None)
        gc.enable()
        rec.clear_all_breaks()
        if hasattr(bdb.Breakpoint, "clearBreakpoints"):
            bdb.Breakpoint.clearBreakpoints()
    stops = rec.stops
    if not rec.out_of_commands and (not stops or stops[-1]["event"] != "exit"):
        stops.append({"event": "exit"})
    rec = None
    gc.collect()
    return {"stops": stops}


def main():
    out = sys.stdout
    gc.collect()
    gc.freeze()  # the recorder's own objects: later collections skip them
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            res = run_job(json.loads(line))
        except Exception as e:  # noqa: BLE001 - report, keep serving
            res = {"error": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps(res) + "\n")
        out.flush()
