package engine

import (
	"context"
	"errors"
	"sync"

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
}

// init sets up c for program p, refusing a program whose text holds a
// special token of the model's format (the prompt could not be read back).
func (c *predicted) init(p tracer.Program, pred Predictor, base Draw) error {
	if pred == nil {
		return errors.New("engine: no predictor")
	}
	source := programSource(p)
	if format.ContainsSpecialToken(source) {
		return errors.New("engine: the program text contains a special token of the model's format")
	}
	c.prog, c.source, c.ix, c.pred, c.base = p, source, newSourceIndex(source), pred, base
	return nil
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
// (or as a resample, once, after Resample). The caller holds mu.
func (c *predicted) ask(ctx context.Context, prompt string) (string, error) {
	d := c.base
	if c.resample {
		c.resample, c.draws = false, c.draws+1
		d = ResampleDraw
		d.Seed = c.draws
	}
	outs, err := c.pred.Predict(ctx, prompt, 1, d)
	if err != nil {
		return "", err
	}
	if len(outs) == 0 {
		return "", errors.New("engine: the predictor returned nothing")
	}
	c.lastRaw = outs[0]
	return outs[0], nil
}
