package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkTrainStep times one training step (forward, backward, clip,
// AdamW) of the small config at batch 8 × 512 tokens, vocabulary 4096.
func BenchmarkTrainStep(b *testing.B) {
	cfg := Configs["small"]
	cfg.Vocab = 4096
	B, T := 8, 512
	m, _ := New(cfg, 1)
	opt := NewAdamW(m)
	rng := rand.New(rand.NewPCG(1, 1))
	tokens, targets := make([]int32, B*T), make([]int32, B*T)
	for i := range tokens {
		tokens[i], targets[i] = int32(rng.IntN(cfg.Vocab)), int32(rng.IntN(cfg.Vocab))
	}
	b.ResetTimer()
	for range b.N {
		m.ZeroGrads()
		if _, err := m.Forward(tokens, B, T, targets); err != nil {
			b.Fatal(err)
		}
		if err := m.Backward(); err != nil {
			b.Fatal(err)
		}
		m.ClipGrads(1)
		opt.Update(m, 3e-4)
	}
	b.ReportMetric(float64(B*T*b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkAttention times attention forward + backward alone, for the
// small config's shapes (8 heads of 32, batch 8 × 512, probabilities kept),
// through the fused kernels and through sgemm.
func BenchmarkAttention(b *testing.B) {
	cfg := Configs["small"]
	cfg.Vocab = 4096
	B, T, C := 8, 512, cfg.Dim
	m, _ := New(cfg, 1)
	a := m.activationsFor(B, T)
	rng := rand.New(rand.NewPCG(2, 2))
	qkv, dy := make([]float32, B*T*3*C), make([]float32, B*T*C)
	for i := range qkv {
		qkv[i] = float32(rng.NormFloat64())
	}
	for i := range dy {
		dy[i] = float32(rng.NormFloat64())
	}
	for _, fused := range []bool{false, true} {
		for _, keep := range []bool{true, false} {
			name := map[bool]string{false: "sgemm", true: "fused"}[fused] + map[bool]string{false: "/recompute", true: "/kept"}[keep]
			b.Run(name, func(b *testing.B) {
				fusedAttention = fused
				defer func() { fusedAttention = true }()
				var probs []float32
				if keep {
					probs = a.probs[0]
				}
				for range b.N {
					m.attentionForward(a.y[0], a.lse[0], probs, qkv, B, T)
					m.attentionBackward(a.dqkv, dy, qkv, a.y[0], a.lse[0], probs, B, T)
				}
				// the counted FLOPs (as ndb bench): 6 × C × T per token
				b.ReportMetric(float64(6*C*T*B*T*b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
