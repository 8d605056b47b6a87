package nn

import (
	"math"
	"testing"
)

// TestGrowDepthKeepsTheFunction: the grown model's logits equal the
// original's (same tokens), for several depths, and its new blocks are
// trainable (their residual outputs get a gradient).
func TestGrowDepthKeepsTheFunction(t *testing.T) {
	cfg := Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, Vocab: 50, MaxSeq: 32, RopeTheta: 10000, NormEps: 1e-5}
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.Params { // not the init's structure: every tensor random
		m.Params[i] = float32(math.Sin(float64(i)*0.37)) * 0.2
	}
	const B, T = 2, 16
	tokens := make([]int32, B*T)
	targets := make([]int32, B*T)
	for i := range tokens {
		tokens[i] = int32((i * 7) % cfg.Vocab)
		targets[i] = int32((i*11 + 3) % cfg.Vocab)
	}
	lossOld, err := m.Forward(tokens, B, T, targets)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), m.Logits()...)
	for _, layers := range []int{2, 3, 4, 7} {
		gc, gp, err := GrowDepth(cfg, m.Params, layers)
		if err != nil {
			t.Fatal(err)
		}
		if gc.Layers != layers || len(gp) != gc.NumParams() {
			t.Fatalf("%d layers: config %+v, %d params", layers, gc, len(gp))
		}
		g, err := New(gc, 0)
		if err != nil {
			t.Fatal(err)
		}
		copy(g.Params, gp)
		loss, err := g.Forward(tokens, B, T, targets)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(loss-lossOld)) > 1e-5 {
			t.Errorf("%d layers: loss %v, original %v", layers, loss, lossOld)
		}
		for i, v := range g.Logits() {
			if math.Abs(float64(v-want[i])) > 1e-4 {
				t.Fatalf("%d layers: logit %d is %v, original %v", layers, i, v, want[i])
			}
		}
		if layers == cfg.Layers {
			continue
		}
		g.ZeroGrads()
		if _, err := g.Forward(tokens, B, T, targets); err != nil {
			t.Fatal(err)
		}
		if err := g.Backward(); err != nil {
			t.Fatal(err)
		}
		for _, ts := range gc.Layout() {
			if ts.Name != "model.layers.1.self_attn.o_proj.weight" && ts.Name != "model.layers.1.mlp.down_proj.weight" {
				continue
			}
			var norm float64
			for _, v := range gp[ts.Offset : ts.Offset+ts.Size] {
				norm += float64(v * v)
			}
			var grad float64
			for _, v := range g.Grads[ts.Offset : ts.Offset+ts.Size] {
				grad += float64(v * v)
			}
			if norm != 0 || grad == 0 {
				t.Errorf("%d layers: %s has norm %v and gradient norm %v; want a zero matrix that learns", layers, ts.Name, norm, grad)
			}
		}
	}
	if _, _, err := GrowDepth(cfg, m.Params, 1); err == nil {
		t.Error("shrinking was accepted")
	}
	if _, _, err := GrowDepth(cfg, m.Params[1:], 4); err == nil {
		t.Error("a short parameter block was accepted")
	}
}
