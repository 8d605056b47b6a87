package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/format"
	"ndb/model/infer"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train/synthtext"
)

// tinyModel is a random-weight network with a small tokenizer: its
// predictions are nonsense, but constrained decoding keeps them frames,
// which is what the model engine's plumbing needs.
func tinyModel(t *testing.T) *infer.Predictor {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	for id := range 30 {
		text, _ := synthtext.Trajectory(rng, id)
		texts = append(texts, text)
	}
	texts = append(texts, readProgram(t, "calls.py", "").Source)
	tok, err := tokenizer.Train(slices.Values(texts), 360, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	m, err := nn.New(nn.Config{Dim: 32, HiddenDim: 64, Layers: 1, Heads: 4, Vocab: tok.VocabSize(), MaxSeq: 1024, RopeTheta: 10000, NormEps: 1e-5}, 5)
	if err != nil {
		t.Fatal(err)
	}
	p, err := infer.New(m, tok)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestModelEngineWithATinyNetwork runs the model engine on ndb's own
// network: every command answers a stop or a clear error, never a panic,
// and resample/verify work on what it predicted.
func TestModelEngineWithATinyNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tokenizer")
	}
	e, err := New("model", Options{Predictor: InferPredictor{P: tinyModel(t)}})
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
		if _, err := Resample(ctx, s); err != nil && !strings.Contains(err.Error(), "engine") {
			t.Errorf("resample: %v", err)
		}
	}
	v, err := Verify(ctx, s, testReal(t))
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
