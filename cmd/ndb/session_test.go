package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalSessionCommand runs `ndb eval session` in-process with the real
// engine measured against the real program: every session is right (the
// harness's own check), and the report folder holds the Markdown and JSON.
func TestEvalSessionCommand(t *testing.T) {
	cmd, _, err := rootCmd.Find([]string{"eval", "session"})
	if err != nil {
		t.Fatal(err)
	}
	defer resetFlags(cmd)
	rep := t.TempDir()
	if _, err := runNDB(t, "eval", "session", "--engine", "real", "--programs", filepath.Join("..", "..", "eval", "testdata", "progs"),
		"--sessions", "6", "--seed", "3", "--quiet", "--report", rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(rep, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out["sessions"] != 6.0 || out["all_right@10"] != 1.0 || out["engine"] != "real" {
		t.Errorf("report %s", b)
	}
	if md, err := os.ReadFile(filepath.Join(rep, "session.md")); err != nil || !strings.Contains(string(md), "first 10 right") {
		t.Errorf("session.md: %v\n%s", err, md)
	}
	resetFlags(cmd)
	for _, args := range [][]string{
		{"eval", "session", "--engine", "real"},
		{"eval", "session", "--engine", "real", "--programs", rep, "--sessions", "0"},
	} {
		if _, err := runNDB(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
		resetFlags(cmd)
	}
}
