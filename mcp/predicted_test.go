package mcp

import (
	"strings"
	"testing"

	"ndb/engine"
	"ndb/engine/enginetest"
)

// scoredModel answers main's first step with fixed token probabilities.
var scoredModel = enginetest.Fixed{Text: `<|line_sep|><|arg_sep|>{}<|src_sep|>    return g(3)<|action_sep|>`,
	Probs: []float64{1, 0.5, 0.75}}

// TestPredictedAnswers: a model engine's tool answers carry "predicted"
// and the confidence (structured and in the text); the real engine's do
// not.
func TestPredictedAnswers(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Predictor: scoredModel, Workers: 1})
	defer reg.Close()
	cs := connect(t, newServer(t, reg, "model").MCPServer())
	code := "def g(k):\n    return k + 1\n"
	var st Stop
	text := mustCall(t, cs, ToolStart, map[string]any{"program": code, "call": "g(3)"}, &st)
	if !st.Predicted || st.Confidence != nil || !strings.HasSuffix(text, "[predicted]") {
		t.Errorf("start %+v %q: want predicted without a confidence", st, text)
	}
	text = mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "into"}, &st)
	if c := st.Confidence; !st.Predicted || c == nil || c.Mean != 0.75 || c.Min != 0.5 || c.Tokens != 3 ||
		!strings.HasSuffix(text, "  [predicted 0.75 (min 0.50)]") {
		t.Errorf("step %+v %q", st, text)
	}
	var c Context
	text = mustCall(t, cs, ToolContext, map[string]any{"session": st.Session}, &c)
	if !c.Predicted || c.Confidence == nil || c.Confidence.Mean != 0.75 || !strings.Contains(text, "[predicted 0.75 (min 0.50)]") {
		t.Errorf("context %+v %q", c, text)
	}
	// The real engine: no predicted key, no mark.
	st = Stop{}
	text = mustCall(t, cs, ToolStart, map[string]any{"program": code, "call": "g(3)", "engine": "real"}, &st)
	if st.Predicted || st.Confidence != nil || strings.Contains(text, "predicted") {
		t.Errorf("real start %+v %q", st, text)
	}
}

// TestEvaluateOnModelEngine: evaluate on a model engine's session
// evaluates an expression over the stop's predicted values (marked so),
// and refuses a statement, saying that a model engine never runs one.
func TestEvaluateOnModelEngine(t *testing.T) {
	model := enginetest.Fixed{Text: `<|line_sep|><|arg_sep|>{"s": "'ab'", "x": "'cd'", "k": "3"}<|src_sep|>    return g(3)<|action_sep|>`,
		Probs: []float64{1}}
	reg := engine.NewRegistry(engine.Options{Predictor: model, Workers: 1})
	defer reg.Close()
	cs := connect(t, newServer(t, reg, "model").MCPServer())
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "def g(k):\n    return k + 1\n", "call": "g(3)"}, &st)
	mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "into"}, &st)
	var ev Evaluation
	for _, c := range []struct{ code, mode, want string }{
		{"s + x", "auto", "'abcd'"},
		{"k * 2", "expr", "6"},
		{"s", "pretty", "'ab'"},
	} {
		ev = Evaluation{}
		text := mustCall(t, cs, ToolEvaluate, map[string]any{"session": st.Session, "code": c.code, "mode": c.mode}, &ev)
		if ev.Result != c.want || !ev.Predicted || !strings.HasSuffix(text, "[over the predicted values]") {
			t.Errorf("%s: %+v %q, want %s", c.code, ev, text, c.want)
		}
	}
	if text, isErr := call(t, cs, ToolEvaluate, map[string]any{"session": st.Session, "code": "s = 1"}, nil); !isErr || !strings.Contains(text, "not statements") {
		t.Errorf("a statement: %q", text)
	}
	if text, isErr := call(t, cs, ToolEvaluate, map[string]any{"session": st.Session, "code": "s + k"}, nil); !isErr || !strings.Contains(text, "TypeError") {
		t.Errorf("an expression that raises: %q", text)
	}
}
