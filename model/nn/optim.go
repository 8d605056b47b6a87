package nn

import "math"

// AdamW is PyTorch's torch.optim.AdamW (decoupled weight decay, bias
// correction) over a model's flat parameters. Weight decay applies only to
// 2-D tensors (every matrix, embeddings and lm_head included); RMSNorm
// weights are not decayed. M, V and Step are the whole optimizer state:
// saving them with Params resumes training exactly.
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float32
	M, V                           []float32 // first and second moments, Params' layout
	Step                           int       // steps taken so far
	decay                          []bool    // per Layout tensor: decayed or not
	layout                         []Tensor
}

// NewAdamW returns AdamW for m with betas (0.9, 0.95), eps 1e-8 and weight
// decay 0.1.
func NewAdamW(m *Model) *AdamW {
	o := &AdamW{Beta1: 0.9, Beta2: 0.95, Eps: 1e-8, WeightDecay: 0.1,
		M: make([]float32, len(m.Params)), V: make([]float32, len(m.Params)),
		layout: m.Config.Layout()}
	for _, t := range o.layout {
		o.decay = append(o.decay, len(t.Shape) == 2)
	}
	return o
}

// Update applies one AdamW step with learning rate lr to m.Params from m.Grads.
func (o *AdamW) Update(m *Model, lr float32) {
	o.Step++
	bc1 := float32(1 - math.Pow(float64(o.Beta1), float64(o.Step)))
	bc2sqrt := float32(math.Sqrt(1 - math.Pow(float64(o.Beta2), float64(o.Step))))
	stepSize := lr / bc1
	for ti, t := range o.layout {
		decay := float32(1)
		if o.decay[ti] {
			decay = 1 - lr*o.WeightDecay
		}
		p := m.Params[t.Offset : t.Offset+t.Size]
		g := m.Grads[t.Offset : t.Offset+t.Size]
		mm := o.M[t.Offset : t.Offset+t.Size]
		vv := o.V[t.Offset : t.Offset+t.Size]
		parallelFor(len(p), func(_, lo, hi int) {
			kern.adamw(p[lo:hi], g[lo:hi], mm[lo:hi], vv[lo:hi], o.Beta1, o.Beta2, o.Eps, decay, stepSize, bc2sqrt)
		})
	}
}

// ClipGrads scales m.Grads so their global L2 norm is at most maxNorm (as
// torch.nn.utils.clip_grad_norm_: factor maxNorm/(norm+1e-6) when below 1)
// and returns the norm before clipping.
func (m *Model) ClipGrads(maxNorm float32) float32 {
	parts := make([]float64, workers())
	parallelFor(len(m.Grads), func(w, lo, hi int) { parts[w] = kern.sumSquares(m.Grads[lo:hi]) })
	var ss float64
	for _, s := range parts {
		ss += s
	}
	norm := float32(math.Sqrt(ss))
	if coef := maxNorm / (norm + 1e-6); coef < 1 {
		parallelFor(len(m.Grads), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				m.Grads[i] *= coef
			}
		})
	}
	return norm
}

// LR is the learning rate at step (0-based): linear warmup from maxLR/warmup
// to maxLR over the first warmup steps, then cosine decay from maxLR to
// minLR at step total, and minLR after that.
func LR(step, warmup, total int, maxLR, minLR float64) float64 {
	switch {
	case step < warmup:
		return maxLR * float64(step+1) / float64(warmup)
	case step >= total:
		return minLR
	}
	ratio := float64(step-warmup) / float64(max(1, total-warmup))
	return minLR + 0.5*(1+math.Cos(math.Pi*ratio))*(maxLR-minLR)
}
