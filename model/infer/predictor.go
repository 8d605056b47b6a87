// Package infer predicts debugger states with a trained model: KV-cache
// decoding, greedy and temperature/top-p sampling, decoding constrained to
// frames the format package accepts, and k candidates decoded together.
//
// A Predictor is safe for concurrent use; calls are serialised because they
// share the prompt cache (the KV cache of the last prompt, reused when the
// next prompt extends it, as a debugging session's prompts do).
package infer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"ndb/format"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

// Predictor writes the next frame of a trajectory prompt.
type Predictor struct {
	model *nn.Model
	tok   *tokenizer.Tokenizer
	texts []string // token id -> its text (bytes)

	frameSep, eot int32

	mu     sync.Mutex
	stats  Stats
	cache  *nn.KVCache // batch-1 cache holding the positions of cached
	cached []int32     // the tokens whose keys and values are in cache

	viewMu sync.Mutex
	view   *sourceView // the latest long program's index (elideSource)
}

// New makes a Predictor from a model and its tokenizer.
func New(model *nn.Model, tok *tokenizer.Tokenizer) (*Predictor, error) {
	if model == nil || tok == nil {
		return nil, errors.New("infer: need a model and a tokenizer")
	}
	if tok.VocabSize() > model.Config.Vocab {
		return nil, fmt.Errorf("infer: tokenizer has %d tokens, more than the model's vocabulary of %d", tok.VocabSize(), model.Config.Vocab)
	}
	// Ids past the tokenizer (a padded vocabulary) have no text and are
	// never emitted.
	p := &Predictor{model: model, tok: tok, texts: make([]string, model.Config.Vocab)}
	for i := range tok.VocabSize() {
		p.texts[i], _ = tok.Token(int32(i))
	}
	var ok bool
	if p.frameSep, ok = tok.SpecialID(format.TokFrameSep); !ok {
		return nil, fmt.Errorf("infer: tokenizer has no %s token", format.TokFrameSep)
	}
	if p.eot, ok = tok.SpecialID(format.TokEndOfText); !ok {
		return nil, fmt.Errorf("infer: tokenizer has no %s token", format.TokEndOfText)
	}
	return p, nil
}

// Stats counts the decoding passes of greedy decoding with drafts.
type Stats struct {
	Passes   int // Decode calls after the prompt
	Tokens   int // tokens they added to the cache
	Drafted  int // draft tokens proposed
	Accepted int // draft tokens kept
}

// Stats returns the counts so far.
func (p *Predictor) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Model is the network behind the predictor.
func (p *Predictor) Model() *nn.Model { return p.model }

// Tokenizer is the predictor's tokenizer.
func (p *Predictor) Tokenizer() *tokenizer.Tokenizer { return p.tok }

// NextFrame predicts the frame after prompt, which ends right after an
// action and its <|frame_sep|> (format.Prompt). The result is the frame as
// format.FrameText writes it (ending in <|action_sep|>, or for an exit in
// <|trace_end|><|end_of_text|>); format.ParseFrame reads it.
func (p *Predictor) NextFrame(ctx context.Context, prompt string, opt SampleOptions) (string, error) {
	out, err := p.Sample(ctx, prompt, 1, opt)
	if err != nil {
		return "", err
	}
	return out[0], nil
}

// Sample predicts k frames after prompt, decoded together in one batch
// from one shared prompt cache; candidate i samples with PCG(opt.Seed, i).
// With greedy options all k are the same.
func (p *Predictor) Sample(ctx context.Context, prompt string, k int, opt SampleOptions) ([]string, error) {
	scored, err := p.sample(ctx, prompt, k, opt, false)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(scored))
	for i, s := range scored {
		out[i] = s.Text
	}
	return out, nil
}
