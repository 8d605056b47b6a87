package eval

import (
	"context"

	"ndb/engine"
	"ndb/model/infer"
)

// InferPredictor adapts ndb's Go model runtime to engine.Predictor with a
// frame budget: CruxEval's frames are short (outputs of at most 50
// characters), so a smaller budget bounds the time a poorly trained model
// spends writing nonsense without touching any answer a good model gives.
type InferPredictor struct {
	P         *infer.Predictor
	MaxTokens int // per frame; 0: the runtime's default
	// FreeProgram turns off the program rules of constrained decoding
	// (source lines and LOCALS keys from the program), for ablations.
	FreeProgram bool
}

// Predict samples k frames (constrained decoding keeps them well-formed).
func (p InferPredictor) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	return p.P.Sample(ctx, prompt, k, infer.SampleOptions{Temperature: d.Temperature, TopP: d.TopP, Seed: d.Seed, MaxTokens: p.MaxTokens, FreeProgram: p.FreeProgram})
}
