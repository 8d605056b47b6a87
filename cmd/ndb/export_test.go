package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/model/defaultmodel"
	"ndb/model/hf"
	"ndb/model/infer"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

func runNDB(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&out)
	rootCmd.SetArgs(args)
	defer func() { rootCmd.SetArgs(nil); rootCmd.SetOut(nil); rootCmd.SetErr(nil) }()
	err := rootCmd.Execute()
	return out.String(), err
}

// TestTokenizerExportImportCommands runs `ndb tokenizer train`, `tokenizer
// encode`, `export` (bf16, sharded) and `import` in-process.
func TestTokenizerExportImportCommands(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "gen")
	os.MkdirAll(shards, 0o755)
	var lines []string
	for i := range 50 {
		text := "<|begin_of_text|><|trace_context_start|>def f(n):\n    return n * " + strings.Repeat("7", i%5+1) +
			"\n<|frame_sep|><|line_sep|><|arg_sep|>{\"n\": \"3\"}<|src_sep|>    return n<|action_sep|><|step_over|>"
		b, _ := json.Marshal(map[string]string{"text": text})
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(shards, "shard-00000.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	tokPath := filepath.Join(dir, "tok.json")
	if out, err := runNDB(t, "tokenizer", "train", "--data", shards, "--vocab", "320", "--out", tokPath); err != nil {
		t.Fatalf("tokenizer train: %v\n%s", err, out)
	}
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runNDB(t, "tokenizer", "encode", "--tokenizer", tokPath, "--json", "<|frame_sep|>    return n")
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	if err := json.Unmarshal([]byte(out), &ids); err != nil || !slices.Equal(ids, tok.Encode("<|frame_sep|>    return n")) {
		t.Fatalf("tokenizer encode printed %q (%v)", out, err)
	}

	cfg := nn.Configs["tiny"]
	cfg.Vocab = tok.VocabSize()
	w := make([]float32, cfg.NumParams())
	for i := range w {
		w[i] = float32(math.Cos(float64(i))) / 4
	}
	model := filepath.Join(dir, "m.ndb")
	if err := modelfile.Save(model, &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: w}); err != nil {
		t.Fatal(err)
	}
	hfDir := filepath.Join(dir, "hf")
	if out, err := runNDB(t, "export", "--model", model, "--out", hfDir, "--dtype", "bf16", "--shard-mb", "0.05"); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if files, _ := filepath.Glob(filepath.Join(hfDir, "model-*.safetensors")); len(files) < 2 {
		t.Fatalf("export --shard-mb 0.05 wrote %d shards", len(files))
	}
	back := filepath.Join(dir, "back.ndb")
	if out, err := runNDB(t, "import", "--hf", hfDir, "--out", back); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	m, err := modelfile.Load(back)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range w {
		if m.Weights[i] != modelfile.BF16ToF32(modelfile.F32ToBF16(f)) {
			t.Fatalf("weight %d: %v after bf16 export and import, want %v rounded", i, m.Weights[i], f)
		}
	}
	if _, err := runNDB(t, "export", "--model", model, "--out", hfDir, "--dtype", "f64"); err == nil {
		t.Error("export accepted --dtype f64")
	}

	// import --dtype and convert store the weights smaller; convert drops
	// training state (a trained model's file) and refuses what it cannot do.
	t.Cleanup(func() {
		importFlags.dtype = "f32"
		convertFlags.model, convertFlags.out, convertFlags.dtype, convertFlags.toward, convertFlags.t = "", "", "", "", 0.5
	})
	q8 := filepath.Join(dir, "q8.ndb")
	if out, err := runNDB(t, "import", "--hf", hfDir, "--out", q8, "--dtype", "q8"); err != nil {
		t.Fatalf("import --dtype q8: %v\n%s", err, out)
	}
	if m, err := modelfile.Load(q8); err != nil || m.DType != modelfile.Q8 {
		t.Fatalf("import --dtype q8 wrote %v (%v)", m.DType, err)
	}
	trained := filepath.Join(dir, "trained.ndb")
	m.Train = &modelfile.TrainState{Step: 7, Floats: map[string][]float32{"adam_m": w}}
	if err := modelfile.Save(trained, m); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(dir, "half.ndb")
	out, err = runNDB(t, "convert", "--model", trained, "--out", half, "--dtype", "bf16")
	if err != nil || !strings.Contains(out, "dropping the training state of step 7") {
		t.Fatalf("convert --dtype bf16: %v\n%s", err, out)
	}
	h, err := modelfile.Load(half)
	if err != nil || h.DType != modelfile.BF16 || h.Train != nil || !slices.Equal(h.Weights, m.Weights) {
		t.Fatalf("convert wrote %v with state %v (%v); want the bf16 weights again without state", h.DType, h.Train, err)
	}
	// --toward moves the weights part of the way to a model trained on
	// from this one: (1-t)*model + t*toward, weight by weight.
	tuned := filepath.Join(dir, "tuned.ndb")
	m2 := *m
	m2.Train, m2.Weights = nil, make([]float32, len(w))
	for i := range m2.Weights {
		m2.Weights[i] = w[i] + 1
	}
	if err := modelfile.Save(tuned, &m2); err != nil {
		t.Fatal(err)
	}
	mix := filepath.Join(dir, "mix.ndb")
	if out, err := runNDB(t, "convert", "--model", half, "--toward", tuned, "--t", "0.25", "--out", mix); err != nil {
		t.Fatalf("convert --toward: %v\n%s", err, out)
	}
	x, err := modelfile.Load(mix)
	if err != nil || x.DType != modelfile.BF16 {
		t.Fatalf("convert --toward wrote %v (%v); want the model's bf16 kept", x.DType, err)
	}
	for i, v := range x.Weights {
		if want := modelfile.BF16ToF32(modelfile.F32ToBF16(h.Weights[i] + 0.25*(m2.Weights[i]-h.Weights[i]))); v != want {
			t.Fatalf("weight %d: %v, want %v (a quarter of the way from %v to %v)", i, v, want, h.Weights[i], m2.Weights[i])
		}
	}
	other := filepath.Join(dir, "other.ndb")
	m3 := m2
	m3.Config.Layers++
	m3.Weights = make([]float32, m3.Config.NumParams())
	if err := modelfile.Save(other, &m3); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{{"--dtype", "int4"}, {"--dtype", ""}, {"--dtype", "q8", "--out", ""},
		{"--toward", tuned, "--t", "1.5"}, {"--toward", other}, {"--dtype", "f32", "--t", "0.5"}} {
		args := append([]string{"convert", "--model", trained, "--out", filepath.Join(dir, "bad.ndb")}, bad...)
		if _, err := runNDB(t, args...); err == nil {
			t.Errorf("convert accepted %v", bad)
		}
		convertFlags.toward, convertFlags.t = "", 0.5
	}
}

// TestExportGGUFCommand: `ndb export --gguf` writes what hf.ExportGGUF
// writes, for --model and for the default model (no --model: $NDB_MODEL,
// else the embedded one); --out and --gguf together write both.
func TestExportGGUFCommand(t *testing.T) {
	dir := t.TempDir()
	tok, err := tokenizer.Train(slices.Values([]string{"def f(n):\n    return n * 7<|frame_sep|>"}), 300, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Configs["tiny"]
	cfg.Vocab = tok.VocabSize()
	w := make([]float32, cfg.NumParams())
	for i := range w {
		w[i] = float32(math.Sin(float64(i))) / 3
	}
	m := &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: w}
	model := filepath.Join(dir, "m.ndb")
	if err := modelfile.Save(model, m); err != nil {
		t.Fatal(err)
	}
	want := func(m *modelfile.Model, d hf.DType) []byte {
		p := filepath.Join(t.TempDir(), "want.gguf")
		if err := hf.ExportGGUF(p, m, hf.GGUFOptions{DType: d}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		return b
	}
	same := func(path string, wantBytes []byte) {
		t.Helper()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte("GGUF")) || !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: %d bytes differ from hf.ExportGGUF's %d", path, len(got), len(wantBytes))
		}
	}
	// Flags persist between in-process runs: reset them each time.
	reset := func() {
		exportFlags.model, exportFlags.out, exportFlags.gguf, exportFlags.dtype, exportFlags.shardMB = "", "", "", "f32", 0
	}

	reset()
	g := filepath.Join(dir, "m.gguf")
	if out, err := runNDB(t, "export", "--model", model, "--gguf", g, "--dtype", "f16"); err != nil {
		t.Fatalf("export --gguf: %v\n%s", err, out)
	}
	same(g, want(m, hf.F16))

	reset()
	t.Setenv(infer.ModelEnv, model)
	hfDir := filepath.Join(dir, "hf")
	if out, err := runNDB(t, "export", "--gguf", g, "--out", hfDir); err != nil {
		t.Fatalf("export with $NDB_MODEL: %v\n%s", err, out)
	}
	same(g, want(m, hf.F32))
	if _, err := os.Stat(filepath.Join(hfDir, hf.WeightsFile)); err != nil {
		t.Errorf("--out with --gguf: %v", err)
	}

	reset()
	if _, err := runNDB(t, "export", "--model", model); err == nil || !strings.Contains(err.Error(), "--gguf") {
		t.Errorf("export without --out or --gguf: %v", err)
	}

	if _, err := defaultmodel.Bytes(); err != nil {
		t.Logf("no embedded model: %v", err)
		return
	}
	reset()
	t.Setenv(infer.ModelEnv, "")
	if out, err := runNDB(t, "export", "--gguf", g); err != nil {
		t.Fatalf("export --gguf of the embedded model: %v\n%s", err, out)
	}
	emb, err := loadModelFile("")
	if err != nil {
		t.Fatal(err)
	}
	same(g, want(emb, hf.F32))
}

// TestTokenIDsOf: --openai-token-ids encodes with the model file's
// tokenizer, and a missing model file is the request's error.
func TestTokenIDsOf(t *testing.T) {
	tok, err := tokenizer.Train(slices.Values([]string{"x = 1<|frame_sep|>"}), 300, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Configs["tiny"]
	cfg.Vocab = tok.VocabSize()
	model := filepath.Join(t.TempDir(), "m.ndb")
	if err := modelfile.Save(model, &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: make([]float32, cfg.NumParams())}); err != nil {
		t.Fatal(err)
	}
	const prompt = "<|begin_of_text|>x = 1<|frame_sep|>"
	ids, err := tokenIDsOf(model)(prompt)
	if err != nil || !slices.Equal(ids, tok.Encode(prompt)) {
		t.Errorf("ids %v (%v), want %v", ids, err, tok.Encode(prompt))
	}
	if _, err := tokenIDsOf(filepath.Join(t.TempDir(), "absent.ndb"))(prompt); err == nil {
		t.Error("a missing model file gave ids")
	}
}
