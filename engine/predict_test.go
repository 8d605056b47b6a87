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
