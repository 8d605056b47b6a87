package hf

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

const trajectory = `<|begin_of_text|><|trace_context_start|>def f(n):
    return [i * i for i in range(n)]

def main():
    return f(3)
<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return f(3)<|action_sep|><|step_into|><|frame_sep|><|call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "3"}<|action_sep|><|step_return|><|frame_sep|><|return_sep|><|src_sep|>    return [i * i for i in range(n)]<|arg_sep|>"[0, 1, 4]"<|action_sep|><|continue|><|frame_sep|><|exit_normal|><|trace_end|><|end_of_text|>`

// testModel is a tiny model with random weights everywhere (norm weights
// too, so that a wrongly placed tensor changes the logits).
func testModel(t testing.TB) *modelfile.Model {
	t.Helper()
	tok, err := tokenizer.Train(slices.Values([]string{trajectory, strings.ReplaceAll(trajectory, "3", "7")}), 320, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Configs["tiny"]
	cfg.Vocab = tok.VocabSize() + 3 // a padded vocab must survive too
	rng := rand.New(rand.NewPCG(5, 6))
	w := make([]float32, cfg.NumParams())
	for _, ts := range cfg.Layout() {
		for i := ts.Offset; i < ts.Offset+ts.Size; i++ {
			if len(ts.Shape) == 1 {
				w[i] = float32(1 + 0.3*rng.NormFloat64())
			} else {
				w[i] = float32(0.2 * rng.NormFloat64())
			}
		}
	}
	return &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: w}
}

func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

func TestExportImportF32(t *testing.T) {
	m := testModel(t)
	dir := t.TempDir()
	if err := Export(dir, m, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config != m.Config || !sameBits(back.Weights, m.Weights) {
		t.Fatal("F32 export and import is not bit-exact")
	}
	if !slices.Equal(back.Tokenizer.Encode(trajectory), m.Tokenizer.Encode(trajectory)) {
		t.Fatal("imported tokenizer encodes differently")
	}
	var cfg map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	bos, _ := m.Tokenizer.SpecialID(tokenizer.BeginOfText)
	want := map[string]any{
		"model_type": "llama", "hidden_size": 32.0, "intermediate_size": 96.0, "num_hidden_layers": 2.0,
		"num_attention_heads": 4.0, "num_key_value_heads": 4.0, "vocab_size": float64(m.Config.Vocab),
		"max_position_embeddings": 256.0, "rope_theta": 10000.0, "rms_norm_eps": 1e-5, "hidden_act": "silu",
		"tie_word_embeddings": false, "bos_token_id": float64(bos), "torch_dtype": "float32",
	}
	for k, v := range want {
		if cfg[k] != v {
			t.Errorf("config.json %s = %v, want %v", k, cfg[k], v)
		}
	}
	if a, _ := cfg["architectures"].([]any); len(a) != 1 || a[0] != "LlamaForCausalLM" {
		t.Errorf("architectures = %v", cfg["architectures"])
	}
}

func TestExportHalfAndShards(t *testing.T) {
	m := testModel(t)
	for _, c := range []struct {
		d     DType
		shard int64
		round func(float32) float32
	}{
		{BF16, 0, func(f float32) float32 { return modelfile.BF16ToF32(modelfile.F32ToBF16(f)) }},
		{F16, 0, func(f float32) float32 { return F16ToF32(F32ToF16(f)) }},
		{F32, 20000, func(f float32) float32 { return f }},
		{BF16, 8000, func(f float32) float32 { return modelfile.BF16ToF32(modelfile.F32ToBF16(f)) }},
	} {
		dir := t.TempDir()
		if err := Export(dir, m, ExportOptions{DType: c.d, MaxShardBytes: c.shard}); err != nil {
			t.Fatal(err)
		}
		back, err := Import(dir)
		if err != nil {
			t.Fatalf("%s shard %d: %v", c.d, c.shard, err)
		}
		want := make([]float32, len(m.Weights))
		for i, f := range m.Weights {
			want[i] = c.round(f)
		}
		if !sameBits(back.Weights, want) {
			t.Fatalf("%s shard %d: imported weights are not the rounded weights", c.d, c.shard)
		}
		shards, _ := filepath.Glob(filepath.Join(dir, "model-*-of-*.safetensors"))
		if c.shard > 0 {
			if len(shards) < 2 {
				t.Fatalf("shard %d: %d shard files", c.shard, len(shards))
			}
			for _, s := range shards {
				st, _ := os.Stat(s)
				if big := st.Size() > c.shard+4096; big && len(mustRead(t, s).Tensors) > 1 {
					t.Errorf("%s has %d bytes, limit %d", s, st.Size(), c.shard)
				}
			}
		} else if len(shards) != 0 {
			t.Fatalf("unsharded export wrote shards %v", shards)
		}
	}
}

// TestModelFileRoundTrip goes model file -> HF folder -> model file, as
// `ndb export` then `ndb import` do, and gets the same bits back.
func TestModelFileRoundTrip(t *testing.T) {
	m := testModel(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.ndb"), filepath.Join(dir, "b.ndb")
	if err := modelfile.Save(first, m); err != nil {
		t.Fatal(err)
	}
	loaded, err := modelfile.Load(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := Export(filepath.Join(dir, "hf"), loaded, ExportOptions{MaxShardBytes: 30000}); err != nil {
		t.Fatal(err)
	}
	imported, err := Import(filepath.Join(dir, "hf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modelfile.Save(second, imported); err != nil {
		t.Fatal(err)
	}
	back, err := modelfile.Load(second)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config != m.Config || !sameBits(back.Weights, m.Weights) ||
		!slices.Equal(back.Tokenizer.Encode(trajectory), m.Tokenizer.Encode(trajectory)) {
		t.Fatal("model file -> HF -> model file changed the model")
	}
}

func mustRead(t *testing.T, path string) *SafetensorsFile {
	st, err := ReadSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestNumpyReference runs llama_forward.py (numpy, float64, no ndb code)
// over exported files and compares its logits with nn's forward pass on the
// imported model. Tolerance: |go - numpy| <= 1e-4 + 1e-4*|numpy| for every
// logit (float32 against float64 over two layers).
func TestNumpyReference(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available: %v", python, err)
	}
	m := testModel(t)
	tokens := m.Tokenizer.Encode(trajectory)[:60]
	tokPath := filepath.Join(t.TempDir(), "tokens.json")
	data, _ := json.Marshal(tokens)
	if err := os.WriteFile(tokPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []ExportOptions{{DType: F32}, {DType: BF16, MaxShardBytes: 10000}, {DType: F16}} {
		dir := t.TempDir()
		if err := Export(dir, m, opts); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "logits.f64")
		cmd := exec.Command(python, "testdata/llama_forward.py", dir, tokPath, out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: llama_forward.py: %v\n%s", opts.DType, err, msg)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		imported, err := Import(dir)
		if err != nil {
			t.Fatal(err)
		}
		net, err := imported.Network()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := net.Forward(tokens, 1, len(tokens), nil); err != nil {
			t.Fatal(err)
		}
		got := net.Logits()
		V := m.Config.Vocab
		if len(raw) != 8*len(tokens)*V || len(got) < len(tokens)*V {
			t.Fatalf("%s: numpy gave %d bytes, Go %d logits, want %d x %d", opts.DType, len(raw), len(got), len(tokens), V)
		}
		worst := 0.0
		for i := range len(tokens) * V {
			ref := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			diff := math.Abs(float64(got[i]) - ref)
			worst = max(worst, diff)
			if diff > 1e-4+1e-4*math.Abs(ref) {
				t.Fatalf("%s: logit %d (token %d, id %d): Go %v, numpy %v", opts.DType, i, i/V, i%V, got[i], ref)
			}
		}
		t.Logf("%s: max |Go - numpy| = %.2g over %d logits", opts.DType, worst, len(tokens)*V)
	}
}

func TestImportErrors(t *testing.T) {
	m := testModel(t)
	fresh := func() string {
		dir := t.TempDir()
		if err := Export(dir, m, ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	editConfig := func(dir, key string, value any) {
		path := filepath.Join(dir, ConfigFile)
		var cfg map[string]any
		data, _ := os.ReadFile(path)
		json.Unmarshal(data, &cfg)
		cfg[key] = value
		data, _ = json.Marshal(cfg)
		os.WriteFile(path, data, 0o644)
	}
	rewrite := func(dir string, edit func([]Tensor) []Tensor, d DType) {
		path := filepath.Join(dir, WeightsFile)
		st := mustRead(t, path)
		if err := WriteSafetensors(path, edit(st.Tensors), d, nil); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		break_ func(dir string)
		msg    string
	}{
		{"gqa", func(d string) { editConfig(d, "num_key_value_heads", 2) }, "grouped-query"},
		{"gelu", func(d string) { editConfig(d, "hidden_act", "gelu") }, "hidden_act"},
		{"not llama", func(d string) { editConfig(d, "model_type", "gpt2") }, "model_type"},
		{"rope scaling", func(d string) { editConfig(d, "rope_scaling", map[string]any{"type": "linear", "factor": 2}) }, "rope_scaling"},
		{"wider config", func(d string) { editConfig(d, "hidden_size", 64); editConfig(d, "head_dim", 16) }, "shape"},
		{"missing tensor", func(d string) {
			rewrite(d, func(ts []Tensor) []Tensor { return ts[1:] }, F32)
		}, "missing"},
		{"extra tensor", func(d string) {
			rewrite(d, func(ts []Tensor) []Tensor {
				return append(ts, Tensor{"model.layers.9.x.weight", []int{1}, []float32{1}})
			}, F32)
		}, "does not have"},
		{"transposed", func(d string) {
			rewrite(d, func(ts []Tensor) []Tensor {
				for i := range ts {
					if strings.HasSuffix(ts[i].Name, "gate_proj.weight") {
						ts[i].Shape = []int{ts[i].Shape[1], ts[i].Shape[0]}
					}
				}
				return ts
			}, F32)
		}, "shape"},
		{"truncated", func(d string) {
			p := filepath.Join(d, WeightsFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-10], 0o644)
		}, "outside"},
		{"f64", func(d string) {
			p := filepath.Join(d, WeightsFile)
			data, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(data), `"F32"`, `"F64"`, 1)), 0o644)
		}, "dtype"},
		{"no tokenizer", func(d string) { os.Remove(filepath.Join(d, TokenizerFile)) }, "tokenizer.json"},
	}
	for _, c := range cases {
		dir := fresh()
		c.break_(dir)
		if _, err := Import(dir); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Import error %v, want one mentioning %q", c.name, err, c.msg)
		}
	}
	// The rotary buffers older transformers saved are ignored.
	dir0 := fresh()
	rewrite(dir0, func(ts []Tensor) []Tensor {
		return append(ts, Tensor{"model.layers.0.self_attn.rotary_emb.inv_freq", []int{4}, []float32{1, 0.1, 0.01, 0.001}})
	}, F32)
	if back, err := Import(dir0); err != nil || !sameBits(back.Weights, m.Weights) {
		t.Errorf("import with a rotary inv_freq buffer: %v", err)
	}
	// Tied embeddings without lm_head import as a copy of embed_tokens.
	dir := fresh()
	editConfig(dir, "tie_word_embeddings", true)
	rewrite(dir, func(ts []Tensor) []Tensor { return ts[:len(ts)-1] }, F32)
	back, err := Import(dir)
	if err != nil {
		t.Fatal(err)
	}
	lay := back.Config.Layout()
	embed, head := lay[0], lay[len(lay)-1]
	if !sameBits(back.Weights[head.Offset:head.Offset+head.Size], m.Weights[embed.Offset:embed.Offset+embed.Size]) {
		t.Error("tied lm_head is not a copy of embed_tokens")
	}
}

func TestHalfConversions(t *testing.T) {
	// Every half widens and narrows back to itself (NaNs stay NaN).
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if math.IsNaN(float64(f)) {
			if g := F16ToF32(F32ToF16(f)); !math.IsNaN(float64(g)) {
				t.Fatalf("NaN %#04x came back as %v", h, g)
			}
			continue
		}
		if back := F32ToF16(f); back != uint16(h) {
			t.Fatalf("half %#04x -> %v -> %#04x", h, f, back)
		}
		if b := uint16(h); modelfile.F32ToBF16(modelfile.BF16ToF32(b)) != b && !math.IsNaN(float64(modelfile.BF16ToF32(b))) {
			t.Fatalf("bf16 %#04x does not round-trip", h)
		}
	}
	// Rounding picks the nearest representable value, ties to even.
	rng := rand.New(rand.NewPCG(1, 1))
	check := func(name string, f float32, got uint16, widen func(uint16) float32) {
		g := float64(widen(got))
		if math.IsInf(g, 0) { // IEEE: overflow from 65520 on (half's max is 65504)
			if math.Abs(float64(f)) < 65520 {
				t.Fatalf("%s(%v) overflowed", name, f)
			}
			return
		}
		for _, n := range []uint16{got - 1, got + 1} {
			o := float64(widen(n))
			if math.IsNaN(o) || math.IsInf(o, 0) || math.Signbit(o) != math.Signbit(g) {
				continue
			}
			dg, do := math.Abs(g-float64(f)), math.Abs(o-float64(f))
			if do < dg || (do == dg && got&1 == 1) {
				t.Fatalf("%s(%v) = %v, but %v is nearer (or even)", name, f, g, o)
			}
		}
	}
	for range 200000 {
		f := float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(50)-30))
		check("F32ToF16", f, F32ToF16(f), F16ToF32)
		check("F32ToBF16", f, modelfile.F32ToBF16(f), modelfile.BF16ToF32)
	}
	if F32ToF16(70000) != 0x7c00 || F32ToF16(-70000) != 0xfc00 || F32ToF16(65504) != 0x7bff {
		t.Error("half overflow is wrong")
	}
	if F16ToF32(1) != float32(math.Ldexp(1, -24)) || F32ToF16(float32(math.Ldexp(1, -25))) != 0 {
		t.Error("half subnormals are wrong")
	}
}

// FuzzParseSafetensors: any bytes give tensors or an error, never a panic,
// and tensors always fit their shapes.
func FuzzParseSafetensors(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "x.safetensors")
	for _, d := range []DType{F32, BF16, F16} {
		if err := WriteSafetensors(path, []Tensor{{"a", []int{2, 3}, []float32{1, 2, 3, 4, 5, 6}}, {"b", []int{0}, nil}}, d, map[string]string{"format": "pt"}); err != nil {
			f.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\",\"shape\":[9223372036854775807,2],\"data_offsets\":[0,8]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseSafetensors(data, "fuzz")
		if err != nil {
			return
		}
		for _, ts := range st.Tensors {
			n := 1
			for _, s := range ts.Shape {
				n *= s
			}
			if n != len(ts.Data) {
				t.Fatalf("tensor %s: shape %v but %d values", ts.Name, ts.Shape, len(ts.Data))
			}
		}
	})
}
