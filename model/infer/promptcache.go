package infer

import (
	"errors"
	"slices"

	"ndb/format"
)

// The prompt cache: prefilling a prompt's tokens into the KV cache (reusing
// the previous prompt's prefix) and fitting a prompt into the context.

// prefill brings the prompt cache to ids and returns the logits of the
// last prompt position. Only the part of ids after the longest common
// prefix with the cached tokens is decoded.
func (p *Predictor) prefill(ids []int32) ([]float32, error) {
	maxSeq := p.model.Config.MaxSeq
	if p.cache == nil {
		c, err := p.model.NewKVCache(1, maxSeq)
		if err != nil {
			return nil, err
		}
		p.cache, p.cached = c, nil
	}
	common := 0
	for common < len(ids) && common < len(p.cached) && ids[common] == p.cached[common] {
		common++
	}
	if common == len(ids) {
		common-- // decode the last prompt token again for its logits
	}
	p.cache.Truncate(common)
	p.cached = append(p.cached[:common], ids[common:]...)
	logits, err := p.model.Decode(ids[common:], p.cache)
	if err != nil {
		p.forget()
		return nil, err
	}
	V := p.model.Config.Vocab
	return logits[len(logits)-V:], nil
}

// forget drops the prompt cache after an error left it in doubt.
func (p *Predictor) forget() {
	if p.cache != nil {
		p.cache.Truncate(0)
	}
	p.cached = p.cached[:0]
}

// fitPrompt encodes prompt and applies the context-length policy. The
// frame's budget is reserved first (at most a quarter of the context); a
// prompt that does not fit in the rest keeps its header (the program)
// whole and loses its oldest frames (cut at <|frame_sep|> tokens), unless
// the program would then leave the frames less than longFrameShare of the
// room: then the program is elided to fit (elideSource: the running
// function, the functions of the frames, the definitions they use, each
// cut run of lines marked by a comment) and the frames get the rest. Only
// when even that fails (a context too small for the running line) is the
// prompt plainly left-truncated. The budget is the frame's token allowance.
func (p *Predictor) fitPrompt(prompt string, maxTokens int) ([]int32, int, error) {
	ids := p.tok.Encode(prompt)
	maxSeq := p.model.Config.MaxSeq
	if len(ids) == 0 {
		return nil, 0, errors.New("infer: empty prompt")
	}
	reserve := min(maxTokens, max(maxSeq/4, 1))
	limit := maxSeq - reserve
	if len(ids) > limit {
		ids = p.fitLong(prompt, ids, limit)
	}
	return ids, min(maxTokens, maxSeq-len(ids)), nil
}

// longFrameShare is the part of the room the frames keep when the program
// is elided (chosen by measurement: docs/inference.md, "Long programs").
var longFrameShare = 0.5

// fitLong cuts ids, the encoded prompt, to at most limit tokens
// (fitPrompt's policy).
func (p *Predictor) fitLong(prompt string, ids []int32, limit int) []int32 {
	h := slices.Index(ids, p.frameSep)
	if h < 0 {
		return p.truncate(ids, limit)
	}
	frames := min(len(ids)-h, int(longFrameShare*float64(limit)))
	if h <= limit-frames {
		return p.truncate(ids, limit)
	}
	src, err := format.HeaderSource(prompt)
	if err != nil {
		return p.truncate(ids, limit)
	}
	head := format.TokBeginOfText + format.TokTraceContextStart
	tail := prompt[len(head)+len(src):]
	room := limit - frames
	budget := room - len(p.tok.Encode(head))
	for range 4 {
		short, ok := p.elideSource(src, tail, budget)
		if !ok {
			break
		}
		hdr := p.tok.Encode(head + short)
		if len(hdr) <= room {
			out := append(hdr, ids[h:]...)
			if len(out) > limit { // the frames' oldest go, as above
				out = p.truncate(out, limit)
			}
			return out
		}
		budget -= len(hdr) - room // the line counts and markers were estimates
	}
	return p.truncate(ids, limit)
}

func (p *Predictor) truncate(ids []int32, limit int) []int32 {
	header := -1
	for i, id := range ids {
		if id == p.frameSep {
			header = i
			break
		}
	}
	if header >= 0 && header < limit {
		// Keep ids[:header] and the longest tail that starts at a frame_sep.
		room := limit - header
		for i := len(ids) - room; i < len(ids); i++ {
			if i > header && ids[i] == p.frameSep {
				return append(append([]int32(nil), ids[:header]...), ids[i:]...)
			}
		}
	}
	return append([]int32(nil), ids[len(ids)-limit:]...)
}
