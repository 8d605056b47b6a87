package infer

import (
	"context"
	"math"
)

// Rerank spends more decoding where the model is unsure (test-time
// compute): when the greedy frame's least token probability (Scored.Min,
// the renormalised figure the engines show as a stop's confidence) is below
// Below, K alternatives are sampled from the same prompt in one batch and
// the answer is picked among them and the greedy frame: by agreement (the
// frame written most often; ties go to the greedy frame, then to the
// likelier frame) or, with ByLikelihood, the frame the model finds
// likeliest (the product of its tokens' renormalised probabilities). A
// confident greedy frame costs only its scoring. Measured in
// docs/engines.md, "Test-time compute on unsure stops".
type Rerank struct {
	K            int     // alternatives sampled (<= 0: off)
	Below        float64 // resample when the greedy frame's Min is below this
	Temperature  float64 // of the alternatives (0: PaperSampling's)
	TopP         float64 // of the alternatives (0: PaperSampling's)
	ByLikelihood bool    // pick by likelihood instead of agreement
}

// DefaultRerank is the model engine's default: off. Measured on the
// shipped model (docs/engines.md, "Test-time compute"), no K, threshold or
// pick bought accuracy worth its time (K = 4 below 0.5 took 2.2x as long
// on held-out scripts for the same forward exact match), so the best
// trade-off is plain greedy decoding: K 0. Below keeps the threshold a
// caller that sets K (ndb eval --rerank-k) gets.
var DefaultRerank = Rerank{K: 0, Below: 0.5}

func (r *Rerank) on() bool { return r != nil && r.K > 0 && r.Below > 0 }

// rerank answers a greedy one-frame request under opt.Rerank (on): the
// greedy frame, or, when its Min is below r.Below, the pick among it and
// r.K samples.
func (p *Predictor) rerank(ctx context.Context, prompt string, opt SampleOptions) ([]Scored, error) {
	r := *opt.Rerank
	opt.Rerank = nil
	greedy, err := p.sample(ctx, prompt, 1, opt, true)
	if err != nil || greedy[0].Min() >= r.Below || len(greedy[0].Probs) == 0 {
		return greedy, err
	}
	alt := opt
	alt.Temperature, alt.TopP = r.Temperature, r.TopP
	if alt.Temperature <= 0 {
		alt.Temperature, alt.TopP = PaperSampling.Temperature, PaperSampling.TopP
	}
	cands, err := p.sample(ctx, prompt, r.K, alt, true)
	if err != nil {
		return nil, err
	}
	all := append(greedy, cands...)
	return []Scored{all[pickCandidate(all, r.ByLikelihood)]}, nil
}

// pickCandidate is the index of the answer among cands (cands[0] is the
// greedy frame): the likeliest with byLikelihood, else the text written
// most often, ties to the lower index of a most-frequent text when it is
// the greedy one, else to the likeliest of the tied texts.
func pickCandidate(cands []Scored, byLikelihood bool) int {
	best := 0
	if byLikelihood {
		for i := range cands {
			if cands[i].logProb() > cands[best].logProb() {
				best = i
			}
		}
		return best
	}
	votes := map[string]int{}
	for _, c := range cands {
		votes[c.Text]++
	}
	for i := range cands {
		vi, vb := votes[cands[i].Text], votes[cands[best].Text]
		if vi > vb || vi == vb && best != 0 && cands[i].logProb() > cands[best].logProb() {
			best = i
		}
	}
	return best
}

// logProb is the log of the product of the frame's token probabilities
// (closing text the decoder added has none and counts as certain).
func (s Scored) logProb() float64 {
	var lp float64
	for _, p := range s.Probs {
		lp += math.Log(max(p, 1e-300))
	}
	return lp
}
