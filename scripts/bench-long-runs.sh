#!/usr/bin/env bash
# Long runs, side by side: `python3 -m pdb` vs `ndb debug --engine real`,
# whole processes (start-up included), on a tight loop of N line events.
# docs/debugger.md, "Long runs", holds the figures and how to read them.
#
#   scripts/bench-long-runs.sh [NDB_BINARY] [REPEATS] [EVENTS...]
#
# defaults: bin/ndb, 3 repeats, 1000000 10000000 50000000 line events.
# Scenarios: `c` to the end with no breakpoint (ndb runs it untraced); `b 9`,
# `c`, `c` (the breakpoint is hit once, half way; ndb's continue records the
# first 50,000 events, then runs filtered: traced only where a breakpoint can stop). Each is timed REPEATS times (min and
# median wall seconds) and the peak RSS of every process of the command's
# tree (ndb, its sandbox, its Python worker and the program) is sampled
# every 10 ms from /proc (VmHWM: a process's own peak), largest reported.
# NDB_BENCH_FLAGS adds flags to ndb debug (e.g. --max-trace-mb 1024);
# NDB_BENCH_SCENARIOS picks scenarios (default "c bcc"; "rs": `c` then `rs`,
# ndb only, the replay of docs/debugger.md, or the checkpoint's tail once the
# run kept checkpoints; "back": `c`, then `rs`, `rn`, `rs`, `rn` from the end,
# ndb only (a tail recorded from the newest checkpoint; compare with "c" for
# what the four reverse commands cost); "start": `c`, `rr` (to before the
# start: a new run waits where the `c` began), `c` again, `rc`; "mid":
# `b 9`, `c` (the breakpoint half way, reached filtered), then `rs`, `rn`,
# `rs` back into the first call of work() from the stretch's checkpoints
# (pdb: `b 9`, `c`); "n": `n` over each call of work(),
# N/2 line events each, then `c`: ndb's next records its first 10,000 events,
# then runs filtered, pausing only at the module's lines and returns).
set -euo pipefail
ndb=${1:-bin/ndb}
reps=${2:-3}
shift $(( $# >= 2 ? 2 : $# )) || true
events=("$@")
[ ${#events[@]} -gt 0 ] || events=(1000000 10000000 50000000)
ndb=$(realpath "$ndb")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# 2 line events per iteration (the while test and the increment); two calls
# of work() of N/4 iterations each: N line events in all. Line 9 runs once.
cat >"$dir/loop.py" <<'EOF'
import sys
def work(n):
    i = 0
    while i < n:
        i += 1
    return i
n = int(sys.argv[1])
a = work(n // 4)
b = work(n // 4)
print(a + b)
EOF

cat >"$dir/measure.py" <<'EOF'
# measure.py REPEATS INPUT -- CMD...: min/median wall seconds, peak RSS (MB)
# of the largest process in the command's tree, and the output's last line.
import os, subprocess, sys, time
reps, stdin_text = int(sys.argv[1]), sys.argv[2].encode().decode("unicode_escape")
cmd = sys.argv[4:]
def tree(root):
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out
def hwm(p):
    try:
        with open("/proc/%d/status" % p) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
walls, rss, last = [], 0, ""
for _ in range(reps):
    t0 = time.monotonic()
    pr = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    pr.stdin.write(stdin_text.encode())
    pr.stdin.close()
    import threading
    buf = []
    th = threading.Thread(target=lambda: buf.append(pr.stdout.read()))
    th.start()
    peak = {}
    while pr.poll() is None:
        for p in tree(pr.pid):
            peak[p] = max(peak.get(p, 0), hwm(p))
        time.sleep(0.01)
    walls.append(time.monotonic() - t0)
    th.join()
    rss = max([rss] + list(peak.values()))
    lines = [l for l in buf[0].decode(errors="replace").splitlines() if l.strip()]
    last = lines[-1][:110] if lines else ""
walls.sort()
print("%6.2f %6.2f %7.0f  %s" % (walls[0], walls[len(walls) // 2], rss / 1024, last))
EOF

printf '%-10s %-12s %-16s %6s %6s %7s  %s\n' events scenario debugger min_s med_s rss_MB "last line of output"
for n in "${events[@]}"; do
  for sc in ${NDB_BENCH_SCENARIOS:-c bcc}; do
    case $sc in
      c) pdbin='c\nq\n'; ndbin='c\n' ;;
      bcc) pdbin='b 9\nc\nc\nq\n'; ndbin='b 9\nc\nc\n' ;;
      rs) pdbin=''; ndbin='c\nrs\n' ;;
      back) pdbin=''; ndbin='c\nrs\nrn\nrs\nrn\n' ;;
      start) pdbin=''; ndbin='c\nrr\nc\nrc\n' ;;
      mid) pdbin='b 9\nc\nq\n'; ndbin='b 9\nc\nrs\nrn\nrs\n' ;;
      n) pdbin='n\nn\nn\nn\nn\nc\nq\n'; ndbin='n\nn\nn\nn\nn\nc\n' ;;
      *) echo "unknown scenario $sc" >&2; exit 2 ;;
    esac
    if [ -n "$pdbin" ]; then
      printf '%-10s %-12s %-16s ' "$n" "$sc" "python3 -m pdb"
      (cd "$dir" && python3 measure.py "$reps" "$pdbin" -- python3 -m pdb loop.py "$n")
    fi
    printf '%-10s %-12s %-16s ' "$n" "$sc" "ndb debug real"
    # shellcheck disable=SC2086
    (cd "$dir" && python3 measure.py "$reps" "$ndbin" -- "$ndb" debug --engine real --batch ${NDB_BENCH_FLAGS:-} loop.py -- "$n")
  done
done
