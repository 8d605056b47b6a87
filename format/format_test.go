package format

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestSpecExample checks the exact text of SPEC section 5's example.
func TestSpecExample(t *testing.T) {
	src := "def f(n):\n    ...\n"
	states := []tracer.State{
		{Event: "call", Src: "def main():", Frame: 1},
		{Event: "line", Src: "    return f(5)", Frame: 1},
		{Event: "call", Src: "def f(n):", Locals: vars("n", "5"), Frame: 2},
		{Event: "return", Src: "    return result", Arg: "[1, 2, 3]", Frame: 2},
	}
	tr := build(src, states, false, []visit{{state: 0}, {state: 1, via: debugger.StepInto},
		{state: 2, via: debugger.StepInto}, {state: 3, via: debugger.StepReturn}}, debugger.Continue, ExitNormal)
	got, err := Serialize(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|begin_of_text|><|trace_context_start|>" + src +
		`<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>` +
		`<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return f(5)<|action_sep|><|step_into|>` +
		`<|frame_sep|><|call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "5"}<|action_sep|><|step_return|>` +
		`<|frame_sep|><|return_sep|><|src_sep|>    return result<|arg_sep|>"[1, 2, 3]"<|action_sep|><|continue|>` +
		`<|frame_sep|><|exit_normal|><|trace_end|><|end_of_text|>`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// goldenCases are hand-made trajectories over fixtureStates covering every
// frame kind, the LOCALS rules and every action.
func goldenCases() map[string]*Trajectory { return goldenCasesOver(false) }

// withExitLocals gives return and exception states the locals the real
// tracer records there since issue 20 (the previous state's of the frame,
// plus one), which the model's text never shows.
func withExitLocals(states []tracer.State) []tracer.State {
	out := append([]tracer.State(nil), states...)
	for i := range out {
		if out[i].Event != tracer.EventReturn && out[i].Event != tracer.EventException {
			continue
		}
		var l tracer.Locals
		for j := i - 1; j >= 0; j-- {
			if out[j].Frame == out[i].Frame && out[j].Locals != nil {
				l = append(l, out[j].Locals...)
				break
			}
		}
		out[i].Locals = append(l, tracer.Var{Name: "late", Value: "'set at the return'"})
	}
	return out
}

// goldenCasesOver builds the golden trajectories; exitLocals gives their
// return and exception states locals (the text must not change).
func goldenCasesOver(exitLocals bool) map[string]*Trajectory {
	fixtureStates := fixtureStates
	exc := []tracer.State{
		{Event: "call", Src: "def main():", Frame: 1},
		{Event: "line", Src: "    return g({'a': 1})", Frame: 1},
		{Event: "call", Src: "def g(d):", Locals: vars("d", "{'a': 1}"), Frame: 2},
		{Event: "line", Src: "    return d['b'] < 1", Locals: vars("d", "{'a': 1}"), Frame: 2},
		{Event: "exception", Src: "    return d['b'] < 1", Arg: `KeyError('b')`, Frame: 2},
		{Event: "line", Src: "    del x; y = \"<tag>\\n\"", Locals: vars("y", `'<tag>\n'`), Frame: 3},
	}
	if exitLocals {
		fixtureStates, exc = withExitLocals(fixtureStates), withExitLocals(exc)
	}
	return map[string]*Trajectory{
		"forward_steps": build(fixtureSource, fixtureStates, false, []visit{
			{state: 0}, {state: 1, via: debugger.StepInto}, {state: 2, via: debugger.StepInto},
			{state: 3, via: debugger.StepOver}, {state: 4, via: debugger.StepOver}, {state: 5, via: debugger.StepInto},
			{state: 6, via: debugger.StepOver}, {state: 9, via: debugger.Breakpoint, bp: "    return result"},
			{state: 10, via: debugger.StepInto}, {state: 11, via: debugger.StepInto},
		}, debugger.StepInto, ExitNormal),
		"forward_jumps": build(fixtureSource, fixtureStates, false, []visit{
			{state: 0}, {state: 1, via: debugger.StepOver}, {state: 2, via: debugger.StepInto},
			{state: 10, via: debugger.StepReturn}, {state: 11, via: debugger.StepOver},
		}, debugger.Continue, ExitNormal),
		"breakpoint_never_reached": build(fixtureSource, fixtureStates, false, []visit{{state: 0}},
			debugger.Breakpoint, ExitNormal),
		"inverse": build(fixtureSource, fixtureStates, true, []visit{
			{state: 11}, {state: 1, lineCall: true, via: debugger.InvStepInto}, {state: 10, via: debugger.InvStepInto},
			{state: 9, via: debugger.InvStepOver}, {state: 8, via: debugger.InvStepOver}, {state: 7, via: debugger.InvStepInto},
			{state: 2, via: debugger.InvStepCall}, {state: 1, via: debugger.InvStepOver}, {state: 0, via: debugger.InvStepOver},
		}, debugger.InvStepOver, InvExitEntry),
		"exception_error": build("def g(d):\n    return d['b'] < 1\n", exc, false, []visit{
			{state: 0}, {state: 1, via: debugger.StepInto}, {state: 2, via: debugger.StepInto},
			{state: 3, via: debugger.StepInto}, {state: 4, via: debugger.StepInto},
		}, debugger.Continue, ExitError),
		"inverse_exception": build("def g(d):\n    return d['b'] < 1\n", exc, true, []visit{
			{state: 4}, {state: 3, via: debugger.InvStepOver}, {state: 2, via: debugger.InvStepCall},
		}, debugger.InvStepOver, InvExitEntry),
		"never_and_escapes": build("while True:\n    pass\n", exc, false, []visit{{state: 5}},
			debugger.Continue, ExitNever),
	}
}

func TestGolden(t *testing.T) {
	for name, tr := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			text, err := Serialize(tr)
			if err != nil {
				t.Fatal(err)
			}
			// One frame per line in the golden file, for reading; the real text has no breaks.
			readable := strings.ReplaceAll(text, TokFrameSep, "\n"+TokFrameSep) + "\n"
			checkGolden(t, name+".golden", readable)
			back, err := ParseTrajectory(text)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			assertSameTrajectory(t, tr, back)
		})
	}
}

// TestGoldenIgnoresExitLocals: locals on return and exception states (the
// real tracer's, issue 20) leave the model's text exactly as it was: return
// and exception frames have no LOCALS.
func TestGoldenIgnoresExitLocals(t *testing.T) {
	plain := goldenCases()
	for name, tr := range goldenCasesOver(true) {
		t.Run(name, func(t *testing.T) {
			text, err := Serialize(tr)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Serialize(plain[name])
			if err != nil {
				t.Fatal(err)
			}
			if text != want {
				t.Fatalf("locals at return/exception changed the text:\n%s\nwant\n%s", text, want)
			}
			path := filepath.Join("testdata", name+".golden")
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if readable := strings.ReplaceAll(text, TokFrameSep, "\n"+TokFrameSep) + "\n"; readable != string(golden) {
				t.Fatalf("%s differs:\n%s", path, readable)
			}
		})
	}
	// The CWM text neither.
	cwm, err := SerializeCWM(fixtureSource, 1, CWMFrames(withExitLocals(fixtureStates)[2:11]), true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := SerializeCWM(fixtureSource, 1, CWMFrames(fixtureStates[2:11]), true)
	if err != nil || cwm != want {
		t.Fatalf("CWM text with locals at the return differs (%v):\n%s\nwant\n%s", err, cwm, want)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./format -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs:\ngot\n%s\nwant\n%s", path, got, want)
	}
}
