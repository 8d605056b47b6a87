package hf

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGoldenFiles pins the exported text files and the safetensors header of
// a fixed small model; run with -update after an intended format change and
// review the diff.
func TestGoldenFiles(t *testing.T) {
	tok, err := tokenizer.Train(slices.Values([]string{trajectory}), 256+len(tokenizer.SpecialTokens)+12, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Config{Dim: 8, HiddenDim: 16, Layers: 1, Heads: 2, Vocab: tok.VocabSize(), MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	w := make([]float32, cfg.NumParams())
	for i := range w {
		w[i] = float32(i%7) / 8
	}
	dir := t.TempDir()
	if err := Export(dir, &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: w}, ExportOptions{DType: BF16}); err != nil {
		t.Fatal(err)
	}
	st, err := os.ReadFile(filepath.Join(dir, WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(st)
	files := map[string][]byte{"safetensors_header.json": append(bytes.TrimRight(st[8:8+n], " "), '\n')}
	for _, name := range []string{ConfigFile, TokenizerFile, TokenizerConfigFile, SpecialTokensFile, GenerationFile} {
		if files[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for name, got := range files {
		path := filepath.Join("testdata", "golden", name)
		if *update {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run Golden -update ./model/hf)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update if the change is intended)\n got: %.300s", name, path, got)
		}
	}
}
