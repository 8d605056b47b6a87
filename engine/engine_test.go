package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

var (
	realOnce sync.Once
	realEng  *RealEngine
)

// testReal is one real engine shared by the package's tests.
func testReal(t testing.TB) *RealEngine {
	realOnce.Do(func() { realEng = NewReal(Options{Workers: 2}) })
	return realEng
}

func TestMain(m *testing.M) {
	code := m.Run()
	if realEng != nil {
		realEng.Close()
	}
	os.Exit(code)
}

func readProgram(t testing.TB, name, call string) Program {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Program{Path: name, Source: string(b), Call: call}
}

// oracle is a Predictor scripted from the real engine: the test runs each
// command on a real session first and queues the frames of the states it
// reached, written as a perfect model would write them (format.Builder's
// locals rules against the state before). The neural backend must then
// place every frame exactly where the real state is.
type oracle struct {
	mu      sync.Mutex
	queue   []string
	prompts []string
}

func (o *oracle) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.prompts = append(o.prompts, prompt)
	if len(o.queue) == 0 {
		return nil, fmt.Errorf("oracle: no answer queued for prompt %q", prompt[max(0, len(prompt)-200):])
	}
	a := o.queue[0]
	o.queue = o.queue[1:]
	return []string{a}, nil
}

// frameFor is the text a perfect model writes for stop next, reached from
// prev by action.
func frameFor(t *testing.T, prev, next debugger.Stop, action debugger.Action) string {
	t.Helper()
	inverse := action.Inverse()
	if next.IsExit() {
		k := map[string]format.Kind{tracer.ExitNormal: format.ExitNormal, tracer.ExitError: format.ExitError,
			tracer.ExitNever: format.ExitNever, debugger.ExitInvEntry: format.InvExitEntry}[next.Exit]
		return format.FrameText(format.Frame{Kind: k})
	}
	b := format.NewBuilder(inverse)
	ps, plc := stateOf(prev)
	if !prev.IsExit() {
		if _, err := b.Frame(ps, plc && inverse, ""); err != nil {
			t.Fatal(err)
		}
	}
	ns, lc := stateOf(next)
	f, err := b.Frame(ns, lc, action)
	if err != nil {
		t.Fatal(err)
	}
	return format.FrameText(f)
}

type cmdCase struct {
	name string
	cmd  debugger.Command
	brk  int // set this breakpoint first
}

var (
	cS  = cmdCase{name: "s", cmd: debugger.Command{Action: debugger.StepInto}}
	cN  = cmdCase{name: "n", cmd: debugger.Command{Action: debugger.StepOver}}
	cR  = cmdCase{name: "r", cmd: debugger.Command{Action: debugger.StepReturn}}
	cC  = cmdCase{name: "c", cmd: debugger.Command{Action: debugger.Continue}}
	cRS = cmdCase{name: "rs", cmd: debugger.Command{Action: debugger.InvStepInto}}
	cRN = cmdCase{name: "rn", cmd: debugger.Command{Action: debugger.InvStepOver}}
	cRR = cmdCase{name: "rr", cmd: debugger.Command{Action: debugger.InvStepCall}}
)

func cB(line int) cmdCase {
	return cmdCase{name: fmt.Sprintf("b %d; c", line), cmd: debugger.Command{Action: debugger.Continue}, brk: line}
}

// TestNeuralPlacesFramesLikeTheRealEngine drives a real session and a
// neural session with the oracle side by side: every predicted stop must
// equal the real one in event, line, function, depth, locals and value.
func TestNeuralPlacesFramesLikeTheRealEngine(t *testing.T) {
	cases := []struct {
		file, call string
		cmds       []cmdCase
	}{
		{"calls.py", "f('ab', 3)", []cmdCase{cS, cS, cS, cS, cN, cS, cS, cS, cS, cN, cN, cR, cN, cN, cN, cN, cN, cN, cS}},
		{"calls.py", "f('ab', 3)", []cmdCase{cB(2), cB(9), cRS, cRS, cRN, cRR, cRR, cRS}},
		{"fib.py", "fib(3)", []cmdCase{cS, cS, cS, cS, cS, cS, cS, cS, cS, cR, cS, cS, cS, cRS, cRS, cRN, cRR}},
		{"script.py", "", []cmdCase{cN, cN, cN, cN, cN, cS, cS, cS, cS, cS, cS, cN, cN, cN, cN, cN, cC}},
		{"raises.py", "g([1, 3])", []cmdCase{cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cS, cN, cN, cC}},
		{"calls.py", "f('ab', 2)", []cmdCase{cC}},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.call, func(t *testing.T) { lockstep(t, tc.file, tc.call, tc.cmds) })
	}
}

// lockstep runs cmds on a real and a neural session (oracle predictor)
// and requires equal stops; it returns the oracle (its prompts).
func lockstep(t *testing.T, file, call string, cmds []cmdCase) *oracle {
	t.Helper()
	ctx := context.Background()
	p := readProgram(t, file, call)
	rb, err := testReal(t).Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := debugger.NewSession(ctx, rb)
	if err != nil {
		t.Fatal(err)
	}
	or := &oracle{}
	nb, err := NewNeural(p, or, Draw{})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := debugger.NewSession(ctx, nb)
	if err != nil {
		t.Fatal(err)
	}
	if ds := debugger.Compare(0, ns.Current(), rs.Current()); len(ds) > 0 {
		t.Fatalf("start differs: %v", ds)
	}
	if nb.Source() != rb.Source() {
		t.Fatalf("source differs:\n%q\n%q", nb.Source(), rb.Source())
	}
	for i, c := range cmds {
		if c.brk > 0 {
			if err := rs.SetBreak(c.brk); err != nil {
				t.Fatal(err)
			}
			if err := ns.SetBreak(c.brk); err != nil {
				t.Fatal(err)
			}
		}
		before := len(rs.History())
		want, rerr := rs.Do(ctx, c.cmd)
		h := rs.History()
		for k := before; k < len(h); k++ {
			or.queue = append(or.queue, frameFor(t, h[k-1].Stop, h[k].Stop, h[k].Command.Action))
		}
		cmd := c.cmd
		cmd.Breaks = ns.Breaks()
		_, recalled := debugger.Recall(nb.paths.expand(ns.History()), cmd, nb.ix.stepText())
		queued := len(or.queue)
		got, nerr := ns.Do(ctx, c.cmd)
		if (rerr == nil) != (nerr == nil) {
			t.Fatalf("command %d (%s): real err %v, neural err %v", i, c.name, rerr, nerr)
		}
		if ds := debugger.Compare(i+1, got, want); len(ds) > 0 {
			t.Fatalf("command %d (%s): predicted %+v\nreal %+v\n%v", i, c.name, got, want, ds)
		}
		switch {
		case recalled && len(or.queue) != queued:
			t.Fatalf("command %d (%s): recalled, yet the model was asked", i, c.name)
		case recalled:
			or.queue = nil
		case len(or.queue) != 0:
			t.Fatalf("command %d (%s): %d answers left unused", i, c.name, len(or.queue))
		}
	}
	return or
}

// TestTimeTravelKeepsTheContext: forwards, back, forwards again: the last
// prompt holds the forward history up to the state stepped back to. (The
// step back is recalled, not asked; an until is asked.)
func TestTimeTravelKeepsTheContext(t *testing.T) {
	cUnt := cmdCase{name: "unt", cmd: debugger.Command{Action: debugger.StepOver, Until: true}}
	or := lockstep(t, "calls.py", "f('ab', 3)", []cmdCase{cS, cS, cS, cN, cN, cRN, cUnt})
	last := or.prompts[len(or.prompts)-1]
	want := "<|step_into|><|frame_sep|><|line_sep|>"
	if strings.Count(last, "<|frame_sep|>") != 6 || !strings.Contains(last, want) || strings.Contains(last, "inv_") {
		t.Errorf("last prompt\n%s", last)
	}
	if !strings.HasSuffix(last, "<|src_sep|>    out = s * 2<|action_sep|><|step_over|><|frame_sep|>") {
		t.Errorf("last prompt does not continue from the state stepped back to:\n%s", last)
	}
}

// TestPromptIsTheFormatText checks the first prompt byte for byte.
func TestPromptIsTheFormatText(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(1)")
	or := &oracle{queue: []string{"<|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(1)<|action_sep|>"}}
	nb, err := NewNeural(p, or, Draw{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := debugger.NewSession(context.Background(), nb)
	st, err := s.Do(context.Background(), debugger.Command{Action: debugger.StepInto})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|begin_of_text|><|trace_context_start|>" + tracer.WrapCall(p.Source, "fib(1)") +
		"<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>"
	if or.prompts[0] != want {
		t.Errorf("prompt\n%q\nwant\n%q", or.prompts[0], want)
	}
	if st.Lineno != 8 || st.Function != "main" || st.Depth != 0 || st.Event != "line" {
		t.Errorf("stop %+v", st)
	}
}

// scripted answers each prediction from a list, in order.
func scripted(answers ...string) *oracle { return &oracle{queue: answers} }

func TestBadPredictionsAreErrorsNotPanics(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(1)")
	for _, bad := range []string{"", "garbage", "<|line_sep|><|arg_sep|>{not json<|src_sep|>x<|action_sep|>",
		"<|inv_line_sep|><|src_sep|>x<|arg_sep|>{}<|action_sep|>"} {
		nb, _ := NewNeural(p, scripted(bad), Draw{})
		s, _ := debugger.NewSession(context.Background(), nb)
		if _, err := s.Do(context.Background(), debugger.Command{Action: debugger.StepInto}); err == nil {
			t.Errorf("%q: want an error", bad)
		}
		if len(s.History()) != 1 {
			t.Errorf("%q: a failed prediction must not enter the history", bad)
		}
	}
}

func TestUnknownLineIsKept(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(1)")
	nb, _ := NewNeural(p, scripted("<|line_sep|><|arg_sep|>{}<|src_sep|>    print('not in the program')<|action_sep|>"), Draw{})
	s, _ := debugger.NewSession(context.Background(), nb)
	st, err := s.Do(context.Background(), debugger.Command{Action: debugger.StepInto})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lineno != 0 || st.Src != "    print('not in the program')" {
		t.Errorf("stop %+v: a hallucinated line keeps its text and has no line number", st)
	}
}

func TestNewByName(t *testing.T) {
	for _, n := range []string{"nope", "gpt"} {
		if _, err := New(n, Options{}); err == nil || !strings.Contains(err.Error(), "unknown engine") {
			t.Errorf("%q: %v", n, err)
		}
	}
	e, err := New("real", Options{})
	if err != nil || e.Name() != Real {
		t.Fatalf("%v %v", e, err)
	}
	e.Close()
	m, err := New("model", Options{Predictor: scripted()})
	if err != nil || m.Name() != Model {
		t.Fatalf("%v %v", m, err)
	}
	t.Setenv("NDB_OPENAI_BASE_URL", "not a url")
	if _, err := New("openai", Options{}); err == nil {
		t.Error("a bad base URL from the environment must be an error")
	}
}

// TestRegistryUsesTheBaseModel: a server's --model (Options.Model of the
// registry) is the model of every Get that names none; `ndb dap --model F`
// and `ndb mcp --model F` ignored it and fell back to the embedded model.
func TestRegistryUsesTheBaseModel(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "base.model")
	reg := NewRegistry(Options{Model: missing})
	defer reg.Close()
	if _, err := reg.Get(Model, ""); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Get(model, \"\") with base model %s: %v, want an error opening that file", missing, err)
	}
	other := filepath.Join(t.TempDir(), "other.model")
	if _, err := reg.Get(Model, other); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("Get(model, %s): %v, want an error opening that file", other, err)
	}
	// A scripted predictor in base still answers a Get that names no model.
	reg = NewRegistry(Options{Predictor: scripted()})
	defer reg.Close()
	if e, err := reg.Get(Model, ""); err != nil || e.Name() != Model {
		t.Errorf("scripted base predictor: %v %v", e, err)
	}
}
