package debugger

import (
	"fmt"
	"testing"

	"ndb/tracer"
)

// TestRolloutIsTheTraceBackendsRule: Rollout, the stop rule the model
// engines use over states that come one at a time, stops exactly where
// the trace backend's bdb simulation does from the same stop reached by
// single steps: for every state of four programs and every forward
// command (s, n, unt, unt N, r, c, c with a breakpoint, the breakpoint
// action, c with the raised filter, Command.Raised), given only the call stack there, states without frame ids and
// the trace's later states one by one.
func TestRolloutIsTheTraceBackendsRule(t *testing.T) {
	python := pythonExe(t)
	cases := []fixture{{"nested.py", "f([3, 1])"}, {"recur.py", "f(3)"}, {"exc.py", ""}, {"closures.py", "f('a bc', 2)"}}
	checked, raisedStops := 0, 0
	for _, fx := range cases {
		t.Run(fx.name(), func(t *testing.T) {
			_, src := fx.read(t)
			trace := traceFixture(t, python, string(src), fx.call)
			tr := NewTree(trace)
			states := trace.States
			for i := range states {
				if states[i].Gen {
					continue // a suspended generator's frame lives off the stack
				}
				line := states[i].Lineno
				cmds := []Command{{Action: StepInto}, {Action: StepOver}, {Action: StepOver, Until: true},
					{Action: StepOver, Until: true, Line: line + 2}, {Action: StepReturn}, {Action: Continue},
					{Action: Continue, Breaks: []int{line}}, {Action: Breakpoint, Line: line}, {Action: Breakpoint, Src: states[i].Src},
					{Action: Continue, Raised: true}, {Action: Continue, Raised: true, Breaks: []int{line + 1}}}
				for _, cmd := range cmds {
					want := len(states)
					if cmd.Action == Breakpoint {
						want = tr.Apply(Pos{Index: i}, cmd).Index
					} else {
						pc, until, _ := pdbCmdOf(cmd)
						breaks := map[int]bool{}
						for _, l := range cmd.Breaks {
							breaks[l] = true
						}
						sim := pdbAt(tr, i)
						sim.raised = cmd.Raised
						want = sim.do(pc, breaks, until)
						if cmd.Raised && want < len(states) && states[want].Event == tracer.EventException {
							raisedStops++
						}
					}
					var stack []tracer.State
					for k := i; k >= 0; k = tr.Parent(k) {
						stack = append([]tracer.State{states[k]}, stack...)
					}
					next := i + 1
					got, k, err := Rollout(stack, cmd, func() (tracer.State, bool, error) {
						if next >= len(states) {
							return tracer.State{}, false, nil
						}
						s := states[next]
						s.Frame = 0
						next++
						return s, true, nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if i+1+k != want {
						t.Fatalf("state %d (%s %s:%d), %+v: rollout stops at %d, the trace backend at %d",
							i, states[i].Event, states[i].Function, states[i].Lineno, cmd, i+1+k, want)
					}
					if k < len(got) && got[k].Frame == 0 {
						t.Fatalf("state %d, %+v: the stop has no frame id", i, cmd)
					}
					checked++
				}
			}
		})
	}
	if checked < 500 || raisedStops == 0 {
		t.Fatalf("only %d commands checked, %d raised continues stopped at an exception", checked, raisedStops)
	}
}

// TestReverseContinueRule: the rule of a reverse continue on a hand-made
// walk back: a line breakpoint whose condition holds, not one whose
// condition fails; a function breakpoint at its function's first line
// event, found when the call before it is met; temporary breakpoints are
// not used up going back.
func TestReverseContinueRule(t *testing.T) {
	line := func(fn string, n int, x string) tracer.State {
		return tracer.State{Event: tracer.EventLine, Function: fn, Lineno: n, Depth: 1, Frame: 2,
			Locals: tracer.Locals{{Name: "x", Value: x}}}
	}
	call := tracer.State{Event: tracer.EventCall, Function: "f", Lineno: 1, Depth: 1, Frame: 2}
	cond := func(s string) *Condition {
		c, err := ParseCondition(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		name  string
		lines []int
		bps   []*BreakSpec
		walk  []tracer.State // going back in time
		want  int            // index in walk of the stop, -1 none
	}{
		{"plain line", []int{3}, nil, []tracer.State{line("f", 4, "1"), line("f", 3, "1"), line("f", 2, "1")}, 1},
		{"no line", []int{9}, nil, []tracer.State{line("f", 4, "1"), line("f", 3, "1")}, -1},
		{"condition fails, then holds", nil, []*BreakSpec{{Line: 3, Cond: "x == 0", cond: cond("x == 0")}},
			[]tracer.State{line("f", 3, "1"), line("f", 2, "1"), line("f", 3, "0")}, 2},
		{"function breakpoint", nil, []*BreakSpec{{Line: 1, Func: "f"}},
			[]tracer.State{line("f", 3, "1"), line("f", 2, "1"), call, line("<module>", 5, "1")}, 1},
		{"temporary kept", nil, []*BreakSpec{{Line: 2, Temp: true}}, []tracer.State{line("f", 2, "1")}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReverseContinue(c.lines, c.bps)
			got := -1
			for k, s := range c.walk {
				if back := r.Met(s); back >= 0 {
					got = k - back
					break
				}
			}
			if got != c.want {
				t.Fatalf("stopped at %d, want %d", got, c.want)
			}
			for _, b := range c.bps {
				if b.done {
					t.Fatal(fmt.Sprintf("breakpoint %+v used up going back", *b))
				}
			}
		})
	}
}
