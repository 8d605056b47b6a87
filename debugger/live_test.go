package debugger

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"ndb/tracer"
)

var (
	liveTracerOnce sync.Once
	liveTracer     *tracer.Tracer
	liveTracerErr  error
)

// liveBackend starts a live run of prog on the package's live tracer (one
// run at a time: the caller closes the backend, and so does the test's
// end, so that a test that fails halfway leaves the tracer free).
func liveBackend(t testing.TB, python string, prog tracer.Program, lim tracer.Limits) *TraceBackend {
	t.Helper()
	liveTracerOnce.Do(func() {
		liveTracer, liveTracerErr = tracer.New(tracer.Options{Python: python})
	})
	if liveTracerErr != nil {
		t.Fatalf("tracer: %v", liveTracerErr)
	}
	b, err := NewLiveBackend(context.Background(), func(ctx context.Context, out func(string)) (*tracer.Run, error) {
		return liveTracer.Start(ctx, prog, lim, out)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// driveSession runs the tests' pdb-like commands (sessionCommand) and
// returns every stop.
func driveSession(t testing.TB, b Backend, cmds []string) []Stop {
	t.Helper()
	ctx := context.Background()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	stops := []Stop{s.Current()}
	for _, c := range cmds {
		cur := s.Current()
		cmd, move, err := sessionCommand(s, c)
		if err != nil {
			t.Fatal(err)
		}
		if !move {
			continue
		}
		if cur.IsExit() && (cur.Exit == ExitInvEntry) == cmd.Reverse() {
			continue
		}
		st, err := s.Do(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		stops = append(stops, st)
	}
	return stops
}

// liveSequences is how many random sequences a live conformance test runs
// on each fixture: def, $NDB_LIVE_SEQUENCES when set, short under -short.
func liveSequences(def, short int) int {
	if n, err := strconv.Atoi(os.Getenv("NDB_LIVE_SEQUENCES")); err == nil {
		return n
	}
	if testing.Short() {
		return short
	}
	return def
}

// fixtureRun is a conformance fixture's program (run in its context where
// it has one), its whole trace and the lines its line events hit.
func fixtureRun(t *testing.T, python string, fx fixture) (tracer.Program, *tracer.Trace, []int) {
	file, src := fx.read(t)
	prog := tracer.Program{Source: string(src), Call: fx.call}
	if fx.inContext() {
		prog = tracer.Program{Path: file, Source: string(src), Context: &tracer.Context{}}
	}
	whole := traceFixtureProgram(t, python, prog)
	var hit []int
	for _, s := range whole.States {
		if s.Event == tracer.EventLine {
			hit = append(hit, s.Lineno)
		}
	}
	return prog, whole, hit
}

// A live session answers every command as a session over the whole trace
// does, forward and backward, while the program runs only as far as the
// commands need: the same random pdb sequences as the conformance test,
// with reverse commands mixed in, on every conformance fixture.
func TestLiveSessionMatchesWholeTrace(t *testing.T) {
	python := pythonExe(t)
	sequences := liveSequences(12, 3)
	for _, fx := range conformanceFixtures {
		t.Run(fx.name(), func(t *testing.T) {
			prog, whole, hit := fixtureRun(t, python, fx)
			for seed := range sequences {
				rng := rand.New(rand.NewSource(int64(seed)))
				var cmds []string
				switch seed {
				case 0:
					cmds = repeat("s", len(whole.States)+2)
				case 1:
					cmds = repeat("n", len(whole.States)+2)
				default:
					for _, c := range randomCommands(rng, whole.Source, hit, 40) {
						cmds = append(cmds, c)
						if rng.Intn(5) == 0 {
							cmds = append(cmds, []string{"bs", "bo", "bc", "rc"}[rng.Intn(4)])
						}
					}
				}
				want := driveSession(t, NewTraceBackend(whole), cmds)
				lb := liveBackend(t, python, prog, tracer.Limits{})
				got := driveSession(t, lb, cmds)
				lb.Close()
				if !reflect.DeepEqual(got, want) {
					d := 0
					for d < min(len(got), len(want)) && reflect.DeepEqual(got[d], want[d]) {
						d++
					}
					t.Fatalf("seed %d: stop %d differs\ncommands: %s\nwhole: %s\nlive:  %s", seed, d,
						strings.Join(cmds, "; "), stopAt(want, d), stopAt(got, d))
				}
			}
		})
	}
}

func stopAt(stops []Stop, i int) string {
	if i >= len(stops) {
		return "(none)"
	}
	return fmt.Sprintf("%+v", stops[i])
}

// The program runs only as far as the commands need: at the first stop of
// an endless program the trace holds a handful of states, and each command
// adds what it passed.
func TestLiveSessionRunsOnDemand(t *testing.T) {
	python := pythonExe(t)
	src := "import itertools\ncount = 0\nfor i in itertools.count():\n    count += i\n"
	b := liveBackend(t, python, tracer.Program{Source: src}, tracer.Limits{Timeout: time.Minute, MaxEvents: 1 << 30})
	defer b.Close()
	ctx := context.Background()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(b.Tree().T.States); n > 3 || s.Current().Lineno != 1 {
		t.Fatalf("first stop %+v with %d states recorded", s.Current(), n)
	}
	for range 10 {
		if _, err := s.Do(ctx, Command{Action: StepOver}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(b.Tree().T.States); n > 20 {
		t.Errorf("%d states after 10 steps", n)
	}
	res, err := s.Eval(ctx, 0, "count + 1000", tracer.EvalExpr)
	if err != nil || !res.OK {
		t.Fatalf("eval: %+v %v", res, err)
	}
	// Step back: the recorded past answers, the live frame does not.
	if _, err := s.Do(ctx, Command{Action: InvStepOver}); err != nil {
		t.Fatal(err)
	}
	if s.Live() {
		t.Error("a stop in the past is live")
	}
	if _, err := s.Eval(ctx, 0, "count", tracer.EvalExpr); err != ErrNotLive {
		t.Errorf("eval in the past: %v", err)
	}
	// Forward again: the recording up to the waiting program, then live.
	if _, err := s.Do(ctx, Command{Action: StepOver}); err != nil {
		t.Fatal(err)
	}
	if !s.Live() {
		t.Error("back at the waiting program, not live")
	}
	// An endless continue, interrupted.
	go func() {
		time.Sleep(300 * time.Millisecond)
		s.Interrupt()
	}()
	st, err := s.Do(ctx, Command{Action: Continue})
	if err != nil {
		t.Fatal(err)
	}
	if st.Interrupted != tracer.PauseInterrupt || st.IsExit() || !s.Live() {
		t.Fatalf("after the interrupt: %+v live %v", st, s.Live())
	}
	// pdb's Ctrl-C leaves it stepping: the next `n` stops at the next line.
	next, err := s.Do(ctx, Command{Action: StepOver})
	if err != nil || next.IsExit() || next.Index <= st.Index {
		t.Fatalf("next after the interrupt: %+v %v", next, err)
	}
	// A statement changes the program: the loop variable jumps ahead.
	if _, err := s.Eval(ctx, 0, "count = -10**12", tracer.EvalExec); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Current().Locals.Get("count"); v != "-1000000000000" {
		t.Errorf("current stop's count after the statement: %q", v)
	}
	after, err := s.Do(ctx, Command{Action: StepOver})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := after.Locals.Get("count"); !strings.HasPrefix(v, "-") {
		t.Errorf("count after the statement and a step: %q (%+v)", v, after)
	}
}

// At an uncaught exception the session has pdb's post-mortem: the
// traceback, the frames the exception left (outermost first, the last
// where it was raised), and evaluation in them; a whole trace has the same
// frames, without evaluation.
func TestPostMortem(t *testing.T) {
	python := pythonExe(t)
	src := "def inner(d):\n    k = 'x'\n    return d[k]\n\ndef outer():\n    table = {'y': 1}\n    return inner(table)\n\nouter()\n"
	prog := tracer.Program{Source: src}
	ctx := context.Background()
	whole := traceFixtureProgram(t, python, prog)
	for _, live := range []bool{false, true} {
		var b Backend = NewTraceBackend(whole)
		if live {
			lb := liveBackend(t, python, prog, tracer.Limits{})
			defer lb.Close()
			b = lb
		}
		s, err := NewSession(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.PostMortem(); ok {
			t.Error("post-mortem at the first stop")
		}
		st, err := s.Do(ctx, Command{Action: Continue})
		if err != nil || st.Exit != tracer.ExitError {
			t.Fatalf("continue: %+v %v", st, err)
		}
		pm, ok := s.PostMortem()
		if !ok {
			t.Fatal("no post-mortem at the error exit")
		}
		var where []string
		for _, f := range pm.Frames {
			where = append(where, fmt.Sprintf("%s:%d:%s", f.Function, f.Lineno, f.Event))
		}
		if got := strings.Join(where, " "); got != "<module>:9:exception outer:7:exception inner:3:exception" {
			t.Errorf("live=%v frames %s", live, got)
		}
		if !strings.HasSuffix(pm.Traceback, "KeyError: 'x'\n") || !strings.Contains(pm.Traceback, "line 3, in inner") {
			t.Errorf("traceback:\n%s", pm.Traceback)
		}
		res, err := s.Eval(ctx, 1, "table", tracer.EvalExpr)
		switch {
		case live && (err != nil || res.Text != "{'y': 1}"):
			t.Errorf("post-mortem eval in outer: %+v %v", res, err)
		case !live && err != ErrNotLive:
			t.Errorf("whole trace eval: %v", err)
		}
		// Time travel from the exit still works.
		if back, err := s.Do(ctx, Command{Action: InvStepInto}); err != nil || back.IsExit() {
			t.Errorf("step back from the exit: %+v %v", back, err)
		}
	}
}

// TestLiveLimitsHoldPerCommand: a command that resumes the program at
// every event of a frame (a step out of an endless loop that calls) still
// stops at the time limit, and at an interrupt, though no single resume
// runs long.
func TestLiveLimitsHoldPerCommand(t *testing.T) {
	python := pythonExe(t)
	src := "def g():\n    return 1\n\ndef f():\n    i = 0\n    while True:\n        i += g()\n\nf()\n"
	b := liveBackend(t, python, tracer.Program{Source: src}, tracer.Limits{Timeout: time.Second, MaxEvents: 1 << 30})
	defer b.Close()
	ctx := context.Background()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for s.Current().Function != "f" {
		if _, err := s.Do(ctx, Command{Action: StepInto}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	st, err := s.Do(ctx, Command{Action: StepReturn})
	if took := time.Since(start); err != nil || st.Interrupted != tracer.PauseTimeout || took > 10*time.Second {
		t.Fatalf("step out of an endless loop, 1 s limit: %+v %v after %v", st, err, took)
	}
	for s.Current().Function != "f" { // the limit may have stopped it in g
		if _, err := s.Do(ctx, Command{Action: StepInto}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.Interrupt()
	}()
	start = time.Now()
	st, err = s.Do(ctx, Command{Action: StepReturn})
	if took := time.Since(start); err != nil || st.Interrupted != tracer.PauseInterrupt || took > 900*time.Millisecond {
		t.Errorf("step out, interrupted after 0.2 s: %+v %v after %v", st, err, took)
	}
}
