package modelfile

import (
	"bytes"
	"fmt"
)

// Interpolate returns the model whose weights are (1-t)*a + t*b: weight-space
// interpolation between a model and one fine-tuned from it (Wortsman et al.,
// "Robust fine-tuning of zero-shot models", 2022). Along that line the
// fine-tuned model's gains on new data often outlast its losses on the old,
// so a point between the two can keep both. The two must share config and
// tokenizer; the result has no training state and a's metadata, with the
// mixture recorded.
func Interpolate(a, b *Model, t float64) (*Model, error) {
	if t < 0 || t > 1 {
		return nil, fmt.Errorf("interpolate: t = %g is outside [0, 1]", t)
	}
	if a.Config != b.Config {
		return nil, fmt.Errorf("interpolate: %w: configs differ (%+v, %+v)", ErrMismatch, a.Config, b.Config)
	}
	ta, err := a.Tokenizer.MarshalJSON()
	if err != nil {
		return nil, err
	}
	tb, err := b.Tokenizer.MarshalJSON()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(ta, tb) {
		return nil, fmt.Errorf("interpolate: %w: tokenizers differ", ErrMismatch)
	}
	if len(a.Weights) != len(b.Weights) {
		return nil, fmt.Errorf("interpolate: %w: %d and %d weights", ErrMismatch, len(a.Weights), len(b.Weights))
	}
	w := make([]float32, len(a.Weights))
	ft := float32(t)
	for i, x := range a.Weights {
		w[i] = x + ft*(b.Weights[i]-x)
	}
	meta := map[string]string{}
	for k, v := range a.Meta {
		meta[k] = v
	}
	meta["interpolated"] = fmt.Sprintf("(1-t)*A + t*B, t = %g; A: %s; B: %s", t, a.Meta["source"], b.Meta["source"])
	return &Model{Config: a.Config, Tokenizer: a.Tokenizer, Weights: w, DType: a.DType, Meta: meta}, nil
}
