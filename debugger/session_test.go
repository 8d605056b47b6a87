package debugger

import (
	"context"
	"errors"
	"testing"

	"ndb/tracer"
)

// sessionStep is one row of a session table: a command and the index of
// the state it must stop at (-1 for an exit, with exit kind).
type sessionStep struct {
	name  string
	cmd   Command
	index int
	exit  string
}

func runSessionTable(t *testing.T, s *Session, steps []sessionStep) {
	t.Helper()
	ctx := context.Background()
	for k, st := range steps {
		got, err := s.Do(ctx, st.cmd)
		if err != nil {
			t.Fatalf("step %d (%s): %v", k, st.name, err)
		}
		if got.Index != st.index || got.Exit != st.exit {
			t.Fatalf("step %d (%s): stopped at %d %q (%s %s:%d), want %d %q", k, st.name,
				got.Index, got.Exit, got.Event, got.Function, got.Lineno, st.index, st.exit)
		}
	}
}

func TestSessionForwardAndBackward(t *testing.T) {
	ctx := context.Background()
	s, err := NewSession(ctx, NewTraceBackend(twoCalls()))
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Current(); c.Index != 0 || c.Event != tracer.EventCall {
		t.Fatalf("initial stop %+v, want main's call", c)
	}
	runSessionTable(t, s, []sessionStep{
		{"s", Command{Action: StepInto}, 1, ""},
		{"s into f", Command{Action: StepInto}, 2, ""},
		{"n to f's first line", Command{Action: StepOver}, 3, ""},
		{"n over both calls", Command{Action: StepOver}, 10, ""},
		{"rs enters the second call at its return", Command{Action: InvStepInto}, 9, ""},
		{"rs", Command{Action: InvStepInto}, 8, ""},
		{"rn", Command{Action: InvStepOver}, 7, ""},
		{"rr from a call goes to the caller's call", Command{Action: InvStepCall}, 2, ""},
		{"s after going back replays", Command{Action: StepInto}, 3, ""},
		{"s into g", Command{Action: StepInto}, 4, ""},
		{"r", Command{Action: StepReturn}, 6, ""},
		{"n at a return steps (bdb)", Command{Action: StepOver}, 7, ""},
		{"unt", Command{Action: StepOver, Until: true}, 8, ""},
		{"c to the end", Command{Action: Continue}, -1, tracer.ExitNormal},
		{"rs from the exit", Command{Action: InvStepInto}, 12, ""},
		{"rr", Command{Action: InvStepCall}, 0, ""},
		{"rn past the entry", Command{Action: InvStepOver}, -1, ExitInvEntry},
		{"forward from before the entry restarts", Command{Action: StepInto}, 0, ""},
	})
	if len(s.History()) != 20 { // start + 18 commands + the extra inv_step_into
		t.Errorf("history has %d steps", len(s.History()))
	}
}

func TestSessionBreakpoints(t *testing.T) {
	ctx := context.Background()
	s, err := NewSession(ctx, NewTraceBackend(twoCalls()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBreak(8); err == nil {
		t.Error("breakpoint past the end accepted")
	}
	if err := s.SetBreak(5); err != nil {
		t.Fatal(err)
	}
	runSessionTable(t, s, []sessionStep{
		{"c to the breakpoint", Command{Action: Continue}, 5, ""},
		{"c to its second hit", Command{Action: Continue}, 8, ""},
		{"rc back to the first", Command{Action: Continue, Backward: true}, 5, ""},
		{"rc before any hit", Command{Action: Continue, Backward: true}, -1, ExitInvEntry},
	})
	if err := s.ClearBreak(5); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearBreak(5); err == nil {
		t.Error("clearing a missing breakpoint succeeded")
	}
	if err := s.SetBreak(5); err != nil {
		t.Fatal(err)
	}
	// n stops at a breakpoint it passes, as pdb's does.
	runSessionTable(t, s, []sessionStep{
		{"restart", Command{Action: StepInto}, 0, ""},
		{"s", Command{Action: StepInto}, 1, ""},
		{"s", Command{Action: StepInto}, 2, ""},
		{"n", Command{Action: StepOver}, 3, ""},
		{"n stops in g at the breakpoint", Command{Action: StepOver}, 5, ""},
	})
	s.ClearBreaks()
	runSessionTable(t, s, []sessionStep{{"c without breakpoints", Command{Action: Continue}, -1, tracer.ExitNormal}})
	if _, err := s.Do(ctx, Command{Action: StepInto}); !errors.Is(err, ErrExited) {
		t.Errorf("step after the exit: %v", err)
	}
	if _, err := s.Do(ctx, Command{Action: "jump"}); err == nil {
		t.Error("unknown action accepted")
	}
	if st, ok := s.Back(); !ok || st.Index != 5 {
		t.Errorf("Back = %+v %v", st, ok)
	}
}

func TestSessionInspect(t *testing.T) {
	ctx := context.Background()
	tt := twoCalls()
	tt.States[4].Locals = tracer.Locals{{Name: "x", Value: "3"}}
	s, _ := NewSession(ctx, NewTraceBackend(tt))
	for range 5 {
		s.Do(ctx, Command{Action: StepInto})
	}
	stack := s.Stack()
	if len(stack) != 3 || stack[0].Function != "main" || stack[1].Lineno != 2 || stack[2].Lineno != 5 {
		t.Fatalf("stack %+v", stack)
	}
	args, ok := s.Args()
	if v, _ := args.Get("x"); !ok || v != "3" {
		t.Errorf("args %v %v", args, ok)
	}
}

// predictive is a Backend shaped like a model engine: it knows only the
// SPEC actions, answers Continue with one breakpoint by its source text,
// and has no reverse continue. It looks the answers up in a trace.
type predictive struct{ tr *Tree }

func (p predictive) Source() string { return p.tr.T.Source }
func (p predictive) Start(ctx context.Context) (Stop, error) {
	return StopAt(p.tr, Initial(p.tr.T)), nil
}
func (p predictive) Next(ctx context.Context, h []Step, c Command) (Stop, error) {
	last := h[len(h)-1].Stop
	pos := Pos{Index: last.Index, LineCall: last.Event == KindInvLineCall}
	if c.Action == Continue && c.Backward {
		return Stop{}, ErrUnsupported
	}
	if c.Action == Continue && c.Src != "" {
		c = Command{Action: Breakpoint, Src: c.Src}
	}
	return StopAt(p.tr, p.tr.Apply(pos, c)), nil
}

// sameText is a loop whose body has two lines with the same text.
func sameText() *tracer.Trace {
	src := []string{"", "def main():", "    x = 0", "    x += 1", "    x *= 2", "    x += 1", "    return x"}
	var st []tracer.State
	add := func(ev string, line int) {
		st = append(st, tracer.State{Event: ev, Lineno: line, Function: "main", Src: src[line], Frame: 1})
	}
	add("call", 1)
	for _, l := range []int{2, 3, 4, 5, 6} {
		add("line", l)
	}
	add("return", 6)
	return &tracer.Trace{Source: "def main():\n    x = 0\n    x += 1\n    x *= 2\n    x += 1\n    return x\n", Call: "x", States: st}
}

func TestSessionRepeatsContinueForSharedText(t *testing.T) {
	ctx := context.Background()
	s, err := NewSession(ctx, predictive{NewTree(sameText())})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBreak(5); err != nil {
		t.Fatal(err)
	}
	// The model stops at line 3 first ("    x += 1" is also line 5); the
	// session continues until line 5.
	runSessionTable(t, s, []sessionStep{{"c", Command{Action: Continue}, 4, ""}})
	if n := len(s.History()); n != 3 {
		t.Errorf("history %d steps, want 3 (two continues)", n)
	}
	// Reverse continue is emulated by inverse steps.
	runSessionTable(t, s, []sessionStep{
		{"restart at line 2", Command{Action: InvStepInto}, 3, ""},
		{"rs", Command{Action: InvStepInto}, 2, ""},
	})
	if err := s.SetBreak(2); err != nil {
		t.Fatal(err)
	}
	runSessionTable(t, s, []sessionStep{{"rc emulated", Command{Action: Continue, Backward: true}, 1, ""}})
}

// shortWalk is a predictive backend whose continue stops at the next
// line, as a model's walk at its bound does; calls counts its answers.
type shortWalk struct {
	predictive
	calls *int
}

func (w shortWalk) Next(ctx context.Context, h []Step, c Command) (Stop, error) {
	*w.calls++
	if c.Action == Continue && !c.Backward {
		c = Command{Action: StepOver}
	}
	return w.predictive.Next(ctx, h, c)
}

func TestSessionContinueStoppedShortIsNotRepeated(t *testing.T) {
	ctx := context.Background()
	calls := 0
	s, err := NewSession(ctx, shortWalk{predictive{NewTree(sameText())}, &calls})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetBreak(5); err != nil {
		t.Fatal(err)
	}
	// The walk stops at line 3, which has line 5's text: asked again, it
	// stops at line 4, which has no breakpoint's text: the session shows
	// it instead of asking again.
	runSessionTable(t, s, []sessionStep{
		{"n", Command{Action: StepOver}, 1, ""},
		{"c", Command{Action: Continue}, 3, ""},
	})
	if calls != 3 {
		t.Errorf("the backend answered %d times, want 3 (n, and c twice)", calls)
	}
}

// recording is a predictive backend that keeps the stop each Next call saw
// as the current one: what a model would read as its context.
type recording struct {
	predictive
	seen []Stop
}

func (r *recording) Next(ctx context.Context, h []Step, c Command) (Stop, error) {
	r.seen = append(r.seen, h[len(h)-1].Stop)
	return r.predictive.Next(ctx, h, c)
}

func TestSessionAmend(t *testing.T) {
	ctx := context.Background()
	b := &recording{predictive: predictive{NewTree(twoCalls())}}
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	start := s.Current()
	edit := start
	edit.Locals = tracer.Locals{{Name: "n", Value: "1"}}
	if err := s.Amend(edit); !errors.Is(err, ErrAmendStart) {
		t.Fatalf("amend at the start: %v, want ErrAmendStart", err)
	}
	runSessionTable(t, s, []sessionStep{{"s", Command{Action: StepInto}, 1, ""}, {"s into f", Command{Action: StepInto}, 2, ""}})

	cur := s.Current()
	locals := tracer.Locals{{Name: "n", Value: "10"}}
	edit = cur
	edit.Locals = locals
	if err := s.Amend(edit); err != nil {
		t.Fatal(err)
	}
	locals[0].Value = "changed by the caller"
	if v, _ := s.Current().Locals.Get("n"); v != "10" {
		t.Fatalf("current locals %v, want n = 10 (a copy of the caller's slice)", s.Current().Locals)
	}
	if len(s.History()) != 3 {
		t.Fatalf("amend must not add a step: history has %d", len(s.History()))
	}
	runSessionTable(t, s, []sessionStep{{"n", Command{Action: StepOver}, 3, ""}})
	if got := b.seen[len(b.seen)-1]; len(got.Locals) != 1 || got.Locals[0].Value != "10" {
		t.Errorf("the next command's context has locals %v, want the edited n = 10", got.Locals)
	}

	// Anything but the values moves the stop: refused, and nothing changes.
	before := s.Current()
	moves := map[string]func(*Stop){
		"event":    func(st *Stop) { st.Event = tracer.EventCall },
		"line":     func(st *Stop) { st.Lineno++ },
		"function": func(st *Stop) { st.Function = "g" },
		"depth":    func(st *Stop) { st.Depth++ },
		"src":      func(st *Stop) { st.Src = "x" },
		"frame":    func(st *Stop) { st.Frame++ },
		"index":    func(st *Stop) { st.Index++ },
		"exit":     func(st *Stop) { st.Event, st.Exit = EventExit, tracer.ExitNormal },
	}
	for name, move := range moves {
		edit := before
		edit.Arg = "99"
		move(&edit)
		if err := s.Amend(edit); err == nil {
			t.Errorf("amend that changes the %s: want an error", name)
		}
	}
	if got := s.Current(); got.Arg != before.Arg || got.Lineno != before.Lineno {
		t.Errorf("a refused amend changed the stop: %+v", got)
	}

	runSessionTable(t, s, []sessionStep{{"c", Command{Action: Continue}, -1, tracer.ExitNormal}})
	exit := s.Current()
	exit.Arg = "x"
	if err := s.Amend(exit); err == nil {
		t.Error("amend at an exit: want an error")
	}
}

func TestCommandReverse(t *testing.T) {
	for _, c := range []struct {
		cmd  Command
		want bool
	}{
		{Command{Action: StepInto}, false},
		{Command{Action: StepOver, Until: true}, false},
		{Command{Action: Continue}, false},
		{Command{Action: Breakpoint, Src: "x = 1"}, false},
		{Command{Action: StepInto, Backward: true}, false}, // Backward refines Continue only
		{Command{Action: Continue, Backward: true}, true},
		{Command{Action: InvStepInto}, true},
		{Command{Action: InvStepOver}, true},
		{Command{Action: InvStepCall}, true},
	} {
		if got := c.cmd.Reverse(); got != c.want {
			t.Errorf("%+v.Reverse() = %v, want %v", c.cmd, got, c.want)
		}
	}
}
