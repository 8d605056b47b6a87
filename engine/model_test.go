package engine

import (
	"context"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/format"
	"ndb/model/infer/infertest"
)

// TestModelEngineWithATinyNetwork runs the model engine on ndb's own
// network: every command answers a stop or a clear error, never a panic,
// and resample/verify work on what it predicted.
func TestModelEngineWithATinyNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tokenizer")
	}
	e, err := New("model", Options{Predictor: InferPredictor{P: infertest.Tiny(t, 1024, readProgram(t, "calls.py", "").Source)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := e.Open(ctx, readProgram(t, "calls.py", "f('ab', 2)"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, a := range []debugger.Action{debugger.StepInto, debugger.StepOver, debugger.StepReturn, debugger.InvStepOver, debugger.StepInto} {
		st, err := s.Do(ctx, debugger.Command{Action: a})
		if err != nil {
			if !strings.Contains(err.Error(), "engine") && err != debugger.ErrExited && err != ErrBackFromEnd {
				t.Errorf("%s: unexpected error %v", a, err)
			}
			continue
		}
		moved++
		if !st.IsExit() && (st.Event == "" || st.Index != -1) {
			t.Errorf("%s: malformed stop %+v", a, st)
		}
		if raw := b.(*Neural).LastRaw(); !format.FrameComplete(raw) {
			t.Errorf("%s: the model wrote %q, not one frame", a, raw)
		}
	}
	if moved == 0 {
		t.Fatal("no command moved")
	}
	if len(s.History()) > 1 && !s.Current().IsExit() {
		if _, err := s.Resample(ctx); err != nil && !strings.Contains(err.Error(), "engine") {
			t.Errorf("resample: %v", err)
		}
	}
	b.(*Neural).Real = testReal(t)
	v, err := s.Verify(ctx)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	// A random network is wrong: verify must say where.
	if len(s.History()) > 1 && (len(v.Divergences) == 0 || v.FirstStep < 1) {
		t.Errorf("verify found no divergence in a random model's %d stops: %+v", len(s.History()), v)
	}
	if len(v.Divergences) > 0 {
		t.Logf("first divergence: %v", v.Divergences[0])
	}
}
