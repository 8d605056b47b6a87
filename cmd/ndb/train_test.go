package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainRefusesUnknownConfigFirst: an unknown --config is an error
// before a tokenizer is trained or a byte packed (it used to surface
// after both, leaving MODEL.data behind).
func TestTrainRefusesUnknownConfigFirst(t *testing.T) {
	dir := t.TempDir()
	shard := `{"text":"<|frame_sep|>x = 1","direction":"forward","program_id":"p/0"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "shard-00000.jsonl"), []byte(shard), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m.model")
	rootCmd.SetArgs([]string{"train", "--data", dir, "--out", out, "--config", "nope", "--quiet"})
	defer func() {
		rootCmd.SetArgs(nil)
		trainCmd.Flags().Set("config", "tiny")
	}()
	err := rootCmd.Execute()
	if err == nil || !strings.Contains(err.Error(), `unknown --config "nope"`) {
		t.Fatalf("error %v, want unknown --config", err)
	}
	if left, _ := filepath.Glob(out + "*"); len(left) > 0 {
		t.Errorf("a refused run left %v", left)
	}
}
