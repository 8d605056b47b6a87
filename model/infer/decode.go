package infer

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"ndb/format"
)

// The decoding loop: k candidates decoded together from one prompt cache,
// greedy with drafts copied from the context where they fit, each token
// picked under the format's and the program's rules.

// sample decodes k frames; with score, each chosen token's tokenProb too
// (which costs a few validity checks per token, so Sample skips it).
func (p *Predictor) sample(ctx context.Context, prompt string, k int, opt SampleOptions, score bool) ([]Scored, error) {
	if k <= 0 {
		return nil, fmt.Errorf("infer: k = %d candidates", k)
	}
	if k == 1 && opt.Temperature <= 0 && !opt.Unconstrained && opt.Rerank.on() {
		return p.rerank(ctx, prompt, opt)
	}
	ids, budget, err := p.fitPrompt(prompt, opt.maxTokens())
	if err != nil {
		return nil, err
	}
	dir := promptDirection(prompt)
	rules := sampleRules(prompt, opt)

	p.mu.Lock()
	defer p.mu.Unlock()
	logits, err := p.prefill(ids)
	if err != nil {
		return nil, err
	}
	cache := p.cache
	if k > 1 {
		if cache, err = p.cache.Fork(k); err != nil {
			return nil, err
		}
	}
	V := p.model.Config.Vocab
	cands := make([]candidate, k)
	for i := range cands {
		cands[i].rng = newRNG(opt.Seed, i)
		cands[i].logits = logits
		cands[i].rules = rules
		cands[i].score = score
	}
	next := make([]int32, k)
	if k == 1 && opt.Temperature <= 0 && !opt.NoDraft {
		if err := p.greedyWithDrafts(ctx, &cands[0], ids, budget, opt, dir); err != nil {
			p.forget()
			return nil, err
		}
	}
	for step := 0; !cands[0].done || k > 1; step++ {
		if err := ctx.Err(); err != nil {
			p.forget()
			return nil, err
		}
		active := 0
		for i := range cands {
			c := &cands[i]
			if c.done {
				next[i] = p.frameSep // filler: its logits are not used
				continue
			}
			id := p.pick(c, opt, dir)
			if id < 0 {
				c.done = true // no token keeps the frame valid: close it below
				next[i] = p.frameSep
				continue
			}
			c.write(p.texts[id], id)
			next[i] = int32(id)
			if format.CheckFrame(c.text.String(), dir) == format.Complete {
				c.done = true
				continue
			}
			active++
		}
		if active == 0 || step+1 >= budget {
			break
		}
		out, err := p.model.Decode(next, cache)
		if err != nil {
			p.forget()
			return nil, err
		}
		for i := range cands {
			cands[i].logits = out[i*V : (i+1)*V]
		}
		if k == 1 {
			p.cached = append(p.cached, next[0])
		}
	}
	if k > 1 {
		// The forked cache is dropped; the shared prompt cache still holds
		// exactly the prompt.
		p.cache.Truncate(len(p.cached))
	}
	res := make([]Scored, k)
	for i := range cands {
		text := cands[i].text.String()
		res[i].IDs, res[i].Probs = cands[i].ids, cands[i].probs
		if opt.Unconstrained {
			res[i].Text = text // raw, as the model wrote it
			continue
		}
		if format.CheckFrame(text, dir) != format.Complete {
			closed, ok := closeOrCutBack(rules.completeOpen(text), dir)
			if !ok {
				return nil, fmt.Errorf("infer: could not close the frame %q", text)
			}
			text = rules.fillSource(closed)
		}
		res[i].Text = canonicalEnd(text)
	}
	return res, nil
}

// maxDraft bounds the tokens proposed by prompt lookup at once.
const maxDraft = 8

// greedyWithDrafts is greedy decoding of one candidate with prompt-lookup
// drafts: the tokens that followed the latest earlier occurrence of the
// last few tokens (in the prompt or the frame so far) are proposed and
// checked in one Decode call, which reads the weights once for all of them.
// A draft token is kept only while it is the token greedy decoding picks
// from the logits of its position, so the output is greedy decoding's; a
// frame copies much from the prompt (source lines, names, values), so a
// state costs fewer passes over the weights. Rejected positions are cut
// from the cache.
func (p *Predictor) greedyWithDrafts(ctx context.Context, c *candidate, prompt []int32, budget int, opt SampleOptions, dir format.Direction) error {
	V := p.model.Config.Vocab
	hist := append([]int32(nil), prompt...)
	n := 0
	draftLen := maxDraft / 2
	accept := func(id int) bool { // append a picked token; true when the frame is finished
		c.write(p.texts[id], id)
		hist = append(hist, int32(id))
		n++
		if format.CheckFrame(c.text.String(), dir) == format.Complete || n >= budget {
			c.done = true
		}
		return c.done
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := p.pick(c, opt, dir)
		if id < 0 {
			c.done = true
			return nil
		}
		if accept(id) {
			return nil
		}
		draft := lookupDraft(hist, min(draftLen, budget-n))
		feed := append([]int32{int32(id)}, draft...)
		base := p.cache.Len
		out, err := p.model.Decode(feed, p.cache)
		if err != nil {
			return err
		}
		p.cached = append(p.cached, feed...)
		kept := len(feed) // positions of feed to keep in the cache
		c.logits = out[len(draft)*V:]
		for j, d := range draft {
			c.logits = out[j*V : (j+1)*V]
			if p.pick(c, opt, dir) != int(d) {
				kept = j + 1
				break
			}
			if accept(int(d)) {
				kept = j + 2
				break
			}
			c.logits = out[(j+1)*V : (j+2)*V]
		}
		p.stats.Passes++
		p.stats.Tokens += kept
		p.stats.Drafted += len(draft)
		p.stats.Accepted += kept - 1
		if kept < len(feed) {
			p.cache.Truncate(base + kept)
			p.cached = p.cached[:base+kept]
		}
		// Grow drafts while they are taken whole, shrink them to what was
		// taken otherwise: a model that does not copy pays little.
		if len(draft) > 0 && kept == len(feed) {
			draftLen = min(maxDraft, 2*draftLen)
		} else if len(draft) > 0 {
			draftLen = max(2, kept)
		}
		if c.done {
			return nil
		}
	}
}

// lookupDraft proposes up to max tokens: what followed the latest earlier
// occurrence of hist's last 3 (else 2) tokens.
func lookupDraft(hist []int32, max int) []int32 {
	if max <= 0 {
		return nil
	}
	for ng := 3; ng >= 2; ng-- {
		if len(hist) <= ng {
			continue
		}
		tail := hist[len(hist)-ng:]
		for i := len(hist) - ng - 1; i >= 0; i-- {
			if hist[i] != tail[0] || !slices.Equal(hist[i:i+ng], tail) {
				continue
			}
			from := i + ng
			return hist[from:min(from+max, len(hist))]
		}
	}
	return nil
}

// candidate is one sequence being decoded.
type candidate struct {
	text   strings.Builder
	logits []float32
	rng    *rand.Rand
	done   bool
	rules  *programRules // what the program lets a frame hold (nil: anything)
	ids    []int32       // the tokens written so far
	probs  []float64     // their probabilities (tokenProb), when score is set
	picked float64       // tokenProb of the latest pick
	score  bool          // compute picked (SampleScored)
}

// write appends token id, the latest pick, to the candidate's text.
func (c *candidate) write(text string, id int) {
	c.text.WriteString(text)
	c.ids = append(c.ids, int32(id))
	if c.score {
		c.probs = append(c.probs, c.picked)
	}
}

func (p *Predictor) pick(c *candidate, opt SampleOptions, dir format.Direction) int {
	valid := func(id int) bool { return p.texts[id] != "" }
	if !opt.Unconstrained {
		cur := c.text.String()
		valid = func(id int) bool { return p.tokenAllowed(cur, id, dir) && p.programAllowed(cur, id, c.rules) }
	}
	id := pickToken(c.logits, opt, c.rng, valid)
	if id >= 0 && c.score {
		scoreValid := valid
		if !opt.Unconstrained { // the same rules, cheap rejections first
			cur := c.text.String()
			scoreValid = func(id int) bool {
				return p.texts[id] != "" && p.programAllowed(cur, id, c.rules) && p.tokenAllowed(cur, id, dir)
			}
		}
		c.picked = tokenProb(c.logits, id, scoreValid)
	}
	return id
}

// sampleRules are the program rules of constrained decoding for prompt
// (nil: none), with the interpreter's reprs of the modules its names only
// import (SampleOptions.ModuleReprs).
func sampleRules(prompt string, opt SampleOptions) *programRules {
	if opt.FreeProgram {
		return nil
	}
	rules := promptRules(opt.Compiled, prompt)
	if rules != nil && opt.ModuleReprs != nil && len(rules.modules) > 0 {
		rules.exactModules = opt.ModuleReprs(slices.Sorted(maps.Values(rules.modules)))
	}
	return rules
}
