package debugger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/tracer"
)

// checkpointLoop runs a loop of about 3n line events in work, then a short
// tail of calls: a `c` from the first line runs it untraced with
// checkpoints.
func checkpointLoop(n int) string {
	return fmt.Sprintf(`def work(n):
    i = 0
    while i < n:
        i += 1 + 0 * sum(range(30))  # CPU, no event: checkpoints
    return i

def tail(k):
    s = 0
    for j in range(k):
        s += j
    return s

a = work(%d)
b = tail(300)
c = a + b
print(c)
`, n)
}

// fastCheckpoints makes the live runs of test t fork a checkpoint every
// 1 ms of their CPU (the tracer's default: 25 ms), until t ends.
func fastCheckpoints(t *testing.T) {
	c := checkpointCPU
	t.Cleanup(func() { checkpointCPU = c })
	checkpointCPU = time.Millisecond
}

// tailStates is the most events a tail from a checkpoint records (the
// tracer's CKPT_TAIL).
const tailStates = 100_000

// sameStops compares stops of two traces of one run: their indexes and
// frame numbers differ (a tail recorded from a checkpoint has its own).
func sameStops(a, b []Stop) int {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		x.Index, y.Index, x.Frame, y.Frame = 0, 0, 0, 0
		if !reflect.DeepEqual(x, y) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// After a `c` that ran untraced to the end, reverse commands whose target
// is in the tail recorded from the newest checkpoint are answered from it,
// with the whole trace's stops, and no replay from the start; a target
// before the tail (rr to work's or the module's call) replays the run
// from its start, and the session goes on from the same stop there.
func TestReverseFromCheckpoint(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	fastCheckpoints(t)
	loop := tracer.Program{Source: checkpointLoop(300000)}
	// --stdin read after the loop: the tail reads it again, from where the
	// checkpoint was (its own offset in the memory file)
	stdin := tracer.Program{Source: strings.Replace(checkpointLoop(300000), "print(c)\n",
		"import sys\nline = sys.stdin.readline()\nrest = sys.stdin.read()\nprint(c, line, len(rest))\n", 1),
		Path: filepath.Join(t.TempDir(), "stdin.py"), Context: &tracer.Context{Stdin: []byte("first\nsecond\nthird\n")}}
	if err := os.WriteFile(stdin.Path, []byte(stdin.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	// an uncaught exception: the tail ends in post-mortem too
	raises := tracer.Program{Source: strings.Replace(checkpointLoop(300000), "print(c)\n", "print(c)\nraise ValueError(c)\n", 1)}
	for _, tc := range []struct {
		name      string
		prog      tracer.Program
		cmds      []string
		tailCmds  int // commands answered from the tail (no replay)
		replaysAt int // 0: none
		tails     int // tails recorded from checkpoints
	}{
		{"rs rn rs rr", loop, []string{"c", "bs", "bo", "bs", "bc", "n", "s"}, 4, 0, 1},
		{"into the calls", loop, []string{"c", "bo", "bo", "bo", "bs", "bs", "bs", "bo", "bo", "bs", "bs", "bs", "bs", "bo", "bo", "bo", "s", "n", "c"}, 19, 0, 1},
		{"rn to before the loop", loop, []string{"c", "bo", "bo", "bo", "bo", "bo", "bs", "bs", "bs", "s", "n"}, 5, 6, 1},
		{"rr to the start, forward, the tail of the new run", loop, []string{"c", "bs", "bc", "s", "n", "n", "c", "bs", "bo", "bc", "s"}, 2, 0, 2},
		{"stdin", stdin, []string{"c", "bs", "bo", "bo", "bs", "bs", "bo", "bo", "bo", "n", "s", "c"}, 8, 9, 1},
		{"post-mortem", raises, []string{"c", "bs", "bs", "bo", "bo", "bs", "bs", "bo", "n", "c"}, 10, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prog := tc.prog
			whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
			if err != nil {
				t.Fatal(err)
			}
			b := liveLikeWhole(t, python, prog, whole, tc.cmds, func(i int, c string, b *TraceBackend) {
				if i == 0 && b.live.run.Checkpoints() == 0 {
					t.Fatal("no checkpoint was kept")
				}
				if i+1 < tc.replaysAt || tc.replaysAt == 0 {
					if b.live.replays != 0 {
						t.Fatalf("after %s (command %d): replayed from the start (%s)", c, i+1, b.live.noTail)
					}
				}
				if i+1 == tc.replaysAt && b.live.replays != 1 {
					t.Fatalf("after %s (command %d): %d replays, want 1", c, i+1, b.live.replays)
				}
				if i > 0 && i < tc.tailCmds && b.live.tailOf != b.tr {
					t.Fatalf("after %s (command %d): not the checkpoint's tail (%s)", c, i+1, b.live.noTail)
				}
			})
			if b.live.tailRuns != tc.tails {
				t.Errorf("%d tails recorded, want %d", b.live.tailRuns, tc.tails)
			}
		})
	}
}

// rr from the module's code and rc with no breakpoint go back to before
// the start after a `c` that ran untraced: neither a replay nor a tail is
// recorded; a new run waits where the `c` began (relive), forward commands
// run it on live (its output shown from there, not before), and reverse
// commands after its own `c` use its checkpoints. A statement run at a
// stop, and rc with a breakpoint set, take the replay instead.
func TestReverseToEntry(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	fastCheckpoints(t)
	prog := tracer.Program{Source: "print('first')\n" + checkpointLoop(300000)}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	cmds := []string{"n", "c", "rc", "s", "n", "n", "n", "c", "bs", "rc", "n", "bo"}
	want := driveSession(t, NewTraceBackend(whole), cmds)
	b := liveBackend(t, python, prog, fastLimits)
	var out strings.Builder
	b.SetOutput(func(s string) { out.WriteString(s) })
	d := backendDriver(t, b)
	got := []Stop{d.history[0].Stop}
	for _, c := range cmds {
		got = append(got, d.do(c))
	}
	if d := sameStops(got, want); d >= 0 {
		t.Fatalf("stop %d differs\ncommands: %s\nwhole: %s\nlive:  %s", d, strings.Join(cmds, "; "), stopAt(want, d), stopAt(got, d))
	}
	if b.live.replays != 0 || b.live.relived != 2 || b.live.tailRuns != 1 {
		t.Errorf("%d replays, %d runs taken to the c again, %d tails; want 0, 2, 1", b.live.replays, b.live.relived, b.live.tailRuns)
	}
	// "first" is printed before the first `c`: once; the sum by each run's `c`
	last := whole.Stdout[strings.LastIndexByte(whole.Stdout[:len(whole.Stdout)-1], '\n')+1:]
	if o := out.String(); strings.Count(o, "first\n") != 1 || strings.Count(o, last) != 2 {
		t.Errorf("output %q", o)
	}
	b.Close() // the tracer serves one run at a time

	for _, tc := range []struct {
		name   string
		setup  func(d *driver, s *Session)
		before bool // setup before the `c`, else after it
		cmd    string
	}{
		{"a statement at a stop", func(d *driver, _ *Session) {
			if _, err := d.b.Eval(ctx, d.history[len(d.history)-1].Stop, 0, "zz = 1", tracer.EvalExec); err != nil {
				t.Fatal(err)
			}
		}, true, "bc"},
		{"a breakpoint", func(_ *driver, s *Session) {
			if err := s.SetBreak(13); err != nil { // a = work(...), before the tail
				t.Fatal(err)
			}
		}, false, "rc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := liveBackend(t, python, tracer.Program{Source: checkpointLoop(300000)}, fastLimits)
			defer b.Close()
			d := backendDriver(t, b)
			if tc.before {
				tc.setup(d, d.s)
			}
			d.do("c")
			if !tc.before {
				tc.setup(d, d.s)
			}
			cmd, _, err := sessionCommand(d.s, tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.nextWith(ctx, d.history, cmd, d.s.bps); err != nil {
				t.Fatal(err)
			}
			if b.live.relived != 0 || b.live.replays != 1 {
				t.Errorf("%d runs taken to the c again, %d replays; want 0, 1", b.live.relived, b.live.replays)
			}
		})
	}
}

// At a breakpoint a long continue reached filtered, the stretch's
// checkpoints record the way there again: rs and rn go back from the stop
// (before, refused: nothing recorded since the stretch), every stop the
// whole trace's, and the session goes on live. A program whose way there
// prints something else when run again keeps its stop: the reverse command
// is refused, the program goes on from where it waited.
func TestReverseAtFilteredStop(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	fastCheckpoints(t)
	setRecordStates(t, 2000, 500)

	prog := tracer.Program{Source: checkpointLoop(300000)}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := NewSession(ctx, NewTraceBackend(whole))
	if err != nil {
		t.Fatal(err)
	}
	lb := liveBackend(t, python, prog, fastLimits)
	ls, err := NewSession(ctx, lb)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Session{ws, ls} {
		if _, err := s.Break(BreakSpec{Line: 10}); err != nil { // in tail(), after work's loop
			t.Fatal(err)
		}
	}
	for i, c := range []string{"c", "bs", "bs", "bo", "bo", "bs", "bs", "n", "n", "n", "c", "bs", "c"} {
		stepBoth(t, ws, ls, i, c)
		if i == 0 && (len(lb.tr.T.Unrecorded) == 0 || lb.live.run.PauseCheckpoints() == 0) {
			t.Fatalf("c: gaps %v, %d checkpoints kept at the stop", lb.tr.T.Unrecorded, lb.live.run.PauseCheckpoints())
		}
	}
	if lb.live.tailRuns != 1 || lb.live.replays != 0 {
		t.Errorf("%d tails, %d replays; want 1, 0", lb.live.tailRuns, lb.live.replays)
	}
	lb.Close()

	// the time, printed on the way to the stop after any checkpoint
	clock := tracer.Program{Source: strings.Replace(checkpointLoop(300000), "    s = 0\n",
		"    s = 0\n    print(__import__('time').perf_counter_ns())\n", 1)}
	lb = liveBackend(t, python, clock, fastLimits)
	defer lb.Close()
	ls, err = NewSession(ctx, lb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Break(BreakSpec{Line: 11}); err != nil { // tail's s += j
		t.Fatal(err)
	}
	if st, err := ls.Do(ctx, Command{Action: Continue}); err != nil || st.Lineno != 11 {
		t.Fatalf("c: %+v %v", st, err)
	}
	first := lb.live.run
	if _, err := ls.Do(ctx, Command{Action: InvStepInto}); !errors.Is(err, ErrUnrecordedPast) || !strings.Contains(lb.live.noTail, "output differs") {
		t.Fatalf("rs: %v (%s)", err, lb.live.noTail)
	}
	if lb.live.run != first || lb.live.tailRuns != 1 {
		t.Fatalf("the run that waited at the stop was not given back (%d tails)", lb.live.tailRuns)
	}
	ls.ClearBreaks()
	if st, err := ls.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 10 || st.Function != "tail" {
		t.Fatalf("n after the refusal: %+v %v", st, err)
	}
	if st, err := ls.Do(ctx, Command{Action: Continue}); err != nil || st.Exit != tracer.ExitNormal {
		t.Fatalf("c after the refusal: %+v %v", st, err)
	}
}

// liveLikeWhole drives a live backend over prog through cmds (backendDriver)
// and checks that its stops are whole's session's (sameStops); each, if
// not nil, runs after command i. The backend is closed when the test ends.
func liveLikeWhole(t *testing.T, python string, prog tracer.Program, whole *tracer.Trace, cmds []string, each func(i int, c string, b *TraceBackend)) *TraceBackend {
	t.Helper()
	want := driveSession(t, NewTraceBackend(whole), cmds)
	b := liveBackend(t, python, prog, fastLimits)
	t.Cleanup(func() { b.Close() })
	d := backendDriver(t, b)
	got := []Stop{d.history[0].Stop}
	for i, c := range cmds {
		got = append(got, d.do(c))
		if each != nil {
			each(i, c, b)
		}
	}
	if d := sameStops(got, want); d >= 0 {
		t.Fatalf("stop %d differs\ncommands: %s\nwhole: %s\nlive:  %s", d, strings.Join(cmds, "; "), stopAt(want, d), stopAt(got, d))
	}
	return b
}

// A run whose input is the user's typing (ndb debug on a terminal) takes
// checkpoints too: until something is typed a run from one is the same
// run; once the program was given typed input, neither a tail nor the
// replay is used (they would wait for it), and the refusal comes at once.
func TestCheckpointsWithTypedInput(t *testing.T) {
	python := pythonExe(t)
	fastCheckpoints(t)
	for _, typed := range []bool{false, true} {
		input := tracer.NewInput()
		src := checkpointLoop(300000)
		if typed {
			src = "line = input()\n" + src
		}
		path := filepath.Join(t.TempDir(), "typed.py")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		b := liveBackend(t, python, tracer.Program{Source: src, Path: path, Context: &tracer.Context{Input: input}}, fastLimits)
		d := backendDriver(t, b)
		if typed {
			if _, err := input.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
		}
		d.do("c")
		if b.live.run.Checkpoints() == 0 {
			t.Fatalf("typed %v: no checkpoint", typed)
		}
		began := time.Now()
		st, err := d.try("bs")
		switch {
		case !typed && (err != nil || b.live.tailRuns != 1 || st.Lineno != 16):
			t.Errorf("rs: %+v %v, %d tails (%s)", st, err, b.live.tailRuns, b.live.noTail)
		case typed && (!errors.Is(err, ErrUnrecordedPast) || !strings.Contains(err.Error(), "typed input") || b.live.tailRuns != 0 || b.live.replays != 0 || time.Since(began) > 5*time.Second):
			t.Errorf("rs after typed input: %v, %d tails, %d replays", err, b.live.tailRuns, b.live.replays)
		}
		b.Close()
	}
}

// driver steps a backend as a Session does (sessionCommand's commands),
// every command through nextWith (pdb.go): the path that records the tail.
type driver struct {
	t       *testing.T
	b       *TraceBackend
	s       *Session // parses the commands
	history []Step
}

func backendDriver(t *testing.T, b *TraceBackend) *driver {
	s, err := NewSession(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, b: b, s: s, history: []Step{{Stop: s.Current()}}}
}

func (d *driver) try(c string) (Stop, error) {
	cmd, _, err := sessionCommand(d.s, c)
	if err != nil {
		d.t.Fatal(err)
	}
	st, err := d.b.nextWith(context.Background(), d.history, cmd, nil)
	if err == nil {
		d.history = append(d.history, Step{Command: cmd, Stop: st})
	}
	if err == nil && cmd.Action == InvStepInto && st.Event == KindInvLineCall { // as Session.Do
		if st, err = d.b.nextWith(context.Background(), d.history, cmd, nil); err == nil {
			d.history = append(d.history, Step{Command: cmd, Stop: st})
		}
	}
	return st, err
}

func (d *driver) do(c string) Stop {
	st, err := d.try(c)
	if err != nil {
		d.t.Fatalf("%s: %v", c, err)
	}
	return st
}

// A program with threads, or one that writes files, takes no checkpoint:
// a reverse command replays from the start, as before; output that
// differs between the run and its checkpoint's tail is refused.
func TestReverseFromCheckpointFallsBack(t *testing.T) {
	python := pythonExe(t)
	fastCheckpoints(t)
	threads := "import threading\nev = threading.Event()\nth = threading.Thread(target=ev.wait)\nth.start()\n" +
		"i = 0\nwhile i < 100000:\n    i += 1\nev.set()\nth.join()\nprint(i)\n"
	b := liveBackend(t, python, tracer.Program{Source: threads}, fastLimits)
	d := backendDriver(t, b)
	d.do("c")
	if n := b.live.run.Checkpoints(); n != 0 {
		t.Fatalf("%d checkpoints of a program with threads", n)
	}
	if st := d.do("bs"); st.Lineno != 10 {
		t.Fatalf("rs: %+v", st)
	}
	if b.live.replays != 1 || b.live.tailRuns != 0 || !strings.Contains(b.live.noTail, "no checkpoint") {
		t.Errorf("replays %d, tails %d, why no tail %q", b.live.replays, b.live.tailRuns, b.live.noTail)
	}
	b.Close()

	files := "i = 0\nwhile i < 300000:\n    i += 1 + 0 * sum(range(30))\n    if i % 100000 == 0:\n        with open('out.txt', 'w') as f:\n            f.write(str(i))\nprint(open('out.txt').read())\n"
	b = liveBackend(t, python, tracer.Program{Source: files}, fastLimits)
	d = backendDriver(t, b)
	d.do("c")
	if n := b.live.run.Checkpoints(); n != 0 {
		t.Fatalf("%d checkpoints of a program that writes files", n)
	}
	if st := d.do("bs"); st.Lineno != 7 || st.Event != "return" {
		t.Fatalf("rs: %+v", st)
	}
	if b.live.replays != 1 || b.live.tailRuns != 0 {
		t.Errorf("replays %d, tails %d", b.live.replays, b.live.tailRuns)
	}
	b.Close()

	clock := "import time\nt = time.time_ns()\ni = 0\nwhile i < 300000:\n    i += 1\nprint(t, time.time_ns())\n"
	b = liveBackend(t, python, tracer.Program{Source: clock}, fastLimits)
	defer b.Close()
	d = backendDriver(t, b)
	d.do("c")
	if b.live.run.Checkpoints() == 0 {
		t.Fatal("no checkpoint")
	}
	for range 2 {
		_, err := d.try("bs")
		if !errors.Is(err, ErrUnrecordedPast) || !strings.Contains(err.Error(), "output differs") || !strings.Contains(err.Error(), "checkpoint") {
			t.Fatalf("rs: %v", err)
		}
	}
	if b.live.replays != 0 || b.live.tailRuns != 1 {
		t.Errorf("replays %d, tails %d", b.live.replays, b.live.tailRuns)
	}
}

// TestCheckpointLongRunTimes times `c` over NDB_BENCH_CHECKPOINT line events
// (the bench script's loop: two calls of work, N/2 line events each), then
// rs and rn from the end answered from a checkpoint, then c to the end, rr
// to before the start, c to the end of the new run and rc, with
// `python3 -m pdb`'s `c` over the same program beside it. Skipped unless the
// variable is set.
func TestCheckpointLongRunTimes(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("NDB_BENCH_CHECKPOINT"))
	if err != nil {
		t.Skip("NDB_BENCH_CHECKPOINT=EVENTS times c, rs, rn over a long run")
	}
	python := pythonExe(t)
	src := fmt.Sprintf("def work(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\nn = %d\na = work(n // 4)\nb = work(n // 4)\nprint(a + b)\n", n)
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.py")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pdb := exec.Command(python, "-m", "pdb", path)
	pdb.Stdin = strings.NewReader("c\nq\n")
	start := time.Now()
	if out, err := pdb.CombinedOutput(); err != nil {
		t.Fatalf("pdb: %v %s", err, out)
	}
	pdbC := time.Since(start)

	lim := fastLimits
	lim.Timeout = 10 * time.Minute
	b := liveBackend(t, python, tracer.Program{Source: src}, lim)
	defer b.Close()
	d := backendDriver(t, b)
	start = time.Now()
	end := d.do("c")
	c := time.Since(start)
	checkpoints := b.live.run.Checkpoints()
	if end.Exit != tracer.ExitNormal {
		t.Fatalf("c: %+v", end)
	}
	times := []time.Duration{}
	for _, cmd := range []string{"bs", "bo", "bs", "bo"} {
		start = time.Now()
		st := d.do(cmd)
		times = append(times, time.Since(start))
		t.Logf("%s: %s line %d %v", cmd, st.Event, st.Lineno, st.Locals)
	}
	if b.live.replays != 0 || b.live.tailOf != b.tr {
		t.Errorf("not answered from the checkpoint: %d replays (%s)", b.live.replays, b.live.noTail)
	}
	tail := len(b.tr.T.States)
	// c to the end (in the tail), rr from there, c to the end again in the
	// new run, rc with no breakpoint: back to before the start (relive)
	for _, cmd := range []string{"c", "bc", "c", "rc"} {
		start = time.Now()
		st := d.do(cmd)
		times = append(times, time.Since(start))
		want := ExitInvEntry
		if cmd == "c" {
			want = tracer.ExitNormal
		}
		if st.Exit != want {
			t.Fatalf("%s: %+v", cmd, st)
		}
	}
	if b.live.replays != 0 || b.live.relived != 2 {
		t.Errorf("rr, rc: %d replays, %d runs taken to the c again", b.live.replays, b.live.relived)
	}
	t.Logf("%d line events: pdb c %.2f s (process), ndb c %.2f s (backend, started), rs %.2f s, rn %.2f s, rs %.2f s, rn %.2f s, c %.2f s, rr %.2f s, c %.2f s, rc %.2f s; tail %d states, %d checkpoints",
		n, pdbC.Seconds(), c.Seconds(), times[0].Seconds(), times[1].Seconds(), times[2].Seconds(), times[3].Seconds(),
		times[4].Seconds(), times[5].Seconds(), times[6].Seconds(), times[7].Seconds(), tail, checkpoints)
	b.Close()

	// b 8 (the second call of work, half way), c: filtered to the stop;
	// then rs, rn, rs back into the first call from the stretch's
	// checkpoints, and n, c on
	b = liveBackend(t, python, tracer.Program{Source: src}, lim)
	defer b.Close()
	s, err := NewSession(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Break(BreakSpec{Line: 8}); err != nil {
		t.Fatal(err)
	}
	var line []string
	for _, cmd := range []Command{{Action: Continue}, {Action: InvStepInto}, {Action: InvStepOver}, {Action: InvStepInto}, {Action: StepOver}, {Action: Continue}} {
		start = time.Now()
		st, err := s.Do(context.Background(), cmd)
		if err != nil {
			t.Fatalf("%+v: %v", cmd, err)
		}
		line = append(line, fmt.Sprintf("%s %.2f s (%s %d)", cmd.Action, time.Since(start).Seconds(), st.Event, st.Lineno))
	}
	if b.live.tailRuns != 1 || b.live.replays != 0 {
		t.Errorf("b 8, c, rs: %d tails, %d replays", b.live.tailRuns, b.live.replays)
	}
	t.Logf("b 8 (half way), then: %s", strings.Join(line, ", "))
}

// A reverse command that reaches TraceBackend.next with the trace a
// checkpoint's tail, and a target before it (rr to the module's call),
// gets the whole trace's stop (recordTail replays) or ErrUnrecordedPast,
// never a stop of the tail's stand-in call states.
func TestTailTargetBeforeIt(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	fastCheckpoints(t)
	prog := tracer.Program{Source: checkpointLoop(300000)}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := driveSession(t, NewTraceBackend(whole), []string{"c", "bs", "bc"})
	b := liveBackend(t, python, prog, fastLimits)
	defer b.Close()
	d := backendDriver(t, b)
	d.do("c")
	d.do("bs")
	if b.live.tailOf != b.tr {
		t.Fatalf("no tail: %s", b.live.noTail)
	}
	st, err := b.next(ctx, d.history, Command{Action: InvStepCall})
	if err != nil {
		if !errors.Is(err, ErrUnrecordedPast) {
			t.Fatalf("rr: %v", err)
		}
		return
	}
	if d := sameStops([]Stop{st}, want[len(want)-1:]); d >= 0 {
		t.Fatalf("rr: %+v, whole trace's %+v", st, want[len(want)-1])
	}
}
