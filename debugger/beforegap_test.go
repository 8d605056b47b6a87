package debugger

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"ndb/tracer"
)

// overLongCalls has calls long enough that a next over them goes on
// filtered (liveStepStates) at module level, in a function, and over a
// generator drained by sum.
const overLongCalls = `def work(n):
    i = 0
    while i < n:
        i += 1
    return i

def g(n):
    i = 0
    while i < n:
        yield i
        i += 1

def outer(k):
    y = 2
    z = work(k)
    w = sum(g(k))
    return y + z + w

x = 1
a = work(30000)
b = outer(20000)
print(a + b + x)
`

// After a next over a long call, whose filtered stretch pauses at every
// event of the next's frame, rn and rr from the frame's next stop go back
// over it exactly: to the line that made the call, to the frame's call.
// The run is taken again to where its first gap began (relive), and
// forward commands from there run it on: every stop is the whole trace's.
// A stretch that may hold the frame's own events (until's, a continue's)
// is not crossed.
func TestReverseAcrossNext(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	setRecordStates(t, 2000, 500)
	prog := tracer.Program{Source: overLongCalls}
	whole, err := liveTracerFor(t, python).TraceLimits(ctx, prog, fastLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cmds    []string
		relived int
	}{
		{"rn at module level", []string{"n", "n", "n", "n", "n", "bo", "bo", "n", "n", "n"}, 1},
		{"rr to the module's call", []string{"n", "n", "n", "n", "n", "bc", "s", "n"}, 1},
		// after a first gap at module level: relive runs it again
		{"rn, rr in a function", []string{"n", "n", "n", "n", "n", "s", "n", "n", "n", "bo", "bo", "n", "n", "n", "bc", "n", "n", "n", "n"}, 2},
		{"over a generator", []string{"n", "n", "n", "n", "n", "s", "n", "n", "n", "bo", "n", "n", "r"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := liveLikeWhole(t, python, prog, whole, tc.cmds, nil)
			if b.live.replays != 0 || b.live.relived != tc.relived {
				t.Errorf("%d replays, %d runs taken to the gap again; want 0, %d", b.live.replays, b.live.relived, tc.relived)
			}
		})
	}

	// until over the loop of work pauses only at its lines past the loop's
	// test: its stretch may hold work's own lines, so rn does not cross it
	// (no new run): it is refused, or answered from the stretch's
	// checkpoints when one was taken (the whole trace's stop)
	cmds := []string{"n", "n", "n", "n", "n", "s", "n", "n", "s", "n", "n", "n", "unt"}
	want := driveSession(t, NewTraceBackend(whole), append(cmds, "bo"))
	b := liveBackend(t, python, prog, fastLimits)
	defer b.Close()
	d := backendDriver(t, b)
	for _, c := range cmds {
		d.do(c)
	}
	if len(b.tr.T.Unrecorded) == 0 {
		t.Fatal("until ran recorded")
	}
	st, err := d.try("bo")
	switch {
	case b.live.relived != 0:
		t.Fatalf("rn after until crossed its stretch: %d runs taken again", b.live.relived)
	case err != nil && !errors.Is(err, ErrUnrecordedPast):
		t.Fatalf("rn after until: %v", err)
	case err == nil && (b.live.tailRuns != 1 || sameStops([]Stop{st}, want[len(want)-1:]) >= 0):
		t.Fatalf("rn after until: %+v (%d tails), the whole trace's %+v", st, b.live.tailRuns, want[len(want)-1])
	}
}

// A program that is not the same when run again (the time, read
// before the `c`) cannot be taken back before the start that way: rr is
// refused with the reason, and the run, closed to start the new one, is
// over (a restart goes on).
func TestReverseToEntryNotTheSame(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	prog := tracer.Program{Source: "import time\nx = time.time_ns()\ni = 0\nwhile i < 1000:\n    i += 1\nprint(i)\n"}
	b := liveBackend(t, python, prog, fastLimits)
	defer b.Close()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []Command{{Action: StepOver}, {Action: StepOver}, {Action: Continue}} {
		if _, err := s.Do(ctx, cmd); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Do(ctx, Command{Action: InvStepCall}); !errors.Is(err, ErrUnrecordedPast) || !strings.Contains(err.Error(), "restart") || b.live.relived != 1 {
		t.Fatalf("rr: %v (%d runs taken again)", err, b.live.relived)
	}
	if _, err := s.Restart(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	if st, err := s.Do(ctx, Command{Action: StepOver}); err != nil || st.Lineno != 2 {
		t.Fatalf("n after restart: %+v %v", st, err)
	}
}

// On every conformance fixture, with every next, until, return and
// continue with breakpoints going filtered (withRecordStates 0), random
// pdb sequences with rn, rr and rs among them: each reverse command the
// live session answers stops where the whole trace's session stops (the
// stop and the stack); one it refuses (ErrUnrecordedPast) is skipped by
// both. Some must cross a gap (relive).
func TestReverseAcrossGapsMatchesWholeTrace(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	answered, refused, relived := 0, 0, 0
	t.Cleanup(func() {
		t.Logf("reverse commands over gaps: %d answered, %d refused; %d runs taken to a gap again", answered, refused, relived)
		if relived == 0 && !t.Failed() {
			t.Error("no reverse command crossed a gap")
		}
	})
	for _, fx := range conformanceFixtures {
		t.Run(fx.name(), func(t *testing.T) {
			prog, whole, hit := fixtureRun(t, python, fx)
			for seed := range liveSequences(6, 2) {
				rng := rand.New(rand.NewSource(int64(300 + seed)))
				var cmds []string
				for _, c := range randomCommands(rng, whole.Source, hit, 30) {
					cmds = append(cmds, c)
					if rng.Intn(3) == 0 {
						cmds = append(cmds, []string{"bo", "bc", "bs", "bo"}[rng.Intn(4)])
					}
				}
				ws, err := NewSession(ctx, NewTraceBackend(whole))
				if err != nil {
					t.Fatal(err)
				}
				lb := liveBackend(t, python, prog, tracer.Limits{})
				defer lb.Close() // the tracer serves one run at a time
				ls, err := NewSession(ctx, lb)
				if err != nil {
					t.Fatal(err)
				}
				withRecordStates(0, func() {
					for i, c := range cmds {
						wc, move, err := sessionCommand(ws, c)
						if err != nil {
							t.Fatal(err)
						}
						lc, _, err := sessionCommand(ls, c)
						if err != nil {
							t.Fatal(err)
						}
						if at := ws.Current(); !move || at.IsExit() && (at.Exit == ExitInvEntry) == wc.Reverse() {
							continue // pdb's own refusals at the ends
						}
						gaps, runs := len(lb.tr.T.Unrecorded), lb.live.relived
						lst, err := ls.Do(ctx, lc)
						if errors.Is(err, ErrUnrecordedPast) && lc.Reverse() {
							refused++
							continue
						}
						if err != nil {
							t.Fatalf("seed %d, command %d %s: %v", seed, i, c, err)
						}
						wst, err := ws.Do(ctx, wc)
						if err != nil {
							t.Fatalf("seed %d, command %d %s, whole trace: %v", seed, i, c, err)
						}
						// the order of a frame's locals first seen after a gap
						// may differ (docs/debugger.md, "Long runs"): by name
						if got, want := stopKey(ls, byName(lst)), stopKey(ws, byName(wst)); got != want {
							t.Fatalf("seed %d: command %d %s differs\ncommands: %s\nwhole: %s\nlive:  %s", seed, i, c, strings.Join(cmds, "; "), want, got)
						}
						if lc.Reverse() && gaps > 0 {
							answered++
						}
						relived += lb.live.relived - runs
					}
				})
				lb.Close()
			}
		})
	}
}

// byName is st with its locals in name order.
func byName(st Stop) Stop {
	st.Locals = slices.SortedFunc(slices.Values(st.Locals), func(a, b tracer.Var) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// stepBoth runs command c (sessionCommand's form) on the whole trace's
// session ws and the live one ls, and fails unless both answer with the
// same stop and stack (locals by name); it returns the live stop.
func stepBoth(t *testing.T, ws, ls *Session, i int, c string) Stop {
	t.Helper()
	ctx := context.Background()
	cmd, _, err := sessionCommand(ws, c)
	if err != nil {
		t.Fatal(err)
	}
	wst, werr := ws.Do(ctx, cmd)
	lst, lerr := ls.Do(ctx, cmd)
	if werr != nil || lerr != nil {
		t.Fatalf("command %d %s: %v, live %v", i, c, werr, lerr)
	}
	if got, want := stopKey(ls, byName(lst)), stopKey(ws, byName(wst)); got != want {
		t.Fatalf("command %d %s\nwhole: %s\nlive:  %s", i, c, want, got)
	}
	return lst
}
