package engine

import (
	"context"
	"errors"
	"math"
	"sync"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// predicted is what the model-backed backends (Neural, CWM) share: the
// program and the text its line numbers refer to, the predictor, and the
// decoding state that resample changes. Its mutex serialises the embedding
// backend's methods.
type predicted struct {
	prog   tracer.Program
	source string
	ix     *sourceIndex
	pred   Predictor

	mu       sync.Mutex
	base     Draw   // decoding of ordinary predictions
	resample bool   // the next prediction is sampled (ResampleDraw), not greedy
	draws    uint64 // how many resamples so far: the next seed
	lastRaw  string
	acc      confidenceSum // the confidences of the current command's predictions
}

// init sets up c for program p, refusing a program whose text holds a
// special token of the model's format (the prompt could not be read back).
func (c *predicted) init(p tracer.Program, pred Predictor, base Draw) error {
	if pred == nil {
		return errors.New("engine: no predictor")
	}
	source := tracer.TracedSource(p)
	if format.ContainsSpecialToken(source) {
		return errors.New("engine: the program text contains a special token of the model's format")
	}
	c.prog, c.source, c.ix, c.pred, c.base = p, source, newSourceIndex(source, nil), pred, base
	return nil
}

// compiled reads the program again with what its compiled code says
// (compiledProgram), where python can say: a breakpoint on a line no
// instruction is on is never reached (dropUnreachable).
func (c *predicted) compiled(ctx context.Context, python string) {
	if code := compiledProgram(ctx, python, c.source); code != nil {
		c.ix = newSourceIndex(c.source, code)
	}
}

// Source is the program text line numbers refer to.
func (c *predicted) Source() string { return c.source }

// Program is the program this backend predicts (for verify).
func (c *predicted) Program() tracer.Program { return c.prog }

// Resample makes the next prediction a sample (ResampleDraw with a fresh
// seed) instead of the greedy answer.
func (c *predicted) Resample() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resample = true
}

// LastRaw is the text the predictor wrote for the latest prediction.
func (c *predicted) LastRaw() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastRaw
}

// ask returns the predictor's one continuation of prompt, decoded greedily
// (or as a resample, once, after Resample), and the predictor's confidence
// in it (nil when it does not say); the confidence is also added to acc.
// The caller holds mu.
func (c *predicted) ask(ctx context.Context, prompt string) (string, *debugger.Confidence, error) {
	d := c.base
	if c.resample {
		c.resample, c.draws = false, c.draws+1
		d = ResampleDraw
		d.Seed = c.draws
	}
	outs, err := PredictScored(ctx, c.pred, prompt, 1, d)
	if err != nil {
		return "", nil, err
	}
	if len(outs) == 0 {
		return "", nil, errors.New("engine: the predictor returned nothing")
	}
	c.lastRaw = outs[0].Text
	c.acc.add(outs[0].Confidence)
	return outs[0].Text, outs[0].Confidence, nil
}

// mark marks st as predicted, with the confidence of the predictions made
// since acc was last reset (none: the stop keeps its own, if any).
func (c *predicted) mark(st debugger.Stop) debugger.Stop {
	st.Predicted = true
	if conf := c.acc.get(); conf != nil {
		st.Confidence = conf
	}
	return st
}

// Prediction is one continuation and the predictor's confidence in it (nil
// when the predictor does not know its token probabilities).
type Prediction struct {
	Text       string
	Confidence *debugger.Confidence
}

// ScoredPredictor is a Predictor that also says how probable the tokens it
// wrote were: ndb's model (InferPredictor) always, an OpenAI-compatible
// server when it returns log-probabilities.
type ScoredPredictor interface {
	Predictor
	PredictScored(ctx context.Context, prompt string, k int, d Draw) ([]Prediction, error)
}

// ConfidenceOf summarises token probabilities as a one-frame Confidence;
// nil for none.
func ConfidenceOf(probs []float64) *debugger.Confidence {
	if len(probs) == 0 {
		return nil
	}
	c := &debugger.Confidence{Min: probs[0], Tokens: len(probs), Frames: 1}
	var sum float64
	for _, p := range probs {
		sum += p
		c.Min = min(c.Min, p)
	}
	c.Mean = sum / float64(len(probs))
	c.Mean, c.Min = round4(c.Mean), round4(c.Min)
	return c
}

// round4 rounds to 4 decimals: the figures are read, not computed with.
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// confidenceSum pools the confidences of several predictions (a rolled-out
// command) into one: the mean over all their tokens, the least token.
type confidenceSum struct {
	sum            float64
	min            float64
	tokens, frames int
	unknown        bool // a prediction without a confidence: the pool has none
}

func (s *confidenceSum) add(c *debugger.Confidence) {
	if c == nil || c.Tokens <= 0 {
		s.unknown = true
		return
	}
	if s.tokens == 0 || c.Min < s.min {
		s.min = c.Min
	}
	s.sum += c.Mean * float64(c.Tokens)
	s.tokens += c.Tokens
	s.frames += max(c.Frames, 1)
}

// get is the pooled confidence; nil when no prediction was made or one had
// no confidence.
func (s *confidenceSum) get() *debugger.Confidence {
	if s.unknown || s.tokens == 0 {
		return nil
	}
	return &debugger.Confidence{Mean: round4(s.sum / float64(s.tokens)), Min: round4(s.min), Tokens: s.tokens, Frames: s.frames}
}
