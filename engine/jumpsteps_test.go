package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/engine/openai"
)

// TestJumpsBySteppingMatchTheRealEngine: with JumpSteps, a forward jump is
// answered by step_into predictions. Given a perfect model (the oracle
// answering each step_into with the true next state), every jump from
// every stop of three programs must stop where the real engine does
// (pdb's rules, the one stop rule of every engine) and use exactly the step_into
// frames up to that stop, no more (and, where a breakpoint's line is never
// reached, one direct prediction after them).
func TestJumpsBySteppingMatchTheRealEngine(t *testing.T) {
	cases := []struct {
		file, call string
		brks       []int
	}{
		{"calls.py", "f('ab', 3)", []int{3, 9, 15}},
		{"fib.py", "fib(3)", []int{3, 4}},
		{"raises.py", "g([1, 3])", []int{3, 11, 13}},
	}
	ctx := context.Background()
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			p := readProgram(t, tc.file, tc.call)
			rb, err := testReal(t).Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			jumps := []cmdCase{cN, cR, cC}
			for _, l := range tc.brks {
				jumps = append(jumps, cB(l))
			}
			jumps = append(jumps, cmdCase{name: "breakpoint", cmd: debugger.Command{Action: debugger.Breakpoint,
				Src: debugger.SourceLines(rb.Source())[tc.brks[0]-1]}})
			checked := 0
			for i := 0; ; i++ {
				at := stepsInto(t, rb, i)
				if at.Current().IsExit() {
					break
				}
				for _, j := range jumps {
					want := jumpTarget(t, rb, i, j)
					or := &oracle{}
					h := at.History()
					for k := 1; k < len(h); k++ {
						or.queue = append(or.queue, frameFor(t, h[k-1].Stop, h[k].Stop, debugger.StepInto))
					}
					walk := stepsInto(t, rb, i)
					for n := 0; ; n++ {
						prev := walk.Current()
						next, err := walk.Do(ctx, cS.cmd)
						if err != nil || n > 500 {
							t.Fatalf("after %d steps, %s: walking to %+v: %v", i, j.name, want, err)
						}
						or.queue = append(or.queue, frameFor(t, prev, next, debugger.StepInto))
						if debugger.SameStop(next, want) || next.IsExit() {
							break
						}
					}
					if want.IsExit() && (j.brk > 0 || j.cmd.Action == debugger.Breakpoint) {
						// A rollout that missed the breakpoint asks the model directly.
						or.queue = append(or.queue, frameFor(t, at.Current(), want, debugger.Breakpoint))
					}
					nb, err := NewNeural(p, or, Draw{})
					if err != nil {
						t.Fatal(err)
					}
					nb.JumpSteps = 1000
					ns, err := debugger.NewSession(ctx, nb)
					if err != nil {
						t.Fatal(err)
					}
					for range i {
						if _, err := ns.Do(ctx, cS.cmd); err != nil {
							t.Fatal(err)
						}
					}
					if j.brk > 0 {
						if err := ns.SetBreak(j.brk); err != nil {
							t.Fatal(err)
						}
					}
					got, err := ns.Do(ctx, j.cmd)
					if err != nil {
						t.Fatalf("after %d steps, %s: %v", i, j.name, err)
					}
					if ds := debugger.Compare(i+1, got, want); len(ds) > 0 {
						t.Fatalf("after %d steps, %s: stepped to %+v\nreal %+v\n%v", i, j.name, got, want, ds)
					}
					if len(or.queue) != 0 {
						t.Fatalf("after %d steps, %s: %d step_into frames left unused", i, j.name, len(or.queue))
					}
					checked++
				}
			}
			if checked < 20 {
				t.Fatalf("only %d jumps checked", checked)
			}
		})
	}
}

// TestJumpStepsFallBackToOnePrediction: when the bound is reached before
// the jump's target, the jump is predicted directly after all.
func TestJumpStepsFallBackToOnePrediction(t *testing.T) {
	ctx := context.Background()
	p, rb, _, want := atTotal(t)
	walk := stepsInto(t, rb, 3)
	or := &oracle{}
	h := walk.History()
	for k := 1; k < len(h); k++ {
		or.queue = append(or.queue, frameFor(t, h[k-1].Stop, h[k].Stop, debugger.StepInto))
	}
	const bound = 3
	prev := walk.Current()
	for range bound { // total's call and first two lines: still inside total
		next, err := walk.Do(ctx, cS.cmd)
		if err != nil {
			t.Fatal(err)
		}
		or.queue = append(or.queue, frameFor(t, prev, next, debugger.StepInto))
		prev = next
	}
	or.queue = append(or.queue, frameFor(t, h[len(h)-1].Stop, want, debugger.StepOver))
	nb, err := NewNeural(p, or, Draw{})
	if err != nil {
		t.Fatal(err)
	}
	nb.JumpSteps = bound
	if got := stepOverAfterThree(t, nb); len(debugger.Compare(4, got, want)) > 0 {
		t.Fatalf("stepped to %+v\nreal %+v\n%v", got, want, debugger.Compare(4, got, want))
	}
	if len(or.queue) != 0 {
		t.Fatalf("%d frames left unused", len(or.queue))
	}
	last := or.prompts[len(or.prompts)-1]
	if want := "<|step_over|><|frame_sep|>"; last[len(last)-len(want):] != want {
		t.Fatalf("the fallback prompt ends %q", last[max(0, len(last)-80):])
	}
}

// jumpTarget is where jump j goes after n step_into commands on the real
// backend b: the real engine's answer (pdb's rules; the SPEC's tree for
// the breakpoint action), which every engine's stop rule follows.
func jumpTarget(t *testing.T, b debugger.Backend, n int, j cmdCase) debugger.Stop {
	t.Helper()
	s := stepsInto(t, b, n)
	if j.brk > 0 {
		if err := s.SetBreak(j.brk); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Do(context.Background(), j.cmd)
	if err != nil {
		t.Fatalf("after %d steps, %s: real engine: %v", n, j.name, err)
	}
	return st
}

// stepsInto is a real session after n step_into commands.
func stepsInto(t *testing.T, b debugger.Backend, n int) *debugger.Session {
	t.Helper()
	ctx := context.Background()
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for k := range n {
		if _, err := s.Do(ctx, cS.cmd); err != nil {
			t.Fatal(fmt.Errorf("step %d: %w", k, err))
		}
	}
	return s
}

// TestJumpBelowStepsOnlyUnsureJumps: with JumpBelow, a jump whose direct
// prediction is sure enough answers by it alone; one below the threshold is
// stepped to its target by step_into predictions, whose stop answers (here
// the right one, where the unsure direct frame named a wrong line).
func TestJumpBelowStepsOnlyUnsureJumps(t *testing.T) {
	p, rb, at, want := atTotal(t)
	sure := func(text string, p float64) Prediction {
		return Prediction{Text: text, Confidence: &debugger.Confidence{Mean: p, Min: p, Tokens: 1, Frames: 1}}
	}
	history, walk := stepFrames(t, rb, want, func(text string) Prediction { return sure(text, 1) })
	wrong := want
	wrong.Lineno, wrong.Src = 16, "    return out + str(t)"
	for _, tc := range []struct {
		name    string
		direct  Prediction
		stepped bool
		limit   time.Duration // JumpTime
	}{
		{"sure: the direct frame answers", sure(frameFor(t, at, want, debugger.StepOver), 0.9), false, 0},
		{"unsure: stepped", sure(frameFor(t, at, wrong, debugger.StepOver), 0.3), true, 0},
		{"unsure: stepped within the time", sure(frameFor(t, at, wrong, debugger.StepOver), 0.3), true, time.Hour},
		// no time left to step: not one step is asked for, the direct frame answers
		{"unsure, out of time: the direct frame answers", sure(frameFor(t, at, want, debugger.StepOver), 0.3), false, time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := &scoredScript{answers: append(slices.Clone(history), tc.direct)}
			if tc.stepped {
				script.answers = append(script.answers, walk...)
			}
			nb, err := NewNeural(p, script, Draw{})
			if err != nil {
				t.Fatal(err)
			}
			nb.JumpSteps, nb.JumpBelow, nb.JumpTime = 100, 0.5, tc.limit
			if got := stepOverAfterThree(t, nb); len(debugger.Compare(4, got, want)) > 0 {
				t.Fatalf("answered %+v\nreal %+v\n%v", got, want, debugger.Compare(4, got, want))
			}
			if len(script.answers) != 0 {
				t.Fatalf("%d scripted frames left unused", len(script.answers))
			}
			if tc.stepped && len(walk) < 3 {
				t.Fatalf("a walk of %d steps proves little", len(walk))
			}
		})
	}
}

// stepFrames are the step_into frames of the real backend rb's first three
// s (history) and of its s from there to want (walk), each scored by sure.
func stepFrames(t *testing.T, rb debugger.Backend, want debugger.Stop, sure func(string) Prediction) (history, walk []Prediction) {
	t.Helper()
	h := stepsInto(t, rb, 3).History()
	for k := 1; k < len(h); k++ {
		history = append(history, sure(frameFor(t, h[k-1].Stop, h[k].Stop, debugger.StepInto)))
	}
	ws := stepsInto(t, rb, 3)
	for prev := ws.Current(); !debugger.SameStop(prev, want); {
		next, err := ws.Do(context.Background(), cS.cmd)
		if err != nil {
			t.Fatal(err)
		}
		walk = append(walk, sure(frameFor(t, prev, next, debugger.StepInto)))
		prev = next
	}
	return history, walk
}

// atTotal is calls.py's f('ab', 3) on the real engine, the stop after
// three s (at `t = total(n)` in f) and the real n from there.
func atTotal(t *testing.T) (p Program, rb debugger.Backend, at, next debugger.Stop) {
	t.Helper()
	p = readProgram(t, "calls.py", "f('ab', 3)")
	rb, err := testReal(t).Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	rs := stepsInto(t, rb, 3)
	at = rs.Current()
	if next, err = rs.Do(context.Background(), cN.cmd); err != nil {
		t.Fatal(err)
	}
	return p, rb, at, next
}

// stepOverAfterThree is the stop b answers to n after three s (calls.py's
// `t = total(n)` in f, whose n steps over a whole call).
func stepOverAfterThree(t *testing.T, b *Neural) debugger.Stop {
	t.Helper()
	ctx := context.Background()
	ns, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := ns.Do(ctx, cS.cmd); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ns.Do(ctx, cN.cmd)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestJumpsReachTheBackends: Options.Jumps sets JumpSteps and JumpBelow of
// every backend the model engine opens; the cwm engine, whose trace format
// has no step_into frames of ndb's, refuses them.
func TestJumpsReachTheBackends(t *testing.T) {
	e, err := New(Model, Options{Predictor: &oracle{}, Jumps: Jumps{Steps: 24, Below: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Open(context.Background(), readProgram(t, "calls.py", "f('ab', 3)"))
	if err != nil {
		t.Fatal(err)
	}
	if nb, ok := b.(*Neural); !ok || nb.JumpSteps != 24 || nb.JumpBelow != 0.5 {
		t.Fatalf("backend %T %+v, want a Neural with JumpSteps 24, JumpBelow 0.5", b, b)
	}
	if _, err := New(CWMName, Options{OpenAI: openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}, Jumps: Jumps{Steps: 8}}); err == nil {
		t.Fatal("the cwm engine took jumps by stepping")
	}
}

// TestStepBackReplaysAJump: a step back from a jump that one sure
// prediction answered walks the jump again by step_into predictions; where
// the walk arrives at the jump's answer, the step back is read off the
// walk (the real engine's stop, with no backward prediction), and where it
// arrives elsewhere, the backward prediction answers.
func TestStepBackReplaysAJump(t *testing.T) {
	ctx := context.Background()
	p, rb, at, want := atTotal(t)
	sure := func(text string) Prediction {
		return Prediction{Text: text, Confidence: &debugger.Confidence{Mean: 0.9, Min: 0.9, Tokens: 1, Frames: 1}}
	}
	rs := stepsInto(t, rb, 3)
	if _, err := rs.Do(ctx, cN.cmd); err != nil {
		t.Fatal(err)
	}
	back, err := rs.Do(ctx, cRS.cmd)
	if err != nil {
		t.Fatal(err)
	}
	history, walk := stepFrames(t, rb, want, sure)
	if len(walk) < 3 {
		t.Fatalf("a walk of %d steps proves little", len(walk))
	}
	elsewhere := slices.Clone(walk)
	wrong := want
	wrong.Locals = slices.Clone(want.Locals)
	wrong.Locals[len(wrong.Locals)-1].Value = "99"
	elsewhere[len(elsewhere)-1] = sure(frameFor(t, back, wrong, debugger.StepInto))
	guess := back
	guess.Arg = "7"
	for _, tc := range []struct {
		name   string
		walk   []Prediction
		answer []Prediction // the backward prediction asked, if any
		want   debugger.Stop
	}{
		{"the walk arrives: read off it", walk, nil, back},
		{"the walk arrives elsewhere: predicted back", elsewhere, []Prediction{sure(frameFor(t, want, guess, debugger.InvStepInto))}, guess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := append(slices.Clone(history), sure(frameFor(t, at, want, debugger.StepOver)))
			script := &scoredScript{answers: append(append(answers, tc.walk...), tc.answer...)}
			nb, err := NewNeural(p, script, Draw{})
			if err != nil {
				t.Fatal(err)
			}
			nb.JumpSteps, nb.JumpBelow = 100, 0.5
			ns, err := debugger.NewSession(ctx, nb)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []cmdCase{cS, cS, cS, cN} {
				if _, err := ns.Do(ctx, c.cmd); err != nil {
					t.Fatal(err)
				}
			}
			if got := ns.Current(); len(debugger.Compare(4, got, want)) > 0 {
				t.Fatalf("n answered %+v\nreal %+v", got, want)
			}
			if len(script.answers) != len(tc.walk)+len(tc.answer) {
				t.Fatalf("the sure n was stepped: %d frames left", len(script.answers))
			}
			got, err := ns.Do(ctx, cRS.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if ds := debugger.Compare(5, got, tc.want); len(ds) > 0 {
				t.Fatalf("rs answered %+v\nwant %+v\n%v", got, tc.want, ds)
			}
			if len(script.answers) != 0 {
				t.Fatalf("%d scripted frames left unused", len(script.answers))
			}
		})
	}
}
