package debugger

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/tracer"
)

// A continue with breakpoints on a long run (pdb.go, liveRecordStates):
// the live run goes on unrecorded and pauses only where a breakpoint may
// stop (tracer.Pause.Filtered); the simulation decides there, with bdb's
// hits, ignore counts, conditions (evaluated in the live frame) and
// temporary breakpoints. Its stops must be the recorded run's.

// finalizerProgram: when the frame of the previous stop returns, the
// finalizers of its locals (a generator's close, __del__) run where bdb
// does not see them (pdbSim.run's teardown): a filtered run pauses at that
// return and records what follows.
const finalizerProgram = `class R:
    def __del__(self):
        z = 1
        z += 1

def gen():
    try:
        yield 1
        yield 2
    finally:
        w = 0

def f(i):
    r = R()
    g = gen()
    next(g)
    y = i
    return y

for i in range(6):
    f(i)
print("done")
`

const filteredProgram = `def f(x):
    y = x * 2
    return y

class Node:
    def __init__(self, v):
        self.v = v

    def find(self, k):
        if k == self.v:
            return self
        return None

def rec(n):
    if n == 0:
        return 0
    return 1 + rec(n - 1)

def gen(n):
    while n > 0:
        n -= 1
        yield n * n

@staticmethod
def deco(z):
    return z

total = 0
for k in range(40):
    total += f(k)
    node = Node(k % 4)
    node.find(k % 3)
    total += rec(k % 5)
    for sq in gen(3):
        total += sq
print(total)
`

// setRecordStates sets liveRecordStates and liveStepStates until test t
// ends.
func setRecordStates(t *testing.T, record, step int) {
	old, oldStep := liveRecordStates, liveStepStates
	t.Cleanup(func() { liveRecordStates, liveStepStates = old, oldStep })
	liveRecordStates, liveStepStates = record, step
}

// withRecordStates runs fn with liveRecordStates and liveStepStates set
// to n (0: every continue with breakpoints, next, until and return goes
// filtered at once).
func withRecordStates(n int, fn func()) {
	old, oldStep := liveRecordStates, liveStepStates
	liveRecordStates, liveStepStates = n, min(n, liveStepStates)
	defer func() { liveRecordStates, liveStepStates = old, oldStep }()
	fn()
}

// stopKey is what a stop shows: where, which frame depth, its locals,
// and the stack (pdb's where).
func stopKey(s *Session, st Stop) string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s:%d depth %d %v |", st.Event, st.Function, st.Lineno, st.Depth, st.Locals)
	for _, f := range s.Stack() {
		fmt.Fprintf(&b, " %s:%d", f.Function, f.Lineno)
	}
	return b.String()
}

// runSequence sets bps and runs cmds (until the program ends), then
// reverse commands from the end, returning what each stop showed (or the
// error), the breakpoints' hit counts, and whether the trace had an
// unrecorded stretch at the end of the program.
func runSequence(t *testing.T, b Backend, bps []BreakSpec, cmds []Command) (stops []string, hits []int, unrecorded bool) {
	t.Helper()
	ctx := context.Background()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, bp := range bps {
		if _, err := s.Break(bp); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range cmds {
		st, err := s.Do(ctx, cmd)
		if err != nil {
			t.Fatalf("%+v: %v", cmd, err)
		}
		stops = append(stops, stopKey(s, st))
		if st.IsExit() {
			break
		}
	}
	// time travel from the end: after a filtered stretch, the replay
	// (replay.go) records the run again and moves in it
	if tb, ok := b.(*TraceBackend); ok {
		unrecorded = len(tb.Tree().T.Unrecorded) > 0
	}
	if s.Current().IsExit() {
		rs, rn, rc := Command{Action: InvStepInto}, Command{Action: InvStepOver}, Command{Action: Continue, Backward: true}
		for _, cmd := range []Command{rs, rc, rc, rs, rn, rc, {Action: Continue}, rc, rc} {
			st, err := s.Do(ctx, cmd)
			if err != nil {
				stops = append(stops, "error "+err.Error())
				break
			}
			stops = append(stops, stopKey(s, st))
		}
	}
	for _, bp := range s.BreakSpecs() {
		hits = append(hits, bp.Hits)
	}
	return stops, hits, unrecorded
}

func TestFilteredContinueMatchesRecorded(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	prog := tracer.Program{Source: filteredProgram}
	lim := tracer.Limits{MaxEvents: 1_000_000, Timeout: 60 * time.Second}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, lim)
	if err != nil {
		t.Fatal(err)
	}
	fn := func(name string) int { return FunctionLine(filteredProgram, name) }
	c := Command{Action: Continue}
	n, s, r := Command{Action: StepOver}, Command{Action: StepInto}, Command{Action: StepReturn}
	var continues []Command
	for range 120 {
		continues = append(continues, c)
	}
	mixed := append([]Command{c, n, c, s, s, c, r, c, n, n, c, s, c, c, n}, continues...)
	cases := []struct {
		name string
		bps  []BreakSpec
		cmds []Command
		src  string // filteredProgram if empty
	}{
		{"line", []BreakSpec{{Line: 2}}, continues, ""},
		{"condition", []BreakSpec{{Line: 2, Cond: "x > 33"}}, continues, ""},
		{"python condition", []BreakSpec{{Line: 30, Cond: "k % 9 == 4 and total > 10"}}, continues, ""},
		{"ignore", []BreakSpec{{Line: 2, Ignore: 35}}, continues, ""},
		{"tbreak", []BreakSpec{{Line: 2, Temp: true}, {Line: 33, Cond: "k == 38"}}, continues, ""},
		{"same line", []BreakSpec{{Line: 2, Cond: "x % 7 == 0"}, {Line: 2, Temp: true}, {Line: 2, Ignore: 3}}, continues, ""},
		{"disabled", []BreakSpec{{Line: 2, Disabled: true}, {Line: 33, Cond: "k > 36"}}, continues, ""},
		{"function", []BreakSpec{{Line: fn("f"), Func: "f", Cond: "x > 36"}}, continues, ""},
		{"method", []BreakSpec{{Line: fn("Node.find"), Func: "find", Cond: "k == 2"}}, continues, ""},
		{"recursion", []BreakSpec{{Line: 16, Cond: "n == 0"}}, continues, ""},
		{"recursive function", []BreakSpec{{Line: fn("rec"), Func: "rec", Ignore: 70}}, continues, ""},
		// a function breakpoint at a loop's first line stops at every
		// resumption of the generator that reaches it (pdb's
		// func_first_executable_line): co_firstlineno of frames first seen
		// running (Trace.FirstLines)
		{"generator function", []BreakSpec{{Line: fn("gen"), Func: "gen", Ignore: 100}}, continues, ""},
		{"generator line", []BreakSpec{{Line: 22, Cond: "n == 0"}}, continues, ""},
		{"stepping between", []BreakSpec{{Line: 2, Cond: "x % 11 == 3"}, {Line: 22, Cond: "n == 1"}}, mixed, ""},
		{"after the loop", []BreakSpec{{Line: 36}}, continues, ""},
		{"finalizers", []BreakSpec{{Line: 17, Cond: "i % 2 == 0"}, {Line: 3}, {Line: 11}}, continues, finalizerProgram},
		{"finalizers after a step", []BreakSpec{{Line: 17, Cond: "i % 3 == 0"}, {Line: 3}, {Line: 11}}, mixed, finalizerProgram},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prog, whole := prog, whole
			if tc.src != "" {
				prog = tracer.Program{Source: tc.src}
				var err error
				if whole, err = liveTracerFor(t, python).TraceLimits(ctx, prog, lim); err != nil {
					t.Fatal(err)
				}
			}
			// the references: the whole trace (conditions of Condition's
			// forms) and a live run that records every event
			simple := true
			for _, bp := range tc.bps {
				if _, err := ParseCondition(bp.Cond); bp.Cond != "" && err != nil {
					simple = false
				}
			}
			if simple {
				wantStops, wantHits, _ := runSequence(t, NewTraceBackend(whole), tc.bps, tc.cmds)
				rb := liveBackend(t, python, prog, lim)
				gotStops, gotHits, _ := runSequence(t, rb, tc.bps, tc.cmds)
				rb.Close() // the tracer runs one program at a time
				if !reflect.DeepEqual(gotStops, wantStops) || !reflect.DeepEqual(gotHits, wantHits) {
					t.Fatalf("recorded live run differs from the whole trace:\n%s\nwant\n%s\nhits %v, want %v", strings.Join(gotStops, "\n"), strings.Join(wantStops, "\n"), gotHits, wantHits)
				}
			}
			rb := liveBackend(t, python, prog, lim)
			wantStops, wantHits, _ := runSequence(t, rb, tc.bps, tc.cmds)
			rb.Close()
			var gotStops []string
			var gotHits []int
			var unrecorded bool
			fb := liveBackend(t, python, prog, lim)
			defer fb.Close()
			withRecordStates(0, func() { gotStops, gotHits, unrecorded = runSequence(t, fb, tc.bps, tc.cmds) })
			if !unrecorded {
				t.Errorf("the continue was recorded (no unrecorded stretch)")
			}
			if !reflect.DeepEqual(gotStops, wantStops) || !reflect.DeepEqual(gotHits, wantHits) {
				t.Fatalf("filtered:\n%s\nrecorded:\n%s\nhits %v, want %v", strings.Join(gotStops, "\n"), strings.Join(wantStops, "\n"), gotHits, wantHits)
			}
			if tr := fb.Tree().T; tr.Stdout != whole.Stdout || tr.Exit != whole.Exit {
				t.Errorf("output %q exit %+v, want %q %+v", tr.Stdout, tr.Exit, whole.Stdout, whole.Exit)
			}
		})
	}
}

// longRunSession is a session on a live run of src whose recorded events
// are bounded (MaxEvents 1M: a long run cannot be recorded whole), with
// the program's output.
func longRunSession(t *testing.T, src string) (*TraceBackend, *Session, *strings.Builder) {
	t.Helper()
	return outputSession(t, tracer.Program{Source: src}, tracer.Limits{MaxEvents: 1_000_000, Timeout: 60 * time.Second})
}

// outputSession is a session on a live run of prog, closed when the test
// ends, and the program's output as it comes.
func outputSession(t *testing.T, prog tracer.Program, lim tracer.Limits) (*TraceBackend, *Session, *strings.Builder) {
	t.Helper()
	b := liveBackend(t, pythonExe(t), prog, lim)
	t.Cleanup(func() { b.Close() })
	out := &strings.Builder{}
	b.SetOutput(func(s string) { out.WriteString(s) })
	s, err := NewSession(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	return b, s, out
}

// TestFilteredContinueLongRun: 3M line events with a breakpoint reached
// once half way; recording them all ended the run at MaxTraceBytes, now
// the continue records the first liveRecordStates events only.
func TestFilteredContinueLongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3M-event run")
	}
	fastCheckpoints(t) // a checkpoint in every stretch: reverse commands past its stop
	ctx := context.Background()
	b, s, out := longRunSession(t, "def loop(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\na = loop(1500000)\nmid = a\nb = loop(1500000)\nprint(a + b)\n")
	if _, err := s.Break(BreakSpec{Line: 7}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	st, err := s.Do(ctx, Command{Action: Continue})
	if err != nil || st.Lineno != 7 || st.IsExit() {
		t.Fatalf("c: %+v %v", st, err)
	}
	if v, _ := st.Locals.Get("a"); v != "1500000" {
		t.Errorf("a = %q at the breakpoint", v)
	}
	t.Logf("first c: %v", time.Since(began))
	// going back: in what was recorded since the pause, and past it from
	// the stretch's checkpoints (docs/debugger.md, "Checkpoints" item 6)
	if st, err = s.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 8 {
		t.Fatalf("n: %+v %v", st, err)
	}
	if st, err = s.Do(ctx, Command{Action: InvStepInto}); err != nil || st.Lineno != 7 {
		t.Fatalf("rs: %+v %v", st, err)
	}
	if st, err = s.Do(ctx, Command{Action: InvStepInto}); err != nil || st.Event != "return" || st.Lineno != 5 || st.Function != "loop" {
		t.Fatalf("rs past the pause: %+v %v, want loop's return", st, err)
	}
	if st, err = s.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 7 {
		t.Fatalf("n: %+v %v", st, err)
	}
	if st, err = s.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 8 {
		t.Fatalf("n: %+v %v", st, err)
	}
	st, err = s.Do(ctx, Command{Action: Continue})
	if err != nil || st.Exit != tracer.ExitNormal || out.String() != "3000000\n" {
		t.Fatalf("c: %+v %v, output %q", st, err, out.String())
	}
	tr := b.Tree().T
	if len(tr.States) > liveRecordStates+liveStepStates+tailStates+100 {
		t.Errorf("%d states recorded", len(tr.States))
	}
	t.Logf("b 7, c, c over 3M events: %v, %d states", time.Since(began), len(tr.States))
}

// TestFilteredStepsLongRun: n over a call of 2M line events, unt out of
// a 2M-event loop and r out of another: recording them ended the run at
// its event limit, now each records liveStepStates events and runs the
// rest filtered (pausing only at the stepped frame's lines, its return and
// breakpoint lines); reverse commands go back to such a stop, and into the
// stretch before it from the checkpoints it kept.
func TestFilteredStepsLongRun(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6M-event run")
	}
	fastCheckpoints(t) // a checkpoint in every stretch: reverse commands past its stop
	ctx := context.Background()
	b, s, out := longRunSession(t, "def loop(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\na = loop(1000000)\nb = loop(1000000)\nc = loop(1000000)\nprint(a + b + c)\n")
	n, st1, r, unt := Command{Action: StepOver}, Command{Action: StepInto}, Command{Action: StepReturn}, Command{Action: StepOver, Until: true}
	rs := Command{Action: InvStepInto}
	began := time.Now()
	pauses, filtered := 0, 0 // the live run's, during one command (until a tail replaces the tree)
	more := b.Tree().more
	b.Tree().more = func(p tracer.Pause) (bool, bool) {
		pauses++
		if p.Filtered {
			filtered++
		}
		return more(p)
	}
	steps := []struct {
		cmd     Command
		event   string
		line    int
		name    string // a local's name and value at the stop
		value   string
		refused bool // ErrUnrecordedPast
	}{
		{n, "line", 6, "", "", false},
		{n, "line", 7, "a", "1000000", false},    // over loop(): filtered
		{rs, "return", 5, "i", "1000000", false}, // from the stretch's checkpoints
		{n, "line", 7, "a", "1000000", false},    // n at a return steps (bpo-13183)
		{st1, "call", 1, "n", "1000000", false},
		{n, "line", 2, "", "", false},
		{n, "line", 3, "", "", false},
		{n, "line", 4, "", "", false},
		{unt, "line", 5, "i", "1000000", false}, // out of the loop: filtered
		{rs, "line", 3, "i", "1000000", false},
		{n, "line", 5, "i", "1000000", false},
		{r, "return", 5, "i", "1000000", false},
		{n, "line", 8, "b", "1000000", false}, // n at a return steps (bpo-13183)
		{rs, "return", 5, "i", "1000000", false},
		{rs, "line", 5, "i", "1000000", false}, // unt's stop
		{rs, "line", 3, "i", "1000000", false},
		{n, "line", 5, "i", "1000000", false},
		{n, "return", 5, "i", "1000000", false},
		{n, "line", 8, "b", "1000000", false},
		{st1, "call", 1, "n", "1000000", false},
		{r, "return", 5, "i", "1000000", false}, // out of loop(): filtered
		{n, "line", 9, "c", "1000000", false},
	}
	for k, step := range steps {
		t0 := time.Now()
		pauses, filtered = 0, 0
		st, err := s.Do(ctx, step.cmd)
		if d := time.Since(t0); d > 100*time.Millisecond {
			t.Logf("step %d %+v: %v, %d pauses, %d filtered", k, step.cmd, d, pauses, filtered)
		}
		if step.refused {
			if !errors.Is(err, ErrUnrecordedPast) {
				t.Fatalf("step %d %+v: %+v %v, want ErrUnrecordedPast", k, step.cmd, st, err)
			}
			continue
		}
		if err != nil || st.Event != step.event || st.Lineno != step.line || st.IsExit() {
			t.Fatalf("step %d %+v: %+v %v, want %s at line %d (%s)", k, step.cmd, st, err, step.event, step.line, b.live.noTail)
		}
		if v, _ := st.Locals.Get(step.name); step.name != "" && v != step.value {
			t.Fatalf("step %d: %s = %q, want %q", k, step.name, v, step.value)
		}
	}
	st, err := s.Do(ctx, Command{Action: Continue})
	if err != nil || st.Exit != tracer.ExitNormal || out.String() != "3000000\n" {
		t.Fatalf("c: %+v %v, output %q", st, err, out.String())
	}
	if gaps := b.Tree().T.Unrecorded; len(gaps) < 3 {
		t.Errorf("unrecorded stretches at %v, want one for each of n, unt and r over a loop", gaps)
	}
	tr := b.Tree().T
	// each tail from a checkpoint adds its states to the trace (about
	// tailStates; up to twice that was seen on a loaded machine: see
	// docs/debugger.md, "What remains")
	if len(tr.States) > liveRecordStates+4*liveStepStates+2*b.live.tailRuns*tailStates+1000 || b.live.replays > 0 {
		t.Errorf("%d states recorded (%d tails, %d replays)", len(tr.States), b.live.tailRuns, b.live.replays)
	}
	t.Logf("n, unt and r over 2M events each: %v, %d states", time.Since(began), len(tr.States))
}

// Stepping over a generator goes on filtered too (it was recorded: a long
// call ended by MaxTraceBytes): bdb also stops at StopIteration and
// GeneratorExit in any frame it traces then (all of them, with a
// breakpoint in the file), so the filter pauses there as well
// (Pause.GenExits). Every stop is the whole trace's, the StopIteration a
// helper raises and catches included, and rn goes back over the stretch.
func TestFilteredNextInGenerator(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	src := `def inner():
    yield 1

def helper(n):
    it = inner()
    next(it)
    try:
        next(it)
    except StopIteration:
        pass
    i = 0
    while i < n:
        i += 1
    return i

def g(n):
    yield 0
    x = helper(n)
    yield x

def never():
    return 0

for v in g(3000):
    print(v)
`
	prog := tracer.Program{Source: src}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		bps   []int
		cmds  []string
		stops map[string]bool // stops the sequence must make: event function:line
	}{
		{"no breakpoint", nil, []string{"n", "n", "n", "n", "s", "n", "n", "n", "bo", "n", "n"},
			map[string]bool{"line g:19": true}},
		{"a breakpoint in the file: helper's StopIteration", []int{22}, []string{"n", "n", "n", "n", "s", "n", "n", "n", "n", "n", "n", "bo", "n"},
			map[string]bool{"exception helper:8": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := NewSession(ctx, NewTraceBackend(whole))
			if err != nil {
				t.Fatal(err)
			}
			lb := liveBackend(t, python, prog, fastLimits)
			defer lb.Close()
			ls, err := NewSession(ctx, lb)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range tc.bps {
				for _, s := range []*Session{ws, ls} {
					if _, err := s.Break(BreakSpec{Line: line}); err != nil {
						t.Fatal(err)
					}
				}
			}
			genExits := 0
			more := lb.Tree().more
			lb.Tree().more = func(p tracer.Pause) (bool, bool) {
				if p.Filtered && p.GenExits {
					genExits++
				}
				return more(p)
			}
			withRecordStates(0, func() {
				for i, c := range tc.cmds {
					lst := stepBoth(t, ws, ls, i, c)
					delete(tc.stops, fmt.Sprintf("%s %s:%d", lst.Event, lst.Function, lst.Lineno))
				}
			})
			if genExits == 0 || len(tc.stops) > 0 {
				t.Errorf("%d filtered resumes with GenExits; stops not made: %v", genExits, tc.stops)
			}
		})
	}
}

// TestFilteredContinueInterrupted: an endless loop with a breakpoint it
// never reaches runs filtered (at full speed) until the time limit
// interrupts it; it pauses in the loop, evaluates there, steps, and
// continues filtered again.
func TestFilteredContinueInterrupted(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	src := "def never():\n    return 1\n\ni = 0\nwhile True:\n    i += 1\n"
	b := liveBackend(t, python, tracer.Program{Source: src}, tracer.Limits{MaxEvents: 100_000, Timeout: time.Second})
	defer b.Close()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Break(BreakSpec{Line: 2}); err != nil {
		t.Fatal(err)
	}
	withRecordStates(0, func() {
		last := int64(0)
		for round := range 2 {
			st, err := s.Do(ctx, Command{Action: Continue})
			if err != nil || st.Interrupted != tracer.PauseTimeout || st.Lineno != 5 && st.Lineno != 6 {
				t.Fatalf("c: %+v %v", st, err)
			}
			res, err := s.Eval(ctx, 0, "i", tracer.EvalExpr)
			i, _ := strconv.ParseInt(res.Text, 10, 64)
			// unrecorded: far more iterations than MaxEvents allows recorded
			if err != nil || i < last+200_000 {
				t.Fatalf("round %d: i = %q (before: %d) %v", round, res.Text, last, err)
			}
			last = i
			if st, err = s.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 5 && st.Lineno != 6 {
				t.Fatalf("n: %+v %v", st, err)
			}
		}
	})
}

// filteredView is what a stop shows, without what differs between a
// whole trace and one with unrecorded stretches: state indexes, frame
// numbers, and the order of the locals of a frame first seen after such a
// stretch (its f_locals dict is first filled then, in the code's variable
// order; a traced frame's dict got each name when it was first bound).
func filteredView(st Stop) string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	locals := slices.Clone(st.Locals)
	slices.SortFunc(locals, func(a, b tracer.Var) int { return strings.Compare(a.Name, b.Name) })
	return fmt.Sprintf("%s %s:%d depth %d %v %q", st.Event, st.Function, st.Lineno, st.Depth, locals, st.Arg)
}

// beforeCommand, if set, is told each command driveViews runs.
var beforeCommand func(string)

// driveViews runs cmds (TestLiveSessionMatchesWholeTrace's strings) and
// returns what each stop showed, with its stack; after the commands, if
// the program ended, reverse commands from the end.
func driveViews(t *testing.T, b Backend, cmds []string) []string {
	t.Helper()
	ctx := context.Background()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	views := []string{filteredView(s.Current())}
	do := func(c string) bool {
		cmd, move, err := sessionCommand(s, c)
		if err != nil {
			t.Fatal(err)
		}
		if !move || s.Current().IsExit() && !cmd.Reverse() {
			return true
		}
		if beforeCommand != nil {
			beforeCommand(c)
		}
		st, err := s.Do(ctx, cmd)
		if err != nil {
			views = append(views, c+": "+err.Error())
			return false
		}
		v := filteredView(st)
		for _, f := range s.Stack() {
			v += fmt.Sprintf(" | %s:%d", f.Function, f.Lineno)
		}
		views = append(views, c+": "+v)
		return true
	}
	for _, c := range cmds {
		do(c)
	}
	if s.Current().IsExit() {
		for _, c := range []string{"bs", "bo", "rc", "bc", "rc", "c"} {
			if !do(c) {
				break
			}
		}
	}
	return views
}

// TestFilteredSessionMatchesWholeTrace: the random pdb sequences of the
// conformance test, on every conformance fixture (generators, recursion,
// exceptions, finalizers, exec'd code), with every continue that has a
// breakpoint and every next, until and return going filtered
// (withRecordStates 0) and the breakpoints' continues made frequent, stop
// where the whole trace's session stops; from the end, reverse commands
// go through the replay.
func TestFilteredSessionMatchesWholeTrace(t *testing.T) {
	python := pythonExe(t)
	sequences := liveSequences(6, 2)
	filteredBy := map[string]int{} // command -> filtered resumes it made
	defer func() { beforeCommand = nil }()
	t.Cleanup(func() {
		t.Logf("filtered resumes by command: %v", filteredBy)
		for _, c := range []string{"c", "n", "r", "unt"} {
			if filteredBy[c] == 0 && !t.Failed() {
				t.Errorf("no %s went filtered: %v", c, filteredBy)
			}
		}
	})
	for _, fx := range conformanceFixtures {
		t.Run(fx.name(), func(t *testing.T) {
			prog, whole, hit := fixtureRun(t, python, fx)
			for seed := range sequences {
				rng := rand.New(rand.NewSource(int64(100 + seed)))
				var cmds []string
				for _, c := range randomCommands(rng, whole.Source, hit, 30) {
					cmds = append(cmds, c)
					if rng.Intn(3) == 0 && len(hit) > 0 {
						cmds = append(cmds, "b "+strconv.Itoa(hit[rng.Intn(len(hit))]), "c", "c")
					}
				}
				want := driveViews(t, NewTraceBackend(whole), cmds)
				var got []string
				lb := liveBackend(t, python, prog, tracer.Limits{})
				cmd, more := "", lb.Tree().more
				beforeCommand = func(c string) { cmd, _, _ = strings.Cut(c, " ") }
				lb.Tree().more = func(p tracer.Pause) (bool, bool) {
					if p.Filtered {
						filteredBy[cmd]++
					}
					return more(p)
				}
				withRecordStates(0, func() { got = driveViews(t, lb, cmds) })
				beforeCommand = nil
				lb.Close()
				if !reflect.DeepEqual(got, want) {
					d := 0
					for d < min(len(got), len(want)) && got[d] == want[d] {
						d++
					}
					at := func(v []string) string {
						if d < len(v) {
							return v[d]
						}
						return "(none)"
					}
					t.Fatalf("seed %d: stop %d differs\ncommands: %s\nwhole:    %s\nfiltered: %s", seed, d,
						strings.Join(cmds, "; "), at(want), at(got))
				}
			}
		})
	}
}
