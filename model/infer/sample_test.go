package infer

import (
	"math"
	"testing"

	"ndb/format"
)

func TestPickGreedySkipsInvalid(t *testing.T) {
	logits := []float32{0.1, 3, 2, -1}
	if got := pickToken(logits, Greedy, newRNG(1, 0), nil); got != 1 {
		t.Fatalf("greedy = %d, want 1", got)
	}
	notOne := func(id int) bool { return id != 1 }
	if got := pickToken(logits, Greedy, newRNG(1, 0), notOne); got != 2 {
		t.Fatalf("greedy without 1 = %d, want 2", got)
	}
	none := func(int) bool { return false }
	if got := pickToken(logits, PaperSampling, newRNG(1, 0), none); got != -1 {
		t.Fatalf("no valid token: got %d, want -1", got)
	}
}

// TestPickSamplingDistribution draws many tokens and compares frequencies
// with the tempered, nucleus-cut, renormalised distribution.
func TestPickSamplingDistribution(t *testing.T) {
	logits := []float32{2, 1, 0, -3}
	opt := SampleOptions{Temperature: 0.8, TopP: 0.9}
	// Probabilities at T=0.8.
	p := make([]float64, 4)
	var z float64
	for i, l := range logits {
		p[i] = math.Exp(float64(l) / 0.8)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	// Nucleus: p0 ~ 0.70, p0+p1 ~ 0.92 >= 0.9, so tokens {0, 1}.
	if !(p[0] < 0.9 && p[0]+p[1] >= 0.9) {
		t.Fatalf("test setup: p = %v", p)
	}
	want := []float64{p[0] / (p[0] + p[1]), p[1] / (p[0] + p[1]), 0, 0}
	rng := newRNG(42, 0)
	counts := make([]float64, 4)
	const n = 20000
	for i := 0; i < n; i++ {
		counts[pickToken(logits, opt, rng, nil)]++
	}
	for i := range counts {
		if got := counts[i] / n; math.Abs(got-want[i]) > 0.015 {
			t.Fatalf("token %d: frequency %.3f, want %.3f", i, got, want[i])
		}
	}
	// Masking token 0 leaves only token 1 in the nucleus.
	for i := 0; i < 100; i++ {
		if got := pickToken(logits, opt, rng, func(id int) bool { return id != 0 }); got != 1 {
			t.Fatalf("with token 0 masked got %d", got)
		}
	}
	// Seeded: the same seed draws the same tokens.
	a, b := newRNG(7, 3), newRNG(7, 3)
	for i := 0; i < 50; i++ {
		if pickToken(logits, opt, a, nil) != pickToken(logits, opt, b, nil) {
			t.Fatal("same seed, different draws")
		}
	}
}

func TestCloseFrame(t *testing.T) {
	for _, tc := range []struct {
		text string
		dir  format.Direction
	}{
		{"", format.Forward},
		{"", format.Backward},
		{"<|line_sep|>", format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "x`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1", `, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1",`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a":`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1", "..": `, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1", "..`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1", "..": "`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"a": "1"}<|src_sep|>    x = `, format.Forward},
		{`<|return_sep|><|src_sep|>    return x<|arg_sep|>"ab\`, format.Forward},
		{`<|return_sep|><|src_sep|>    return x<|arg_sep|>"ab\u00`, format.Forward},
		{`<|call_sep|><|src_sep|>def f(n):`, format.Forward},
		{`<|inv_line_sep|><|src_sep|>    y`, format.Backward},
		{`<|inv_call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "[1, `, format.Backward},
	} {
		got, ok := closeFrame(tc.text, tc.dir)
		if !ok || format.CheckFrame(got, tc.dir) != format.Complete || got[:len(tc.text)] != tc.text {
			t.Errorf("closeFrame(%q) = %q, %v", tc.text, got, ok)
			continue
		}
		if _, err := format.ParseFrame(got); err != nil {
			t.Errorf("closeFrame(%q) = %q does not parse: %v", tc.text, got, err)
		}
	}
	// A dead end the prefix check lets through is cut back, then closed.
	dead := `<|line_sep|><|arg_sep|>{"n": "7", "b": "7", "b":`
	if got, ok := closeOrCutBack(dead, format.Forward); !ok || format.CheckFrame(got, format.Forward) != format.Complete {
		t.Errorf("closeOrCutBack(%q) = %q, %v", dead, got, ok)
	}
	if _, ok := closeFrame("<|src_sep|>", format.Forward); ok {
		t.Error("closed an invalid frame")
	}
}

func TestPromptDirection(t *testing.T) {
	for prompt, want := range map[string]format.Direction{
		"<|begin_of_text|><|trace_context_start|>x\n<|frame_sep|><|call_sep|>...<|action_sep|><|step_into|><|frame_sep|>": format.Forward,
		"...<|action_sep|><|inv_step_call|><|frame_sep|>":                                                                 format.Backward,
		"...<|action_sep|><|breakpoint|>    return x<|frame_sep|>":                                                        format.Forward,
		"<|begin_of_text|><|trace_context_start|>x\n<|frame_sep|>":                                                        format.AnyDirection,
	} {
		if got := promptDirection(prompt); got != want {
			t.Errorf("promptDirection(%q) = %v, want %v", prompt, got, want)
		}
	}
}
