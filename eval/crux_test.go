package eval

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
)

// cruxItems loads the first n CruxEval items from the shared data folder
// (skipping the test when it is absent).
func cruxItems(t *testing.T, n int) []CruxItem {
	t.Helper()
	dir, err := dataset.DataDir("")
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(dir, "cruxeval.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no cruxeval data: %v", err)
	}
	items, err := LoadCruxEval(path)
	if err != nil {
		t.Fatal(err)
	}
	if n < len(items) {
		// Spread over the file: every (len/n)-th item.
		step := len(items) / n
		var out []CruxItem
		for i := 0; i < len(items) && len(out) < n; i += step {
			out = append(out, items[i])
		}
		items = out
	}
	return items
}

func newScorer(t *testing.T) *Scorer {
	t.Helper()
	s, err := NewScorer("")
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRealEngineScoresAll: the real engine answers every item exactly
// through the harness, for output (step_return and breakpoint) and input
// prediction. `go test ./eval -run RealEngine -full` checks all 800.
func TestRealEngineScoresAll(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 12
	}
	if *fullCrux {
		n = 1 << 30
	}
	items := cruxItems(t, n)
	real := engine.NewReal(engine.Options{Workers: 2})
	defer real.Close()
	sc := newScorer(t)
	for _, tc := range []struct {
		task   string
		action debugger.Action
	}{{TaskOutput, debugger.StepReturn}, {TaskOutput, debugger.Breakpoint}, {TaskInput, debugger.InvStepCall}} {
		rep, err := RunCruxEval(context.Background(), items, CruxOptions{Task: tc.task, Action: tc.action, Engine: real, Real: real, Scorer: sc})
		if err != nil {
			t.Fatal(err)
		}
		// A function argument (two inputs are lambdas) has no repr a
		// scorer can run: those are the only items the truth cannot answer.
		unanswerable := 0
		for i, r := range rep.Results {
			lambda := tc.task == TaskInput && strings.Contains(items[i].Input, "lambda")
			if lambda {
				unanswerable++
				if r.Literal || r.Pass {
					t.Errorf("%s: a lambda input was accepted: %+v", r.ID, r)
				}
				continue
			}
			if !r.Pass || !r.Exact {
				t.Errorf("%s/%s %s: pass=%v exact=%v answer=%q stop=%q err=%s", tc.task, tc.action, r.ID, r.Pass, r.Exact, r.Answer, r.Stop, r.Error)
			}
		}
		want := 100 * float64(len(items)-unanswerable) / float64(len(items))
		if rep.N != len(items) || rep.PassAt1 != want || rep.ExactMatch != want {
			t.Fatalf("%s by %s: pass@1 %.2f exact %.2f on %d items, want %.2f", tc.task, tc.action, rep.PassAt1, rep.ExactMatch, rep.N, want)
		}
		t.Logf("%s by %s: pass@1 %.2f%% on %d items (%d lambda inputs)", tc.task, tc.action, rep.PassAt1, rep.N, unanswerable)
	}
}

// TestScorer checks the scorer on hand-made answers: literals only, the
// assertion run for real, exact match by value and type, bad programs
// contained.
func TestScorer(t *testing.T) {
	sc := newScorer(t)
	code := "def f(s, n):\n    return s * n\n"
	jobs := []ScoreJob{
		{ID: "right", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 2", Output: "'abab'", Pred: "'abab'"},
		{ID: "dquote", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 2", Output: "'abab'", Pred: `"abab"`},
		{ID: "wrong", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 2", Output: "'abab'", Pred: "'ab'"},
		{ID: "call-is-no-literal", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 2", Output: "'abab'", Pred: "f('ab', 2)"},
		{ID: "garbage", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 2", Output: "'abab'", Pred: "'ab"},
		{ID: "int-vs-float", Code: "def f(x):\n    return x + 1\n", Func: "f", Task: TaskOutput, Input: "1", Output: "2", Pred: "2.0"},
		{ID: "in-right", Code: code, Func: "f", Task: TaskInput, Input: "'ab', 2", Output: "'abab'", Args: [][2]string{{"s", "'ab'"}, {"n", "2"}}},
		{ID: "in-other", Code: code, Func: "f", Task: TaskInput, Input: "'ab', 2", Output: "'abab'", Args: [][2]string{{"s", "'abab'"}, {"n", "1"}}},
		{ID: "in-missing", Code: code, Func: "f", Task: TaskInput, Input: "'ab', 2", Output: "'abab'", Args: [][2]string{{"s", "'ab'"}}},
		{ID: "in-varargs", Code: "def f(*xs, k=1):\n    return sum(xs) * k\n", Func: "f", Task: TaskInput, Input: "1, 2", Output: "3", Args: [][2]string{{"xs", "(1, 2)"}, {"k", "1"}}},
		{ID: "range", Code: "def f(xs):\n    return sum(xs)\n", Func: "f", Task: TaskInput, Input: "range(1, 4)", Output: "6", Args: [][2]string{{"xs", "range(1, 4)"}}},
		{ID: "no-args", Code: "def f():\n    return 1\n", Func: "f", Task: TaskInput, Input: "", Output: "1"},
		{ID: "set-call", Code: code, Func: "f", Task: TaskOutput, Input: "'ab', 0", Output: "''", Pred: "set()"},
		{ID: "loops", Code: "def f(x):\n    while True:\n        pass\n", Func: "f", Task: TaskOutput, Input: "1", Output: "None", Pred: "None"},
		{ID: "exits", Code: "import os\ndef f(x):\n    os._exit(3)\n", Func: "f", Task: TaskOutput, Input: "1", Output: "None", Pred: "None"},
		{ID: "memory", Code: "def f(x):\n    return len(bytearray(8 << 30))\n", Func: "f", Task: TaskOutput, Input: "1", Output: "1", Pred: "1"},
		{ID: "after", Code: code, Func: "f", Task: TaskOutput, Input: "'a', 3", Output: "'aaa'", Pred: "'aaa'"},
	}
	want := map[string][3]bool{ // pass, exact, literal
		"right": {true, true, true}, "dquote": {true, true, true}, "wrong": {false, false, true},
		"call-is-no-literal": {false, false, false}, "garbage": {false, false, false},
		"int-vs-float": {true, false, true}, "in-right": {true, true, true}, "in-other": {true, false, true},
		"in-missing": {false, false, false}, "in-varargs": {true, true, true},
		"range": {true, true, true}, "no-args": {true, true, true}, "set-call": {false, false, true},
		"loops": {false, true, true}, "exits": {false, true, true}, "memory": {false, true, true}, "after": {true, true, true},
	}
	if testing.Short() {
		jobs = append(jobs[:13], jobs[len(jobs)-1])
	}
	res, err := sc.Score(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		w := want[jobs[i].ID]
		if r.ID != jobs[i].ID || r.Pass != w[0] || r.Exact != w[1] || r.Literal != w[2] {
			t.Errorf("%s: got pass=%v exact=%v literal=%v (err %q), want %v", jobs[i].ID, r.Pass, r.Exact, r.Literal, r.Error, w)
		}
	}
	if r := res[len(res)-1]; !r.Pass {
		t.Errorf("the scorer did not survive the bad programs: %+v", r)
	}
	if got := res[8].Error; !strings.Contains(got, "no value") {
		t.Errorf("missing argument: error %q", got)
	}
}

func TestReturnLines(t *testing.T) {
	src := "def f(a,\n      b):\n    if a:\n        return a\n    # return not\n    if b: return 2\n    returned = 1\n    return b\n\ndef g():\n    return 1\n"
	got := returnLines(src, 1)
	if len(got) != 3 || got[0] != "        return a" || got[1] != "    if b: return 2" || got[2] != "    return b" {
		t.Errorf("returnLines = %q", got)
	}
	if got := returnLines(src, 10); len(got) != 1 || got[0] != "    return 1" {
		t.Errorf("returnLines(g) = %q", got)
	}
	if got := returnLines(src, 99); got != nil {
		t.Errorf("out of range: %q", got)
	}
}
