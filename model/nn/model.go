package nn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// IgnoreIndex is the target value that Forward leaves out of the loss (HF's
// -100); any negative target is ignored.
const IgnoreIndex = -100

// attnBlock is the number of query rows attention handles at once: scores
// are computed block by block only up to the block's last key (causal), so
// about half the T×T products are skipped. The C kernels' ATTN_BLOCK must
// match.
const attnBlock = 64

// attnWidth is the row stride of a block of scores whose last key is i1-1:
// i1 rounded up to a multiple of 32 (the fused kernels' tile width) plus 16,
// so the rows of a block do not share cache sets (see kernels_body.h); the
// columns past i1 hold zeros.
func attnWidth(i1 int) int { return (i1+31)&^31 + 16 }

// attnWorkFloats is the scratch the fused kernels need beyond the two score
// blocks: contiguous copies of a head's q, k, dy, packed k and v panels and
// the gradients (k_attn_bwd's work, in kernels_body.h).
func attnWorkFloats(T, dh int) int { return 8 * dh * attnWidth(T) }

// fusedAttention lets tests turn the fused attention kernels off, to
// compare them with the sgemm path; fusedEveryISA turns them on for the
// baseline (SSE2) build too, which is otherwise left to sgemm: measured
// 1.4x slower than it here, where AVX2's is 1.15x and AVX-512's 1.7x faster.
var fusedAttention, fusedEveryISA = true, false

// useFused reports whether attention goes through the fused C kernels:
// head sizes that are a multiple of 32, in builds that have them.
func (m *Model) useFused() bool {
	return fusedAttention && kern.attnForwardHead != nil && m.Config.HeadDim()%32 == 0 &&
		(fusedEveryISA || fusedISAFast())
}

// Model is a Llama decoder with its parameters, gradients and the
// activations of the last Forward. One Model must not run Forward/Backward
// from two goroutines at once; Decode with separate KVCaches may run
// concurrently with each other (it only reads Params).
type Model struct {
	Config Config
	Params []float32 // all parameters, placed by Config.Layout
	Grads  []float32 // gradients in the same layout; Backward adds to them

	w, g     views // named slices of Params and Grads
	cos, sin []float32
	acts     *activations
}

// views are the named tensors of one flat block (Params or Grads).
type views struct {
	embed  []float32 // (V, C)
	layers []layerViews
	norm   []float32 // (C)
	lmHead []float32 // (V, C)
}

type layerViews struct {
	ln1  []float32 // (C)
	qkv  []float32 // (3C, C): q_proj, k_proj, v_proj stacked
	o    []float32 // (C, C)
	ln2  []float32 // (C)
	gu   []float32 // (2F, C): gate_proj, up_proj stacked
	down []float32 // (C, F)
}

func (c Config) views(p []float32) views {
	C, F, V := c.Dim, c.HiddenDim, c.Vocab
	take := func(n int) []float32 { s := p[:n:n]; p = p[n:]; return s }
	var v views
	v.embed = take(V * C)
	for range c.Layers {
		var l layerViews
		l.ln1 = take(C)
		l.qkv = take(3 * C * C)
		l.o = take(C * C)
		l.ln2 = take(C)
		l.gu = take(2 * F * C)
		l.down = take(C * F)
		v.layers = append(v.layers, l)
	}
	v.norm = take(C)
	v.lmHead = take(V * C)
	return v
}

// New builds a model with deterministic initial weights from seed: every
// matrix (embeddings and lm_head included) is drawn from normal(0, 0.02),
// as HF's initializer_range, and every RMSNorm weight is 1.
func New(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.NumParams()
	m := &Model{Config: cfg, Params: make([]float32, n), Grads: make([]float32, n)}
	m.w, m.g = cfg.views(m.Params), cfg.views(m.Grads)
	m.cos, m.sin = ropeTables(cfg.MaxSeq, cfg.HeadDim(), cfg.RopeTheta)
	rng := rand.New(rand.NewPCG(seed, 0x6e6462))
	for _, t := range cfg.Layout() {
		p := m.Params[t.Offset : t.Offset+t.Size]
		if len(t.Shape) == 1 {
			for i := range p {
				p[i] = 1
			}
			continue
		}
		for i := range p {
			p[i] = float32(rng.NormFloat64() * 0.02)
		}
	}
	return m, nil
}

// ZeroGrads clears Grads; call it before the first Backward of a step.
func (m *Model) ZeroGrads() { clear(m.Grads) }

// activations holds what Forward keeps for Backward, for N = B*T rows.
type activations struct {
	B, T    int
	tokens  []int32
	targets []int32
	count   int // targets that are not ignored

	res  [][]float32 // L+1 × (N, C): residual stream entering each layer; res[L] leaves the last
	rms1 [][]float32 // L × (N): inverse RMS of res[l]
	ln1  [][]float32 // L × (N, C): input_layernorm(res[l])
	qkv  [][]float32 // L × (N, 3C): q | k | v per row, q and k rotated
	lse  [][]float32 // L × (B, H, T): log-sum-exp of each attention row
	// probs holds each layer's attention probabilities, causal blocks only
	// (B, H, probsPerHead), when they fit AttentionCacheBytes; else nil and
	// backward recomputes them from q, k and lse.
	probs        [][]float32
	probsPerHead int
	y            [][]float32 // L × (N, C): attention output before o_proj
	mid          [][]float32 // L × (N, C): res[l] + o_proj(y)
	rms2         [][]float32 // L × (N)
	ln2          [][]float32 // L × (N, C): post_attention_layernorm(mid)
	gu           [][]float32 // L × (N, 2F): gate | up per row
	h            [][]float32 // L × (N, F): silu(gate) * up
	rmsF         []float32   // (N)
	lnF          []float32   // (N, C): model.norm(res[L])
	// logits (N, V); Backward turns them into their gradient in place.
	logits    []float32
	lseLogits []float32 // (N)
	rowLoss   []float32 // (N)

	// backward scratch
	dres, dln, dy []float32 // (N, C)
	dqkv          []float32 // (N, 3C)
	dgu           []float32 // (N, 2F)
	dh            []float32 // (N, F)
	scratch       [][]float32
	dwPart        [][]float32 // per row chunk (C): rowChunkCount of them
	backwardReady bool
}

func (m *Model) activationsFor(B, T int) *activations {
	if a := m.acts; a != nil && a.B == B && a.T == T && len(a.scratch) == workers() {
		return a
	}
	m.acts = nil // let the old buffers go before allocating new ones
	c := m.Config
	N, C, F, L := B*T, c.Dim, c.HiddenDim, c.Layers
	f := func(n int) []float32 { return make([]float32, n) }
	fs := func(k, n int) [][]float32 {
		s := make([][]float32, k)
		for i := range s {
			s[i] = f(n)
		}
		return s
	}
	a := &activations{B: B, T: T,
		res: fs(L+1, N*C), rms1: fs(L, N), ln1: fs(L, N*C), qkv: fs(L, 3*N*C),
		lse: fs(L, B*c.Heads*T), y: fs(L, N*C), mid: fs(L, N*C), rms2: fs(L, N),
		ln2: fs(L, N*C), gu: fs(L, 2*N*F), h: fs(L, N*F),
		rmsF: f(N), lnF: f(N * C), logits: f(N * c.Vocab), lseLogits: f(N), rowLoss: f(N),
		dres: f(N * C), dln: f(N * C), dy: f(N * C), dqkv: f(3 * N * C), dgu: f(2 * N * F), dh: f(N * F),
		scratch: fs(workers(), 2*attnBlock*attnWidth(T)+attnWorkFloats(T, c.HeadDim())), dwPart: fs(rowChunkCount, C),
	}
	a.probsPerHead = blockOffset(T, T)
	if 4*L*B*c.Heads*a.probsPerHead <= AttentionCacheBytes {
		a.probs = fs(L, B*c.Heads*a.probsPerHead)
	}
	m.acts = a
	return a
}

// AttentionCacheBytes caps the memory Forward spends on keeping attention
// probabilities for Backward (which saves recomputing q k^T and its
// exponentials there, about a seventh of attention's work). Above it,
// Backward recomputes them.
var AttentionCacheBytes = 512 << 20

// blockOffset is where the probabilities of the query block starting at i0
// begin inside one head's causal blocks: block j holds rows (j*attnBlock ..)
// by keys 0 .. its last row, rows attnWidth apart. blockOffset(T, T) is one
// head's total.
func blockOffset(i0, T int) int {
	off := 0
	for j := 0; j < i0 && j < T; j += attnBlock {
		off += (min(j+attnBlock, T) - j) * attnWidth(min(j+attnBlock, T))
	}
	return off
}

func (m *Model) checkTokens(tokens []int32, what string) error {
	for i, t := range tokens {
		if t < 0 || int(t) >= m.Config.Vocab {
			return fmt.Errorf("nn: %s[%d] = %d is outside the vocabulary [0, %d)", what, i, t, m.Config.Vocab)
		}
	}
	return nil
}

// Forward runs the network on tokens (B, T) and returns the mean
// cross-entropy of the next-token predictions against targets (B, T);
// targets < 0 (IgnoreIndex) are left out. With targets nil it only computes
// logits (see Logits) and returns 0. Backward may follow a Forward with targets.
func (m *Model) Forward(tokens []int32, B, T int, targets []int32) (float32, error) {
	c := m.Config
	switch {
	case B <= 0 || T <= 0:
		return 0, fmt.Errorf("nn: batch %d and sequence length %d must be positive", B, T)
	case T > c.MaxSeq:
		return 0, fmt.Errorf("nn: sequence length %d exceeds max_position_embeddings %d", T, c.MaxSeq)
	case len(tokens) != B*T:
		return 0, fmt.Errorf("nn: got %d tokens, want B*T = %d", len(tokens), B*T)
	case targets != nil && len(targets) != B*T:
		return 0, fmt.Errorf("nn: got %d targets, want B*T = %d", len(targets), B*T)
	}
	if err := m.checkTokens(tokens, "tokens"); err != nil {
		return 0, err
	}
	for i, t := range targets {
		if int(t) >= c.Vocab {
			return 0, fmt.Errorf("nn: targets[%d] = %d is outside the vocabulary [0, %d)", i, t, c.Vocab)
		}
	}
	a := m.activationsFor(B, T)
	// own copies: the caller may reuse its buffers before Backward
	a.tokens, a.backwardReady = append(a.tokens[:0], tokens...), false
	a.targets = nil
	if targets != nil {
		a.targets = append(make([]int32, 0, len(targets)), targets...)
	}
	targets = a.targets
	N, C, F, V, H, Dh := B*T, c.Dim, c.HiddenDim, c.Vocab, c.Heads, c.HeadDim()
	eps := float32(c.NormEps)

	// x = embed_tokens[tokens]  (N, C)
	for n, t := range tokens {
		copy(a.res[0][n*C:(n+1)*C], m.w.embed[int(t)*C:])
	}
	for l, w := range m.w.layers {
		x := a.res[l]
		// ln1 = input_layernorm(x)  (N, C)
		rmsNormRows(a.ln1[l], a.rms1[l], x, w.ln1, N, C, eps)
		// q | k | v = ln1 @ [Wq; Wk; Wv]^T  (N, 3C)
		linear(a.qkv[l], a.ln1[l], w.qkv, N, C, 3*C, false)
		// rotate q and k of every head by its position t = n mod T
		qkv := a.qkv[l]
		parallelFor(N, func(_, lo, hi int) { // H query heads then H key heads
			kern.ropeRows(qkv[lo*3*C:], hi-lo, 3*C, 2*H, Dh, m.cos, m.sin, lo, T, false)
		})
		// y = softmax(q k^T / sqrt(Dh) + causal mask) v  (B, H, T, Dh) stored as (N, C)
		var probs []float32
		if a.probs != nil {
			probs = a.probs[l]
		}
		m.attentionForward(a.y[l], a.lse[l], probs, qkv, B, T)
		// mid = x + y @ Wo^T  (N, C)
		copy(a.mid[l], x)
		linear(a.mid[l], a.y[l], w.o, N, C, C, true)
		// ln2 = post_attention_layernorm(mid); gate | up = ln2 @ [Wg; Wu]^T  (N, 2F)
		rmsNormRows(a.ln2[l], a.rms2[l], a.mid[l], w.ln2, N, C, eps)
		linear(a.gu[l], a.ln2[l], w.gu, N, C, 2*F, false)
		// h = silu(gate) * up  (N, F)
		parallelFor(N, func(_, lo, hi int) { kern.swiglu(a.h[l][lo*F:hi*F], a.gu[l][lo*2*F:hi*2*F], hi-lo, F) })
		// res[l+1] = mid + h @ Wdown^T  (N, C)
		copy(a.res[l+1], a.mid[l])
		linear(a.res[l+1], a.h[l], w.down, N, F, C, true)
	}
	// logits = norm(x) @ lm_head^T  (N, V)
	rmsNormRows(a.lnF, a.rmsF, a.res[c.Layers], m.w.norm, N, C, eps)
	linear(a.logits, a.lnF, m.w.lmHead, N, C, V, false)
	if targets == nil {
		return 0, nil
	}
	// loss = mean over kept rows of logsumexp(logits) - logits[target]
	parallelFor(N, func(_, lo, hi int) {
		kern.xentForward(a.logits[lo*V:hi*V], hi-lo, V, targets[lo:hi], a.lseLogits[lo:hi], a.rowLoss[lo:hi])
	})
	var total float64
	a.count = 0
	for n, t := range targets {
		if t >= 0 {
			total += float64(a.rowLoss[n])
			a.count++
		}
	}
	a.backwardReady = true
	if a.count == 0 {
		return 0, nil
	}
	return float32(total / float64(a.count)), nil
}

// Logits returns the logits (B*T, V) of the last Forward. The slice is the
// model's own buffer: valid until the next Forward or Backward.
func (m *Model) Logits() []float32 {
	if m.acts == nil {
		return nil
	}
	return m.acts.logits[:m.acts.B*m.acts.T*m.Config.Vocab]
}

// attentionForward computes causal attention for every (batch, head):
// y (N, C) and the row log-sum-exps lse (B, H, T), from qkv (N, 3C), keeping
// the probabilities in probs (B, H, probsPerHead) unless it is nil. Heads
// are strided views into qkv and y: no copies.
func (m *Model) attentionForward(y, lse, probs, qkv []float32, B, T int) {
	c := m.Config
	C, H, Dh := c.Dim, c.Heads, c.HeadDim()
	scale := float32(1 / math.Sqrt(float64(Dh)))
	if m.useFused() {
		Tp := attnWidth(T)
		parallelTasks(B*H, func(w, bh int) {
			s, work := m.acts.scratch[w][:attnBlock*Tp], m.acts.scratch[w][2*attnBlock*Tp:]
			b, h := bh/H, bh%H
			base := b*T*3*C + h*Dh
			ps := s
			if probs != nil {
				ps = probs[bh*m.acts.probsPerHead:]
			}
			kern.attnForwardHead(qkv[base:], qkv[base+C:], qkv[base+2*C:], 3*C, y[b*T*C+h*Dh:], C,
				lse[bh*T:], ps, probs != nil, work, T, Dh, scale)
		})
		return
	}
	parallelTasks(B*H, func(w, bh int) {
		s := m.acts.scratch[w][:attnBlock*attnWidth(T)] // scores (rows, attnWidth(i1))
		b, h := bh/H, bh%H
		q := qkv[b*T*3*C+h*Dh:]     // (T, Dh), row stride 3C
		k := qkv[b*T*3*C+C+h*Dh:]   // (T, Dh)
		v := qkv[b*T*3*C+2*C+h*Dh:] // (T, Dh)
		yh := y[b*T*C+h*Dh:]        // (T, Dh), row stride C
		for i0 := 0; i0 < T; i0 += attnBlock {
			i1 := min(i0+attnBlock, T)
			rows, ld := i1-i0, attnWidth(i1)
			s := s
			if probs != nil {
				s = probs[bh*m.acts.probsPerHead+blockOffset(i0, T):]
			}
			// s = q[i0:i1] k[:i1]^T * scale  (rows, i1), rows ld apart
			sgemm(false, true, rows, i1, Dh, scale, q[i0*3*C:], 3*C, k, 3*C, 0, s, ld)
			kern.attnSoftmax(s, rows, ld, i0, lse[bh*T+i0:])
			// y[i0:i1] = p v[:i1]  (rows, Dh)
			sgemm(false, false, rows, Dh, i1, 1, s, ld, v, 3*C, 0, yh[i0*C:], C)
		}
	})
}

// attentionBackward returns the task of one (batch, head) bh of the
// attention backward pass: its part of dqkv (N, 3C) from dy (N, C),
// recomputing the attention probabilities from q, k and the saved lse unless
// probs has them, then the inverse rotation of its dq and dk.
func (m *Model) attentionBackward(dqkv, dy, qkv, y, lse, probs []float32, B, T int) func(w, bh int) {
	c := m.Config
	C, H, Dh := c.Dim, c.Heads, c.HeadDim()
	scale := float32(1 / math.Sqrt(float64(Dh)))
	Tp := attnWidth(T)
	unrotate := func(b, h int) {
		base := b*T*3*C + h*Dh
		kern.ropeRows(dqkv[base:], T, 3*C, 1, Dh, m.cos, m.sin, 0, T, true)
		kern.ropeRows(dqkv[base+C:], T, 3*C, 1, Dh, m.cos, m.sin, 0, T, true)
	}
	if m.useFused() {
		return func(w, bh int) {
			sc := m.acts.scratch[w]
			p, dp, work := sc[:attnBlock*Tp], sc[attnBlock*Tp:2*attnBlock*Tp], sc[2*attnBlock*Tp:]
			b, h := bh/H, bh%H
			base := b*T*3*C + h*Dh
			var ph []float32
			if probs != nil {
				ph = probs[bh*m.acts.probsPerHead:]
			}
			kern.attnBackwardHead(qkv[base:], qkv[base+C:], qkv[base+2*C:], dqkv[base:], dqkv[base+C:], dqkv[base+2*C:], 3*C,
				y[b*T*C+h*Dh:], dy[b*T*C+h*Dh:], C, lse[bh*T:], ph, probs != nil, p, dp, work, T, Dh, scale)
			unrotate(b, h)
		}
	}
	return func(w, bh int) {
		p, dp := m.acts.scratch[w][:attnBlock*Tp], m.acts.scratch[w][attnBlock*Tp:2*attnBlock*Tp] // (rows, attnWidth(i1)) each
		b, h := bh/H, bh%H
		// (T, Dh) views, rows strided by 3C (q, k, v and their gradients) or C (y, dy)
		q, k, v := qkv[b*T*3*C+h*Dh:], qkv[b*T*3*C+C+h*Dh:], qkv[b*T*3*C+2*C+h*Dh:]
		dq, dk, dv := dqkv[b*T*3*C+h*Dh:], dqkv[b*T*3*C+C+h*Dh:], dqkv[b*T*3*C+2*C+h*Dh:]
		yh, dyh := y[b*T*C+h*Dh:], dy[b*T*C+h*Dh:]
		for t := range T {
			clear(dk[t*3*C : t*3*C+Dh])
			clear(dv[t*3*C : t*3*C+Dh])
		}
		for i0 := 0; i0 < T; i0 += attnBlock {
			i1 := min(i0+attnBlock, T)
			rows, ld := i1-i0, attnWidth(i1)
			// dp = dy v^T  (rows, i1), rows ld apart
			sgemm(false, true, rows, i1, Dh, 1, dyh[i0*C:], C, v, 3*C, 0, dp, ld)
			p := p
			if probs != nil {
				// ds = p * (dp - D) with D = dy . y per row
				p = probs[bh*m.acts.probsPerHead+blockOffset(i0, T):]
				kern.attnGradScores(p, dp, rows, ld, dyh[i0*C:], yh[i0*C:], C, Dh)
			} else {
				// p = exp(q k^T * scale - lse); ds = p * (dp - D)
				sgemm(false, true, rows, i1, Dh, scale, q[i0*3*C:], 3*C, k, 3*C, 0, p, ld)
				kern.attnSoftmaxBackward(p, dp, rows, ld, i0, lse[bh*T+i0:], dyh[i0*C:], yh[i0*C:], C, Dh)
			}
			// dq[i0:i1] = ds k[:i1] * scale; dk[:i1] += ds^T q[i0:i1] * scale; dv[:i1] += p^T dy[i0:i1]
			sgemm(false, false, rows, Dh, i1, scale, dp, ld, k, 3*C, 0, dq[i0*3*C:], 3*C)
			sgemm(true, false, i1, Dh, rows, scale, dp, ld, q[i0*3*C:], 3*C, 1, dk, 3*C)
			sgemm(true, false, i1, Dh, rows, 1, p, ld, dyh[i0*C:], C, 1, dv, 3*C)
		}
		unrotate(b, h)
	}
}

// Backward adds the gradient of the last Forward's loss with respect to
// every parameter to Grads. It consumes the logits (they become their
// gradient), so it runs once per Forward.
func (m *Model) Backward() error {
	a := m.acts
	if a == nil || !a.backwardReady {
		return errors.New("nn: Backward needs a Forward with targets first")
	}
	a.backwardReady = false
	c := m.Config
	B, T := a.B, a.T
	N, C, F, V, H := B*T, c.Dim, c.HiddenDim, c.Vocab, c.Heads
	if a.count == 0 {
		return nil
	}
	inv := 1 / float32(a.count)
	// dlogits = (softmax(logits) - onehot(target)) / count  (N, V), in place
	parallelFor(N, func(_, lo, hi int) {
		kern.xentBackward(a.logits[lo*V:hi*V], hi-lo, V, a.targets[lo:hi], a.lseLogits[lo:hi], inv)
	})
	// Each weight gradient (dW) runs alongside the next step that does not
	// touch its inputs (weightGrad.alongside): row chunks of an RMSNorm or
	// SwiGLU backward, or the attention heads.
	// through lm_head and the final norm: dres = d res[L]  (N, C)
	linearBackwardInput(a.dln, a.logits, m.w.lmHead, N, C, V)
	clear(a.dres)
	m.normBackward(a.dres, m.g.norm, a.dln, a.res[c.Layers], a.rmsF, m.w.norm, N).
		alongside(newWeightGrad(m.g.lmHead, a.logits, a.lnF, N, C, V))

	for l := c.Layers - 1; l >= 0; l-- {
		w, g := m.w.layers[l], m.g.layers[l]
		// res[l+1] = mid + h @ Wdown^T: dh = dres @ Wdown  (N, F)
		linearBackwardInput(a.dh, a.dres, w.down, N, F, C)
		// h = silu(gate) * up  ->  dgate | dup  (N, 2F)
		newWeightGrad(g.down, a.dres, a.h[l], N, F, C).alongside(rowChunks(N), func(_, i int) {
			lo, hi := chunkRows(N, i)
			kern.swigluBackward(a.dgu[lo*2*F:hi*2*F], a.dh[lo*F:hi*F], a.gu[l][lo*2*F:hi*2*F], hi-lo, F)
		})
		// gate | up = ln2 @ [Wg; Wu]^T: dln = dgu @ [Wg; Wu]  (N, C)
		linearBackwardInput(a.dln, a.dgu, w.gu, N, C, 2*F)
		// dres = d mid
		m.normBackward(a.dres, g.ln2, a.dln, a.mid[l], a.rms2[l], w.ln2, N).
			alongside(newWeightGrad(g.gu, a.dgu, a.ln2[l], N, C, 2*F))
		// mid = x + y @ Wo^T: dy = dmid @ Wo  (N, C)
		linearBackwardInput(a.dy, a.dres, w.o, N, C, C)
		var probs []float32
		if a.probs != nil {
			probs = a.probs[l]
		}
		// dqkv (N, 3C), dq and dk rotated back
		newWeightGrad(g.o, a.dres, a.y[l], N, C, C).alongside(B*H,
			m.attentionBackward(a.dqkv, a.dy, a.qkv[l], a.y[l], a.lse[l], probs, B, T))
		// q | k | v = ln1 @ Wqkv^T: dln = dqkv @ Wqkv  (N, C)
		linearBackwardInput(a.dln, a.dqkv, w.qkv, N, C, 3*C)
		// dres = d res[l]
		m.normBackward(a.dres, g.ln1, a.dln, a.res[l], a.rms1[l], w.ln1, N).
			alongside(newWeightGrad(g.qkv, a.dqkv, a.ln1[l], N, C, 3*C))
	}
	// embedding rows get the gradient of every position that used them
	for n, t := range a.tokens {
		ge, d := m.g.embed[int(t)*C:(int(t)+1)*C], a.dres[n*C:(n+1)*C]
		for j, v := range d {
			ge[j] += v
		}
	}
	return nil
}

// normBackward is an RMSNorm's backward pass over N rows: it adds the input
// gradient to dx (N, C) and the weight gradient to dw (C), the latter as
// one partial sum per fixed row chunk reduced in chunk order, so the result
// does not depend on which worker ran which chunk.
type normBackward struct {
	m                         *Model
	dx, dw, dout, x, rstd, wt []float32
	n                         int
}

func (m *Model) normBackward(dx, dw, dout, x, rstd, w []float32, N int) normBackward {
	return normBackward{m, dx, dw, dout, x, rstd, w, N}
}

// alongside runs the chunks next to g's dW tasks (weightGrad.alongside),
// then reduces the partial sums.
func (b normBackward) alongside(g weightGrad) {
	C, parts := b.m.Config.Dim, b.m.acts.dwPart
	g.alongside(rowChunks(b.n), func(_, i int) {
		lo, hi := chunkRows(b.n, i)
		clear(parts[i])
		kern.rmsNormBackward(b.dx[lo*C:hi*C], parts[i], b.dout[lo*C:hi*C], b.x[lo*C:hi*C], b.rstd[lo:hi], b.wt, hi-lo, C)
	})
	for _, p := range parts[:rowChunks(b.n)] {
		for j, v := range p {
			b.dw[j] += v
		}
	}
}

// KVCache holds the rotated keys and values of the positions decoded so
// far, for Batch sequences that advance together (k sampled candidates of
// one prompt, say). Len positions are filled, up to Cap.
type KVCache struct {
	Batch, Len, Cap int
	k, v            [][]float32 // L × (Batch, Cap, C)
	scratch         [][]float32 // per worker attention scores
}

// NewKVCache returns an empty cache for batch sequences of up to capacity
// positions (at most max_position_embeddings).
func (m *Model) NewKVCache(batch, capacity int) (*KVCache, error) {
	if batch <= 0 || capacity <= 0 || capacity > m.Config.MaxSeq {
		return nil, fmt.Errorf("nn: KV cache needs batch > 0 and 0 < capacity <= %d, got %d, %d", m.Config.MaxSeq, batch, capacity)
	}
	c := &KVCache{Batch: batch, Cap: capacity}
	for range m.Config.Layers {
		c.k = append(c.k, make([]float32, batch*capacity*m.Config.Dim))
		c.v = append(c.v, make([]float32, batch*capacity*m.Config.Dim))
	}
	return c, nil
}

// Fork returns a new cache of k sequences, each a copy of this batch-1
// cache: prefill a shared prompt once, then decode k candidates together.
func (c *KVCache) Fork(k int) (*KVCache, error) {
	if c.Batch != 1 || k <= 0 {
		return nil, fmt.Errorf("nn: Fork needs a batch-1 cache and k > 0 (batch %d, k %d)", c.Batch, k)
	}
	f := &KVCache{Batch: k, Len: c.Len, Cap: c.Cap}
	C := len(c.k[0]) / c.Cap
	for l := range c.k {
		nk, nv := make([]float32, k*c.Cap*C), make([]float32, k*c.Cap*C)
		for b := range k {
			copy(nk[b*c.Cap*C:], c.k[l][:c.Len*C])
			copy(nv[b*c.Cap*C:], c.v[l][:c.Len*C])
		}
		f.k, f.v = append(f.k, nk), append(f.v, nv)
	}
	return f, nil
}

// Truncate forgets every position from n on (n <= Len), to rewind decoding.
func (c *KVCache) Truncate(n int) {
	if n >= 0 && n < c.Len {
		c.Len = n
	}
}

// Decode appends n = len(tokens)/Batch new tokens to each sequence of the
// cache (tokens laid out (Batch, n)) and returns their logits (Batch*n, V),
// equal to the full forward pass over the whole sequences at those positions.
func (m *Model) Decode(tokens []int32, cache *KVCache) ([]float32, error) {
	cfg := m.Config
	Bt := cache.Batch
	if len(tokens) == 0 || len(tokens)%Bt != 0 {
		return nil, fmt.Errorf("nn: Decode got %d tokens for a batch of %d", len(tokens), Bt)
	}
	n := len(tokens) / Bt
	if cache.Len+n > cache.Cap {
		return nil, fmt.Errorf("nn: Decode past the cache capacity %d (%d + %d)", cache.Cap, cache.Len, n)
	}
	if err := m.checkTokens(tokens, "tokens"); err != nil {
		return nil, err
	}
	N, C, F, V, H, Dh := Bt*n, cfg.Dim, cfg.HiddenDim, cfg.Vocab, cfg.Heads, cfg.HeadDim()
	eps := float32(cfg.NormEps)
	pos0, S := cache.Len, cache.Len+n // new positions pos0..S-1; keys 0..S-1
	scale := float32(1 / math.Sqrt(float64(Dh)))
	if len(cache.scratch) != workers() || len(cache.scratch[0]) < n*S {
		cache.scratch = make([][]float32, workers())
		for i := range cache.scratch {
			cache.scratch[i] = make([]float32, n*cache.Cap)
		}
	}
	x, ln, y := make([]float32, N*C), make([]float32, N*C), make([]float32, N*C)
	qkv, gu, hh := make([]float32, N*3*C), make([]float32, N*2*F), make([]float32, N*F)
	// x = embed_tokens[tokens]  (N, C)
	for i, t := range tokens {
		copy(x[i*C:(i+1)*C], m.w.embed[int(t)*C:])
	}
	for l, w := range m.w.layers {
		kc, vc := cache.k[l], cache.v[l] // (Batch, Cap, C)
		rmsNormRows(ln, nil, x, w.ln1, N, C, eps)
		linear(qkv, ln, w.qkv, N, C, 3*C, false) // (N, 3C)
		// rotate q, k at their positions; store k, v in the cache
		parallelFor(N, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				b, p := i/n, pos0+i%n
				kern.ropeRows(qkv[i*3*C:], 1, 3*C, 2*H, Dh, m.cos, m.sin, p, m.Config.MaxSeq, false)
				copy(kc[(b*cache.Cap+p)*C:(b*cache.Cap+p+1)*C], qkv[i*3*C+C:i*3*C+2*C])
				copy(vc[(b*cache.Cap+p)*C:(b*cache.Cap+p+1)*C], qkv[i*3*C+2*C:(i+1)*3*C])
			}
		})
		// y = softmax(q K^T / sqrt(Dh), causal) V per (sequence, head)  (N, C)
		parallelFor(Bt*H, func(wk, lo, hi int) {
			s, lse := cache.scratch[wk], make([]float32, n)
			for bh := lo; bh < hi; bh++ {
				b, h := bh/H, bh%H
				q := qkv[b*n*3*C+h*Dh:]                                    // (n, Dh), stride 3C
				k := kc[b*cache.Cap*C+h*Dh:]                               // (S, Dh), stride C
				v := vc[b*cache.Cap*C+h*Dh:]                               // (S, Dh)
				sgemm(false, true, n, S, Dh, scale, q, 3*C, k, C, 0, s, S) // (n, S)
				kern.attnSoftmax(s, n, S, pos0, lse)                       // row r sees keys 0..pos0+r
				sgemm(false, false, n, Dh, S, 1, s, S, v, C, 0, y[b*n*C+h*Dh:], C)
			}
		})
		linear(x, y, w.o, N, C, C, true) // x += y @ Wo^T
		rmsNormRows(ln, nil, x, w.ln2, N, C, eps)
		linear(gu, ln, w.gu, N, C, 2*F, false) // (N, 2F)
		parallelFor(N, func(_, lo, hi int) { kern.swiglu(hh[lo*F:hi*F], gu[lo*2*F:hi*2*F], hi-lo, F) })
		linear(x, hh, w.down, N, F, C, true) // x += h @ Wdown^T
	}
	rmsNormRows(ln, nil, x, m.w.norm, N, C, eps)
	logits := make([]float32, N*V)
	linear(logits, ln, m.w.lmHead, N, C, V, false)
	cache.Len = S
	return logits, nil
}

// rmsNormRows normalises the N rows of x (N, C) into out, across workers;
// rstd (N) receives the inverse RMS unless nil.
func rmsNormRows(out, rstd, x, w []float32, n, c int, eps float32) {
	parallelFor(n, func(_, lo, hi int) {
		var r []float32
		if rstd != nil {
			r = rstd[lo:hi]
		}
		kern.rmsNorm(out[lo*c:hi*c], r, x[lo*c:hi*c], w, hi-lo, c, eps)
	})
}
