package defaultmodel_test

import (
	"context"
	"errors"
	"testing"

	"ndb/format"
	"ndb/model/defaultmodel"
	"ndb/model/infer"
	"ndb/model/modelfile"
)

// The shipped model loads and answers a prompt with a frame the format's
// parser accepts (its accuracy is measured by ndb eval, not here).
func TestDefaultModelPredictsAFrame(t *testing.T) {
	if _, err := defaultmodel.Bytes(); errors.Is(err, defaultmodel.ErrAbsent) {
		t.Skip("this checkout ships no default model")
	}
	t.Setenv(infer.ModelEnv, "")
	p, err := infer.Default()
	if err != nil {
		t.Fatal(err)
	}
	prompt := "<|begin_of_text|><|trace_context_start|>def f(n):\n    return n + 1\n\ndef main():\n    return f(2)\n" +
		"<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>"
	out, err := p.NextFrame(context.Background(), prompt, infer.Greedy)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := format.ParseFrame(out); err != nil {
		t.Fatalf("predicted %q: %v", out, err)
	}
}

// BenchmarkLoadDefault measures what `ndb debug` pays at start: parse the
// embedded file (checksum included) and build the predictor.
func BenchmarkLoadDefault(b *testing.B) {
	raw, err := defaultmodel.Bytes()
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		mf, err := modelfile.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := infer.FromModelFile(mf); err != nil {
			b.Fatal(err)
		}
	}
}
