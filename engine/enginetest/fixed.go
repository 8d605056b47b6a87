// Package enginetest holds predictors for the tests of the front ends.
package enginetest

import (
	"context"

	"ndb/engine"
)

// Fixed answers every prompt with one frame text whose tokens have the
// given probabilities (so the stop's confidence is known).
type Fixed struct {
	Text  string
	Probs []float64
}

// Predict returns the frame text.
func (f Fixed) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	return []string{f.Text}, nil
}

// PredictScored returns the frame text with its confidence.
func (f Fixed) PredictScored(ctx context.Context, prompt string, k int, d engine.Draw) ([]engine.Prediction, error) {
	return []engine.Prediction{{Text: f.Text, Confidence: engine.ConfidenceOf(f.Probs)}}, nil
}
