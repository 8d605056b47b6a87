package infer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ndb/format"
	"ndb/internal/paths"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// TestNextLinesHoldOnRealTraces runs programs under the tracer and checks
// that every line event that follows a line event of the same frame, with
// no event of that frame between, is on a line pysource's NextLines gives:
// the rule of the model engine (withFlow) never refuses a true frame. The
// programs: the hand-written eval scripts, a few constructs they lack, and,
// where the shared data is present, every 40th realworld and TheAlgorithms
// file (a run of 622 such files, every 5th and 4th, found 0 of 767,065
// transitions outside NextLines).
func TestNextLinesHoldOnRealTraces(t *testing.T) {
	tr, err := tracer.New(tracer.Options{Limits: tracer.Limits{Timeout: 5 * time.Second, MaxEvents: 20000}})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	defer tr.Close()
	programs := []tracer.Program{
		{Path: "match", Source: "def f(v):\n    match v:\n        case [x, *_] if x > 0:\n            return x\n        case {'k': y}:\n            return y\n        case _:\n            pass\n    return None\nprint([f(v) for v in ([1, 2], [-1], {'k': 3}, 4)])\n"},
		{Path: "except*", Source: "try:\n    raise ExceptionGroup('g', [ValueError(1), TypeError(2)])\nexcept* ValueError:\n    a = 1\nexcept* TypeError:\n    b = 2\nfinally:\n    c = 3\n"},
		{Path: "with", Source: "import contextlib\n@contextlib.contextmanager\ndef cm():\n    yield 1\ndef f(n):\n    for i in range(n):\n        try:\n            with cm() as v:\n                if i == 1:\n                    continue\n                if i == 2:\n                    raise KeyError(i)\n                if i == 3:\n                    break\n        except KeyError:\n            pass\n        finally:\n            n -= 1\n    with cm():\n        return n\nf(5)\n"},
		{Path: "gen", Source: "def g(n):\n    while True:\n        if n <= 0:\n            return\n        yield n\n        n -= 1\nclass C(dict):\n    '''doc'''\n    x = [v for v in g(3)]\nprint(sum(g(4)), C.x)\n"},
	}
	add := func(dir string, every int) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
		for i, name := range files {
			if i%every != 0 {
				continue
			}
			if src, err := os.ReadFile(name); err == nil {
				programs = append(programs, tracer.Program{Path: name, Source: string(src)})
			}
		}
	}
	add(filepath.Join("..", "..", "eval", "scripts"), 1)
	if data, err := paths.DataDir(""); err == nil {
		add(filepath.Join(data, "realworld"), 40)
		add(filepath.Join(data, "thealgorithms"), 40)
	}
	transitions, ruled := 0, 0
	for _, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		ix := pysource.New(prog.Source)
		last := map[int]int{} // per frame: the line of its last event if that was a line event
		for _, s := range trace.States {
			if s.Event != tracer.EventLine {
				last[s.Frame] = 0
				continue
			}
			if from := last[s.Frame]; from > 0 {
				transitions++
				if next := ix.NextLines(from); next != nil {
					ruled++
					if !slices.Contains(next, s.Lineno) {
						t.Errorf("%s: line %d (%q) went to %d (%q), not in NextLines %v", prog.Path, from, ix.Line(from), s.Lineno, ix.Line(s.Lineno), next)
					}
				}
			}
			last[s.Frame] = s.Lineno
		}
	}
	t.Logf("%d programs, %d transitions, %d under a rule", len(programs), transitions, ruled)
	if ruled < 1000 || ruled < transitions*9/10 {
		t.Fatalf("only %d of %d transitions checked", ruled, transitions)
	}
}

// TestFixedFunctionValues: in a module frame, a top-level function no
// statement rebinds shows as itself; elsewhere, or for a name the text may
// rebind, the value stays free.
func TestFixedFunctionValues(t *testing.T) {
	src := "def shift(c):\n    return c\n\ndef caesar(s):\n    return ''.join(shift(c) for c in s)\n\nhelper = caesar\nprint(caesar('ab'))\n"
	step := func(frame, action string) string {
		return format.TokBeginOfText + format.TokTraceContextStart + src + format.TokFrameSep + frame + action + format.TokFrameSep
	}
	for _, tc := range []struct {
		prompt, answer string
		ok             bool
	}{
		// forward: after n at the module's first def, the line frame is the module's
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function shift at 0x0>"`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function sh`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function cache at 0x0>"`, false},
		// caesar is rebound by nothing but passed to helper = caesar: free
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def caesar(s):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"caesar": "3"`, true},
		// backward: the line is written first
		{step(`<|inv_line_sep|><|src_sep|>print(caesar('ab'))<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), `<|inv_line_sep|><|src_sep|>helper = caesar<|arg_sep|>{"shift": "1"`, false},
		// in a function's frame the value is free
		{step(`<|call_sep|><|src_sep|>def shift(c):<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), `<|line_sep|><|arg_sep|>{"shift": "1"`, true},
	} {
		r := promptRules(tc.prompt)
		json := tc.answer[strings.LastIndex(tc.answer, format.TokArgSep)+len(format.TokArgSep):]
		if got := r.fixedAllowed(tc.answer, json); got != tc.ok {
			t.Errorf("after %q: %q allowed = %v, want %v", tc.prompt[len(tc.prompt)-60:], tc.answer, got, tc.ok)
		}
	}
}

// TestFlowUnread: a program whose flow the text does not give (a clause
// with no header before it) sets no flow rule either way.
func TestFlowUnread(t *testing.T) {
	s := programScopes("x = 1\nelse:\n    y = 2\nz = 3\n")
	for _, backward := range []bool{false, true} {
		if got := s.flowLines("z = 3", backward); got != nil {
			t.Errorf("backward %v: flow lines %q, want none", backward, got)
		}
	}
}
