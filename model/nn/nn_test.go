package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// testConfig is small enough for finite differences yet has T > attnBlock,
// several heads and layers, so blocked causal attention is exercised.
func testConfig() Config {
	return Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, Vocab: 40, MaxSeq: 128, RopeTheta: 10000, NormEps: 1e-5}
}

// testModel returns a model with larger-than-init random weights (std 0.15,
// norms 1 ± 0.1) so attention and the MLP are far from their trivial regime.
func testModel(t testing.TB, cfg Config) *Model {
	m, err := New(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ts := range cfg.Layout() {
		p := m.Params[ts.Offset : ts.Offset+ts.Size]
		for i := range p {
			if len(ts.Shape) == 1 {
				p[i] = 1 + 0.1*float32(rng.NormFloat64())
			} else {
				p[i] = 0.15 * float32(rng.NormFloat64())
			}
		}
	}
	return m
}

// testBatch returns tokens and next-token targets (B, T) with a few ignored targets.
func testBatch(cfg Config, B, T int, seed uint64) (tokens, targets []int32) {
	rng := rand.New(rand.NewPCG(seed, 3))
	tokens, targets = make([]int32, B*T), make([]int32, B*T)
	for i := range tokens {
		tokens[i] = int32(rng.IntN(cfg.Vocab))
		targets[i] = int32(rng.IntN(cfg.Vocab))
		if i%11 == 5 {
			targets[i] = IgnoreIndex
		}
	}
	return tokens, targets
}

func mustForward(t testing.TB, m *Model, tokens []int32, B, T int, targets []int32) float32 {
	t.Helper()
	loss, err := m.Forward(tokens, B, T, targets)
	if err != nil {
		t.Fatal(err)
	}
	return loss
}

func TestLayoutIsHFAndContiguous(t *testing.T) {
	cfg := Configs["small"]
	cfg.Vocab = 100
	ts := cfg.Layout()
	off := 0
	byName := map[string]Tensor{}
	for _, x := range ts {
		if x.Offset != off {
			t.Fatalf("%s at offset %d, want %d", x.Name, x.Offset, off)
		}
		size := 1
		for _, s := range x.Shape {
			size *= s
		}
		if size != x.Size {
			t.Fatalf("%s size %d != shape product %d", x.Name, x.Size, size)
		}
		off += x.Size
		byName[x.Name] = x
	}
	if off != cfg.NumParams() {
		t.Fatalf("layout covers %d params, NumParams says %d", off, cfg.NumParams())
	}
	want := map[string][]int{
		"model.embed_tokens.weight":                      {100, 256},
		"model.layers.0.input_layernorm.weight":          {256},
		"model.layers.5.self_attn.q_proj.weight":         {256, 256},
		"model.layers.5.self_attn.o_proj.weight":         {256, 256},
		"model.layers.3.post_attention_layernorm.weight": {256},
		"model.layers.2.mlp.gate_proj.weight":            {688, 256},
		"model.layers.2.mlp.up_proj.weight":              {688, 256},
		"model.layers.2.mlp.down_proj.weight":            {256, 688},
		"model.norm.weight":                              {256},
		"lm_head.weight":                                 {100, 256},
	}
	for name, shape := range want {
		x, ok := byName[name]
		if !ok || len(x.Shape) != len(shape) || x.Shape[0] != shape[0] || x.Shape[len(shape)-1] != shape[len(shape)-1] {
			t.Errorf("%s: got %+v, want shape %v", name, x, shape)
		}
	}
	if len(ts) != 3+9*cfg.Layers {
		t.Errorf("%d tensors, want %d", len(ts), 3+9*cfg.Layers)
	}
}

func TestInitDeterministic(t *testing.T) {
	cfg := testConfig()
	a, _ := New(cfg, 42)
	b, _ := New(cfg, 42)
	c, _ := New(cfg, 43)
	same, diff := true, false
	for i := range a.Params {
		same = same && a.Params[i] == b.Params[i]
		diff = diff || a.Params[i] != c.Params[i]
	}
	if !same || !diff {
		t.Fatalf("same seed equal: %v, other seed differs: %v", same, diff)
	}
	emb := cfg.Layout()[0]
	var ss float64
	for _, v := range a.Params[emb.Offset : emb.Offset+emb.Size] {
		ss += float64(v) * float64(v)
	}
	if std := math.Sqrt(ss / float64(emb.Size)); math.Abs(std-0.02) > 0.002 {
		t.Errorf("embedding std %.4f, want 0.02", std)
	}
	if a.Params[cfg.Layout()[1].Offset] != 1 {
		t.Errorf("norm weights must start at 1")
	}
}

func TestBadInputIsAnError(t *testing.T) {
	m := testModel(t, testConfig())
	cases := map[string]func() error{
		"token out of range":  func() error { _, err := m.Forward([]int32{0, 40}, 1, 2, nil); return err },
		"negative token":      func() error { _, err := m.Forward([]int32{-1, 0}, 1, 2, nil); return err },
		"wrong length":        func() error { _, err := m.Forward([]int32{0, 1, 2}, 1, 2, nil); return err },
		"too long":            func() error { _, err := m.Forward(make([]int32, 129), 1, 129, nil); return err },
		"target out of range": func() error { _, err := m.Forward([]int32{0, 1}, 1, 2, []int32{1, 99}); return err },
		"backward first":      func() error { m2 := testModel(t, testConfig()); return m2.Backward() },
		"decode past cap": func() error {
			c, _ := m.NewKVCache(1, 2)
			_, err := m.Decode([]int32{1, 2, 3}, c)
			return err
		},
		"bad cache": func() error { _, err := m.NewKVCache(1, 1000); return err },
	}
	for name, f := range cases {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(Config{Dim: 30, HiddenDim: 8, Layers: 1, Heads: 4, Vocab: 5, MaxSeq: 8}, 1); err == nil {
		t.Error("invalid config accepted")
	}
}

// TestGradientsFiniteDifference checks every tensor's gradient along a
// random direction d: (loss(p+εd) - loss(p-εd)) / 2ε must match g·d within
// 1% + 3e-4. ε is 1% of the tensor's RMS; the absolute 3e-4 is the float32
// forward's rounding (loss noise ~1e-6 divided by 2ε). The elementwise check
// is TestGradientsAndAdamWMatchTorch.
func TestGradientsFiniteDifference(t *testing.T) {
	cfg := testConfig()
	m := testModel(t, cfg)
	B, T := 2, 70
	tokens, targets := testBatch(cfg, B, T, 5)
	m.ZeroGrads()
	mustForward(t, m, tokens, B, T, targets)
	if err := m.Backward(); err != nil {
		t.Fatal(err)
	}
	grads := append([]float32(nil), m.Grads...)
	rng := rand.New(rand.NewPCG(9, 9))
	for _, ts := range cfg.Layout() {
		p := m.Params[ts.Offset : ts.Offset+ts.Size]
		g := grads[ts.Offset : ts.Offset+ts.Size]
		d := make([]float64, len(p))
		var gd, gnorm float64
		for i := range d {
			d[i] = rng.NormFloat64()
			gd += float64(g[i]) * d[i]
			gnorm += float64(g[i]) * float64(g[i])
		}
		// perturb each entry by about 1% of the tensor's RMS
		var ps float64
		for _, v := range p {
			ps += float64(v) * float64(v)
		}
		eps := 1e-2 * math.Sqrt(ps/float64(len(p)))
		orig := append([]float32(nil), p...)
		at := func(s float64) float64 {
			for i := range p {
				p[i] = orig[i] + float32(s*eps*d[i])
			}
			return float64(mustForward(t, m, tokens, B, T, targets))
		}
		fd := (at(1) - at(-1)) / (2 * eps)
		copy(p, orig)
		if math.Abs(fd-gd) > 1e-2*math.Abs(gd)+3e-4 {
			t.Errorf("%s: directional derivative %.6g (finite difference) vs %.6g (backward)", ts.Name, fd, gd)
		}
	}
}

// python returns Debian's interpreter if it can import every module, else skips.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("reference check skipped: %s not found", py)
	}
	for _, mod := range modules {
		if err := exec.Command(py, "-c", "import "+mod).Run(); err != nil {
			t.Skipf("reference check skipped: %s cannot import %s (apt install python3-%s)", py, mod, mod)
		}
	}
	return py
}

// refCase writes a model, batch and schedule for the Python references.
func refCase(t *testing.T, m *Model, B, T int, tokens, targets []int32, lrs []float64) string {
	dir := t.TempDir()
	case_ := map[string]any{"config": m.Config, "layout": m.Config.Layout(), "B": B, "T": T,
		"tokens": tokens, "targets": targets, "lrs": lrs, "clip": 1.0}
	buf, _ := json.Marshal(case_)
	if err := os.WriteFile(filepath.Join(dir, "case.json"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "params.bin"))
	if err != nil {
		t.Fatal(err)
	}
	binary.Write(f, binary.LittleEndian, m.Params)
	f.Close()
	return dir
}

func readFloat64s(t *testing.T, path string) []float64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(b)/8)
	binary.Read(bytes.NewReader(b), binary.LittleEndian, out)
	return out
}

func runPy(t *testing.T, py string, args ...string) {
	out, err := exec.Command(py, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// TestLogitsMatchNumpy compares logits and loss with testdata/ref.py, an
// independent float64 numpy implementation of HF Llama: logits within 2e-5
// absolute (they span about ±3), loss within 1e-5 relative.
func TestLogitsMatchNumpy(t *testing.T) {
	py := python(t, "numpy")
	cfg := testConfig()
	m := testModel(t, cfg)
	B, T := 2, 70
	tokens, targets := testBatch(cfg, B, T, 11)
	loss := mustForward(t, m, tokens, B, T, targets)
	dir := refCase(t, m, B, T, tokens, targets, nil)
	runPy(t, py, "testdata/ref.py", dir)
	ref := readFloat64s(t, filepath.Join(dir, "ref_logits.bin"))
	logits := m.Logits()
	if len(ref) != len(logits) {
		t.Fatalf("reference has %d logits, we have %d", len(ref), len(logits))
	}
	var worst float64
	for i, r := range ref {
		worst = math.Max(worst, math.Abs(float64(logits[i])-r))
	}
	if worst > 2e-5 {
		t.Errorf("logits differ from numpy by up to %.3g (tolerance 2e-5)", worst)
	}
	var out struct{ Loss float64 }
	b, _ := os.ReadFile(filepath.Join(dir, "ref_out.json"))
	json.Unmarshal(b, &out)
	if rel := math.Abs(float64(loss)-out.Loss) / out.Loss; rel > 1e-5 {
		t.Errorf("loss %.7f vs numpy %.7f (rel %.2g, tolerance 1e-5)", loss, out.Loss, rel)
	}
	t.Logf("max |logit - numpy| = %.2g, loss %.7f vs %.7f", worst, loss, out.Loss)
}

// TestGradientsAndAdamWMatchTorch compares every tensor's gradient with
// PyTorch autograd in float64 (max error within 1e-5 of the tensor's largest
// gradient) and the losses of 10 AdamW steps with clipping and a warmup +
// cosine schedule (within 1e-4 relative). Heads of 8 go through sgemm,
// heads of 32 through the fused attention kernels (in cgo builds).
func TestGradientsAndAdamWMatchTorch(t *testing.T) {
	py := python(t, "numpy", "torch")
	fused := Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 2, Vocab: 40, MaxSeq: 128, RopeTheta: 10000, NormEps: 1e-5}
	t.Run("heads8", func(t *testing.T) { testGradientsAndAdamWMatchTorch(t, py, testConfig()) })
	t.Run("heads32", func(t *testing.T) { testGradientsAndAdamWMatchTorch(t, py, fused) })
}

func testGradientsAndAdamWMatchTorch(t *testing.T, py string, cfg Config) {
	m := testModel(t, cfg)
	B, T := 2, 70
	tokens, targets := testBatch(cfg, B, T, 13)
	var lrs []float64
	for s := range 10 {
		lrs = append(lrs, LR(s, 3, 10, 1e-2, 1e-3))
	}
	dir := refCase(t, m, B, T, tokens, targets, lrs)
	runPy(t, py, "testdata/torch_llama.py", "ref", dir)
	refGrads := readFloat64s(t, filepath.Join(dir, "ref_grads.bin"))
	var steps struct{ Losses, Norms []float64 }
	b, _ := os.ReadFile(filepath.Join(dir, "ref_steps.json"))
	if err := json.Unmarshal(b, &steps); err != nil {
		t.Fatal(err)
	}

	opt := NewAdamW(m)
	for s, lr := range lrs {
		m.ZeroGrads()
		loss := mustForward(t, m, tokens, B, T, targets)
		if err := m.Backward(); err != nil {
			t.Fatal(err)
		}
		if s == 0 {
			for _, ts := range cfg.Layout() {
				var worst, scale float64
				for i := ts.Offset; i < ts.Offset+ts.Size; i++ {
					worst = math.Max(worst, math.Abs(float64(m.Grads[i])-refGrads[i]))
					scale = math.Max(scale, math.Abs(refGrads[i]))
				}
				t.Logf("%s: max |grad - torch| / max |torch grad| = %.2g", ts.Name, worst/scale)
				if worst > 1e-5*scale {
					t.Errorf("%s: gradient differs from torch by %.3g (largest gradient %.3g)", ts.Name, worst, scale)
				}
			}
		}
		norm := m.ClipGrads(1)
		opt.Update(m, float32(lr))
		if rel := math.Abs(float64(loss)-steps.Losses[s]) / steps.Losses[s]; rel > 1e-4 {
			t.Errorf("step %d: loss %.6f vs torch %.6f (rel %.2g)", s, loss, steps.Losses[s], rel)
		}
		if rel := math.Abs(float64(norm)-steps.Norms[s]) / steps.Norms[s]; rel > 1e-4 {
			t.Errorf("step %d: grad norm %.6f vs torch %.6f", s, norm, steps.Norms[s])
		}
		t.Logf("step %d lr %.4g loss %.6f torch %.6f", s, lr, loss, steps.Losses[s])
	}
}

// TestDecodeMatchesForward decodes a prompt in chunks and then token by
// token, and k candidates in one batch from a forked cache: every logit must
// equal the full forward pass within 1e-5.
func TestDecodeMatchesForward(t *testing.T) {
	cfg := testConfig()
	m := testModel(t, cfg)
	T := 90
	tokens, _ := testBatch(cfg, 3, T, 17)
	// the three sequences share a 40-token prompt
	for b := 1; b < 3; b++ {
		copy(tokens[b*T:b*T+40], tokens[:40])
	}
	mustForward(t, m, tokens, 3, T, nil)
	full := append([]float32(nil), m.Logits()...)
	V := cfg.Vocab
	check := func(what string, got []float32, b, pos int) {
		t.Helper()
		want := full[(b*T+pos)*V : (b*T+pos+1)*V]
		for j := range want {
			if math.Abs(float64(got[j]-want[j])) > 1e-5 {
				t.Fatalf("%s: sequence %d position %d logit %d: %g vs forward %g", what, b, pos, j, got[j], want[j])
			}
		}
	}
	cache, err := m.NewKVCache(1, T)
	if err != nil {
		t.Fatal(err)
	}
	// prompt in two chunks (25 + 15)
	for _, chunk := range [][2]int{{0, 25}, {25, 40}} {
		logits, err := m.Decode(tokens[chunk[0]:chunk[1]], cache)
		if err != nil {
			t.Fatal(err)
		}
		for i := chunk[0]; i < chunk[1]; i++ {
			check("prefill", logits[(i-chunk[0])*V:], 0, i)
		}
	}
	forked, err := cache.Fork(3)
	if err != nil {
		t.Fatal(err)
	}
	// sequence 0 alone, token by token
	for pos := 40; pos < 60; pos++ {
		logits, err := m.Decode(tokens[pos:pos+1], cache)
		if err != nil {
			t.Fatal(err)
		}
		check("single", logits, 0, pos)
	}
	// three candidates together, one token each per call
	for pos := 40; pos < T; pos++ {
		step := []int32{tokens[pos], tokens[T+pos], tokens[2*T+pos]}
		logits, err := m.Decode(step, forked)
		if err != nil {
			t.Fatal(err)
		}
		for b := range 3 {
			check("batched", logits[b*V:], b, pos)
		}
	}
	// rewinding, then two positions per sequence in one call (tokens (Batch, 2))
	forked.Truncate(50)
	logits, err := m.Decode([]int32{tokens[50], tokens[51], tokens[T+50], tokens[T+51], tokens[2*T+50], tokens[2*T+51]}, forked)
	if err != nil {
		t.Fatal(err)
	}
	for b := range 3 {
		check("after truncate", logits[(2*b)*V:], b, 50)
		check("after truncate", logits[(2*b+1)*V:], b, 51)
	}
}

// TestSgemmMatchesNaive checks every transpose combination and odd sizes,
// with strides and beta, for the active sgemm and the pure-Go one.
func TestSgemmMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	impls := map[string]func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int){"active": sgemm, "go": goSgemm}
	for name, f := range impls {
		for _, sz := range [][3]int{{1, 1, 1}, {5, 7, 3}, {33, 130, 600}, {70, 9, 129}} {
			m, n, k := sz[0], sz[1], sz[2]
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					lda, ldb, ldc := k+2, n+1, n+3
					if ta {
						lda = m + 2
					}
					if tb {
						ldb = k + 1
					}
					a := randSlice(rng, 1+max(m, k)*lda)
					b := randSlice(rng, 1+max(k, n)*ldb)
					c := randSlice(rng, m*ldc)
					want := append([]float32(nil), c...)
					for i := range m {
						for j := range n {
							var s float64
							for p := range k {
								av, bv := a[i*lda+p], b[p*ldb+j]
								if ta {
									av = a[p*lda+i]
								}
								if tb {
									bv = b[j*ldb+p]
								}
								s += float64(av) * float64(bv)
							}
							want[i*ldc+j] = float32(0.5*s + 0.25*float64(c[i*ldc+j]))
						}
					}
					f(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 0.25, c, ldc)
					for i := range m {
						for j := range n {
							if d := math.Abs(float64(c[i*ldc+j] - want[i*ldc+j])); d > 1e-4 {
								t.Fatalf("%s sgemm ta=%v tb=%v %v: C[%d,%d] = %g, want %g", name, ta, tb, sz, i, j, c[i*ldc+j], want[i*ldc+j])
							}
						}
					}
				}
			}
		}
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}

// TestBackendsAgree runs forward and backward with OpenBLAS and the C
// kernels and with the pure-Go sgemm and kernels: loss within 1e-6 relative, every gradient within 1e-5 of
// the largest. Only meaningful in a cgo build.
func TestBackendsAgree(t *testing.T) {
	if BLASName == "go" {
		t.Skip("pure-Go build: only one backend")
	}
	cfg := testConfig()
	B, T := 2, 70
	tokens, targets := testBatch(cfg, B, T, 19)
	run := func() (float32, []float32) {
		m := testModel(t, cfg)
		m.ZeroGrads()
		loss := mustForward(t, m, tokens, B, T, targets)
		if err := m.Backward(); err != nil {
			t.Fatal(err)
		}
		return loss, m.Grads
	}
	l1, g1 := run()
	saved, savedKern := sgemm, kern
	sgemm, kern = goSgemm, goKernels
	l2, g2 := run()
	sgemm, kern = saved, savedKern
	sameTraining(t, "blas", "go", l1, l2, g1, g2)
}

// TestThreadCountsAgree checks that splitting work over 1 or several
// goroutines changes nothing beyond float rounding.
func TestThreadCountsAgree(t *testing.T) {
	cfg := testConfig()
	B, T := 3, 70
	tokens, targets := testBatch(cfg, B, T, 23)
	run := func(p int) float32 {
		old := runtime.GOMAXPROCS(p)
		defer runtime.GOMAXPROCS(old)
		m := testModel(t, cfg)
		return mustForward(t, m, tokens, B, T, targets)
	}
	if a, b := run(1), run(3); math.Abs(float64(a-b)) > 1e-6*float64(a) {
		t.Errorf("loss %v with 1 worker vs %v with 3", a, b)
	}
}

func TestLRSchedule(t *testing.T) {
	cases := []struct {
		step int
		want float64
	}{{0, 0.1}, {4, 0.5}, {9, 1}, {10, 1}, {55, 0.55}, {100, 0.1}, {500, 0.1}}
	for _, c := range cases {
		if got := LR(c.step, 10, 100, 1, 0.1); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("LR(%d) = %g, want %g", c.step, got, c.want)
		}
	}
}

func TestIgnoredTargets(t *testing.T) {
	cfg := testConfig()
	m := testModel(t, cfg)
	tokens, targets := testBatch(cfg, 1, 10, 29)
	all := make([]int32, 10)
	for i := range all {
		all[i] = IgnoreIndex
	}
	if loss := mustForward(t, m, tokens, 1, 10, all); loss != 0 {
		t.Errorf("all-ignored loss %v, want 0", loss)
	}
	m.ZeroGrads()
	if err := m.Backward(); err != nil {
		t.Fatal(err)
	}
	for _, g := range m.Grads {
		if g != 0 {
			t.Fatal("all-ignored batch produced a gradient")
		}
	}
	// ignoring a target equals dropping that row from the mean
	l1 := mustForward(t, m, tokens, 1, 10, targets)
	var sum float64
	var n int
	for i, tg := range targets {
		if tg < 0 {
			continue
		}
		one := make([]int32, 10)
		for j := range one {
			one[j] = IgnoreIndex
		}
		one[i] = tg
		sum += float64(mustForward(t, m, tokens, 1, 10, one))
		n++
	}
	if math.Abs(sum/float64(n)-float64(l1)) > 1e-5 {
		t.Errorf("mean of single-target losses %v vs loss %v", sum/float64(n), l1)
	}
}

// TestKernelsAgree compares the C kernels (each build this CPU runs:
// baseline, AVX2, AVX-512) with the Go ones on random rows, including inputs far below the exponent's range:
// within 1e-5 relative to the largest output.
func TestKernelsAgree(t *testing.T) {
	levels := kernelLevels()
	defer forceKernelLevel(levels[len(levels)-1])
	for _, l := range levels {
		forceKernelLevel(l)
		t.Run(fmt.Sprintf("level%d", l), testKernelsAgree)
	}
}

func testKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	rows, ld, dh := 5, 37, 8
	in := func(n int, scale float32) []float32 {
		s := randSlice(rng, n)
		for i := range s {
			s[i] *= scale
		}
		s[0], s[n/2] = -300, 40 // exp underflow and a large value
		return s
	}
	compare := func(name string, got, want []float32) {
		t.Helper()
		if worst, scale := maxDiff(got, want); worst > 1e-5*math.Max(scale, 1) {
			t.Errorf("%s: active kernel differs from Go by %.3g (scale %.3g)", name, worst, scale)
		}
	}
	check := func(name string, f func(k kernelSet) []float32) { compare(name, f(kern), f(goKernels)) }

	s := in(rows*ld, 3)
	check("attnSoftmax", func(k kernelSet) []float32 {
		x, lse := append([]float32(nil), s...), make([]float32, rows)
		k.attnSoftmax(x, rows, ld, 30, lse)
		return append(x, lse...)
	})
	dp, dy, y := in(rows*ld, 1), in(rows*dh, 1), in(rows*dh, 1)
	lse := make([]float32, rows)
	goKernels.attnSoftmax(append([]float32(nil), s...), rows, ld, 30, lse)
	check("attnSoftmaxBackward", func(k kernelSet) []float32 {
		p, d := append([]float32(nil), s...), append([]float32(nil), dp...)
		k.attnSoftmaxBackward(p, d, rows, ld, 30, lse, dy, y, dh, dh)
		return append(p, d...)
	})
	check("attnGradScores", func(k kernelSet) []float32 {
		p, l := append([]float32(nil), s...), make([]float32, rows)
		goKernels.attnSoftmax(p, rows, ld, 30, l)
		d := append([]float32(nil), dp...)
		k.attnGradScores(p, d, rows, ld, dy, y, dh, dh)
		return d
	})
	targets := []int32{3, -100, 0, 36, 7}
	check("xent", func(k kernelSet) []float32 {
		x, l, loss := append([]float32(nil), s...), make([]float32, rows), make([]float32, rows)
		k.xentForward(x, rows, ld, targets, l, loss)
		k.xentBackward(x, rows, ld, targets, l, 0.25)
		return append(append(x, loss...), l[0])
	})
	f := 19
	gu, dh2 := in(rows*2*f, 4), in(rows*f, 1)
	check("swiglu", func(k kernelSet) []float32 {
		h, dgu := make([]float32, rows*f), make([]float32, rows*2*f)
		k.swiglu(h, gu, rows, f)
		k.swigluBackward(dgu, dh2, gu, rows, f)
		return append(h, dgu...)
	})
	x, w, dout := in(rows*ld, 2), in(ld, 1), in(rows*ld, 1)
	check("rmsNorm", func(k kernelSet) []float32 {
		o, r, dx, dw := make([]float32, rows*ld), make([]float32, rows), make([]float32, rows*ld), make([]float32, ld)
		k.rmsNorm(o, r, x, w, rows, ld, 1e-5)
		k.rmsNormBackward(dx, dw, dout, x, r, w, rows, ld)
		return append(append(append(o, r...), dx...), dw...)
	})
	cs, sn := ropeTables(16, 8, 10000)
	check("ropeRows", func(k kernelSet) []float32 {
		r := append([]float32(nil), x...) // 5 rows of 37: 4 head vectors of 8, then 5 untouched
		k.ropeRows(r, rows, ld, 4, 8, cs, sn, 3, 7, false)
		k.ropeRows(r[ld:], rows-1, ld, 2, 8, cs, sn, 5, 7, true)
		return r
	})
	check("sumSquares", func(k kernelSet) []float32 { return []float32{float32(k.sumSquares(x))} })
	check("adamw", func(k kernelSet) []float32 {
		p, g := append([]float32(nil), x...), append([]float32(nil), dout...)
		m, v := make([]float32, len(p)), make([]float32, len(p))
		for range 3 {
			k.adamw(p, g, m, v, 0.9, 0.95, 1e-8, 0.999, 1e-3, 0.5)
		}
		return append(append(p, m...), v...)
	})
}

// TestStoredAndRecomputedAttentionAgree checks that keeping attention
// probabilities for backward and recomputing them give the same gradients.
func TestStoredAndRecomputedAttentionAgree(t *testing.T) {
	cfg := testConfig()
	B, T := 2, 70
	tokens, targets := testBatch(cfg, B, T, 31)
	run := func(budget int) []float32 {
		saved := AttentionCacheBytes
		AttentionCacheBytes = budget
		defer func() { AttentionCacheBytes = saved }()
		m := testModel(t, cfg)
		m.ZeroGrads()
		mustForward(t, m, tokens, B, T, targets)
		if (m.acts.probs != nil) != (budget > 0) {
			t.Fatalf("budget %d: probabilities kept = %v", budget, m.acts.probs != nil)
		}
		if err := m.Backward(); err != nil {
			t.Fatal(err)
		}
		return m.Grads
	}
	stored, recomputed := run(1<<30), run(0)
	if worst, scale := maxDiff(recomputed, stored); worst > 1e-6*scale {
		t.Errorf("gradients differ by %.3g (largest %.3g)", worst, scale)
	}
}

// sameTraining fails t unless two paths gave the same loss (1e-6 relative)
// and gradients (1e-5 of the largest).
func sameTraining(t *testing.T, nameA, nameB string, l1, l2 float32, g1, g2 []float32) {
	t.Helper()
	if math.Abs(float64(l1-l2)) > 1e-6*math.Abs(float64(l1)) {
		t.Errorf("loss %v (%s) vs %v (%s)", l1, nameA, l2, nameB)
	}
	if worst, scale := maxDiff(g2, g1); worst > 1e-5*scale {
		t.Errorf("gradients differ by %.3g (largest %.3g)", worst, scale)
	}
}

// maxDiff is the largest |got - want| and the largest |want|; a NaN in
// either counts as an infinite difference.
func maxDiff(got, want []float32) (worst, scale float64) {
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		worst = math.Max(worst, d)
		scale = math.Max(scale, math.Abs(float64(want[i])))
	}
	return worst, scale
}
