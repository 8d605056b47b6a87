package infer

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"sort"

	"ndb/internal/pysource"
)

// SampleOptions chooses how a frame is decoded.
type SampleOptions struct {
	// Temperature divides the logits; 0 (or below) means greedy decoding.
	Temperature float64
	// TopP keeps the smallest set of most likely tokens whose probability
	// adds up to at least TopP (nucleus sampling); 0 or >= 1 keeps all.
	TopP float64
	// Seed makes sampling reproducible: candidate i of a call draws from
	// PCG(Seed, i).
	Seed uint64
	// MaxTokens bounds the tokens of one frame (0: DefaultMaxFrameTokens).
	// When it runs out, the frame is closed with the shortest well-formed
	// ending the constraint finds (see docs/inference.md).
	MaxTokens int
	// Unconstrained turns constrained decoding off and returns the raw
	// text, which may not parse (for measurements).
	Unconstrained bool
	// FreeProgram lets a frame's source line and LOCALS keys be any text
	// instead of a line and names of the prompt's program (for
	// measurements: see programAllowed).
	FreeProgram bool
	// NoDraft turns off prompt-lookup drafts in greedy decoding (for
	// measurements; the output is the same).
	NoDraft bool
	// Rerank, when set (and on), makes a greedy one-frame request sample
	// alternatives where the greedy frame is unsure and pick among them
	// (test-time compute; see Rerank). nil: plain greedy decoding.
	Rerank *Rerank
	// ModuleReprs answers, for the modules a program's names only imports
	// bind, the repr the program's interpreter shows for each it knows
	// (<module 'os' (frozen)>): a module frame's name that holds one shows
	// exactly it. Nil: the path is left free (the model writes the one it
	// learned).
	ModuleReprs func(modules []string) map[string]string
	// Compiled answers, for a prompt's program, what its compiled code
	// says about its lines (tracer.Compile on the program's interpreter;
	// nil where it cannot say): a line no instruction is on runs nothing,
	// and a line's next line event follows the bytecode's flow
	// (pysource.NewCompiled). Nil: the text's reading alone.
	Compiled func(src string) *pysource.Compiled
}

// DefaultMaxFrameTokens is the frame budget when SampleOptions.MaxTokens is 0.
const DefaultMaxFrameTokens = 384

// Greedy is the option set of the paper's next-state evaluation.
var Greedy = SampleOptions{}

// PaperSampling is the paper's sampling for exact match@k: temperature 0.6,
// top-p 0.95.
var PaperSampling = SampleOptions{Temperature: 0.6, TopP: 0.95}

func (o SampleOptions) maxTokens() int {
	if o.MaxTokens > 0 {
		return o.MaxTokens
	}
	return DefaultMaxFrameTokens
}

// newRNG is candidate i's generator.
func newRNG(seed uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(i)))
}

// pickToken chooses the next token from logits. valid reports whether a
// token keeps the output well-formed (nil: every token is). Greedy takes
// the most likely valid token. Sampling applies the temperature, cuts the
// distribution to its top-p nucleus, drops the invalid tokens from the
// nucleus and renormalises; if the nucleus holds no valid token, the most
// likely valid token is taken. It returns -1 when no token is valid.
// Invalid tokens are found by rejection: a drawn invalid token leaves the
// nucleus and the draw is repeated, which samples the same distribution.
func pickToken(logits []float32, opt SampleOptions, rng *rand.Rand, valid func(int) bool) int {
	if valid == nil {
		valid = func(int) bool { return true }
	}
	if opt.Temperature <= 0 {
		best := argmax(logits)
		if valid(best) {
			return best
		}
		for _, id := range sortedIDs(logits) {
			if valid(id) {
				return id
			}
		}
		return -1
	}
	// Softmax at the temperature, in float64.
	maxL := logits[argmax(logits)]
	all := make([]float64, len(logits))
	for id, l := range logits {
		all[id] = math.Exp(float64(l-maxL) / opt.Temperature)
	}
	// The nucleus, most likely first: popped from a heap only as far as
	// needed (it is usually a few tokens); without top-p, every token in
	// id order.
	var ids []int
	var probs []float64
	if opt.TopP > 0 && opt.TopP < 1 {
		var sum float64
		for _, p := range all {
			sum += p
		}
		h := &probHeap{p: all, ids: make([]int, len(all))}
		for i := range h.ids {
			h.ids[i] = i
		}
		heap.Init(h)
		var cum float64
		for h.Len() > 0 && cum < opt.TopP*sum {
			id := heap.Pop(h).(int)
			ids, probs = append(ids, id), append(probs, all[id])
			cum += all[id]
		}
	} else {
		ids = make([]int, len(all))
		for i := range ids {
			ids[i] = i
		}
		probs = all
	}
	cut := len(ids)
	// Draw from the nucleus and reject invalid tokens (dropping each from
	// the nucleus): the same distribution as masking first, but only the
	// drawn tokens are checked. After a few rejections check them all.
	mass := make([]float64, cut)
	var total float64
	for i := range mass {
		mass[i] = probs[i]
		total += mass[i]
	}
	for tries := 0; tries < 8 && total > 0; tries++ {
		i := drawIndex(mass, total, rng)
		if valid(ids[i]) {
			return ids[i]
		}
		total -= mass[i]
		mass[i] = 0
	}
	total = 0
	for i := range mass {
		if mass[i] > 0 && !valid(ids[i]) {
			mass[i] = 0
		}
		total += mass[i]
	}
	if total > 0 {
		return ids[drawIndex(mass, total, rng)]
	}
	for _, id := range sortedIDs(logits) { // nothing in the nucleus: the likeliest allowed token
		if valid(id) {
			return id
		}
	}
	return -1
}

// probHeap pops token ids by descending probability (ties: lower id first).
type probHeap struct {
	p   []float64
	ids []int
}

func (h *probHeap) Len() int { return len(h.ids) }
func (h *probHeap) Less(a, b int) bool {
	pa, pb := h.p[h.ids[a]], h.p[h.ids[b]]
	return pa > pb || pa == pb && h.ids[a] < h.ids[b]
}
func (h *probHeap) Swap(a, b int) { h.ids[a], h.ids[b] = h.ids[b], h.ids[a] }
func (h *probHeap) Push(x any)    { h.ids = append(h.ids, x.(int)) }
func (h *probHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

// drawIndex draws i with probability mass[i]/total.
func drawIndex(mass []float64, total float64, rng *rand.Rand) int {
	r := rng.Float64() * total
	last := 0
	for i, m := range mass {
		if m <= 0 {
			continue
		}
		last = i
		r -= m
		if r < 0 {
			return i
		}
	}
	return last
}

func argmax(x []float32) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

// sortedIDs lists token ids by descending logit (ties: lower id first), so
// decoding is deterministic.
func sortedIDs(logits []float32) []int {
	ids := make([]int, len(logits))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return logits[ids[a]] > logits[ids[b]] })
	return ids
}

// probPrecision is tokenProb's relative precision: it stops checking
// tokens once the unchecked ones could change the allowed mass by less
// than this fraction. A variable so that the tests can make it exact (0).
var probPrecision = 0.01

// tokenProb is the probability of token id under the model's distribution
// at temperature 1, renormalised over the tokens valid allows:
// softmax(logits)[id] / the softmax mass of the allowed tokens (id is
// allowed: it was picked). Tokens are checked from the likeliest down until
// the unchecked ones hold less than probPrecision of the allowed mass found
// so far; they count as allowed, so the figure is at most probPrecision
// (relative) below the exact one, never above it. A sure model needs a few
// checks; a model whose likeliest tokens are not allowed needs many, and
// its figure is then low or, when the constraint forced the one allowed
// token, high. A valid nil allows every token (the plain softmax).
func tokenProb(logits []float32, id int, valid func(int) bool) float64 {
	maxL := logits[argmax(logits)]
	all := make([]float64, len(logits))
	var sum float64
	for i, l := range logits {
		all[i] = math.Exp(float64(l - maxL))
		sum += all[i]
	}
	if valid == nil {
		return all[id] / sum
	}
	h := &probHeap{p: all, ids: make([]int, len(all))}
	for i := range h.ids {
		h.ids[i] = i
	}
	heap.Init(h)
	allowed, rest := all[id], sum-all[id]
	for h.Len() > 0 && rest > probPrecision*allowed {
		t := heap.Pop(h).(int)
		if t == id {
			continue
		}
		rest -= all[t]
		if valid(t) {
			allowed += all[t]
		}
	}
	return min(all[id]/(allowed+max(rest, 0)), 1)
}
