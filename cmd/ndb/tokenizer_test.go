package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/model/modelfile"
	"ndb/model/tokenizer"
)

// TestPretokenizerFlag: `tokenizer train` and `train` take --pretokenizer
// ndb|llama3, the tokenizer they write keeps it, and a bad name or a
// --pretokenizer for a tokenizer that is not trained here is an error.
func TestPretokenizerFlag(t *testing.T) {
	defer resetFlags(tokenizerTrainCmd)
	defer resetFlags(trainCmd)
	dir := t.TempDir()
	shards := filepath.Join(dir, "gen")
	os.MkdirAll(shards, 0o755)
	var lines []string
	for i := range 40 {
		text := fmt.Sprintf("<|begin_of_text|><|trace_context_start|>def f_%d(n):\n    return n * %d\n<|frame_sep|><|line_sep|>"+
			"<|arg_sep|>{\"n\": \"3\"}<|src_sep|>    return n<|action_sep|><|step_over|><|end_of_text|>", i%7, i)
		b, _ := json.Marshal(map[string]string{"text": text, "direction": "forward", "program_id": fmt.Sprintf("p%d/0", i)})
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(shards, "shard-00000.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	for _, pre := range []tokenizer.Pretokenizer{tokenizer.PretokenizerLlama3, tokenizer.PretokenizerNDB} {
		path := filepath.Join(dir, pre.String()+".json")
		out, err := runNDB(t, "tokenizer", "train", "--data", shards, "--vocab", "300", "--out", path, "--pretokenizer", pre.String())
		if err != nil {
			t.Fatalf("tokenizer train --pretokenizer %v: %v\n%s", pre, err, out)
		}
		if tok, err := tokenizer.Load(path); err != nil {
			t.Error(err)
		} else if tok.Pretokenizer() != pre {
			t.Errorf("tokenizer train --pretokenizer %v wrote a tokenizer with %v", pre, tok.Pretokenizer())
		}
	}
	if out, err := runNDB(t, "tokenizer", "train", "--data", shards, "--out", filepath.Join(dir, "x.json"), "--pretokenizer", "gpt2"); err == nil ||
		!strings.Contains(err.Error(), "ndb or llama3") {
		t.Errorf("--pretokenizer gpt2: %v\n%s", err, out)
	}

	model := filepath.Join(dir, "m.ndb")
	// cobra keeps a subcommand's context from an earlier Execute, which
	// another test may have canceled (mcp_test.go).
	trainCmd.SetContext(context.Background())
	if out, err := runNDB(t, "train", "--data", shards, "--out", model, "--config", "tiny", "--steps", "1", "--vocab", "300",
		"--pretokenizer", "llama3", "--quiet"); err != nil {
		t.Fatalf("train --pretokenizer llama3: %v\n%s", err, out)
	}
	if m, err := modelfile.Load(model); err != nil {
		t.Error(err)
	} else if m.Tokenizer.Pretokenizer() != tokenizer.PretokenizerLlama3 {
		t.Errorf("train --pretokenizer llama3 trained a tokenizer with %v", m.Tokenizer.Pretokenizer())
	}
	if _, err := runNDB(t, "train", "--data", shards, "--out", filepath.Join(dir, "m2.ndb"), "--tokenizer", filepath.Join(dir, "ndb.json"),
		"--pretokenizer", "llama3", "--quiet"); err == nil || !strings.Contains(err.Error(), "--pretokenizer is for a tokenizer trained here") {
		t.Errorf("train --tokenizer --pretokenizer: %v", err)
	}
}
