package eval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/openai"
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
	// a nested def's return and a string are not f's; a decorated f's
	// call event is on its decorator's line
	src = "@deco\ndef f(x):\n    def g(): return 1\n    s = 'a: return b'\n    return g() + len(s)\n"
	if got := returnLines(src, 1); len(got) != 1 || got[0] != "    return g() + len(s)" {
		t.Errorf("returnLines(decorated f) = %q", got)
	}
}

// scriptedPredictor answers like a model that knows f(x) = x + 1 forwards
// but guesses inputs: greedy input 40, samples 40, 41, 40. Prompts are
// recorded.
type scriptedPredictor struct{ prompts []string }

var localX = regexp.MustCompile(`<\|call_sep\|><\|src_sep\|>def f\(x\):<\|arg_sep\|>\{"x": "(-?\d+)"\}`)

func (p *scriptedPredictor) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	p.prompts = append(p.prompts, prompt)
	if strings.HasSuffix(prompt, "<|inv_step_call|><|frame_sep|>") {
		if d.Temperature == 0 {
			return []string{`<|inv_call_sep|><|src_sep|>def f(x):<|arg_sep|>{"x": "40"}<|action_sep|>`}, nil
		}
		var out []string
		for i := range k {
			v := []string{"40", "41", "40"}[i%3]
			out = append(out, `<|inv_call_sep|><|src_sep|>def f(x):<|arg_sep|>{"x": "`+v+`"}<|action_sep|>`)
		}
		return out, nil
	}
	m := localX.FindAllStringSubmatch(prompt, -1)
	if len(m) == 0 {
		return []string{"<|exit_error|><|trace_end|><|end_of_text|>"}, nil
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return []string{`<|return_sep|><|src_sep|>    return x + 1<|arg_sep|>"` + strconv.Itoa(n+1) + `"<|action_sep|>`}, nil
}

// TestPromptsAndTestTimeScaling: the model sees the true context (f's call
// with its arguments for output, f's return without the call in the source
// for input), and test-time scaling picks by vote and by self-consistency.
func TestPromptsAndTestTimeScaling(t *testing.T) {
	items := []CruxItem{{ID: "plus1", Code: "def f(x):\n    return x + 1\n", Input: "41", Output: "42"}}
	pred := &scriptedPredictor{}
	eng := engine.NewNeuralEngine(engine.Model, pred, engine.Draw{}, false)
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	sc := newScorer(t)
	ctx := context.Background()

	rep, err := RunCruxEval(ctx, items, CruxOptions{Task: TaskOutput, Engine: eng, Real: real, Scorer: sc})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PassAt1 != 100 || rep.ExactMatch != 100 {
		t.Errorf("output: %+v", rep.Results[0])
	}
	want := "<|trace_context_start|>def f(x):\n    return x + 1\n\n\ndef main():\n    return f(41)\n" +
		`<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>` +
		`<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return f(41)<|action_sep|><|step_into|>` +
		`<|frame_sep|><|call_sep|><|src_sep|>def f(x):<|arg_sep|>{"x": "41"}<|action_sep|><|step_return|><|frame_sep|>`
	if len(pred.prompts) != 1 || !strings.HasSuffix(pred.prompts[0], want) {
		t.Errorf("output prompt %q\nwant suffix %q", pred.prompts, want)
	}

	pred.prompts = nil
	rep, err = RunCruxEval(ctx, items, CruxOptions{Task: TaskInput, Engine: eng, Predictor: pred, Real: real, Scorer: sc, K: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Pass || !r.Literal || r.Answer != "40" {
		t.Errorf("greedy input: %+v", r)
	}
	if rep.PassAtK != 100 || rep.Majority != 0 || rep.SelfCons != 100 || r.SCChosen == nil || *r.SCChosen != 1 {
		t.Errorf("test-time scaling: pass@k %.0f majority %.0f self-consistency %.0f (chosen %v), want 100 0 100 (1)", rep.PassAtK, rep.Majority, rep.SelfCons, r.SCChosen)
	}
	wantIn := "<|trace_context_start|>def f(x):\n    return x + 1\n<|frame_sep|><|inv_return_sep|><|src_sep|>    return x + 1<|arg_sep|>\"42\"<|action_sep|><|inv_step_call|><|frame_sep|>"
	if !strings.HasSuffix(pred.prompts[0], wantIn) || strings.Contains(pred.prompts[0], "main") {
		t.Errorf("input prompt %q\nwant suffix %q and no call of f", pred.prompts[0], wantIn)
	}
}

// TestCWMEngineOutput: the cwm engine (CWM's own format, jumps rolled out
// frame by frame) goes through the same harness.
func TestCWMEngineOutput(t *testing.T) {
	items := []CruxItem{{ID: "plus1", Code: "def f(x):\n    return x + 1\n", Input: "41", Output: "42"}}
	var prompts []string
	pred := engine.PredictorFunc(func(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
		prompts = append(prompts, prompt)
		// A model that traces f(41) right, one CWM frame at a time.
		for _, step := range [][2]string{
			{"def main():<|frame_sep|>", `<|line_sep|>{}<|action_sep|>    return f(41)<|frame_sep|>`},
			{"    return f(41)<|frame_sep|>", `<|call_sep|>{"x": "41"}<|action_sep|>def f(x):<|frame_sep|>`},
			{"def f(x):<|frame_sep|>", `<|line_sep|>{"x": ".."}<|action_sep|>    return x + 1<|frame_sep|>`},
			{"    return x + 1<|frame_sep|>", `<|return_sep|><|action_sep|>    return x + 1<|arg_sep|>"42"<|frame_sep|>`},
		} {
			if strings.HasSuffix(prompt, step[0]) {
				return []string{step[1]}, nil
			}
		}
		return []string{"<|end_of_text|>"}, nil
	})
	eng := engine.NewNeuralEngine(engine.CWMName, pred, engine.Draw{}, true)
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	sc := newScorer(t)
	for _, a := range []debugger.Action{debugger.StepReturn, debugger.Breakpoint} {
		prompts = nil
		rep, err := RunCruxEval(context.Background(), items, CruxOptions{Task: TaskOutput, Action: a, Engine: eng, Real: real, Scorer: sc})
		if err != nil {
			t.Fatal(err)
		}
		if rep.PassAt1 != 100 || len(prompts) < 4 || !strings.Contains(prompts[0], "# << START_OF_TRACE") {
			t.Errorf("cwm %s: %+v prompts %q", a, rep.Results[0], prompts)
		}
	}
}

// TestOpenAIEngine: the openai engine (an OpenAI-compatible completions
// endpoint, here one the test serves on 127.0.0.1) goes through the same
// harness, greedy and with k candidates.
func TestOpenAIEngine(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string `json:"prompt"`
			N      int    `json:"n"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/completions" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		text := `<|return_sep|><|src_sep|>    return x + 1<|arg_sep|>"42"` // servers cut the stop text
		if strings.HasSuffix(req.Prompt, "<|inv_step_call|><|frame_sep|>") {
			text = `<|inv_call_sep|><|src_sep|>def f(x):<|arg_sep|>{"x": "41"}`
		}
		var choices []map[string]any
		for i := range max(req.N, 1) {
			choices = append(choices, map[string]any{"index": i, "text": text, "finish_reason": "stop"})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "text_completion", "choices": choices})
	}))
	defer srv.Close()
	c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "test", Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	pred := &engine.OpenAIPredictor{C: c}
	eng := engine.NewNeuralEngine(engine.OpenAI, pred, engine.Draw{}, false)
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	sc := newScorer(t)
	items := []CruxItem{{ID: "plus1", Code: "def f(x):\n    return x + 1\n", Input: "41", Output: "42"}}
	for _, task := range []string{TaskOutput, TaskInput} {
		rep, err := RunCruxEval(context.Background(), items, CruxOptions{Task: task, Engine: eng, Predictor: pred, Real: real, Scorer: sc, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		if rep.PassAt1 != 100 || rep.ExactMatch != 100 || task == TaskInput && rep.PassAtK != 100 {
			t.Errorf("openai %s: %+v %+v", task, rep, rep.Results[0])
		}
	}
}
