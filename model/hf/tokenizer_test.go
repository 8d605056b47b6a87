package hf

import (
	"encoding/json"
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

// tokenizerTexts are hard cases for a tokenizer.json reader.
var tokenizerTexts = []string{
	trajectory,
	strings.ReplaceAll(trajectory, "    ", "\t"),
	"x =  42\r\n\r\n  y=1234567 + 0.5e-3\n\n\n    \n",
	"café naïve ½ ² Ⅻ 日本語 🙂🙂 \u00a0nbsp \u2003em\u3000ideo \x1cFS",
	"<|frame_sep|><|frame_sep|>text<|unknown|><<|src_sep|>|>",
	`{"s": "'berry'", "n": "3", "..": ".."}`,
	"def   f(a_b, _c9, __init__):\n\treturn a_b**2 // _c9 != __init__",
	"   trailing spaces   ",
	"don't 'S 'Re 'LL 'ſ x's\n\n    y  \n\t z",
	"",
}

// exportTokenizer trains a small tokenizer with pre-tokenizer pre on
// tokenizerTexts and exports a model with it, returning the tokenizer and
// the folder.
func exportTokenizer(t *testing.T, pre tokenizer.Pretokenizer) (*tokenizer.Tokenizer, string) {
	t.Helper()
	tok, err := tokenizer.TrainWith(slices.Values(append(slices.Clone(tokenizerTexts), trajectory, trajectory)), 400, tokenizer.SpecialTokens, pre)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Config{Dim: 8, HiddenDim: 16, Layers: 1, Heads: 2, Vocab: tok.VocabSize(), MaxSeq: 64, RopeTheta: 10000, NormEps: 1e-5}
	dir := t.TempDir()
	if err := Export(dir, &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: make([]float32, cfg.NumParams())}, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	return tok, dir
}

// TestTokenizersJS checks the exported tokenizer.json with Tokenizers.js
// (npm @huggingface/tokenizers, Hugging Face's own JavaScript port). It runs
// when NDB_TOKENIZERS_JS names the installed package folder:
//
//	npm install --prefix /tmp/tjs @huggingface/tokenizers@0.2.0
//	NDB_TOKENIZERS_JS=/tmp/tjs/node_modules/@huggingface/tokenizers go test -run TokenizersJS ./model/hf
func TestTokenizersJS(t *testing.T) {
	module := os.Getenv("NDB_TOKENIZERS_JS")
	if module == "" {
		t.Skip("set NDB_TOKENIZERS_JS to the @huggingface/tokenizers package folder")
	}
	for _, pre := range []tokenizer.Pretokenizer{tokenizer.PretokenizerNDB, tokenizer.PretokenizerLlama3} {
		tok, dir := exportTokenizer(t, pre)
		textsPath, outPath := filepath.Join(dir, "texts.json"), filepath.Join(dir, "ids.json")
		data, _ := json.Marshal(tokenizerTexts)
		os.WriteFile(textsPath, data, 0o644)
		if msg, err := exec.Command("node", "testdata/tokenizers_js.mjs", module, dir, textsPath, outPath).CombinedOutput(); err != nil {
			t.Fatalf("%v: tokenizers_js.mjs: %v\n%s", pre, err, msg)
		}
		var got []struct {
			IDs     []int32 `json:"ids"`
			Decoded string  `json:"decoded"`
		}
		data, _ = os.ReadFile(outPath)
		if err := json.Unmarshal(data, &got); err != nil || len(got) != len(tokenizerTexts) {
			t.Fatalf("%v: tokenizers_js.mjs output: %v (%d results)", pre, err, len(got))
		}
		for i, text := range tokenizerTexts {
			if want := tok.Encode(text); !slices.Equal(got[i].IDs, want) {
				t.Errorf("%v: text %q:\n Go              %v\n Tokenizers.js   %v", pre, text, want, got[i].IDs)
			}
			if got[i].Decoded != text {
				t.Errorf("%v: Tokenizers.js decodes %q as %q", pre, text, got[i].Decoded)
			}
		}
	}
}

// TestTokenizerJSONPython encodes texts with testdata/hf_tokenizer.py, a
// plain-Python reading of the exported tokenizer.json (the rules Hugging
// Face's `tokenizers` applies to it), and checks that the ids are Go's.
func TestTokenizerJSONPython(t *testing.T) {
	python := "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import json, re, unicodedata").Run(); err != nil {
		t.Skipf("%s is not available: %v", python, err)
	}
	texts := tokenizerTexts
	for _, pre := range []tokenizer.Pretokenizer{tokenizer.PretokenizerNDB, tokenizer.PretokenizerLlama3} {
		tok, dir := exportTokenizer(t, pre)
		tokPath, textsPath, outPath := filepath.Join(dir, "tokenizer.json"), filepath.Join(dir, "texts.json"), filepath.Join(dir, "ids.json")
		data, _ := json.Marshal(texts)
		os.WriteFile(textsPath, data, 0o644)
		if msg, err := exec.Command(python, "testdata/hf_tokenizer.py", tokPath, textsPath, outPath).CombinedOutput(); err != nil {
			t.Fatalf("%v: hf_tokenizer.py: %v\n%s", pre, err, msg)
		}
		var want [][]int32
		data, _ = os.ReadFile(outPath)
		if err := json.Unmarshal(data, &want); err != nil || len(want) != len(texts) {
			t.Fatalf("%v: hf_tokenizer.py output: %v (%d lists)", pre, err, len(want))
		}
		for i, text := range texts {
			if got := tok.Encode(text); !slices.Equal(got, want[i]) {
				t.Errorf("%v: text %q:\n Go     %v\n Python %v", pre, text, got, want[i])
			}
		}
	}
}
