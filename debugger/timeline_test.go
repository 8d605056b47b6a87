package debugger

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"ndb/internal/pysource"
	"ndb/tracer"
)

// TestRecallMatchesTheRealEngine: whatever Recall answers from a real
// session's history is the stop the real engine (pdb's rules, the tree's
// inverse actions) reaches. Seeded random s, n, rs, rn with some c, unt,
// r and b LINE + c in between, on every conformance fixture and the
// evaluation's hand-written scripts, run whole, and testdata/timeline's
// steps that are not undone by their inverse; each claim is checked, and claims of
// every kind must be made.
func TestRecallMatchesTheRealEngine(t *testing.T) {
	python := pythonExe(t)
	type prog struct {
		name string
		p    tracer.Program
	}
	var progs []prog
	for _, fx := range conformanceFixtures {
		if fx.inContext() {
			continue
		}
		_, src := fx.read(t)
		progs = append(progs, prog{fx.name(), tracer.Program{Source: string(src), Call: fx.call}})
	}
	more, _ := filepath.Glob(filepath.Join("testdata", "progs", "*.py"))
	more = append(more, filepath.Join("testdata", "timeline", "edges.py"))
	scripts, _ := filepath.Glob(filepath.Join("..", "eval", "scripts", "*.py"))
	scripts = append(more, scripts...)
	for _, f := range scripts {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, prog{filepath.Base(f), tracer.Program{Source: string(src)}})
	}
	if len(scripts) < 20 {
		t.Fatalf("only %d scripts", len(scripts))
	}
	ctx := context.Background()
	moves := []string{"s", "s", "s", "n", "n", "rs", "rs", "rn", "rn", "unt", "r", "b+c", "rr", "rr"}
	undo := map[string]string{"s": "rs", "rs": "s", "n": "rn", "rn": "n"}
	claims := map[string]int{}
	for _, pr := range progs {
		tr := traceFixtureProgram(t, python, pr.p)
		px := pysource.New(tracer.TracedSource(pr.p))
		text := StepText{
			NoCalls:    func(s Stop) bool { return px.CallsProgram(s.Lineno) == pysource.NoCall },
			Suspends:   func(s Stop) bool { return px.Suspends(s.Lineno) },
			NoSuspends: !px.MaySuspend(),
		}
		var lines []int
		for _, s := range tr.States {
			if s.Event == tracer.EventLine {
				lines = append(lines, s.Lineno)
			}
		}
		for seq := range 16 {
			rng := rand.New(rand.NewSource(int64(seq)))
			s, err := NewSession(ctx, NewTraceBackend(tr))
			if err != nil {
				t.Fatal(err)
			}
			last := ""
			for range 60 {
				cur := s.Current()
				if cur.IsExit() && cur.Exit != ExitInvEntry {
					break
				}
				name := moves[rng.Intn(len(moves))]
				if u, ok := undo[last]; ok && rng.Intn(2) == 0 {
					name = u // the steps Recall knows most of
				}
				last = name
				if name == "b+c" {
					if len(lines) == 0 {
						continue
					}
					if err := s.SetBreak(lines[rng.Intn(len(lines))]); err != nil {
						t.Fatal(err)
					}
					name = "c"
				}
				if name == "c" && rng.Intn(2) == 0 {
					s.ClearBreaks()
				}
				cmd := Moves[name]
				cmd.Breaks = s.activeBreaks()
				// from the real engine's stops, and from them as a model's
				// would be: no trace position, no generator flag
				type recalled struct {
					view string
					stop Stop
				}
				var claimed []recalled
				for _, v := range []recalled{{"real", Stop{}}, {"predicted", Stop{}}} {
					hist := s.History()
					if v.view == "predicted" {
						hist = asPredicted(hist)
					}
					if st, ok := recallDo(hist, cmd, text); ok {
						claimed = append(claimed, recalled{v.view, st})
					}
				}
				got, err := s.Do(ctx, cmd)
				if err != nil {
					break // at the start, or past the end
				}
				for _, c := range claimed {
					claims[name+" from "+c.view]++
					w := c.stop
					if !SameStop(asPredicted([]Step{{Stop: w}})[0].Stop, asPredicted([]Step{{Stop: got}})[0].Stop) || w.Index >= 0 && w.Index != got.Index {
						t.Errorf("%s seq %d: after %d stops, %s: recalled from %s stops %s:%d %s (index %d), the real engine %s:%d %s (index %d)",
							pr.name, seq, len(s.History())-1, name, c.view, w.Function, w.Lineno, w.Event, w.Index,
							got.Function, got.Lineno, got.Event, got.Index)
					}
				}
			}
		}
	}
	t.Logf("claims checked: %v", claims)
	for _, name := range []string{"s", "n", "rs", "rn", "rr"} {
		for _, view := range []string{" from real", " from predicted"} {
			if claims[name+view] < 20 {
				t.Errorf("only %d claims for %s%s", claims[name+view], name, view)
			}
		}
	}
}

// recallDo is what Session.Do answers where Recall answers each step the
// backend is asked: an inv_step_into that reaches an inv_line_call twin
// steps once more.
func recallDo(hist []Step, cmd Command, text StepText) (Stop, bool) {
	st, ok := Recall(hist, cmd, text)
	if ok && cmd.Action == InvStepInto && st.Event == KindInvLineCall {
		return Recall(append(slices.Clone(hist), Step{Command: cmd, Stop: st}), cmd, text)
	}
	return st, ok
}

// asPredicted is history as a model engine holds it: no trace positions,
// no generator flags.
func asPredicted(history []Step) []Step {
	out := make([]Step, len(history))
	for i, h := range history {
		h.Stop.Index, h.Stop.Gen = -1, false
		out[i] = h
	}
	return out
}

// TestRecallOnlyFromItsOwnStops: a recalled step needs the history entry
// it came from; an edited stop (set) or a step that did not return to a
// state seen before is not recalled; steps into a call and back to the
// frame are a step over it.
func TestRecallOnlyFromItsOwnStops(t *testing.T) {
	stop := func(line int, ev string, locals ...string) Stop {
		s := Stop{Index: -1}
		s.Event, s.Lineno, s.Function, s.Depth, s.Src = ev, line, "f", 1, "x"
		for i := 0; i+1 < len(locals); i += 2 {
			s.Locals = append(s.Locals, tracer.Var{Name: locals[i], Value: locals[i+1]})
		}
		return s
	}
	a, b, c := stop(2, tracer.EventLine, "n", "1"), stop(3, tracer.EventLine, "n", "2"), stop(4, tracer.EventLine, "n", "3")
	step := func(name string, s Stop) Step { return Step{Command: Moves[name], Stop: s} }
	deeper := func(s Stop, d int, fn string) Stop { s.Depth, s.Function = d, fn; return s }
	callee, inCallee := deeper(stop(8, tracer.EventCall, "k", "1"), 2, "g"), deeper(stop(9, tracer.EventLine, "k", "1"), 2, "g")
	calleeReturn, outer := deeper(stop(9, tracer.EventReturn), 2, "g"), deeper(stop(12, tracer.EventLine), 0, "<module>")
	cases := []struct {
		name string
		hist []Step
		cmd  string
		want *Stop
	}{
		{"back over a step", []Step{{Stop: a}, step("s", b)}, "rs", &a},
		{"forward again", []Step{{Stop: a}, step("s", b), step("rs", a)}, "s", &b},
		{"back twice", []Step{{Stop: a}, step("s", b), step("s", c), step("rs", b)}, "rs", &a},
		{"next undone by reverse next", []Step{{Stop: a}, step("n", b)}, "rn", &a},
		{"next does not tell step back", []Step{{Stop: a}, step("n", b)}, "rs", nil},
		{"edited stop", []Step{{Stop: a}, step("s", b), step("rs", stop(2, tracer.EventLine, "n", "9"))}, "s", nil},
		{"a step back that reached another state (set)", []Step{{Stop: a}, step("s", b), step("rs", c)}, "s", nil},
		{"return is not undone", []Step{{Stop: stop(5, tracer.EventReturn)}, step("s", stop(9, tracer.EventLine))}, "rs", nil},
		{"until is not recalled", []Step{{Stop: a}, step("n", b), step("rn", a)}, "unt", nil},
		{"next with a breakpoint is not recalled", []Step{{Stop: a}, step("n", b), step("rn", a)}, "n+break", nil},
		{"next without one is", []Step{{Stop: a}, step("n", b), step("rn", a)}, "n", &b},
		{"no history", nil, "s", nil},
		{"steps into a call and back: reverse next goes over it", []Step{{Stop: a}, step("s", callee), step("s", inCallee), step("s", calleeReturn), step("s", b)}, "rn", &a},
		{"and next again", []Step{{Stop: a}, step("s", callee), step("s", inCallee), step("s", calleeReturn), step("s", b), step("rn", a)}, "n", &b},
		{"a next in between breaks the chain", []Step{{Stop: a}, step("s", callee), step("n", inCallee), step("s", calleeReturn), step("s", b)}, "rn", nil},
		{"not over a return of the frame", []Step{{Stop: a}, step("s", stop(6, tracer.EventReturn)), step("s", outer), step("s", b)}, "rn", nil},
	}
	for _, tc := range cases {
		cmd := Moves[tc.cmd]
		if tc.cmd == "n+break" {
			cmd = Moves["n"]
			cmd.Breaks = []int{7}
		}
		got, ok := Recall(tc.hist, cmd, StepText{})
		switch {
		case tc.want == nil && ok:
			t.Errorf("%s: recalled %+v", tc.name, got)
		case tc.want != nil && (!ok || !SameStop(got, *tc.want)):
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, ok, *tc.want)
		}
	}
}

// TestRecallAtEveryStop: from every stop step_into reaches in the programs
// whose steps are not all undone by their inverse (testdata/timeline, the
// generator fixtures), every pair of a step and a step of the other
// direction: what Recall answers, from real stops and as a model's, is the
// real engine's stop.
func TestRecallAtEveryStop(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	pairs := [][]string{{"s", "rs"}, {"n", "rn"}, {"n", "rs"}, {"rs", "s"}, {"rn", "n"}, {"rs", "n"}, {"rn", "s"}, {"s", "rn"}, {"s", "rs", "n"}, {"n", "rn", "s"},
		{"s", "n", "rr"}, {"n", "n", "rr", "n"}, {"rs", "rr"}, {"rr", "s", "rr"}}
	claims := 0
	for _, f := range []string{"timeline/edges.py", "progs/gen2.py", "progs/genresume.py", "progs/asynccomp.py", "progs/exc.py"} {
		src, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		prog := tracer.Program{Source: string(src)}
		tr := traceFixtureProgram(t, python, prog)
		px := pysource.New(tracer.TracedSource(prog))
		text := StepText{
			NoCalls:    func(s Stop) bool { return px.CallsProgram(s.Lineno) == pysource.NoCall },
			Suspends:   func(s Stop) bool { return px.Suspends(s.Lineno) },
			NoSuspends: !px.MaySuspend(),
		}
		for k := 0; ; k++ {
			s, err := NewSession(ctx, NewTraceBackend(tr))
			if err != nil {
				t.Fatal(err)
			}
			for range k {
				if _, err := s.Do(ctx, Moves["s"]); err != nil {
					t.Fatal(err)
				}
			}
			if s.Current().IsExit() {
				break
			}
			base := len(s.History())
			for _, pair := range pairs {
				for _, name := range pair {
					if s.Current().IsExit() {
						break
					}
					want, known := recallDo(asPredicted(s.History()), Moves[name], text)
					got, err := s.Do(ctx, Moves[name])
					if err != nil {
						break
					}
					if known {
						claims++
						if !SameStop(want, asPredicted([]Step{{Stop: got}})[0].Stop) {
							t.Errorf("%s: %d steps in, then %v: %s recalled %s:%d %s, the real engine %s:%d %s", f, k, pair, name,
								want.Function, want.Lineno, want.Event, got.Function, got.Lineno, got.Event)
						}
					}
				}
				for len(s.History()) > base {
					s.Back()
				}
			}
		}
	}
	t.Logf("%d claims checked", claims)
	if claims < 500 {
		t.Errorf("only %d claims", claims)
	}
}
