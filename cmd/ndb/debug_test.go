package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDebugBatchCommand runs `ndb debug --batch` in-process: flags, the
// engine registry, the real engine and the batch loop.
func TestDebugBatchCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(path, []byte("def f(n):\n    m = n * 2\n    return m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rootCmd.SetIn(strings.NewReader("s\nn\nn\np m\nc\n"))
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"debug", "--engine", "real", "--batch", "--call", "f(21)", path})
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"event":"call","lineno":6,"function":"main","depth":0,"src":"def main():","locals":{}}`,
		`{"event":"line","lineno":7,"function":"main","depth":0,"src":"    return f(21)","locals":{}}`,
		`{"event":"return","lineno":7,"function":"main","depth":0,"src":"    return f(21)","locals":{},"arg":"42"}`,
		`{"event":"exit","exit":"normal"}`,
		`{"error":"the program is not running"}`,
		`{"error":"the program has exited; only reverse commands move from here"}`,
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), strings.Join(want, "\n"))
	}
	rootCmd.SetArgs([]string{"debug", "--engine", "nope", path})
	if err := rootCmd.Execute(); err == nil || !strings.Contains(err.Error(), "unknown engine") {
		t.Errorf("unknown engine: %v", err)
	}
}
