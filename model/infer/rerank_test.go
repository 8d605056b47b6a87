package infer

import (
	"context"
	"testing"
)

func TestPickCandidate(t *testing.T) {
	c := func(text string, probs ...float64) Scored { return Scored{Text: text, Probs: probs} }
	for _, tc := range []struct {
		name  string
		cands []Scored
		lik   bool
		want  int
	}{
		{"majority over greedy", []Scored{c("a", 0.9, 0.2), c("b", 0.5), c("b", 0.5), c("a2", 0.9)}, false, 1},
		{"tie keeps greedy", []Scored{c("a", 0.3), c("b", 0.9), c("b", 0.9), c("a", 0.3)}, false, 0},
		{"all distinct keeps greedy", []Scored{c("a", 0.1), c("b", 0.9), c("c", 0.8)}, false, 0},
		{"tie off greedy goes to the likelier", []Scored{c("a", 0.1), c("b", 0.4), c("b", 0.4), c("c", 0.9), c("c", 0.9)}, false, 3},
		{"likelihood", []Scored{c("a", 0.9, 0.1), c("b", 0.5, 0.5), c("b", 0.5, 0.5), c("c", 0.95, 0.3)}, true, 3},
		{"likelihood keeps greedy on ties", []Scored{c("a", 0.5), c("b", 0.5)}, true, 0},
	} {
		if got := pickCandidate(tc.cands, tc.lik); got != tc.want {
			t.Errorf("%s: picked %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRerankPicksAmongGreedyAndSamples: with a threshold no frame reaches,
// the answer is pickCandidate's over the greedy frame and the K samples
// decoded on their own; with a threshold of 0 (off) or one the greedy
// frame clears, it is the greedy frame.
func TestRerankPicksAmongGreedyAndSamples(t *testing.T) {
	p := randomPredictor(t, 1024)
	prompts, _ := fixturePrompts(21, 6)
	ctx := context.Background()
	for i, prompt := range prompts {
		opt := SampleOptions{MaxTokens: 40}
		greedy, err := p.SampleScored(ctx, prompt, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		samples, err := p.SampleScored(ctx, prompt, 4, SampleOptions{MaxTokens: 40, Temperature: PaperSampling.Temperature, TopP: PaperSampling.TopP})
		if err != nil {
			t.Fatal(err)
		}
		for _, lik := range []bool{false, true} {
			want := append(append([]Scored(nil), greedy...), samples...)[pickCandidate(append(append([]Scored(nil), greedy...), samples...), lik)].Text
			opt.Rerank = &Rerank{K: 4, Below: 2, ByLikelihood: lik}
			got, err := p.SampleScored(ctx, prompt, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Text != want {
				t.Errorf("prompt %d (likelihood %v): reranked %q, want %q", i, lik, got[0].Text, want)
			}
			plain, err := p.Sample(ctx, prompt, 1, opt)
			if err != nil || plain[0] != want {
				t.Errorf("prompt %d: Sample gave %q (%v), SampleScored %q", i, plain, err, want)
			}
		}
		for _, r := range []*Rerank{{K: 4, Below: 0}, {K: 0, Below: 2}, {K: 4, Below: greedy[0].Min() * 0.99}} {
			opt.Rerank = r
			got, err := p.SampleScored(ctx, prompt, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Text != greedy[0].Text {
				t.Errorf("prompt %d, %+v: %q, want the greedy %q", i, *r, got[0].Text, greedy[0].Text)
			}
		}
	}
}
