package modelfile

import (
	"errors"
	"slices"
	"testing"

	"ndb/model/tokenizer"
)

// TestInterpolate: (1-t)*a + t*b weight by weight; models of another
// config or tokenizer, and t outside [0, 1], are refused.
func TestInterpolate(t *testing.T) {
	a, b := testModel(t, tiny, true), testModel(t, tiny, false)
	for i := range b.Weights {
		a.Weights[i], b.Weights[i] = float32(i%7), float32(i%7)+2
	}
	m, err := Interpolate(a, b, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range m.Weights {
		if want := float32(i%7) + 0.5; w != want {
			t.Fatalf("weight %d: %v, want %v", i, w, want)
		}
	}
	if m.Train != nil || m.Meta["interpolated"] == "" || slices.Equal(m.Weights, a.Weights) {
		t.Errorf("interpolated model: train %v, meta %v", m.Train, m.Meta)
	}
	other := testModel(t, tiny, false)
	tok, err := tokenizer.Train(slices.Values([]string{"x = [1, 2]\nprint(x)\n"}), 300, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	other.Tokenizer = tok
	deeper := testModel(t, tiny, false)
	deeper.Config.Layers++
	deeper.Weights = make([]float32, deeper.Config.NumParams())
	for _, tc := range []struct {
		name string
		b    *Model
		t    float64
		err  error
	}{
		{"another tokenizer", other, 0.5, ErrMismatch},
		{"another config", deeper, 0.5, ErrMismatch},
		{"t above 1", b, 1.5, nil},
		{"t below 0", b, -0.1, nil},
	} {
		if _, err := Interpolate(a, tc.b, tc.t); err == nil || tc.err != nil && !errors.Is(err, tc.err) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.err)
		}
	}
}
