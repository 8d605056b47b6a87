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
