package dap

import (
	"strings"
	"testing"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/enginetest"
)

// scoredModel answers one step_into frame with fixed token probabilities.
var scoredModel = enginetest.Fixed{Text: `<|line_sep|><|arg_sep|>{}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
	Probs: []float64{1, 0.5}}

// TestPredictedStopsInDAP: a model engine's stopped events say "predicted"
// with the confidence, and the current frame has a Prediction scope whose
// confidence variable is the mean token probability.
func TestPredictedStopsInDAP(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Predictor: scoredModel, Workers: 1})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "model", "call": "f('ab', 3)", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	if e := c.waitEvent("stopped").(*godap.StoppedEvent); !strings.HasSuffix(e.Body.Description, ", predicted") {
		t.Errorf("entry description %q, want predicted without figures", e.Body.Description)
	}
	c.ok("stepIn", map[string]any{"threadId": 1})
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if want := "Paused on step, predicted (confidence 0.75, min 0.50)"; e.Body.Description != want {
		t.Errorf("description %q, want %q", e.Body.Description, want)
	}
	sc := c.ok("scopes", map[string]any{"frameId": 1}).(*godap.ScopesResponse)
	ref := 0
	for _, s := range sc.Body.Scopes {
		if s.Name == "Prediction" {
			ref = s.VariablesReference
		}
	}
	if ref == 0 {
		t.Fatalf("no Prediction scope in %+v", sc.Body.Scopes)
	}
	vs := c.ok("variables", map[string]any{"variablesReference": ref}).(*godap.VariablesResponse)
	got := map[string]string{}
	for _, v := range vs.Body.Variables {
		got[v.Name] = v.Value
	}
	if got["predicted"] != "True" || got["confidence"] != "0.75" || got["confidence_min"] != "0.5" || got["tokens"] != "2" {
		t.Errorf("Prediction variables %v", got)
	}
	c.ok("disconnect", nil)
}

func TestPredictedText(t *testing.T) {
	for _, c := range []struct {
		st   debugger.Stop
		want string
	}{
		{debugger.Stop{}, ""}, // the real engine: no mention
		{debugger.Stop{Predicted: true}, "predicted"},
		{debugger.Stop{Predicted: true, Confidence: &debugger.Confidence{Mean: 0.8731, Min: 0.41}}, "predicted (confidence 0.87, min 0.41)"},
	} {
		if got := predictedText(c.st); got != c.want {
			t.Errorf("predictedText(%+v) = %q, want %q", c.st, got, c.want)
		}
		if n := len(predictionVars(c.st)); c.st.Confidence != nil && n != 4 || c.st.Confidence == nil && n != 1 {
			t.Errorf("%d Prediction variables for %+v", n, c.st)
		}
	}
}

// TestPredictedWatch: on a model engine a watch or hover expression is
// evaluated over the stop's predicted values where they are literals (in
// the sandbox, by the real engine), so `s + x` works; one that needs a
// value that is not a literal, or that raises, is refused with the reason.
func TestPredictedWatch(t *testing.T) {
	model := enginetest.Fixed{Text: `<|line_sep|><|arg_sep|>{"s": "'ab'", "x": "'cd'", "n": "3", "xs": "[1, 2, 3]", "o": "<A object at 0x7f>"}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
		Probs: []float64{1}}
	reg := engine.NewRegistry(engine.Options{Predictor: model, Workers: 1})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "model", "call": "f('ab', 3)", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	c.move("stepIn")
	for _, w := range []struct {
		expr, context, want, err string
	}{
		{"s + x", "watch", "'abcd'", ""},
		{"s * n", "hover", "'ababab'", ""},
		{"len(xs) + n", "watch", "6", ""},
		{"sorted(xs, reverse=True)", "watch", "[3, 2, 1]", ""},
		{"n", "hover", "3", ""},
		{"o.attr", "watch", "", "o's predicted value <A object at 0x7f> is not a Python literal"},
		{"s + n", "watch", "", "TypeError"},
		{"nope + 1", "watch", "", "not among the predicted locals"},
		{"1 +", "watch", "", "SyntaxError"},
	} {
		r, _ := c.call("evaluate", map[string]any{"expression": w.expr, "context": w.context, "frameId": 1})
		resp := r.GetResponse()
		switch {
		case w.err == "" && (!resp.Success || r.(*godap.EvaluateResponse).Body.Result != w.want):
			t.Errorf("%s: %+v, want %s", w.expr, r, w.want)
		case w.err != "" && (resp.Success || !strings.Contains(resp.Message, w.err)):
			t.Errorf("%s: %+v, want an error with %q", w.expr, resp, w.err)
		}
	}
	c.ok("disconnect", nil)
}

// TestPendingConditionOnModelEngine: a Python condition set before launch
// is judged by the session at launch, as the terminal's `b LINE, COND`: a
// model engine cannot run it, so the breakpoint comes back unverified with
// the session's reason (the live real engine takes it: TestConditionalBreakpoints).
func TestPendingConditionOnModelEngine(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Predictor: scoredModel, Workers: 1})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	initialize(t, c)
	prog := program(t)
	bp := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog},
		"breakpoints": []map[string]any{{"line": 2, "condition": "s.replace('a', 'b') == s"}, {"line": 2, "condition": "n == 3"}}}).(*godap.SetBreakpointsResponse)
	if b := bp.Body.Breakpoints; !b[0].Verified || !b[1].Verified {
		t.Fatalf("before launch: %+v", b)
	}
	c.ok("launch", map[string]any{"program": prog, "engine": "model", "call": "f('ab', 3)", "stopOnEntry": true})
	e := c.waitEvent("breakpoint").(*godap.BreakpointEvent)
	if b := e.Body.Breakpoint; b.Id != bp.Body.Breakpoints[0].Id || b.Verified || !strings.Contains(b.Message, "Python expressions are evaluated only") {
		t.Errorf("breakpoint event %+v, want the first one unverified with the session's reason", b)
	}
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
}
