package infer

import (
	"context"
	"math"
	"testing"

	"ndb/format"
)

// TestTokenProbByHand checks tokenProb on logits small enough to do by
// hand: the softmax at temperature 1, renormalised over the allowed tokens.
func TestTokenProbByHand(t *testing.T) {
	ln := func(x float64) float32 { return float32(math.Log(x)) }
	// Weights 1, 2, 3, 4 (softmax 0.1, 0.2, 0.3, 0.4).
	logits := []float32{ln(1), ln(2), ln(3), ln(4)}
	only := func(ids ...int) func(int) bool {
		return func(id int) bool {
			for _, x := range ids {
				if x == id {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		name  string
		id    int
		valid func(int) bool
		want  float64
	}{
		{"unconstrained", 3, nil, 0.4},
		{"unconstrained, least likely", 0, nil, 0.1},
		{"everything allowed", 2, only(0, 1, 2, 3), 0.3},
		{"mask drops the likeliest", 2, only(0, 1, 2), 3.0 / 6},
		{"only token allowed", 1, only(1), 1},
		{"two allowed", 0, only(0, 3), 1.0 / 5},
	} {
		if got := tokenProb(logits, c.id, c.valid); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: tokenProb = %.6f, want %.6f", c.name, got, c.want)
		}
	}
	s := Scored{Probs: []float64{0.5, 1, 0.25, 0.25}}
	if s.Mean() != 0.5 || s.Min() != 0.25 {
		t.Errorf("Mean, Min = %v, %v; want 0.5, 0.25", s.Mean(), s.Min())
	}
	if (Scored{}).Mean() != 0 || (Scored{}).Min() != 0 {
		t.Error("an empty Scored should have Mean and Min 0")
	}
}

// TestScoredProbsMatchAHandComputation recomputes, for frames a random
// model wrote, every chosen token's probability from scratch: one forward
// pass over the prompt and the written tokens (no cache, no drafts), the
// softmax of each position's logits, and the mask of allowed tokens
// evaluated on the whole vocabulary. SampleScored's Probs must agree, for
// greedy decoding with and without drafts and for sampling.
func TestScoredProbsMatchAHandComputation(t *testing.T) {
	defer func(c float64) { probPrecision = c }(probPrecision)
	probPrecision = 0 // every token checked: the exact figure
	prompts, _ := fixturePrompts(11, 6)
	p := randomPredictor(t, 1024)
	V := p.model.Config.Vocab
	for _, opt := range []SampleOptions{{MaxTokens: 40}, {MaxTokens: 40, NoDraft: true}, {Temperature: 0.8, TopP: 0.95, Seed: 7, MaxTokens: 40}} {
		for i, prompt := range prompts {
			outs, err := p.SampleScored(context.Background(), prompt, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			out := outs[0]
			if len(out.IDs) == 0 || len(out.IDs) != len(out.Probs) {
				t.Fatalf("prompt %d: %d ids, %d probs", i, len(out.IDs), len(out.Probs))
			}
			ids, _, err := p.fitPrompt(prompt, opt.maxTokens())
			if err != nil {
				t.Fatal(err)
			}
			seq := append(append([]int32(nil), ids...), out.IDs...)
			cache, err := p.model.NewKVCache(1, len(seq))
			if err != nil {
				t.Fatal(err)
			}
			logits, err := p.model.Decode(seq, cache)
			if err != nil {
				t.Fatal(err)
			}
			dir, rules := promptDirection(prompt), promptRules(nil, prompt)
			cur := ""
			for j, id := range out.IDs {
				l := logits[(len(ids)+j-1)*V : (len(ids)+j)*V]
				maxL := l[argmax(l)]
				var allowed float64
				for tok := range V {
					if p.tokenAllowed(cur, tok, dir) && p.programAllowed(cur, tok, rules) {
						allowed += math.Exp(float64(l[tok] - maxL))
					}
				}
				want := math.Exp(float64(l[id]-maxL)) / allowed
				if got := out.Probs[j]; math.Abs(got-want) > 1e-4*want+1e-7 {
					t.Fatalf("%+v, prompt %d, token %d (%q): prob %.6f, by hand %.6f", opt, i, j, p.texts[id], got, want)
				}
				// At the default precision the figure is at most
				// probPrecision below the exact one, never above.
				at := cur
				valid := func(tok int) bool { return p.tokenAllowed(at, tok, dir) && p.programAllowed(at, tok, rules) }
				probPrecision = 0.01
				approx := tokenProb(l, int(id), valid)
				probPrecision = 0
				if approx > want*(1+1e-4)+1e-7 || approx < want*(1-0.01)*(1-1e-4)-1e-7 {
					t.Fatalf("prompt %d, token %d: at precision 0.01 %.6f, exact %.6f", i, j, approx, want)
				}
				cur += p.texts[id]
			}
			if m := out.Min(); m <= 0 || m > out.Mean() || out.Mean() > 1 {
				t.Fatalf("prompt %d: min %v, mean %v", i, m, out.Mean())
			}
			if f, err := format.ParseFrame(out.Text); err != nil {
				t.Fatalf("prompt %d: %q does not parse: %v", i, out.Text, err)
			} else {
				_ = f
			}
		}
	}
}
