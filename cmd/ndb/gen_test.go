package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGenRefusesBadFlags: out-of-range flags are errors before any data is
// loaded or written (--inverse 2, --per-trace 0 and --max-steps 0 used to
// run: the probability was clamped by chance, the zeros replaced by
// defaults or giving empty trajectories).
func TestGenRefusesBadFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "gen")
	good := genFlags{source: "synthetic", out: out, shard: "0/1", n: 10, workers: 1, perTrace: 16, shardUnits: 256,
		maxSteps: 64, maxChars: 12000, maxEvents: 1000, reprLimit: 100, inverse: 0.5, deep: 0.2,
		timeout: time.Second, memoryMB: 512, quiet: true}
	if err := good.check(); err != nil {
		t.Fatalf("good flags refused: %v", err)
	}
	cases := map[string]func(*genFlags){
		"--inverse":    func(f *genFlags) { f.inverse = 2 },
		"--deep":       func(f *genFlags) { f.deep = -0.1 },
		"--unwrap":     func(f *genFlags) { f.unwrap = 1.5 },
		"--per-trace":  func(f *genFlags) { f.perTrace = 0 },
		"--max-steps":  func(f *genFlags) { f.maxSteps = 0 },
		"--max-chars":  func(f *genFlags) { f.maxChars = -1 },
		"--max-events": func(f *genFlags) { f.maxEvents = 0 },
		"--memory-mb":  func(f *genFlags) { f.memoryMB = 0 },
		"--timeout":    func(f *genFlags) { f.timeout = 0 },
		"--shard":      func(f *genFlags) { f.shard = "3/2" },
	}
	for flag, spoil := range cases {
		f := good
		spoil(&f)
		f.dataDir = filepath.Join(t.TempDir(), "no-data") // never reached
		err := runGen(context.Background(), f)
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: error %v, want one naming the flag", flag, err)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused job created %s (%v)", out, err)
	}
}

// TestGenRealWorld runs `ndb gen --source realworld` on the dataset
// package's fixture folder laid out as the shared data: the kept files give
// trajectories, the failing and endless ones are skipped by reason.
func TestGenRealWorld(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "cruxeval.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fix, err := filepath.Abs(filepath.Join("..", "..", "dataset", "testdata", "realworld"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fix, filepath.Join(data, "realworld")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "gen")
	f := genFlags{source: "realworld", out: out, shard: "0/1", n: 36, workers: 1, perTrace: 4, shardUnits: 256,
		maxSteps: 64, maxChars: 12000, maxEvents: 2000, reprLimit: 100, inverse: 0.5, deep: 0.2,
		timeout: 5 * time.Second, memoryMB: 512, quiet: true, dataDir: data, python: "python3"}
	if err := runGen(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "shard-00000.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// 9 units of 4 trajectories; 3 skipped (script error, out of bounds, trace error)
	if len(lines) != 24 || !strings.Contains(lines[0], `"source":"realworld"`) {
		t.Errorf("%d trajectories; first %.200s", len(lines), lines[0])
	}
	meta, _ := os.ReadFile(filepath.Join(out, "shard-00000.meta.json"))
	var st struct{ Skipped map[string]int }
	if err := json.Unmarshal(meta, &st); err != nil {
		t.Fatal(err)
	}
	for _, why := range []string{"script-error", "out-of-bounds", "trace-error"} {
		if st.Skipped[why] != 1 {
			t.Errorf("skipped %v, want one %s", st.Skipped, why)
		}
	}
}
