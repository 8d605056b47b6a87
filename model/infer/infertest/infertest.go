// Package infertest builds tiny random-weight predictors for the tests of
// packages above model/infer (engines, evaluation).
package infertest

import (
	"math/rand/v2"
	"slices"
	"testing"

	"ndb/model/infer"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train/synthtext"
)

// Tiny returns a random-weight network with a small tokenizer trained on 30
// synthetic trajectories plus extra texts. Its predictions are nonsense,
// but constrained decoding keeps them well-formed frames, which is what
// the plumbing around a model needs.
func Tiny(tb testing.TB, maxSeq int, extra ...string) *infer.Predictor {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	for id := range 30 {
		text, _ := synthtext.Trajectory(rng, id)
		texts = append(texts, text)
	}
	texts = append(texts, extra...)
	tok, err := tokenizer.Train(slices.Values(texts), 360, tokenizer.SpecialTokens)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := nn.New(nn.Config{Dim: 32, HiddenDim: 64, Layers: 1, Heads: 4, Vocab: tok.VocabSize(), MaxSeq: maxSeq, RopeTheta: 10000, NormEps: 1e-5}, 5)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := infer.New(m, tok)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
