package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/engine"
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
	defer resetFlags(debugCmd)
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
	b, err := engine.NewNeural(tracer.Program{Source: "x = 1\n"}, engine.PredictorFunc(func(context.Context, string, int, engine.Draw) ([]string, error) {
		return nil, errors.New("no prediction in this test")
	}), engine.Draw{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := repl.New(s, repl.Options{Extra: neuralCommands(s)}).Exec(context.Background(), "help")
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

// runDebugTerminal runs `ndb debug --engine real ARGS` (the terminal, not
// batch) with commands on stdin.
func runDebugTerminal(t *testing.T, commands string, args ...string) (string, error) {
	t.Helper()
	return runDebugWith(t, commands, append([]string{"debug", "--engine", "real"}, args...))
}

// TestDebugLive: `ndb debug --engine real` is a live session: the first
// stop comes before the rest of the program runs, --timeout interrupts a
// command that runs too long (the loop's counter is then readable), a long
// loop runs to its end with the flags it needs, the output is streamed
// once, and --timeout/--max-events are checked.
func TestDebugLive(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	slow := write("slow.py", "x = 1\nimport time\ntime.sleep(12)\nprint('done')\n")
	endless := write("endless.py", "i = 0\nwhile True:\n    i += 1\n")
	long := write("long.py", "total = 0\nfor i in range(200000):\n    total += i\nprint(total)\n")
	printer := write("printer.py", "print('hello')\nx = 1\nprint('bye')\n")

	// x unbound and no "done": the first stop came before the rest ran (a
	// run to the end first would take the sleep's 12 s)
	start := time.Now()
	out, err := runDebugBatch(t, "p x\nq\n", slow)
	if took := time.Since(start); err != nil || took > 11*time.Second || !strings.HasPrefix(out, `{"event":"line","lineno":1,`) ||
		!strings.Contains(out, `{"error":"NameError: name 'x' is not defined"}`) || strings.Contains(out, "done") {
		t.Errorf("first stop of a program that sleeps 12 s: %v after %v:\n%s", err, took, out)
	}

	out, err = runDebugBatch(t, "c\np i > 0\nc\n", "--timeout", "1s", endless)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 4 || !strings.Contains(lines[1], `"interrupted":"timeout"`) || !strings.Contains(lines[1], `"function":"<module>"`) ||
		lines[2] != `{"message":"True","name":"i > 0","value":"True"}` ||
		!strings.Contains(lines[3], `"interrupted":"timeout"`) {
		t.Errorf("endless loop with --timeout 1s: %v\n%s", err, out)
	}

	start = time.Now()
	out, err = runDebugBatch(t, "c\n", "--timeout", "0", long)
	if want := `{"event":"exit","exit":"normal","output":"19999900000\n"}`; err != nil || !strings.Contains(out, want) {
		t.Errorf("200,000 iterations with --timeout 0: %v after %v, want %s:\n%s", err, time.Since(start), want, tail(out))
	}
	t.Logf("200,000 iterations continued to the end in %v", time.Since(start))

	out, err = runDebugTerminal(t, "n\nc\n", printer)
	if err != nil || strings.Count(out, "hello\n") != 1 || strings.Count(out, "bye\n") != 1 || strings.Contains(out, "program output") ||
		!strings.Contains(out, "(ndb) hello\n> printer.py(2)<module>()") {
		t.Errorf("streamed output: %v\n%s", err, out)
	}

	// A --call is checked by two steps, then the program runs anew: it
	// waits at the first stop, and its module's output is shown once.
	calls := write("calls.py", "print('module')\ndef f(x):\n    return x + 1\n")
	out, err = runDebugBatch(t, "p 6 * 7\nc\n", "--call", "f(1)", calls)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.Contains(lines[0], `"function":"main"`) || !strings.Contains(lines[0], `"output":"module\n"`) ||
		lines[1] != `{"message":"42","name":"6 * 7","value":"42"}` || strings.Contains(lines[2], "module") {
		t.Errorf("--call's first stop: %v\n%s", err, out)
	}

	for _, bad := range [][]string{{"--timeout", "-1s"}, {"--max-events", "-1"}} {
		if _, err := runDebugBatch(t, "", append(bad, printer)...); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	// with a breakpoint `c` records (without one it runs untraced and
	// counts no event: docs/debugger.md, "Long runs")
	out, err = runDebugBatch(t, "b 4\nc\n", "--max-events", "50", long)
	if err != nil || !strings.Contains(out, `{"event":"exit","exit":"never","arg":"events"`) {
		t.Errorf("--max-events 50: %v\n%s", err, out)
	}
}
