package mcp

import (
	"context"
	"strings"
	"testing"

	"ndb/engine"
)

// scoredModel answers main's first step with fixed token probabilities.
type scoredModel struct{}

func (scoredModel) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	out, err := scoredModel{}.PredictScored(ctx, prompt, k, d)
	if err != nil {
		return nil, err
	}
	return []string{out[0].Text}, nil
}

func (scoredModel) PredictScored(ctx context.Context, prompt string, k int, d engine.Draw) ([]engine.Prediction, error) {
	return []engine.Prediction{{Text: `<|line_sep|><|arg_sep|>{}<|src_sep|>    return g(3)<|action_sep|>`,
		Confidence: engine.ConfidenceOf([]float64{1, 0.5, 0.75})}}, nil
}

// TestPredictedAnswers: a model engine's tool answers carry "predicted"
// and the confidence (structured and in the text); the real engine's do
// not.
func TestPredictedAnswers(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Predictor: scoredModel{}, Workers: 1})
	defer reg.Close()
	cs := connect(t, NewServer(reg, "model").MCPServer())
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
