package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/engine/openai"
	"ndb/internal/testnet"
	"ndb/tracer"
)

const fibLine = "<|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(2)<|action_sep|>"

func TestResampleDrawsAnotherPrediction(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(2)")
	var draws []Draw
	pred := PredictorFunc(func(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
		draws = append(draws, d)
		if d.Temperature == 0 {
			return []string{fibLine}, nil
		}
		return []string{"<|exit_error|><|trace_end|><|end_of_text|>"}, nil
	})
	nb, _ := NewNeural(p, pred, Draw{})
	s, _ := debugger.NewSession(context.Background(), nb)
	if _, err := s.Resample(context.Background()); err == nil {
		t.Error("resample before any prediction must fail")
	}
	st, err := s.Do(context.Background(), debugger.Command{Action: debugger.StepInto})
	if err != nil || st.Lineno != 8 {
		t.Fatalf("%+v %v", st, err)
	}
	st, err = s.Resample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Exit != "error" || len(s.History()) != 2 {
		t.Errorf("resampled stop %+v, history %d", st, len(s.History()))
	}
	if len(draws) != 2 || draws[1].Temperature != 0.6 || draws[1].TopP != 0.95 || draws[1].Seed == 0 {
		t.Errorf("draws %+v", draws)
	}
	// Back undoes the prediction.
	if back, ok := s.Back(); !ok || back.Event != "call" {
		t.Errorf("back: %+v %v", back, ok)
	}
}

func TestSetLocalIsTheContextOfTheNextPrediction(t *testing.T) {
	p := readProgram(t, "calls.py", "f('ab', 3)")
	or := scripted(
		`<|line_sep|><|arg_sep|>{}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
		`<|call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'ab'", "n": "3"}<|action_sep|>`,
		`<|line_sep|><|arg_sep|>{"s": "'ab'", "n": "3"}<|src_sep|>    t = total(n)<|action_sep|>`,
		`<|line_sep|><|arg_sep|>{"t": "50", "..": ".."}<|src_sep|>    out = s * 2<|action_sep|>`,
	)
	nb, _ := NewNeural(p, or, Draw{})
	ctx := context.Background()
	s, _ := debugger.NewSession(ctx, nb)
	if _, err := s.SetLocal("x", "1"); !errors.Is(err, debugger.ErrAmendStart) {
		t.Errorf("set at the start (not a prediction): %v, want ErrAmendStart", err)
	}
	for range 3 {
		if _, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.SetLocal("n", "10")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := st.Locals.Get("n"); v != "10" {
		t.Fatalf("locals after set: %v", st.Locals)
	}
	st, err = s.Do(ctx, debugger.Command{Action: debugger.StepOver})
	if err != nil {
		t.Fatal(err)
	}
	last := or.prompts[len(or.prompts)-1]
	if !strings.Contains(last, `{"s":"'ab'","n":"10"}`) && !strings.Contains(last, `"n": "10"`) {
		t.Errorf("the edited value is not in the prompt:\n%s", last)
	}
	if v, _ := st.Locals.Get("n"); v != "10" {
		t.Errorf("an elided frame keeps the edited value: %v", st.Locals)
	}
	if v, _ := st.Locals.Get("t"); v != "50" {
		t.Errorf("locals %v", st.Locals)
	}
	for _, bad := range [][2]string{{"1x", "1"}, {"n", ""}, {"n", "a\nb"}, {"n", "<|frame_sep|>"}} {
		if _, err := s.SetLocal(bad[0], bad[1]); err == nil {
			t.Errorf("set %q = %q: want an error", bad[0], bad[1])
		}
	}
}

func TestNeuralCommandsRefuseTheRealEngine(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(2)")
	b, err := testReal(t).Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := debugger.NewSession(context.Background(), b)
	if _, err := s.Resample(context.Background()); err != debugger.ErrNotPredicted {
		t.Errorf("resample: %v", err)
	}
	if _, err := s.SetLocal("n", "1"); err != debugger.ErrNotPredicted {
		t.Errorf("set: %v", err)
	}
	if _, err := s.Verify(context.Background()); err != debugger.ErrNotPredicted {
		t.Errorf("verify: %v", err)
	}
}

// TestVerifyMarksDivergences runs a model that is right except for one
// value: verify must name that step, that field, and both values.
func TestVerifyMarksDivergences(t *testing.T) {
	ctx := context.Background()
	p := readProgram(t, "calls.py", "f('ab', 2)")
	rb, _ := testReal(t).Open(ctx, p)
	rs, _ := debugger.NewSession(ctx, rb)
	or := &oracle{}
	nb, _ := NewNeural(p, or, Draw{})
	nb.Real = testReal(t)
	ns, _ := debugger.NewSession(ctx, nb)
	cmds := []debugger.Command{{Action: debugger.StepInto}, {Action: debugger.StepInto}, {Action: debugger.StepOver}, {Action: debugger.StepOver}, {Action: debugger.StepReturn}}
	for i, c := range cmds {
		h0 := len(rs.History())
		if _, err := rs.Do(ctx, c); err != nil {
			t.Fatal(err)
		}
		h := rs.History()
		for k := h0; k < len(h); k++ {
			text := frameFor(t, h[k-1].Stop, h[k].Stop, h[k].Command.Action)
			if i == 3 { // the model gets t wrong after `t = total(n)`
				text = strings.Replace(text, `"t": "1"`, `"t": "7"`, 1)
			}
			or.queue = append(or.queue, text)
		}
		if _, err := ns.Do(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	v, err := ns.Verify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.Steps != 6 || v.FirstStep != 4 {
		t.Fatalf("verification %+v", v)
	}
	want := debugger.Divergence{Step: 4, Field: "locals.t", Predicted: "7", Real: "1"}
	found := false
	for _, d := range v.Divergences {
		if d == want {
			found = true
		}
		if d.Step < 4 {
			t.Errorf("divergence before the wrong step: %v", d)
		}
	}
	if !found {
		t.Errorf("divergences %v, want %v", v.Divergences, want)
	}
	if !strings.Contains(want.String(), "predicted 7, real 1") {
		t.Error(want.String())
	}
}

// TestOpenAIEngineEndToEnd serves completions from a loopback httptest
// server: the openai engine must send our prompts with the stop sequences
// and place the answers.
func TestOpenAIEngineEndToEnd(t *testing.T) {
	var prompts []string
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string   `json:"model"`
			Prompt string   `json:"prompt"`
			Stop   []string `json:"stop"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "ndb-test" || len(req.Stop) != 2 || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad request", 400)
			return
		}
		prompts = append(prompts, req.Prompt)
		text := "<|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(2)" // cut at the stop, as servers do
		if strings.HasSuffix(req.Prompt, "<|continue|><|frame_sep|>") {
			text = "<|exit_normal|><|trace_end|>"
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "text": text, "finish_reason": "stop"}}})
	}))
	t.Setenv("NDB_OPENAI_MODEL", "ndb-test")
	t.Setenv("NDB_OPENAI_API_KEY", "k")
	e, err := New("openai", Options{OpenAI: openai.Config{BaseURL: srv.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := e.Open(ctx, readProgram(t, "fib.py", "fib(2)"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := debugger.NewSession(ctx, b)
	st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
	if err != nil || st.Lineno != 8 || st.Function != "main" {
		t.Fatalf("%+v %v", st, err)
	}
	st, err = s.Do(ctx, debugger.Command{Action: debugger.Continue})
	if err != nil || st.Exit != "normal" {
		t.Fatalf("%+v %v", st, err)
	}
	if len(prompts) != 2 || !strings.HasSuffix(prompts[1], "<|src_sep|>    return fib(2)<|action_sep|><|continue|><|frame_sep|>") {
		t.Errorf("prompts %q", prompts)
	}
}

func TestRunCommand(t *testing.T) {
	ctx := context.Background()
	p := readProgram(t, "fib.py", "fib(2)")
	nb, _ := NewNeural(p, scripted(fibLine), Draw{})
	nb.Real = testReal(t)
	s, _ := debugger.NewSession(ctx, nb)
	if _, ok, _ := s.RunCommand(ctx, "step"); ok {
		t.Error("step is not a neural command")
	}
	if _, ok, err := s.RunCommand(ctx, "back"); !ok || err == nil {
		t.Error("back at the start must fail")
	}
	s.Do(ctx, debugger.Command{Action: debugger.StepInto})
	res, ok, err := s.RunCommand(ctx, "verify")
	if !ok || err != nil || res.Verification == nil || res.Message != "all 2 stops match the real program" {
		t.Errorf("verify: %+v %v", res, err)
	}
	if res, _, err := s.RunCommand(ctx, "set n = 9"); err != nil || !res.Moved {
		t.Errorf("set adds a local main lacks: %+v %v", res, err)
	}
	res, _, err = s.RunCommand(ctx, "verify")
	if err != nil || !strings.Contains(res.Message, "locals.n: predicted 9, real (none)") {
		t.Errorf("verify after set: %q %v", res.Message, err)
	}
	if res, _, err := s.RunCommand(ctx, "set n"); err == nil {
		t.Errorf("set without = : %+v", res)
	}
	if res, _, err := s.RunCommand(ctx, "back"); err != nil || !res.Moved {
		t.Errorf("back: %+v %v", res, err)
	}
}

// TestEvalOverPredictedValues: on a model engine's session Eval (the
// terminal's p, DAP's watch, MCP's evaluate) evaluates an expression over
// the frame's predicted literal values in the real engine's sandbox: a
// local name is its value whatever it is, an expression needs literal
// values, a statement never runs (ErrNotLive for !, a SyntaxError for p).
func TestEvalOverPredictedValues(t *testing.T) {
	ctx := context.Background()
	p := readProgram(t, "calls.py", "f('ab', 3)")
	nb, _ := NewNeural(p, scripted(
		`<|line_sep|><|arg_sep|>{"s": "'ab'", "x": "'cd'", "n": "3", "xs": "[3, 1, 2]", "o": "<A object at 0x7f>"}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
	), Draw{})
	nb.Real = testReal(t)
	s, _ := debugger.NewSession(ctx, nb)
	if _, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src, mode string
		ok        bool
		want      string
	}{
		{"s + x", tracer.EvalExpr, true, "'abcd'"},
		{"sorted(xs)", tracer.EvalExpr, true, "[1, 2, 3]"},
		{"o", tracer.EvalExpr, true, "<A object at 0x7f>"}, // a name: its predicted text
		{"[n] * 30", tracer.EvalPretty, true, "[3,\n 3,"},  // pprint's lines
		{"print(s) or n", tracer.EvalExpr, true, "ab\n3"},  // what it printed, then the value
		{"s * n", tracer.EvalExec, true, "'ababab'\n"},     // as a typed line shows it
		{"None", tracer.EvalExec, true, ""},
		{"o.attr", tracer.EvalExpr, false, "o's predicted value <A object at 0x7f> is not a Python literal"},
		{"s + n", tracer.EvalExpr, false, "TypeError"},
		{"nope", tracer.EvalExpr, false, "NameError: name 'nope' is not defined (not among the predicted locals)"},
		{"1; import os", tracer.EvalExpr, false, "SyntaxError"},
		{"__import__('os').getcwd", tracer.EvalExpr, true, "<built-in function getcwd>"}, // runs in the sandbox, not in ndb
	} {
		res, err := s.Eval(ctx, 0, c.src, c.mode)
		if err != nil || res.OK != c.ok || !strings.HasPrefix(res.Text, c.want) && !strings.Contains(res.Text, c.want) {
			t.Errorf("%s %s: %+v %v, want ok=%v %q", c.mode, c.src, res, err, c.ok, c.want)
		}
	}
	for _, stmt := range []string{"s = 1", "import os", "a\nb"} {
		if res, err := s.Eval(ctx, 0, stmt, tracer.EvalExec); !errors.Is(err, debugger.ErrNotLive) {
			t.Errorf("! %s: %+v %v, want ErrNotLive", stmt, res, err)
		}
	}
	if v, _ := s.Current().Locals.Get("s"); v != "'ab'" {
		t.Errorf("an evaluation changed the stop: s = %s", v)
	}
	// SetVariable: the value is one expression over the predicted values.
	if v, err := s.SetVariable(ctx, 0, "t", "xs + [n]"); err != nil || v != "[3, 1, 2, 3]" {
		t.Errorf("set t = xs + [n]: %q %v", v, err)
	}
	if _, err := s.SetVariable(ctx, 0, "s", "1; import os"); err == nil || !strings.Contains(err.Error(), "one Python expression") {
		t.Errorf("set s = 1; import os: %v", err)
	}
	if v, _ := s.Current().Locals.Get("t"); v != "[3, 1, 2, 3]" {
		t.Errorf("locals after set: %v", s.Current().Locals)
	}
	// Without a real engine only names are answered.
	nb.Real = nil
	if _, err := s.Eval(ctx, 0, "s + 'z'", tracer.EvalExpr); !errors.Is(err, debugger.ErrNotLive) {
		t.Errorf("no real engine: %v, want ErrNotLive", err)
	}
}
