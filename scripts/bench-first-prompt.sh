#!/usr/bin/env bash
# Start-up and command latency, side by side with `python3 -m pdb`
# (issue 28's targets: the first prompt within 1.5x of pdb's, every
# command under 50 ms at a stop). docs/debugger.md, "Start-up and command
# latency", holds the figures and how to read them.
#
#   scripts/bench-first-prompt.sh [NDB_BINARY] [RUNS] [ROUNDS]
#
# defaults: bin/ndb (built when missing), 10 runs, 5 rounds.
#
# 1. First prompt, whole processes, in turn (so that the machine's load
#    falls on all alike), RUNS times each:
#      ndb          ndb debug --engine real --batch p.py (its cache warm)
#      ndb-newdir   the same in a new folder each time, with no version
#                   file of its own: pyenv chooses there as in the folder
#                   the cache's answer was made in, which holds
#      ndb-newver   a new folder with its own .python-version (the version
#                   pyenv runs now, where pyenv is found): the cache has no
#                   answer for it yet, the worker starts on the last answer
#                   while the interpreter is probed
#      ndb-nocache  the same with NDB_NO_PYTHON_CACHE=1 (the interpreter
#                   probed, then the worker started from source)
#      pdb          python3 -m pdb p.py (python3 as the user types it: a
#                   pyenv shim here)
#      pdb-exe      the interpreter itself -m pdb p.py
#    "prompt": from the start to the first prompt (ndb: its first JSON
#    line; pdb: "(Pdb) "); "whole": to the exit after q. Min and median in
#    ms, and ndb's median over pdb's.
# 2. Commands at a stop: one live session of the real engine on a small
#    program, the command sequence below ROUNDS times (restart between
#    rounds); each command timed from writing it to reading its answer
#    line. Median and max per command in ms; commands over 50 ms named.
# NDB_PYTHON names the interpreter for both (default python3);
# NDB_BASELINE=OTHER_NDB_BINARY adds it as "baseline" to part 1 (before and
# after a change, in one run).
set -euo pipefail
ndb=${1:-bin/ndb}
runs=${2:-10}
rounds=${3:-5}
python=${NDB_PYTHON:-python3}
if [ ! -x "$ndb" ]; then
  "${GO:-go}" build -o "$ndb" ./cmd/ndb
fi
ndb=$(realpath "$ndb")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

printf 'x = 1\ny = 2\nprint(x + y)\n' >"$dir/p.py"
cat >"$dir/prog.py" <<'EOF'
def fib(n):
    a, b = 0, 1
    for i in range(n):
        a, b = b, a + b
    return a


def main():
    total = 0
    for k in range(6):
        total += fib(k)
    words = ["alpha", "beta", "gamma"]
    print(total, words)
    return total


main()
EOF

cat >"$dir/bench.py" <<'EOF'
import os, statistics, subprocess, sys, time
ndb, python, runs, rounds, d, baseline = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
exe = sys.executable

fresh = [0]
try:
    version = subprocess.run(["pyenv", "version-name"], capture_output=True, text=True).stdout.strip()
except OSError:
    version = ""

def first_prompt(cmd, marker, env):
    """ms to the first prompt, ms to the exit after q."""
    cwd = d
    if env in ("newdir", "newver"):
        fresh[0] += 1
        cwd = os.path.join(d, "new%d" % fresh[0])
        os.mkdir(cwd)
        with open(os.path.join(cwd, "p.py"), "w") as f:
            f.write(open(os.path.join(d, "p.py")).read())
        if env == "newver":
            with open(os.path.join(cwd, ".python-version"), "w") as f:
                f.write(version + "\n")
        env = None
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    out = b""
    while marker not in out:
        b = os.read(p.stdout.fileno(), 65536)
        if not b:
            raise SystemExit("%s ended before its prompt: %r" % (cmd, out[-300:]))
        out += b
    t1 = time.perf_counter()
    p.stdin.write(b"q\n")
    p.stdin.close()
    p.stdout.read()
    p.wait()
    return (t1 - t0) * 1000, (time.perf_counter() - t0) * 1000

env = dict(os.environ)
nocache = dict(env, NDB_NO_PYTHON_CACHE="1")
variants = [
    ("ndb", [ndb, "debug", "--engine", "real", "--batch", "--python", python, "p.py"], b"\n", env),
    ("ndb-newdir", [ndb, "debug", "--engine", "real", "--batch", "--python", python, "p.py"], b"\n", "newdir"),
    ("ndb-nocache", [ndb, "debug", "--engine", "real", "--batch", "--python", python, "p.py"], b"\n", nocache),
    ("pdb", [python, "-m", "pdb", "p.py"], b"(Pdb) ", env),
    ("pdb-exe", [exe, "-m", "pdb", "p.py"], b"(Pdb) ", env),
]
if version:
    variants.insert(2, ("ndb-newver", [ndb, "debug", "--engine", "real", "--batch", "--python", python, "p.py"], b"\n", "newver"))
if baseline:
    variants.insert(2, ("baseline", [baseline, "debug", "--engine", "real", "--batch", "--python", python, "p.py"], b"\n", env))
for name, cmd, marker, e in variants:
    first_prompt(cmd, marker, e)  # fills ndb's cache, warms the page cache
got = {name: ([], []) for name, *_ in variants}
for _ in range(runs):
    for name, cmd, marker, e in variants:
        a, b = first_prompt(cmd, marker, e)
        got[name][0].append(a)
        got[name][1].append(b)
print("first prompt, %d runs each, ms (pdb: %s, pdb-exe: %s)" % (runs, python, exe))
print("%-12s %8s %8s %8s %8s" % ("", "prompt", "min", "whole", "min"))
for name, _, _, _ in variants:
    p, w = got[name]
    print("%-12s %8.0f %8.0f %8.0f %8.0f" % (name, statistics.median(p), min(p), statistics.median(w), min(w)))
for base in ("pdb", "pdb-exe"):
    for name in ("ndb", "ndb-newdir") + (("ndb-newver",) if version else ()) + ("ndb-nocache",) + (("baseline",) if baseline else ()):
        print("%s / %s: prompt %.2fx (min %.2fx), whole %.2fx (min %.2fx)" % (
            name, base, statistics.median(got[name][0]) / statistics.median(got[base][0]),
            min(got[name][0]) / min(got[base][0]),
            statistics.median(got[name][1]) / statistics.median(got[base][1]),
            min(got[name][1]) / min(got[base][1])))

# Commands at a stop: (label, command). Each answers one JSON line.
seq = [("b", "b 4"), ("c (to a breakpoint)", "c"), ("s", "s"), ("n", "n"), ("p EXPR", "p a + b"),
       ("pp", "pp locals()"), ("w", "w"), ("l", "l"), ("a", "a"), ("display", "display a"),
       ("whatis", "whatis a"), ("c (again)", "c"), ("unt", "unt"), ("r", "r"), ("rs", "rs"),
       ("rn", "rn"), ("rr", "rr"), ("rc", "rc"), ("cl", "cl prog.py:4"), ("restart", "restart")]
p = subprocess.Popen([ndb, "debug", "--engine", "real", "--batch", "--python", python, "prog.py"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=d)
p.stdout.readline()  # the first stop
times = {label: [] for label, _ in seq}
errors = {}
for _ in range(rounds):
    for label, cmd in seq:
        t0 = time.perf_counter()
        p.stdin.write(cmd.encode() + b"\n")
        p.stdin.flush()
        line = p.stdout.readline()
        times[label].append((time.perf_counter() - t0) * 1000)
        if not line:
            raise SystemExit("ndb ended at %r" % cmd)
        if b'"error"' in line[:10]:
            errors[label] = line.decode().strip()
p.stdin.write(b"q\n")
p.stdin.close()
p.wait()
print()
print("commands at a stop, live real engine, %d rounds, ms" % rounds)
print("%-22s %8s %8s" % ("", "median", "max"))
slow = []
for label, _ in seq:
    t = times[label]
    print("%-22s %8.1f %8.1f%s" % (label, statistics.median(t), max(t), "   ERROR " + errors[label] if label in errors else ""))
    if max(t) > 50:
        slow.append("%s (max %.0f ms, median %.0f ms)" % (label, max(t), statistics.median(t)))
print("over 50 ms: " + (", ".join(slow) if slow else "none"))
EOF
# Run by the interpreter itself: through pyenv's shim, python3 would find
# the interpreter first on the PATH its children inherit.
pyexe=$("$python" -c 'import sys; print(sys.executable)')
baseline=${NDB_BASELINE:+$(realpath "$NDB_BASELINE")}
"$pyexe" "$dir/bench.py" "$ndb" "$(command -v "$python")" "$runs" "$rounds" "$dir" "$baseline"
