package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/repl"
	"ndb/tracer"
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
	// A bad --color was ignored (the session started, uncoloured).
	rootCmd.SetArgs([]string{"debug", "--engine", "real", "--color", "bogus", path})
	if err := rootCmd.Execute(); err == nil || !strings.Contains(err.Error(), "--color") {
		t.Errorf("bad --color: %v", err)
	}
	debugCmd.Flags().Set("color", "auto")
}

// TestNeuralCommandHelpSummaries: the terminal's help lists each command
// with the first clause of its help; resample, set and verify all read
// "Model engines" once, so their one-line summaries must differ.
func TestNeuralCommandHelpSummaries(t *testing.T) {
	extra, closeExtra := neuralCommands("model", debugProgram{Python: "python3"})
	defer closeExtra()
	trace := &tracer.Trace{Source: "x = 1\n", Exit: tracer.Exit{Kind: tracer.ExitNormal},
		States: []tracer.State{{Event: tracer.EventLine, Lineno: 1, Function: "<module>", Src: "x = 1", Frame: 1}}}
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(trace))
	if err != nil {
		t.Fatal(err)
	}
	res, err := repl.New(s, repl.Options{Extra: extra}).Exec(context.Background(), "help")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(res.Message, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		fields := strings.SplitN(strings.TrimSpace(line), "  ", 2)
		if len(fields) != 2 {
			continue
		}
		name, summary := fields[0], strings.TrimSpace(fields[1])
		if prev, dup := seen[summary]; dup {
			t.Errorf("%q and %q have the same help summary %q", prev, name, summary)
		}
		seen[summary] = name
	}
	for _, c := range []string{"resample", "set NAME = VALUE", "verify"} {
		if !strings.Contains(res.Message, "  "+c) {
			t.Errorf("help lacks %q:\n%s", c, res.Message)
		}
	}
}
