package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

// TestModelEngineRefusesWhatCannotRun: the model engine refuses a program
// that does not compile and a call of a name the program does not define,
// with the exception the real engine ends the same program with (its exit's
// arg, byte for byte); programs that can run open.
func TestModelEngineRefusesWhatCannotRun(t *testing.T) {
	if _, err := tracer.ResolvePython("python3"); err != nil {
		t.Skipf("no python3: %v", err)
	}
	const ok = "import os.path as osp\nfrom math import sqrt\nN = 3\ndef f(x):\n    return x + 1\n\nclass C:\n    def m(self, y):\n        return y\n\nfor k in range(2):\n    pass\nif N:\n    g2 = f\n"
	for _, c := range []struct {
		name, source, call string
		reason             string // "" = opens
		exception          string
	}{
		{"syntax error", "def f(x):\n    return x +\n", "", "the program does not compile",
			`SyntaxError('invalid syntax', ('<program>', 2, 15, '    return x +\n', 2, 15))`},
		{"syntax error with a call", "def f(x):\n    return x +\n", "f(1)", "the program does not compile",
			`SyntaxError('invalid syntax', ('<program>', 2, 15, '    return x +\n', 2, 15))`},
		{"call does not compile", ok, "f(1", "the call f(1 does not compile",
			`SyntaxError("'(' was never closed", ('<call>', 1, 2, 'f(1', 1, 0))`},
		{"undefined function", ok, "g(1)", "the call g(1) uses g, which the program does not define",
			`NameError("name 'g' is not defined")`},
		{"method on an undefined class", ok, "D(1).m(2)", "the call D(1).m(2) uses D", `NameError("name 'D' is not defined")`},
		{"undefined argument", ok, "f(y)", "the call f(y) uses y", `NameError("name 'y' is not defined")`},
		{"defined function", ok, "f(1)", "", ""},
		{"method of a defined class", ok, "C().m(2)", "", ""},
		{"builtins and defined names", ok, "len([f(N), osp.sep, sqrt(4), g2(k)])", "", ""},
		{"comprehension variables are bound inside", ok, "[f(i) for i in range(N)]", "", ""},
		{"a star import may define anything", "from math import *\n", "floor(2.5)", "", ""},
		{"script", ok, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			p := Program{Path: "prog.py", Source: c.source, Call: c.call}
			e := NewNeuralEngine(Model, scripted(), Draw{}, false)
			_, err := e.Open(ctx, p)
			var re *RefusedError
			switch {
			case c.reason == "" && err != nil:
				t.Fatalf("refused a program that runs: %v", err)
			case c.reason == "":
				return
			case !errors.As(err, &re):
				t.Fatalf("err = %v, want a *RefusedError", err)
			case !strings.HasPrefix(re.Reason, c.reason) || re.Exception != c.exception:
				t.Fatalf("refused with %q / %q, want %q / %q", re.Reason, re.Exception, c.reason, c.exception)
			case err.Error() != re.Reason+": "+re.Exception:
				t.Fatalf("message %q", err)
			}
			// The real engine ends the same program with the same exception.
			rb, err := testReal(t).Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			s, err := debugger.NewSession(ctx, rb)
			if err != nil {
				t.Fatal(err)
			}
			st := s.Current()
			for !st.IsExit() {
				if st, err = s.Do(ctx, debugger.Command{Action: debugger.Continue}); err != nil {
					t.Fatal(err)
				}
			}
			if st.Exit != tracer.ExitError || st.Arg != re.Exception {
				t.Fatalf("real engine: exit %s %q, model engine refused with %q", st.Exit, st.Arg, re.Exception)
			}
		})
	}
}
