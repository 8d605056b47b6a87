package engine

import (
	"context"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/model/infer"
)

// TestDefaultEnginePolicy: the one default-engine policy picks the model
// engine when there is a model to run (a model file, a predictor, $NDB_MODEL
// or the embedded model) and the real engine otherwise; a registry's Get
// without a name returns the engine its Default names.
func TestDefaultEnginePolicy(t *testing.T) {
	t.Setenv(infer.ModelEnv, "")
	fallback := Real
	if HaveDefaultModel() { // this build embeds a model
		fallback = Model
	}
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"a predictor", Options{Predictor: scripted()}, Model},
		{"a model file", Options{Model: "elsewhere.model"}, Model},
		{"nothing named", Options{Workers: 1}, fallback},
	} {
		if got := DefaultName(c.opts); got != c.want {
			t.Errorf("%s: DefaultName = %q, want %q", c.name, got, c.want)
		}
		reg := NewRegistry(c.opts)
		if reg.Default() != c.want {
			t.Errorf("%s: Registry.Default = %q, want %q", c.name, reg.Default(), c.want)
		}
		if c.want == Model && c.opts.Predictor == nil {
			reg.Close() // Get would load the (missing) model file
			continue
		}
		e, err := reg.Get("", "")
		if err != nil || e.Name() != c.want {
			t.Errorf("%s: Get(\"\") = %v, %v; want the %s engine", c.name, e, err, c.want)
		}
		reg.Close()
	}
	// A request that names a model file but no engine wants the model engine.
	reg := NewRegistry(Options{Workers: 1})
	defer reg.Close()
	missing := "/nonexistent/asked.model"
	if _, err := reg.Get("", missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Get(\"\", %s): %v, want the model engine failing to open that file", missing, err)
	}
	t.Setenv(infer.ModelEnv, "/models/mine.model")
	if !HaveDefaultModel() || DefaultName(Options{}) != Model {
		t.Errorf("$%s set: HaveDefaultModel %v, DefaultName %q; want the model engine", infer.ModelEnv, HaveDefaultModel(), DefaultName(Options{}))
	}
}

// TestFormatPredictorAndPredictScored: ndb eval sends prompts to the
// predictor behind an engine that predicts ndb's format (model, openai),
// none for real and cwm; PredictScored asks a scored predictor for its
// scores, as the backends do, and a plain one for text without confidence.
func TestFormatPredictorAndPredictScored(t *testing.T) {
	plain := scripted("a", "b")
	if FormatPredictor(NewNeuralEngine(Model, plain, Draw{}, false)) != Predictor(plain) {
		t.Error("the model engine's predictor is not returned")
	}
	if FormatPredictor(NewNeuralEngine(CWMName, plain, Draw{}, true)) != nil {
		t.Error("cwm predicts CWM's format: no predictor for ndb's prompts")
	}
	real := NewReal(Options{Workers: 1})
	defer real.Close()
	if FormatPredictor(real) != nil {
		t.Error("the real engine has no predictor")
	}

	ctx := context.Background()
	got, err := PredictScored(ctx, plain, "prompt", 1, Draw{})
	if err != nil || len(got) != 1 || got[0].Text != "a" || got[0].Confidence != nil {
		t.Errorf("plain predictor: %+v %v", got, err)
	}
	conf := &debugger.Confidence{Mean: 0.9, Min: 0.5, Tokens: 3, Frames: 1}
	scored := &scoredScript{answers: []Prediction{{Text: "x", Confidence: conf}}}
	got, err = PredictScored(ctx, scored, "prompt", 1, Draw{})
	if err != nil || len(got) != 1 || got[0].Text != "x" || got[0].Confidence != conf {
		t.Errorf("scored predictor (its Predict fails): %+v %v", got, err)
	}
}

// TestModelEngineTakesDecodingOptions: Options.MaxTokens and FreeProgram
// (ndb eval's --max-tokens, --free-program) reach the model engine's
// predictor, next to its rerank, so eval measures the engine users get with
// only those knobs changed.
func TestModelEngineTakesDecodingOptions(t *testing.T) {
	if _, err := infer.Default(); err != nil {
		t.Skip(err)
	}
	rr := infer.Rerank{K: 2, Below: 0.5}
	e, err := New(Model, Options{MaxTokens: 64, FreeProgram: true, Rerank: &rr})
	if err != nil {
		t.Fatal(err)
	}
	ip, ok := FormatPredictor(e).(InferPredictor)
	if !ok || ip.MaxTokens != 64 || !ip.FreeProgram || ip.Rerank == nil || *ip.Rerank != rr || ip.Python != "python3" {
		t.Errorf("predictor %+v, want MaxTokens 64, FreeProgram, rerank %+v, Python python3", ip, rr)
	}
	if o := ip.sampleOptions(context.Background(), Draw{Temperature: 0.6}); o.ModuleReprs == nil || o.MaxTokens != 64 || !o.FreeProgram || o.Rerank != ip.Rerank || o.Temperature != 0.6 {
		t.Errorf("sample options %+v", o)
	}
}

// TestRegistryIsTheFrontEndsEngines: through debugger.Engines a front end
// resolves names, opens sessions that know their engine, gets the model
// engines' sessions with the registry's real engine behind verify, and is
// refused an input prediction by an engine without an inverse before
// anything is opened.
func TestRegistryIsTheFrontEndsEngines(t *testing.T) {
	var engines debugger.Engines = NewRegistry(Options{Predictor: scripted(fibLine), Workers: 1})
	defer engines.Close()
	for _, c := range []struct{ name, model, want string }{
		{"", "", Model}, {" REAL ", "", Real}, {"", "other.model", Model}, {"cwm", "", CWMName},
	} {
		if got, err := engines.Resolve(c.name, c.model); err != nil || got != c.want {
			t.Errorf("Resolve(%q, %q) = %q %v, want %q", c.name, c.model, got, err, c.want)
		}
	}
	if _, err := engines.Resolve("nope", ""); err == nil || !strings.Contains(err.Error(), "unknown engine") {
		t.Errorf("Resolve(nope): %v", err)
	}
	ctx := context.Background()
	p := readProgram(t, "fib.py", "fib(2)")
	for _, name := range []string{Real, Model} {
		s, err := engines.Open(ctx, name, "", p)
		if err != nil {
			t.Fatal(err)
		}
		if s.Engine() != name || s.Predicted() != (name == Model) {
			t.Errorf("%s: a session of engine %q, predicted %v", name, s.Engine(), s.Predicted())
		}
		if name == Model {
			s.Do(ctx, debugger.Command{Action: debugger.StepInto})
			if res, _, err := s.RunCommand(ctx, "verify"); err != nil || res.Message != "all 2 stops match the real program" {
				t.Errorf("verify through the registry: %+v %v", res, err)
			}
		}
		s.Close()
	}
	for _, name := range []string{Real, CWMName} {
		if _, _, err := engines.PredictInput(ctx, name, cruxCode, "f", "1"); err != debugger.ErrNoInverse {
			t.Errorf("PredictInput on %s: %v, want ErrNoInverse", name, err)
		}
	}
}
