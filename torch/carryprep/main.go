// Command carryprep writes what torch/gpu_recipe.sh carries to the GPU
// machine besides the ndb binary: the tokenizer in ndb's format (for `ndb
// pack` there) and an HF template folder with the same tokenizer
// (tokenizer.json and friends, config.json for the special ids) from which
// the PyTorch trainer copies the tokenizer files into its export.
//
//	go run ./torch/carryprep (--model M.model | --tokenizer TOK.json) --out DIR
//
// It writes DIR/tokenizer.ndb.json and DIR/template/.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"ndb/model/hf"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

func main() {
	model := flag.String("model", "", "ndb model file whose tokenizer to use")
	tokPath := flag.String("tokenizer", "", "ndb tokenizer file")
	out := flag.String("out", "", "folder to write")
	flag.Parse()
	if err := run(*model, *tokPath, *out); err != nil {
		fmt.Fprintln(os.Stderr, "carryprep:", err)
		os.Exit(1)
	}
}

func run(model, tokPath, out string) error {
	if out == "" || (model == "") == (tokPath == "") {
		return fmt.Errorf("need --out and one of --model, --tokenizer")
	}
	var tok *tokenizer.Tokenizer
	var err error
	if model != "" {
		var m *modelfile.Model
		if m, err = modelfile.Load(model); err == nil {
			tok = m.Tokenizer
		}
	} else {
		tok, err = tokenizer.Load(tokPath)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := tok.Save(filepath.Join(out, "tokenizer.ndb.json")); err != nil {
		return err
	}
	// The template's weights are a throwaway tiny model: only the tokenizer
	// files and the special ids in config.json are used.
	cfg := nn.Configs["tiny"]
	cfg.Vocab = tok.VocabSize()
	tmpl := filepath.Join(out, "template")
	m := &modelfile.Model{Config: cfg, Tokenizer: tok, Weights: make([]float32, cfg.NumParams())}
	if err := hf.Export(tmpl, m, hf.ExportOptions{}); err != nil {
		return err
	}
	return os.Remove(filepath.Join(tmpl, hf.WeightsFile))
}
