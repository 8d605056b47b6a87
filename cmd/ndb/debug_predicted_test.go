package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/engine"
	"ndb/engine/enginetest"
	"ndb/repl"
	"ndb/tracer"
)

// TestDebugModelEngineMarksAndRefuses: `ndb debug --engine model --batch`
// marks every stop predicted (with a confidence after the start), and
// fails (a non-zero exit) for a program that does not compile and for a
// call of a function the program does not define, naming the exception
// the real engine would end with.
func TestDebugModelEngineMarksAndRefuses(t *testing.T) {
	if !engine.HaveDefaultModel() {
		t.Skip("no default model")
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "prog.py")
	bad := filepath.Join(dir, "bad.py")
	os.WriteFile(good, []byte("def f(n):\n    m = n * 2\n    return m\n"), 0o644)
	os.WriteFile(bad, []byte("def f(n):\n    return n +\n"), 0o644)
	defer rootCmd.SetArgs(nil)
	defer debugCmd.Flags().Set("call", "")
	run := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		rootCmd.SetIn(strings.NewReader(stdin))
		rootCmd.SetOut(&out)
		rootCmd.SetArgs(append([]string{"debug", "--engine", "model", "--batch"}, args...))
		err := rootCmd.Execute()
		return out.String(), err
	}
	out, err := run("s\ns\n", "--call", "f(21)", good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 lines, got:\n%s", out)
	}
	for i, line := range lines {
		var m struct {
			Predicted  bool
			Confidence *struct{ Mean, Min float64 }
			Error      string
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Error != "":
			t.Fatalf("line %d: %s", i, line)
		case !m.Predicted:
			t.Errorf("line %d lacks \"predicted\": true: %s", i, line)
		case i > 0 && (m.Confidence == nil || m.Confidence.Min <= 0 || m.Confidence.Min > m.Confidence.Mean || m.Confidence.Mean > 1):
			t.Errorf("line %d: bad confidence: %s", i, line)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--call", "", bad}, `the program does not compile: SyntaxError('invalid syntax', ('` + bad + `', 2, 15, '    return n +\n', 2, 15))`},
		{[]string{"--call", "g(1)", good}, `the call g(1) uses g, which the program does not define: NameError("name 'g' is not defined")`},
		{[]string{"--call", "D(1).m(2)", good}, `NameError("name 'D' is not defined")`},
	} {
		out, err := run("s\n", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		if out != "" {
			t.Errorf("%v: a refused program wrote %q", c.args, out)
		}
	}
}

// TestTerminalEvaluatesOverPredictedValues: the terminal of a model
// engine's session, opened as ndb debug opens it (the registry, whose real
// engine evaluates), answers p EXPR over the predicted values, refuses a
// statement, and runs the session's neural commands (set, back).
func TestTerminalEvaluatesOverPredictedValues(t *testing.T) {
	model := enginetest.Fixed{Text: `<|line_sep|><|arg_sep|>{"s": "'ab'", "x": "'cd'", "n": "3"}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
		Probs: []float64{1}}
	reg := engine.NewRegistry(engine.Options{Predictor: model, Python: "python3", Workers: 1})
	defer reg.Close()
	ctx := context.Background()
	s, err := reg.Open(ctx, "model", "", tracer.Program{Path: "prog.py", Source: "def f(s, n):\n    return s * n\n", Call: "f('ab', 3)"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	term := repl.New(s, repl.Options{Engine: s.Engine(), Extra: neuralCommands(s)})
	for _, c := range []struct{ line, want, err string }{
		{"s", "", ""}, // step into main's line: the fixed prediction
		{"p s + x", "'abcd'", ""},
		{"p n * 2", "6", ""},
		{"p s + n", "", "TypeError"},
		{"!s = 1", "", "cannot run"},
		{"set n = 4", "n = 4", ""},
		{"p n * 2", "8", ""},
		{"back", "undid the last step", ""},
	} {
		res, err := term.Exec(ctx, c.line)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.line, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %+v %v, want an error with %q", c.line, res, err, c.err)
		case c.want != "" && res.Message != c.want:
			t.Errorf("%s: %q, want %q", c.line, res.Message, c.want)
		}
	}
}
