package infer

import (
	"context"
)

// The scored path: frames with each chosen token's probability, which the
// engines read as the model's confidence (rerank, test-time compute).

// Scored is one predicted frame with the probabilities of the tokens the
// model wrote for it (see SampleScored).
type Scored struct {
	Text string
	// IDs are the tokens the model chose, in order, and Probs the
	// probability of each: see tokenProb. Text the decoder added to close a
	// frame that ran out of tokens (closeOrCutBack) has no entry.
	IDs   []int32
	Probs []float64
}

// Mean is the mean of Probs (0 when there are none).
func (s Scored) Mean() float64 {
	if len(s.Probs) == 0 {
		return 0
	}
	var sum float64
	for _, p := range s.Probs {
		sum += p
	}
	return sum / float64(len(s.Probs))
}

// Min is the least of Probs (0 when there are none).
func (s Scored) Min() float64 {
	if len(s.Probs) == 0 {
		return 0
	}
	m := s.Probs[0]
	for _, p := range s.Probs[1:] {
		m = min(m, p)
	}
	return m
}

// SampleScored is Sample with each frame's token probabilities: for every
// token the model chose, its probability under the model's distribution at
// temperature 1 (the softmax of the logits, whatever the decoding's
// temperature or top-p), renormalised over the tokens constrained decoding
// allowed at that position (tokenProb). Unconstrained decoding uses the
// plain softmax.
func (p *Predictor) SampleScored(ctx context.Context, prompt string, k int, opt SampleOptions) ([]Scored, error) {
	return p.sample(ctx, prompt, k, opt, true)
}
