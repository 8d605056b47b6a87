package engine

import (
	"context"
	"strings"
	"testing"

	"ndb/debugger"
)

const cruxCode = "def f(s, n):\n    out = s * n\n    if not out:\n        return ''\n    return out + '!'\n"

func TestPredictOutputRealIsExact(t *testing.T) {
	got, _, err := PredictOutput(context.Background(), testReal(t), cruxCode, "f('ab', 2)")
	if err != nil || got != "'abab!'" {
		t.Fatalf("%q %v", got, err)
	}
	if _, _, err := PredictOutput(context.Background(), testReal(t), cruxCode, "f(1, None)"); err == nil || !strings.Contains(err.Error(), "raises") {
		t.Errorf("a raising call: %v", err)
	}
	// A program that never starts (bad call, bad code) says why; it used
	// to answer "the program has exited; only reverse commands move".
	for _, c := range []struct{ code, call string }{{cruxCode, "f("}, {"def f(:\n", "f(1)"}} {
		if _, _, err := PredictOutput(context.Background(), testReal(t), c.code, c.call); err == nil || !strings.Contains(err.Error(), "raises: SyntaxError") {
			t.Errorf("code %q call %q: %v, want the SyntaxError", c.code, c.call, err)
		}
	}
}

func TestPredictOutputAsksForStepReturn(t *testing.T) {
	or := scripted(
		`<|line_sep|><|arg_sep|>{}<|src_sep|>    return f('ab', 2)<|action_sep|>`,
		`<|call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'ab'", "n": "2"}<|action_sep|>`,
		`<|return_sep|><|src_sep|>    return out + '!'<|arg_sep|>"'abab!'"<|action_sep|>`,
	)
	e := NewNeuralEngine("model", or, Draw{}, false)
	got, st, err := PredictOutput(context.Background(), e, cruxCode, "f('ab', 2)")
	if err != nil || got != "'abab!'" || st.Lineno != 5 || st.Function != "f" || st.Depth != 1 {
		t.Fatalf("%q %+v %v", got, st, err)
	}
	if !strings.HasSuffix(or.prompts[2], `<|action_sep|><|step_return|><|frame_sep|>`) {
		t.Errorf("last prompt %q", or.prompts[2])
	}
}

func TestPredictInputAsksForInvStepCall(t *testing.T) {
	or := scripted(`<|inv_call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'ab'", "n": "2"}<|action_sep|>`)
	e := NewNeuralEngine("model", or, Draw{}, false)
	args, st, err := PredictInput(context.Background(), e, cruxCode, "f", "'abab!'")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := args.Get("n"); v != "2" || st.Lineno != 1 || st.Function != "f" {
		t.Errorf("%v %+v", args, st)
	}
	want := "<|begin_of_text|><|trace_context_start|>" + cruxCode +
		`<|frame_sep|><|inv_return_sep|><|src_sep|>    return out + '!'<|arg_sep|>"'abab!'"<|action_sep|><|inv_step_call|><|frame_sep|>`
	if or.prompts[0] != want {
		t.Errorf("prompt\n%q\nwant\n%q", or.prompts[0], want)
	}
	if _, _, err := PredictInput(context.Background(), e, cruxCode, "g", "1"); err == nil {
		t.Error("an unknown function must be an error")
	}
	if _, _, err := PredictInput(context.Background(), testReal(t), cruxCode, "f", "1"); err != debugger.ErrNoInverse {
		t.Errorf("real engine: %v", err)
	}
}

// TestLastReturnIsAReturnStatement: predict_input's return state is at the
// function's last return statement, read by the source index: a one-line
// body's return counts, a return in a docstring or a comment or in a
// nested def does not; with no return, the body's last line.
func TestLastReturnIsAReturnStatement(t *testing.T) {
	src := strings.Join([]string{
		"def f(s):", // 1
		"    '''Doc.",
		"    return the text'''",
		"    def g(): return 0",
		"    if s: return s  # return", // 5
		"    print(s)",
		"    # return",
		"class C:",
		"    def m(self): return 1", // 9
		"def h(x):",
		"    y = x",
		"    print(y,",
		"          x)", // 13
		"def k(): pass",
	}, "\n")
	ix := newSourceIndex(src, nil)
	for _, tc := range []struct {
		function string
		want     int
	}{{"f", 5}, {"g", 4}, {"C.m", 9}, {"m", 9}, {"h", 12}, {"k", 14}, {"nope", 0}} {
		if got := ix.lastReturn(tc.function); got != tc.want {
			t.Errorf("lastReturn(%s) = %d, want %d", tc.function, got, tc.want)
		}
	}
}

// TestStartOfACallIsTheWrappersCall: a --call program starts at the call
// of the main tracer.WrapCall adds, after a main of the program's own and
// one in a string.
func TestStartOfACallIsTheWrappersCall(t *testing.T) {
	src := "def main():\n    return 1\nDOC = '''\ndef main():\n'''\ndef f(x):\n    return x\n"
	b, err := NewNeural(Program{Source: src, Call: "f(2)"}, scripted(), Draw{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := b.Start(context.Background())
	if st.Lineno != 10 || st.Function != "main" || st.Src != "def main():" || st.Event != "call" {
		t.Errorf("start %+v, want main's call on line 10", st.State)
	}
	if _, err := NewNeural(Program{Source: "x = 1\n"}, scripted(), Draw{}); err != nil {
		t.Errorf("a script: %v", err)
	}
}
