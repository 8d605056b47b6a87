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

	"ndb/model/hf"
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
		if m.Weights[i] != hf.BF16ToF32(hf.F32ToBF16(f)) {
			t.Fatalf("weight %d: %v after bf16 export and import, want %v rounded", i, m.Weights[i], f)
		}
	}
	if _, err := runNDB(t, "export", "--model", model, "--out", hfDir, "--dtype", "f64"); err == nil {
		t.Error("export accepted --dtype f64")
	}
}
