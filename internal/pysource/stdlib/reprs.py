"""Writes reprs.tsv: for the public names of the standard-library modules
programs most often import from, the text the tracer shows for the value
(repr, addresses as 0x0), one "module.name<TAB>repr" per line, sorted.

Run it with the Python the model was trained on (3.11):
    python3.11 internal/pysource/stdlib/reprs.py > internal/pysource/stdlib/reprs.tsv

Kept: functions, classes, methods and other callables, and constants of
the simple types, whose reprs are short and the same on every machine with
this Python. Left out: modules, containers, anything whose repr has a path
or a line break, and values that depend on the build, the machine or the
environment (the interpreter's version strings, time zones, flags).
"""
import importlib
import re
import types

MODULES = """__future__ abc argparse array bisect calendar cmath collections collections.abc contextlib
copy csv dataclasses datetime decimal difflib doctest enum fractions functools glob heapq inspect io
itertools json keyword math numbers operator os os.path pathlib pprint queue random re statistics
string struct sys textwrap time timeit typing unicodedata warnings weakref""".split()

# constants that differ between machines or builds of one Python version
VARYING = {"sys.version", "sys.hexversion", "sys.api_version", "sys.abiflags", "sys.platlibdir",
           "sys.pycache_prefix", "sys.dont_write_bytecode", "sys.flags", "unicodedata.unidata_version"}
VARYING_MODULES = {"time"}  # timezone, altzone, daylight: the machine's zone

ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
SIMPLE = (int, float, complex, str, bytes, bool, type(None))


def main():
    rows = {}
    for m in MODULES:
        mod = importlib.import_module(m)
        names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
        for n in names:
            key = m + "." + n
            if n.startswith("_") or not hasattr(mod, n) or key in VARYING:
                continue
            v = getattr(mod, n)
            if isinstance(v, types.ModuleType) or isinstance(v, (list, dict, set, tuple)):
                continue
            if not (callable(v) or isinstance(v, SIMPLE) and m not in VARYING_MODULES) and not m == "__future__":
                continue
            r = ADDRESS.sub(" at 0x0", repr(v))
            if len(r) > 120 or any(c in r for c in "\n\t/\\\""):
                continue
            rows[key] = r
    for k in sorted(rows):
        print(k + "\t" + rows[k])


if __name__ == "__main__":
    main()
