package debugger

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/tracer"
)

// Full speed between stops (replay.go): `c` with no breakpoint runs the
// program untraced to its end, and reverse commands afterwards replay it.

// fastLimits fit the whole trace of the fixtures below (a few hundred
// thousand events), for the whole-trace backend and the replay alike.
var fastLimits = tracer.Limits{MaxEvents: 1_000_000, MaxTraceBytes: 512 << 20, Timeout: 60 * time.Second}

// longLoop has about 250,000 events: a loop that calls.
const longLoop = `def step(x, k):
    y = x + k
    return y % 1000003

total = 0
for k in range(50000):
    total = step(total, k)
print("total", total)
`

func TestContinueRunsUntraced(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	cases := []struct {
		name, src string
		exit      string
		code      int
		output    string
	}{
		{"normal", longLoop, tracer.ExitNormal, 0, "total 971253\n"},
		{"error", "def fail(v):\n    w = v * 2\n    raise ValueError(w)\ns = 0\nfor i in range(30000):\n    s += i\nprint(s)\nfail(s)\n", tracer.ExitError, 0, "449985000\n"},
		{"sys.exit", "import sys\ns = 0\nfor i in range(30000):\n    s += i\nprint(s)\nsys.exit(3)\n", tracer.ExitError, 3, "449985000\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prog := tracer.Program{Source: tc.src}
			whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
			if err != nil {
				t.Fatal(err)
			}
			b, s, out := outputSession(t, prog, fastLimits)
			first := len(b.Tree().T.States)
			st, err := s.Do(ctx, Command{Action: Continue})
			if err != nil {
				t.Fatal(err)
			}
			tr := b.Tree().T
			// nothing recorded past the stop the `c` was typed at but the
			// end: after an uncaught exception, the frames it left (call,
			// exception and return states: post-mortem's), after a normal
			// end the module frame's call and return (the last line run)
			after := 0
			pm, hasPM := s.PostMortem()
			switch {
			case hasPM:
				after = 3 * len(pm.Frames)
			case whole.Exit.Kind == tracer.ExitNormal && whole.Exit.Reason == "":
				after = 2
			}
			if len(tr.States) != first+after || !reflect.DeepEqual(tr.Unrecorded, []int{first}) {
				t.Errorf("after c: %d states (first stop: %d), unrecorded %v", len(tr.States), first, tr.Unrecorded)
			}
			ws, err := NewSession(ctx, NewTraceBackend(whole))
			if err != nil {
				t.Fatal(err)
			}
			ws.Do(ctx, Command{Action: Continue})
			wpm, wantPM := ws.PostMortem()
			if hasPM != wantPM || len(pm.Frames) != len(wpm.Frames) || pm.Traceback != wpm.Traceback {
				t.Fatalf("post-mortem %+v, whole trace's %+v", pm, wpm)
			}
			for i := range pm.Frames {
				g, w := pm.Frames[i].State, wpm.Frames[i].State
				if g.Lineno != w.Lineno || g.Event != w.Event || g.Function != w.Function || !reflect.DeepEqual(g.Locals, w.Locals) || g.Arg != w.Arg {
					t.Errorf("post-mortem frame %d: %+v, whole trace's %+v", i, g, w)
				}
				// pdb's `a`: the frame's call state holds its arguments
				gc, _ := b.CallOf(pm.Frames[i])
				wc, _ := ws.b.(*TraceBackend).CallOf(wpm.Frames[i])
				if !reflect.DeepEqual(gc.Locals, wc.Locals) || gc.Function != wc.Function {
					t.Errorf("post-mortem frame %d's call: %+v, whole trace's %+v", i, gc, wc)
				}
			}
			if want := StopAt(NewTree(whole), ExitPos(whole)); !reflect.DeepEqual(st, want) {
				t.Errorf("exit %+v, whole trace's %+v", st, want)
			}
			if st.Exit != tc.exit || tr.Exit.Code != tc.code || tr.Exit != whole.Exit {
				t.Errorf("exit %q code %d (%+v), want %q %d (%+v)", st.Exit, tr.Exit.Code, tr.Exit, tc.exit, tc.code, whole.Exit)
			}
			if out.String() != tc.output || tr.Stdout != whole.Stdout || tr.Traceback != whole.Traceback {
				t.Errorf("output %q (trace %q), want %q; traceback %q, want %q", out.String(), tr.Stdout, tc.output, tr.Traceback, whole.Traceback)
			}
			if tc.exit == tracer.ExitError && tc.code == 0 {
				// post-mortem in the real frames, as before
				res, err := s.Eval(ctx, 1, "s", tracer.EvalExpr)
				if err != nil || res.Text != "449985000" {
					t.Errorf("post-mortem eval: %+v %v", res, err)
				}
			}
		})
	}
}

// After an untraced `c`, reverse commands stop where they stop on the
// whole trace (the replay records it again), and so do the forward
// commands that follow them.
func TestReverseAfterUntracedContinue(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	srcErr := "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\nprint(f(60000))\nraise KeyError(f(3))\n"
	for _, tc := range []struct {
		name, src string
		cmds      []string
	}{
		{"rs", longLoop, []string{"n", "c", "bs", "bs", "bs", "bs", "bo", "bo", "bc", "bs", "n", "s"}},
		{"rn", longLoop, []string{"c", "bo", "bo", "bo", "bs", "bs", "bo", "r"}},
		{"rr", longLoop, []string{"c", "bs", "bs", "bs", "bc", "bc", "bo", "s", "s", "s"}},
		{"rc", longLoop, []string{"c", "b 3", "rc", "rc", "bs", "c", "c"}},
		{"error", srcErr, []string{"c", "bs", "bs", "bc", "bo", "b 4", "rc", "n", "n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != "rs" && tc.name != "error" {
				t.Skip("short: each case traces a 250,000-event run twice")
			}
			prog := tracer.Program{Source: tc.src}
			whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
			if err != nil {
				t.Fatal(err)
			}
			want := driveSession(t, NewTraceBackend(whole), tc.cmds)
			b := liveBackend(t, python, prog, fastLimits)
			got := driveSession(t, b, tc.cmds)
			replayed := len(b.Tree().T.Unrecorded) == 0 && len(b.Tree().T.States) == len(whole.States)
			b.Close()
			if !reflect.DeepEqual(got, want) {
				d := 0
				for d < min(len(got), len(want)) && reflect.DeepEqual(got[d], want[d]) {
					d++
				}
				t.Fatalf("stop %d differs\ncommands: %s\nwhole: %s\nlive:  %s", d, strings.Join(tc.cmds, "; "), stopAt(want, d), stopAt(got, d))
			}
			if !replayed {
				t.Errorf("the session's trace was not recorded again whole")
			}
		})
	}
}

// A program whose output depends on the time is not the same run twice:
// a reverse command after its untraced `c` is refused, and the session
// stays at the exit.
func TestReverseAfterUntracedRefusesNondeterminism(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	cases := map[string]string{
		"time":    "import time\nt = time.time_ns()\nfor i in range(2000):\n    pass\nprint(t)\n",
		"urandom": "import os\nx = os.urandom(8)\nprint(x.hex())\n",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			b := liveBackend(t, python, tracer.Program{Source: src}, fastLimits)
			defer b.Close()
			s, err := NewSession(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			end, err := s.Do(ctx, Command{Action: Continue})
			if err != nil || end.Exit != tracer.ExitNormal {
				t.Fatalf("c: %+v %v", end, err)
			}
			for range 2 { // refused again, at once, without a third run
				_, err = s.Do(ctx, Command{Action: InvStepInto})
				if !errors.Is(err, ErrUnrecordedPast) || !strings.Contains(err.Error(), "output differs") {
					t.Fatalf("rs after c: %v", err)
				}
				if cur := s.Current(); !reflect.DeepEqual(cur, end) {
					t.Errorf("moved to %+v", cur)
				}
			}
		})
	}
}

// An endless loop under an untraced `c` is interrupted (here by the
// command's time limit): the program traces again (from its newest
// checkpoint, recording on), the stop has its real frames (Eval, steps),
// and going back reaches past it into what was recorded before it.
func TestInterruptUntracedContinue(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	src := "def f(x):\n    y = x + 1\n    return y\n\ni = 0\nwhile True:\n    i = f(i)\n"
	b := liveBackend(t, python, tracer.Program{Source: src}, tracer.Limits{Timeout: time.Second})
	defer b.Close()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Do(ctx, Command{Action: Continue})
	if err != nil || st.IsExit() || st.Interrupted != tracer.PauseTimeout {
		t.Fatalf("c: %+v %v", st, err)
	}
	first := st
	if u := b.Tree().T.Unrecorded; len(u) != 1 {
		t.Errorf("unrecorded %v", u)
	}
	res, err := s.Eval(ctx, 0, "i > 1000", tracer.EvalExpr)
	if err != nil || res.Text != "True" {
		t.Errorf("eval at the interrupt: %+v %v", res, err)
	}
	// stepping goes on in the real frames: into f and out again
	var lines []int
	for range 8 {
		st, err = s.Do(ctx, Command{Action: StepInto})
		if err != nil || st.IsExit() {
			t.Fatalf("s: %+v %v", st, err)
		}
		lines = append(lines, st.Lineno)
	}
	if !slices.Contains(lines, 2) || !slices.Contains(lines, 7) {
		t.Errorf("steps after the interrupt: %v", lines)
	}
	// back through what was recorded since the interrupt, to its stop, and
	// on into what the checkpoint it came from recorded before it
	// (interrupt_from_checkpoint: about 100,000 events, or what the event
	// limit leaves)
	var back []Stop
	for range 20 {
		st, err = s.Do(ctx, Command{Action: InvStepInto})
		if err != nil {
			t.Fatalf("rs %d: %v", len(back)+1, err)
		}
		back = append(back, st)
	}
	if !slices.ContainsFunc(back, func(st Stop) bool { return st.Index == first.Index }) || back[len(back)-1].Index >= first.Index {
		t.Errorf("rs from 8 steps after the interrupt: %d stops back, last %+v, want past the interrupt's %+v", len(back), back[len(back)-1], first)
	}
	// forward again from there: the recorded steps, then the program
	for range 10 {
		if st, err = s.Do(ctx, Command{Action: StepInto}); err != nil || st.IsExit() {
			t.Fatalf("s after going back: %+v %v", st, err)
		}
	}
	// rc with no breakpoint goes before the start whatever ran unrecorded:
	// the program is taken there again (relive), and steps from its start
	if st, err := s.Do(ctx, Command{Action: Continue, Backward: true}); err != nil || st.Exit != ExitInvEntry {
		t.Fatalf("rc: %+v %v", st, err)
	}
	if st, err := s.Do(ctx, Command{Action: StepInto}); err != nil || st.Lineno != 1 || b.live.relived != 1 {
		t.Errorf("s from before the start: %+v %v (%d runs taken to the c again)", st, err, b.live.relived)
	}
}

// An interrupt in a stretch with checkpoints stops where the newest one
// has recorded on to (interrupt_from_checkpoint): the output the program
// printed past that checkpoint is not shown twice, and rs goes back from
// the stop.
func TestInterruptFromCheckpointOutput(t *testing.T) {
	// now and then, and often (where an interrupt came between a print and
	// its record's flush, the run from the checkpoint took the number as
	// shown: it was lost)
	for _, every := range []int{20000, 10} {
		t.Run(strconv.Itoa(every), func(t *testing.T) { interruptFromCheckpointOutput(t, every) })
	}
}

func interruptFromCheckpointOutput(t *testing.T, every int) {
	ctx := context.Background()
	fastCheckpoints(t)
	src := fmt.Sprintf("i = 0\nwhile True:\n    i += 1\n    if i %% %d == 0:\n        print(i)\n", every)
	b, s, out := outputSession(t, tracer.Program{Source: src}, tracer.Limits{MaxEvents: 10_000_000, Timeout: time.Second, MaxOutput: 1 << 28})
	for range 2 {
		st, err := s.Do(ctx, Command{Action: Continue})
		if err != nil || st.IsExit() || st.Interrupted == "" {
			t.Fatalf("c: %+v %v", st, err)
		}
		if len(b.tr.T.States)-resumedAt(b.tr.T) < 1000 {
			t.Fatalf("%d states recorded at the interrupt", len(b.tr.T.States)-resumedAt(b.tr.T))
		}
		if st, err := s.Do(ctx, Command{Action: InvStepInto}); err != nil || st.IsExit() {
			t.Fatalf("rs: %+v %v", st, err)
		}
	}
	prev := 0
	for _, line := range strings.Fields(out.String()) {
		n, err := strconv.Atoi(line)
		if err != nil || n != prev+every {
			t.Fatalf("output %q after %d: each number once, in order", line, prev)
		}
		prev = n
	}
	if prev == 0 {
		t.Fatal("no output")
	}
}

// liveTracerFor is the package's live tracer (see liveBackend), for a
// whole trace under other limits.
func liveTracerFor(t testing.TB, python string) *tracer.Tracer {
	t.Helper()
	liveBackend(t, python, tracer.Program{Source: "pass\n"}, tracer.Limits{}).Close()
	return liveTracer
}

// With any breakpoint set, even one that never stops (disabled, a
// condition that never holds, a function never called), bdb keeps tracing
// (set_continue drops it only when self.breaks is empty): on a short run
// (below liveRecordStates) `c` records the whole run, as before, and stops
// where the whole trace's session stops (longer runs: filtered_test.go).
func TestContinueTracesWithBreakpoints(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	src := "def never(x):\n    return x\n\ndef f(x):\n    y = x * 2\n    return y\n\ntotal = 0\nfor k in range(300):\n    total += f(k)\nprint(total)\n"
	prog := tracer.Program{Source: src}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, bp := range map[string]BreakSpec{
		"disabled":  {Line: 5, Disabled: true},
		"condition": {Line: 5, Cond: "x < 0"},
		"function":  {Func: "never"},
	} {
		t.Run(name, func(t *testing.T) {
			b := liveBackend(t, python, prog, fastLimits)
			defer b.Close()
			s, err := NewSession(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Break(bp); err != nil {
				t.Fatal(err)
			}
			st, err := s.Do(ctx, Command{Action: Continue})
			if err != nil || st.Exit != tracer.ExitNormal {
				t.Fatalf("c: %+v %v", st, err)
			}
			if tr := b.Tree().T; len(tr.Unrecorded) != 0 || len(tr.States) != len(whole.States) {
				t.Errorf("%d states of %d recorded, unrecorded %v", len(tr.States), len(whole.States), tr.Unrecorded)
			}
		})
	}
}
