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
