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
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unicode"

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
	var rules *programRules
	if !opt.FreeProgram {
		rules = promptRules(prompt)
	}

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

// tokenAllowed reports whether appending token id to the frame text cur
// keeps it a prefix of a well-formed frame (format.CheckFrame), with two
// rules the check leaves to us because the text must also survive being
// serialized again: a special token may not stand inside a JSON string, and
// text tokens may not write "<|" (spell a special token out of bytes) or
// invalid UTF-8 (see validAppend), nor
// stand anywhere but in a source line or the JSON after <|arg_sep|>.
func (p *Predictor) tokenAllowed(cur string, id int, dir format.Direction) bool {
	t := p.texts[id]
	if t == "" {
		return false
	}
	if p.tok.IsSpecial(int32(id)) {
		if insideJSONString(cur) {
			return false
		}
	} else if spellsSpecial(cur, t) || !validAppend(cur, t) {
		return false
	} else if last := lastSpecial(cur); last != format.TokSrcSep && last != format.TokArgSep {
		return false // text only in a source line or JSON; elsewhere structure
	} else if strings.HasSuffix(t, "<") {
		// A trailing "<" passes the check as the start of a special token;
		// as text it must also be followable by more text.
		return format.CheckFrame(cur+t+" ", dir) != format.Invalid
	}
	return format.CheckFrame(cur+t, dir) != format.Invalid
}

// programAllowed keeps a frame to what the prompt's program can show, as
// the tracer writes it: a source line (after <|src_sep|>) is one of the
// program's lines that is not blank or a comment, and a key of LOCALS is
// one of the program's identifiers, ".." (the elision) or ".0" (an
// implicit comprehension argument), and a return's value is the one
// returnValues pins, where it does. Text must extend a prefix of an allowed
// string and the token that closes it must leave a whole one. Every frame
// ndb gen writes passes (checked on its shards: docs/inference.md), so the
// rule removes only frames no program state has. With or without a program
// (r nil), a LOCALS key may not be closed twice: format.CheckFrame refuses
// the name only once its value starts, and a frame in that dead end used to
// be cut back and closed with a made-up name ("s0") and no source line.
func (p *Predictor) programAllowed(cur string, id int, r *programRules) bool {
	last := lastSpecial(cur)
	switch {
	case last == format.TokSrcSep && r != nil:
		src := cur[strings.LastIndex(cur, format.TokSrcSep)+len(format.TokSrcSep):]
		if p.tok.IsSpecial(int32(id)) {
			return r.linesFor(cur).contains(src)
		}
		return r.linesFor(cur).hasPrefix(src + p.texts[id])
	case last == format.TokArgSep && r.valueFor(cur) != "":
		want, json := r.valueFor(cur), cur[strings.LastIndex(cur, format.TokArgSep)+len(format.TokArgSep):]
		if p.tok.IsSpecial(int32(id)) {
			return json == want
		}
		return strings.HasPrefix(want, json+p.texts[id])
	case last == format.TokArgSep && !p.tok.IsSpecial(int32(id)):
		json := cur[strings.LastIndex(cur, format.TokArgSep)+len(format.TokArgSep):]
		return r.keysAllowed(r.namesFor(cur), json, json+p.texts[id])
	}
	return true
}

// valueFor is the value the frame text cur must show (returnValues), or "".
func (r *programRules) valueFor(cur string) string {
	if r == nil {
		return ""
	}
	for head, v := range r.values {
		if strings.HasPrefix(cur, head) {
			return v
		}
	}
	return ""
}

// programRules are the strings a frame may take from its program.
type programRules struct {
	lines sortedSet // executable lines: not blank, not only a comment
	calls sortedSet // lines and "" (a script's module call shows no line)
	names sortedSet // identifiers, "..", ".0" to ".9"
	// per frame kind token: the lines of the running function a step's
	// answer of that kind may show (stepScopes; nil: no rule)
	scope map[string]sortedSet
	// per return frame head: the value it must show (returnValues)
	values map[string]string
	scopes *scopeRules
	memo   map[string]sortedSet // namesFor and linesFor, per frame head
}

// linesFor is the set a source line of the frame text cur may come from:
// the running function's lines where stepScopes restricts cur's kind, else
// any executable line; a forward line frame, whose LOCALS come before its
// line, keeps only the lines of a function that has every name it wrote.
func (r *programRules) linesFor(cur string) sortedSet {
	for tok, l := range r.scope {
		if strings.HasPrefix(cur, tok) {
			return r.fitting(l, cur)
		}
	}
	if strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep) {
		return r.calls
	}
	return r.fitting(r.lines, cur)
}

// fitting keeps, for a forward line frame cur (its LOCALS come before its
// line), the lines whose function has every key it wrote (a line that may
// run in the module keeps any); other frames keep all lines.
func (r *programRules) fitting(lines sortedSet, cur string) sortedSet {
	if !strings.HasPrefix(cur, format.TokLineSep) {
		return lines
	}
	keys := closedKeys(cur)
	memo := "lines\x00" + strings.Join(keys, "\x00")
	if m, ok := r.memo[memo]; ok {
		return m
	}
	var fit sortedSet
	for _, l := range lines {
		if names := r.scopes.namesOf(l, false); names == nil || allContained(names, keys) {
			fit = append(fit, l)
		}
	}
	r.memo[memo] = fit
	return fit
}

// closedKeys lists the LOCALS keys a frame text has closed.
func closedKeys(cur string) []string {
	i := strings.Index(cur, format.TokArgSep)
	if i < 0 {
		return nil
	}
	json := cur[i+len(format.TokArgSep):]
	if j := strings.Index(json, format.TokSrcSep); j >= 0 {
		json = json[:j]
	}
	var keys []string
	objectKeys(json, func(key string, _ int, closed bool) bool {
		if closed {
			keys = append(keys, key)
		}
		return true
	})
	return keys
}

// namesFor is the set the LOCALS keys of the frame text cur may come from:
// once the frame's line is known (call and inverse frames write it first),
// the names of the function that line runs in; in a forward line frame,
// whose line comes last, the names of the functions that still have a line
// for every name written so far; else (or where the module may be the
// frame) the program's. Nil for no program.
func (r *programRules) namesFor(cur string) sortedSet {
	if r == nil {
		return nil
	}
	i, j := strings.Index(cur, format.TokSrcSep), strings.Index(cur, format.TokArgSep)
	var names sortedSet
	switch {
	case strings.HasPrefix(cur, format.TokLineSep) && i < 0:
		keys := closedKeys(cur)
		memo := "names\x00" + strings.Join(keys, "\x00")
		if m, ok := r.memo[memo]; ok {
			return m
		}
		for _, l := range r.linesFor(cur) {
			n := r.scopes.namesOf(l, false)
			if n == nil {
				names = r.names
				break
			}
			names = append(names, n...)
		}
		if len(names) != len(r.names) {
			names.sort()
		}
		r.memo[memo] = names
		return names
	case i < 0 || j < i:
		return r.names
	}
	memo := "src\x00" + cur[:j]
	if m, ok := r.memo[memo]; ok {
		return m
	}
	call := strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep)
	if names = r.scopes.namesOf(cur[i+len(format.TokSrcSep):j], call); names == nil {
		names = r.names
	}
	r.memo[memo] = names
	return names
}

func allContained(set sortedSet, xs []string) bool {
	for _, x := range xs {
		if !set.contains(x) {
			return false
		}
	}
	return true
}

// promptRules reads the program from a prompt's header
// (format.HeaderSource); nil when the prompt has no header.
func promptRules(prompt string) *programRules {
	src, err := format.HeaderSource(prompt)
	if err != nil {
		return nil
	}
	var r programRules
	for _, l := range strings.Split(src, "\n") {
		if executable(l) {
			r.lines = append(r.lines, l)
		}
	}
	r.scopes = programScopes(src)
	r.scope = r.scopes.stepScopes(prompt)
	r.values = r.scopes.returnValues(prompt)
	r.memo = map[string]sortedSet{}
	r.names = localNames(identifiers(src))
	r.lines.sort()
	r.calls = append(sortedSet{""}, r.lines...)
	return &r
}

// localNames is the set of LOCALS keys words allow: those that are not
// Python keywords, and ".." (the elision) and ".0" to ".9" (a
// comprehension's implicit argument).
func localNames(words []string) sortedSet {
	names := sortedSet{"..", ".0", ".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".9"}
	for _, w := range words {
		if !pythonKeywords[w] {
			names = append(names, w)
		}
	}
	names.sort()
	return names
}

// pythonKeywords cannot name a variable (Python 3's hard keywords), so they
// are never a key of LOCALS; a small model otherwise fills a frame with
// "def", "in" and "if" once it runs out of real names.
var pythonKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield") {
		m[w] = true
	}
	return m
}()

// identifiers lists the Python identifiers of src (every run of letters,
// digits and underscores that does not start with a digit; keywords and
// words inside strings too, which only makes the rule looser).
func identifiers(src string) []string {
	var out []string
	start := -1
	for i, c := range src + " " {
		word := c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if w := src[start:i]; !unicode.IsDigit(rune(w[0])) {
				out = append(out, w)
			}
			start = -1
		}
	}
	return out
}

// keysAllowed checks the keys of a LOCALS object that the text added to
// old (making new) wrote or extended: names (any name when r is nil), none
// twice (an open key must still be able to become a name not
// used yet). A LOCALS object is flat, string to
// string, so its even-numbered strings are the keys; a VALUE (a string,
// not an object) has none. A name needs no JSON escape, so a key with one
// is never allowed.
func (r *programRules) keysAllowed(names sortedSet, old, new string) bool {
	var seen []string
	return objectKeys(new, func(key string, end int, closed bool) bool {
		switch {
		case !closed:
			return r == nil || names.hasPrefixBesides(key, seen)
		case end < len(old):
			seen = append(seen, key)
			return true
		case slices.Contains(seen, key):
			return false
		}
		seen = append(seen, key)
		return r == nil || names.contains(key)
	})
}

// objectKeys calls fn with each key of a LOCALS object's text (a flat
// object, string to string, so its even-numbered strings are the keys),
// the offset of the key's closing quote and whether the key is closed yet;
// it stops and returns false when fn does. Text that is not an object has
// no keys.
func objectKeys(json string, fn func(key string, end int, closed bool) bool) bool {
	if !strings.HasPrefix(json, "{") {
		return true
	}
	in, esc, n, start := false, false, -1, 0
	for j := 0; j < len(json); j++ {
		switch c := json[j]; {
		case !in:
			if c == '"' {
				in, n, start = true, n+1, j+1
			}
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in = false
			if n%2 == 0 && !fn(json[start:j], j, true) {
				return false
			}
		}
	}
	if in && n%2 == 0 {
		return fn(json[start:], len(json), false)
	}
	return true
}

// completeOpen finishes a source line or LOCALS key that a frame cut by its
// token budget left open with the shortest allowed string it starts, so
// that the frame closed after it still keeps programAllowed's rules.
func (r *programRules) completeOpen(text string) string {
	if r == nil {
		return text
	}
	if lastSpecial(text) == format.TokSrcSep {
		src := text[strings.LastIndex(text, format.TokSrcSep)+len(format.TokSrcSep):]
		return text + strings.TrimPrefix(r.linesFor(text).shortestWithPrefix(src), src)
	}
	i := strings.LastIndex(text, format.TokArgSep)
	if i < 0 || lastSpecial(text) != format.TokArgSep {
		return text
	}
	objectKeys(text[i+len(format.TokArgSep):], func(key string, _ int, closed bool) bool {
		if !closed {
			text += strings.TrimPrefix(r.namesFor(text).shortestWithPrefix(key), key)
		}
		return true
	})
	return text
}

// fillSource gives a closed frame whose source line the closers left
// empty (it was cut before the line) the shortest line the rules allow
// there.
func (r *programRules) fillSource(frame string) string {
	if r == nil {
		return frame
	}
	k := strings.Index(frame, format.TokSrcSep+format.TokActionSep)
	if k < 0 {
		k = strings.Index(frame, format.TokSrcSep+format.TokArgSep)
	}
	if k < 0 {
		return frame
	}
	at := k + len(format.TokSrcSep)
	return frame[:at] + r.linesFor(frame[:at]).shortestWithPrefix("") + frame[at:]
}

// sortedSet is a sorted list of distinct strings.
type sortedSet []string

func (s *sortedSet) sort() {
	slices.Sort(*s)
	*s = slices.Compact(*s)
}

// hasPrefixBesides reports whether a member other than those of used
// starts with x.
func (s sortedSet) hasPrefixBesides(x string, used []string) bool {
	i, _ := slices.BinarySearch(s, x)
	for ; i < len(s) && strings.HasPrefix(s[i], x); i++ {
		if !slices.Contains(used, s[i]) {
			return true
		}
	}
	return false
}

// shortestWithPrefix is the shortest member starting with x ("" if none).
func (s sortedSet) shortestWithPrefix(x string) string {
	best := ""
	i, _ := slices.BinarySearch(s, x)
	for ; i < len(s) && strings.HasPrefix(s[i], x); i++ {
		if best == "" || len(s[i]) < len(best) {
			best = s[i]
		}
	}
	return best
}

func (s sortedSet) contains(x string) bool {
	_, ok := slices.BinarySearch(s, x)
	return ok
}

// hasPrefix reports whether some member starts with x: the first member
// not below x in sorted order is the one, if any is.
func (s sortedSet) hasPrefix(x string) bool {
	i, _ := slices.BinarySearch(s, x)
	return i < len(s) && strings.HasPrefix(s[i], x)
}

// insideJSONString reports whether frame text cur ends inside a JSON string
// of its LOCALS or VALUE (the JSON after the last <|arg_sep|>, when no
// special token follows it).
func insideJSONString(cur string) bool {
	i := strings.LastIndex(cur, format.TokArgSep)
	if i < 0 {
		return false
	}
	json := cur[i+len(format.TokArgSep):]
	if format.ContainsSpecialToken(json) {
		return false
	}
	in, esc := false, false
	for j := 0; j < len(json); j++ {
		c := json[j]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		}
	}
	return in
}

// lastSpecial is the last special token of s ("" if none).
func lastSpecial(s string) string {
	for i := len(s); ; {
		j := strings.LastIndex(s[:i], "|>")
		if j < 0 {
			return ""
		}
		if k := strings.LastIndex(s[:j], "<|"); k >= 0 && format.IsSpecialToken(s[k:j+2]) {
			return s[k : j+2]
		}
		i = j
	}
}

// spellsSpecial reports whether text token t, appended to cur, writes a
// "<|": the start of a special token's text. Written out of bytes it would
// pass the prefix check as the token itself and then be read back as one;
// so free text never holds "<|" (a repr containing it cannot be predicted).
func spellsSpecial(cur, t string) bool {
	return strings.Contains(t, "<|") || strings.HasPrefix(t, "|") && strings.HasSuffix(cur, "<")
}

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

// promptDirection is the direction of the frame that follows the prompt's
// last action: inverse actions predict inverse frames.
func promptDirection(prompt string) format.Direction {
	i := strings.LastIndex(prompt, format.TokActionSep+"<|")
	if i < 0 {
		return format.AnyDirection
	}
	if strings.HasPrefix(prompt[i+len(format.TokActionSep):], "<|inv_") {
		return format.Backward
	}
	return format.Forward
}

// canonicalEnd writes an exit frame's end tokens in full, as FrameText does.
func canonicalEnd(text string) string {
	f, err := format.ParseFrame(text)
	if err != nil || !f.Kind.IsExit() {
		return text
	}
	tail := format.TokTraceEnd + format.TokEndOfText
	for _, t := range []string{tail, format.TokTraceEnd} {
		if strings.HasSuffix(text, t) {
			return strings.TrimSuffix(text, t) + tail
		}
	}
	return text + tail
}

// closeOrCutBack closes a partial frame; if it cannot be closed (a dead
// end the prefix check let through, such as a LOCALS name written twice,
// which format.CheckFrame reports only once its value starts), it is cut
// back to its longest prefix that can be closed.
func closeOrCutBack(text string, dir format.Direction) (string, bool) {
	if closed, ok := closeFrame(text, dir); ok {
		return closed, true
	}
	for cut := len(text) - 1; cut >= 0; cut-- {
		prefix := text[:cut]
		if format.CheckFrame(prefix, dir) == format.Invalid {
			continue
		}
		if closed, ok := closeFrame(prefix, dir); ok {
			return closed, true
		}
	}
	return "", false
}

// closers are the strings closeFrame appends, chosen so that every partial
// frame closes in a few of them: a terminator, a closed string, a closed
// key with an empty value, an empty object.
var closers = []string{format.TokActionSep, `"`, `"}`, `": ""}`, ` ""}`, `""}`, `".."}`, `.."}`, "}", "{}", ": ", " ", "0",
	format.TokSrcSep, format.TokArgSep, format.TokExitNormal, format.TokInvExitEntry}

// closeFrame finds a shortest completion of a partial frame text by
// breadth-first search over closers (special tokens only where
// tokenAllowed would allow them), for a frame that ran out of tokens.
func closeFrame(text string, dir format.Direction) (string, bool) {
	if i := incompleteTail(text); i < len(text) {
		text += finishRune(text[i:]) // end a character cut by the budget
	}
	if format.CheckFrame(text, dir) == format.Invalid {
		return "", false
	}
	level := []string{text}
	seen := map[string]bool{text: true}
	checks := 0
	for depth := 0; depth < 8 && len(level) > 0; depth++ {
		var next []string
		for _, t := range level {
			inString, inSrc := insideJSONString(t), lastSpecial(t) == format.TokSrcSep
			for _, c := range closers {
				u := t + c
				special := format.IsSpecialToken(c)
				// In free text only moves that can end it: a quote (or a
				// hex digit of an escape) in a string, a token in a source
				// line; this keeps the search small.
				if seen[u] || inString && (special || !strings.HasPrefix(c, `"`) && c != "0" && c != `.."}`) || inSrc && !special {
					continue
				}
				seen[u] = true
				checks++
				switch format.CheckFrame(u, dir) {
				case format.Complete:
					return u, true
				case format.Partial:
					next = append(next, u)
				}
				if checks > 20000 {
					return "", false
				}
			}
		}
		level = next
	}
	return "", false
}
