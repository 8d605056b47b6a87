package debugger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"ndb/tracer"
)

const setVarProgram = `def f(n):
    m = n * 2
    return m

def main():
    k = 5
    return f(k)

main()
`

// TestSetVariableKeepsNameAndValueApart: on a live run SetVariable sets a
// local of the current frame or of a caller to the value of one
// expression; a value that holds a statement (`1; import os`, a second
// line) or a name that is not an identifier is refused, nothing runs, and
// the variable keeps its value. (Before, DAP ran NAME + " = " + VALUE as a
// statement, so `1; import os` imported os into the frame.)
func TestSetVariableKeepsNameAndValueApart(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	b := liveBackend(t, python, tracer.Program{Source: setVarProgram}, tracer.Limits{})
	defer b.Close()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for st := s.Current(); st.Function != "f" || st.Event != tracer.EventLine; {
		if st, err = s.Do(ctx, Command{Action: StepInto}); err != nil || st.IsExit() {
			t.Fatalf("never reached f's first line: %+v %v", st, err)
		}
	}
	value := func(level int, name string) string {
		t.Helper()
		res, err := s.Eval(ctx, level, name, tracer.EvalExpr)
		if err != nil || !res.OK {
			t.Fatalf("p %s: %+v %v", name, res, err)
		}
		return res.Text
	}
	if v, err := s.SetVariable(ctx, 0, "n", "n + 1"); err != nil || v != "6" {
		t.Fatalf("set n = n + 1: %q %v, want 6", v, err)
	}
	if v, _ := s.Current().Locals.Get("n"); v != "6" || value(0, "n") != "6" {
		t.Errorf("n after the set: stop %q, live %q", v, value(0, "n"))
	}
	for _, c := range []struct{ name, value, want string }{
		{"n", "1; import os", "one Python expression"},
		{"n", "7)\nimport os\n(8", "one Python expression on one line"},
		{"n", "1\nx=2", "one Python expression on one line"},
		{"n", "", "one Python expression"},
		{"n; import os; n", "1", "not a variable name"},
		{"class", "1", "not a variable name"},
		{"n[0]", "1", "not a variable name"},
		{"n", "undefined_name", "NameError"},
	} {
		if v, err := s.SetVariable(ctx, 0, c.name, c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("set %q = %q: %q %v, want an error with %q", c.name, c.value, v, err, c.want)
		}
	}
	if value(0, "n") != "6" || value(0, "'os' in dir()") != "False" {
		t.Errorf("a refused set changed the frame: n = %s, os imported: %s", value(0, "n"), value(0, "'os' in dir()"))
	}
	if _, ok := s.Current().Locals.Get("os"); ok {
		t.Errorf("os among the stop's locals: %v", s.Current().Locals)
	}
	// A caller's frame: main's k.
	if v, err := s.SetVariable(ctx, 1, "k", "[k] * 2"); err != nil || v != "[5, 5]" || value(1, "k") != "[5, 5]" {
		t.Errorf("set main's k: %q %v (live %s)", v, err, value(1, "k"))
	}
	// The run goes on with the new value: m = n * 2.
	st, err := s.Do(ctx, Command{Action: StepOver})
	if m, _ := st.Locals.Get("m"); err != nil || m != "12" {
		t.Errorf("after n = 6, m = n * 2 gave %q (%v)", m, err)
	}

	// A recorded trace has no frame to set anything in.
	tr := NewTraceBackend(&tracer.Trace{Source: "x = 1\n", Exit: tracer.Exit{Kind: tracer.ExitNormal},
		States: []tracer.State{{Event: tracer.EventLine, Lineno: 1, Function: "<module>", Src: "x = 1", Frame: 1}}})
	rs, err := NewSession(ctx, tr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.SetVariable(ctx, 0, "x", "2"); !errors.Is(err, ErrNotLive) {
		t.Errorf("set on a recorded trace: %v, want ErrNotLive", err)
	}
}
