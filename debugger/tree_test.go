package debugger

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"ndb/tracer"
)

// twoCalls is the trace of
//
//	1 def f(n):
//	2     r = g(n) + g(1)
//	3     return r
//	4 def g(x):
//	5     return x * 2
//	6 def main():
//	7     return f(3)
func twoCalls() *tracer.Trace {
	st := func(ev string, line int, fn string, depth, frame int, src, arg string) tracer.State {
		return tracer.State{Event: ev, Lineno: line, Function: fn, Depth: depth, Frame: frame, Src: src, Arg: arg}
	}
	src := []string{"", "def f(n):", "    r = g(n) + g(1)", "    return r", "def g(x):", "    return x * 2", "def main():", "    return f(3)"}
	return &tracer.Trace{
		Source: "def f(n):\n    r = g(n) + g(1)\n    return r\ndef g(x):\n    return x * 2\ndef main():\n    return f(3)\n",
		Call:   "f(3)",
		States: []tracer.State{
			st("call", 6, "main", 0, 1, src[6], ""),    // 0
			st("line", 7, "main", 0, 1, src[7], ""),    // 1
			st("call", 1, "f", 1, 2, src[1], ""),       // 2
			st("line", 2, "f", 1, 2, src[2], ""),       // 3
			st("call", 4, "g", 2, 3, src[4], ""),       // 4
			st("line", 5, "g", 2, 3, src[5], ""),       // 5
			st("return", 5, "g", 2, 3, src[5], "6"),    // 6
			st("call", 4, "g", 2, 4, src[4], ""),       // 7
			st("line", 5, "g", 2, 4, src[5], ""),       // 8
			st("return", 5, "g", 2, 4, src[5], "2"),    // 9
			st("line", 3, "f", 1, 2, src[3], ""),       // 10
			st("return", 3, "f", 1, 2, src[3], "8"),    // 11
			st("return", 7, "main", 0, 1, src[7], "8"), // 12
		},
		Exit: tracer.Exit{Kind: tracer.ExitNormal},
	}
}

func P(i int) Pos  { return Pos{Index: i} }
func LC(i int) Pos { return Pos{Index: i, LineCall: true} }

// TestActions is a Delve-style stepping table: from a start position, a
// sequence of (action, expected position).
func TestActions(t *testing.T) {
	exit := P(13)
	type step struct {
		c    Command
		want Pos
	}
	a := func(act Action, want Pos) step { return step{Command{Action: act}, want} }
	bp := func(src string, want Pos) step { return step{Command{Action: Breakpoint, Src: src}, want} }
	bl := func(line int, want Pos) step { return step{Command{Action: Breakpoint, Line: line}, want} }
	tests := []struct {
		name  string
		start Pos
		steps []step
	}{
		{"step_into replays the trace", P(0), []step{
			a(StepInto, P(1)), a(StepInto, P(2)), a(StepInto, P(3)), a(StepInto, P(4)), a(StepInto, P(5)),
			a(StepInto, P(6)), a(StepInto, P(7)), a(StepInto, P(8)), a(StepInto, P(9)), a(StepInto, P(10)),
			a(StepInto, P(11)), a(StepInto, P(12)), a(StepInto, exit), a(StepInto, exit)}},
		{"step_over stays at its level", P(0), []step{
			a(StepOver, P(1)), a(StepOver, P(12)), a(StepOver, exit)}},
		{"step_over across two calls of one line", P(3), []step{
			a(StepOver, P(10)), a(StepOver, P(11)), a(StepOver, P(12))}},
		{"step_over inside the callee level", P(4), []step{
			a(StepOver, P(5)), a(StepOver, P(6)), a(StepOver, P(7)), a(StepOver, P(8)), a(StepOver, P(9)), a(StepOver, P(10))}},
		{"step_return", P(5), []step{
			a(StepReturn, P(6)), a(StepReturn, P(9)), a(StepReturn, P(10)), a(StepReturn, P(11)), a(StepReturn, P(12)), a(StepReturn, exit)}},
		{"step_return from the caller's line", P(3), []step{a(StepReturn, P(11))}},
		{"breakpoint by text and by line", P(0), []step{
			bp("    return x * 2", P(5)), bp("    return x * 2", P(6)), bl(5, P(8)), bp("    return r", P(10)),
			bp("    return x * 2", exit)}},
		{"breakpoint never reached", P(0), []step{bp("nowhere", exit)}},
		{"continue", P(3), []step{a(Continue, exit), a(StepInto, exit)}},
		{"inv_step_into enters calls through inv_line_call", P(12), []step{
			a(InvStepInto, LC(1)), a(InvStepInto, P(11)), a(InvStepInto, P(10)), a(InvStepInto, LC(3)),
			a(InvStepInto, P(9)), a(InvStepInto, P(8)), a(InvStepInto, P(7)), a(InvStepInto, P(6)),
			a(InvStepInto, P(5)), a(InvStepInto, P(4)), a(InvStepInto, P(3)), a(InvStepInto, P(2)),
			a(InvStepInto, P(1)), a(InvStepInto, P(0)), a(InvStepInto, EntryExit), a(InvStepInto, EntryExit)}},
		{"inv_step_over skips calls", P(12), []step{
			a(InvStepOver, P(1)), a(InvStepOver, P(0)), a(InvStepOver, EntryExit)}},
		{"inv_step_over in the callee", P(11), []step{
			a(InvStepOver, P(10)), a(InvStepOver, P(3)), a(InvStepOver, P(2)), a(InvStepOver, P(1))}},
		{"inv_step_over from a twin", LC(3), []step{a(InvStepOver, P(3))}},
		{"inv_step_call", P(11), []step{
			a(InvStepCall, P(2)), a(InvStepCall, P(0)), a(InvStepCall, EntryExit)}},
		{"inv_step_call picks the latest call of the level", P(9), []step{
			a(InvStepCall, P(7)), a(InvStepCall, P(2))}},
		{"inv_step_call from a twin", LC(3), []step{a(InvStepCall, P(2))}},
		{"inverse actions from the forward exit", exit, []step{a(InvStepInto, P(12))}},
		{"inv_step_over from the forward exit", exit, []step{a(InvStepOver, P(12))}},
		{"inv_step_call from the forward exit", exit, []step{a(InvStepCall, P(0))}},
		{"forward from a twin acts after its calls", LC(3), []step{a(StepInto, P(10))}},
		{"forward from before the entry", EntryExit, []step{a(StepInto, P(0))}},
	}
	tr := NewTree(twoCalls())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.start
			for k, s := range tc.steps {
				got := tr.Apply(p, s.c)
				if got != s.want {
					t.Fatalf("step %d %s%s from %+v: got %+v (%s), want %+v (%s)", k, s.c.Action, s.c.Src,
						p, got, tr.Kind(got), s.want, tr.Kind(s.want))
				}
				if pkg := Apply(tr.T, p, s.c); pkg != got {
					t.Fatalf("package Apply differs: %+v vs %+v", pkg, got)
				}
				p = got
			}
		})
	}
}

func TestKindsAndStates(t *testing.T) {
	tr := NewTree(twoCalls())
	for _, c := range []struct {
		p    Pos
		kind string
	}{{P(0), "call"}, {P(1), "line"}, {LC(1), KindInvLineCall}, {P(6), "return"}, {P(13), KindExitNormal}, {EntryExit, KindInvExitEntry}} {
		if k := tr.Kind(c.p); k != c.kind {
			t.Errorf("Kind(%+v) = %s, want %s", c.p, k, c.kind)
		}
	}
	s, ok := tr.State(LC(3))
	if !ok || s.Event != KindInvLineCall || s.Lineno != 2 {
		t.Errorf("State(LC(3)) = %+v %v", s, ok)
	}
	if !tr.HasChildren(3) || tr.HasChildren(5) || tr.Parent(5) != 3 || tr.Parent(0) != -1 {
		t.Error("tree shape")
	}
	err := twoCalls()
	err.Exit = tracer.Exit{Kind: tracer.ExitError}
	if k := NewTree(err).Kind(P(13)); k != KindExitError {
		t.Errorf("error exit kind %s", k)
	}
}

// time orders positions in time: an inv_line_call twin sits after its
// line's calls.
func (tr *Tree) time(p Pos) float64 {
	if p.LineCall {
		return float64(tr.end[p.Index]) + 0.5
	}
	return float64(p.Index)
}

// level is the number of ancestors of state i.
func (tr *Tree) level(i int) int {
	l := 0
	for i = tr.parent[i]; i >= 0; i = tr.parent[i] {
		l++
	}
	return l
}

// preorder lists a materialised tree's positions (root excluded).
func preorder(n *Node) []Pos {
	var out []Pos
	var walk func(*Node)
	walk = func(n *Node) {
		for _, c := range n.Children {
			out = append(out, c.Pos)
			walk(c)
		}
	}
	walk(n)
	return out
}

// randomTrace is a trace of random shape: depth changes by any amount, a
// call may follow any event, levels may be left open (a truncated run).
func randomTrace(rng *rand.Rand, n int) *tracer.Trace {
	events := []string{"call", "line", "line", "line", "return", "exception"}
	t := &tracer.Trace{Exit: tracer.Exit{Kind: tracer.ExitNever}}
	d := 0
	for i := range n {
		switch rng.Intn(4) {
		case 0:
			d++
		case 1:
			d = max(0, d-rng.Intn(3))
		}
		ev := events[rng.Intn(len(events))]
		t.States = append(t.States, tracer.State{Event: ev, Depth: d, Lineno: 1 + rng.Intn(5), Frame: d, Src: string(rune('a' + rng.Intn(5)))})
		_ = i
	}
	return t
}

// TestTreeInvariants checks, on traces of odd shapes, that the actions are
// total and agree with the materialised trees: repeated step_into visits
// the forward tree in pre-order (the trace order), repeated inv_step_into
// visits the inverse tree in pre-order, step_over and inv_step_over never
// go deeper.
func TestTreeInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for iter := range 300 {
		tt := randomTrace(rng, rng.Intn(40))
		tr := NewTree(tt)
		n := len(tt.States)
		fwd := preorder(tr.Forward())
		var walk []Pos
		for p := Initial(tt); p.Index < n; p = tr.Apply(p, Command{Action: StepInto}) {
			walk = append(walk, p)
		}
		if !slices.Equal(fwd, walk) {
			t.Fatalf("trace %d: forward pre-order %v, step_into walk %v", iter, fwd, walk)
		}
		inv := preorder(tr.Inverse())
		walk = walk[:0]
		for p := tr.Apply(ExitPos(tt), Command{Action: InvStepInto}); p.Index >= 0; p = tr.Apply(p, Command{Action: InvStepInto}) {
			walk = append(walk, p)
			if len(walk) > 3*n+3 {
				t.Fatalf("trace %d: inv_step_into does not end", iter)
			}
		}
		if !slices.Equal(inv, walk) {
			t.Fatalf("trace %d: inverse pre-order %v, inv_step_into walk %v", iter, inv, walk)
		}
		for _, p := range inv {
			for _, act := range append(slices.Clone(ForwardActions), InverseActions...) {
				q := tr.Apply(p, Command{Action: act, Src: "a"})
				if q.Index < -1 || q.Index > n || (q.LineCall && !tr.HasChildren(q.Index)) {
					t.Fatalf("trace %d: %s from %+v gives invalid %+v", iter, act, p, q)
				}
				if q.Index >= 0 && q.Index < n && p.Index >= 0 && !p.LineCall {
					dp, dq := tr.level(p.Index), tr.level(q.Index)
					if (act == StepOver || act == InvStepOver || act == StepReturn || act == InvStepCall) && dq > dp {
						t.Fatalf("trace %d: %s from %+v (depth %d) went down to %+v (depth %d)", iter, act, p, dp, q, dq)
					}
				}
				if act.Inverse() && tr.time(q) > tr.time(p) {
					t.Fatalf("trace %d: %s from %+v moved forward to %+v", iter, act, p, q)
				}
				if !act.Inverse() && tr.time(q) <= tr.time(p) {
					t.Fatalf("trace %d: %s from %+v did not move forward: %+v", iter, act, p, q)
				}
			}
		}
	}
}

func TestBreakpointLines(t *testing.T) {
	src := "x = 1\n\n# note\ndef f():\n    \"\"\"doc\"\"\"\n    return 2\n"
	if got, want := BreakpointLines(src), []int{1, 4, 6}; !slices.Equal(got, want) {
		t.Errorf("BreakpointLines = %v, want %v", got, want)
	}
	for _, c := range []struct {
		line int
		why  string
	}{{1, ""}, {2, "Blank or comment"}, {3, "Blank or comment"}, {5, "Blank or comment"}, {7, "End of file"}, {0, "End of file"}} {
		if got := CheckBreakLine(src, c.line); got != c.why {
			t.Errorf("CheckBreakLine(%d) = %q, want %q", c.line, got, c.why)
		}
	}
}

func TestScope(t *testing.T) {
	tt := twoCalls()
	sc, err := Scope(tt, 7) // the second call of g
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.States) != 3 || sc.States[0].Depth != 0 || sc.States[2].Arg != "2" || sc.Exit.Kind != tracer.ExitNormal {
		t.Fatalf("scope of g: %+v", sc)
	}
	sc, _ = Scope(tt, 2) // f, with both calls of g
	if len(sc.States) != 10 || sc.States[9].Event != "return" || sc.States[3].Depth != 1 {
		t.Fatalf("scope of f: %d states %+v", len(sc.States), sc.Exit)
	}
	if _, err := Scope(tt, 3); err == nil {
		t.Error("scope of a line accepted")
	}
	raising := twoCalls()
	raising.States[8] = tracer.State{Event: "exception", Lineno: 5, Function: "g", Depth: 2, Frame: 4, Arg: "ValueError()"}
	if sc, _ := Scope(raising, 7); sc.Exit.Kind != tracer.ExitError || sc.Exit.Error != "ValueError()" {
		t.Errorf("raising scope exit %+v", sc.Exit)
	}
	cut := twoCalls()
	cut.States = cut.States[:9]
	if sc, _ := Scope(cut, 7); sc.Exit.Kind != tracer.ExitNever || len(sc.States) != 2 {
		t.Errorf("cut scope %+v", sc)
	}
}

// FuzzTraceShapes: on a trace of any shape (from the fuzzer's bytes), every
// SPEC action and every pdb command is total: no panic, a valid result.
func FuzzTraceShapes(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3, 0}, []byte("snrcubRIO"))
	f.Add([]byte{5, 0, 9, 9, 1}, []byte("ccc"))
	f.Fuzz(func(t *testing.T, shape []byte, cmds []byte) {
		if len(shape) > 200 || len(cmds) > 100 {
			return
		}
		events := []string{"call", "line", "return", "exception"}
		tt := &tracer.Trace{Source: "a\nb\nc\n", Exit: tracer.Exit{Kind: tracer.ExitNormal}}
		for i, b := range shape {
			tt.States = append(tt.States, tracer.State{Event: events[b%4], Depth: int(b/4) % 6, Lineno: 1 + i%3,
				Frame: int(b/4) % 6, Gen: b%7 == 0, Src: string(rune('a' + i%3)), Arg: "StopIteration()"})
		}
		tr := NewTree(tt)
		n := len(tt.States)
		for _, p := range append(preorder(tr.Inverse()), EntryExit, ExitPos(tt)) {
			for _, act := range append(slices.Clone(ForwardActions), InverseActions...) {
				q := tr.Apply(p, Command{Action: act, Src: "b"})
				if q.Index < -1 || q.Index > n {
					t.Fatalf("%s from %+v: %+v", act, p, q)
				}
			}
		}
		ctx := context.Background()
		s, err := NewSession(ctx, NewTraceBackend(tt))
		if err != nil {
			t.Fatal(err)
		}
		s.SetBreak(2)
		byte2cmd := map[byte]Command{'s': {Action: StepInto}, 'n': {Action: StepOver}, 'r': {Action: StepReturn},
			'c': {Action: Continue}, 'u': {Action: StepOver, Until: true}, 'b': {Action: Breakpoint, Src: "c"},
			'R': {Action: Continue, Backward: true}, 'I': {Action: InvStepInto}, 'O': {Action: InvStepOver}, 'C': {Action: InvStepCall}}
		for _, b := range cmds {
			c, ok := byte2cmd[b]
			if !ok {
				continue
			}
			st, err := s.Do(ctx, c)
			if err != nil && !errors.Is(err, ErrExited) && !errors.Is(err, ErrAtStart) {
				t.Fatal(err)
			}
			if !st.IsExit() && (st.Index < 0 || st.Index >= n) {
				t.Fatalf("stop %+v outside the trace", st)
			}
		}
	})
}
