package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/engine/openai"
	"ndb/format"
	"ndb/internal/testnet"
	"ndb/model/infer"
	"ndb/model/infer/infertest"
	"ndb/tracer"
)

// TestConfidenceFigures checks ConfidenceOf and the pooling of a rolled-out
// command's predictions against hand computations.
func TestConfidenceFigures(t *testing.T) {
	for _, c := range []struct {
		name   string
		frames [][]float64 // token probabilities of each prediction; nil: one without a confidence
		want   *debugger.Confidence
	}{
		{"no prediction", nil, nil},
		{"one frame", [][]float64{{0.5, 1, 0.25, 0.25}}, &debugger.Confidence{Mean: 0.5, Min: 0.25, Tokens: 4, Frames: 1}},
		{"one token", [][]float64{{0.9}}, &debugger.Confidence{Mean: 0.9, Min: 0.9, Tokens: 1, Frames: 1}},
		// Pooled over all 6 tokens: (0.5+1+0.25+0.25 + 1+1)/6 = 4/6.
		{"two frames", [][]float64{{0.5, 1, 0.25, 0.25}, {1, 1}}, &debugger.Confidence{Mean: 0.6667, Min: 0.25, Tokens: 6, Frames: 2}},
		{"the least token of any frame", [][]float64{{1, 1}, {0.1, 0.9}, {0.8}}, &debugger.Confidence{Mean: 0.76, Min: 0.1, Tokens: 5, Frames: 3}},
		{"one frame unknown", [][]float64{{1, 1}, nil}, nil},
		{"an empty frame is unknown", [][]float64{{}}, nil},
	} {
		var sum confidenceSum
		for _, f := range c.frames {
			sum.add(ConfidenceOf(f))
		}
		got := sum.get()
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

// scoredScript answers scripted frames, each with given token probabilities.
type scoredScript struct {
	answers []Prediction
}

func (s *scoredScript) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	return nil, errors.New("Predict called: the engine should use PredictScored")
}

func (s *scoredScript) PredictScored(ctx context.Context, prompt string, k int, d Draw) ([]Prediction, error) {
	if len(s.answers) == 0 {
		return nil, errors.New("no answer queued")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return []Prediction{a}, nil
}

// TestNeuralStopsCarryConfidence: the start is predicted without a
// confidence (it is read from the source); a single prediction's stop has
// that prediction's confidence; a rolled-out command's stop has the pool of
// all its predictions; a predictor without scores gives none.
func TestNeuralStopsCarryConfidence(t *testing.T) {
	ctx := context.Background()
	p := readProgram(t, "fib.py", "fib(2)") // main is line 7, its return line 8
	line8 := "<|line_sep|><|arg_sep|>{}<|src_sep|>    return fib(2)"
	frame := func(s tracer.State) string {
		f, err := format.NewBuilder(false).Frame(s, false, debugger.StepInto)
		if err != nil {
			t.Fatal(err)
		}
		return format.FrameText(f)
	}
	n2 := tracer.Locals{{Name: "n", Value: "2"}}
	call1 := frame(tracer.State{Event: tracer.EventCall, Lineno: 1, Function: "fib", Depth: 1, Src: "def fib(n):", Locals: n2})
	line2 := frame(tracer.State{Event: tracer.EventLine, Lineno: 2, Function: "fib", Depth: 1, Src: "    if n < 2:", Locals: n2})
	pred := &scoredScript{answers: []Prediction{
		{Text: line8, Confidence: ConfidenceOf([]float64{1, 0.5})},
		{Text: call1, Confidence: ConfidenceOf([]float64{0.9, 0.9, 0.3})},
		{Text: line2, Confidence: ConfidenceOf([]float64{1})},
	}}
	b, err := NewNeural(p, pred, Draw{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Current(); !st.Predicted || st.Confidence != nil {
		t.Fatalf("start: predicted %v, confidence %+v; want predicted without confidence", st.Predicted, st.Confidence)
	}
	st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
	if err != nil {
		t.Fatal(err)
	}
	if want := (debugger.Confidence{Mean: 0.75, Min: 0.5, Tokens: 2, Frames: 1}); !st.Predicted || st.Confidence == nil || *st.Confidence != want {
		t.Fatalf("s: %+v, want predicted with %+v", st, want)
	}
	// c with breakpoints on lines 2 and 3: rolled out by step_into (the
	// call at line 1, then line 2), pooled: (0.9+0.9+0.3+1)/4.
	for _, l := range []int{2, 3} {
		if err := s.SetBreak(l); err != nil {
			t.Fatal(err)
		}
	}
	st, err = s.Do(ctx, debugger.Command{Action: debugger.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if want := (debugger.Confidence{Mean: 0.775, Min: 0.3, Tokens: 4, Frames: 2}); st.Lineno != 2 || st.Confidence == nil || *st.Confidence != want {
		t.Fatalf("c: line %d, confidence %+v; want line 2 with %+v", st.Lineno, st.Confidence, want)
	}
	// back and forth keeps each stop's own figures in the history.
	if h := s.History(); h[1].Stop.Confidence.Mean != 0.75 {
		t.Fatalf("history[1] confidence %+v", h[1].Stop.Confidence)
	}
	// A plain Predictor: predicted, no confidence.
	b2, err := NewNeural(p, scripted(line8), Draw{})
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := debugger.NewSession(ctx, b2)
	if st, err := s2.Do(ctx, debugger.Command{Action: debugger.StepInto}); err != nil || !st.Predicted || st.Confidence != nil {
		t.Fatalf("plain predictor: %+v %v", st, err)
	}
}

// TestModelEngineConfidenceIsTheModels: the model engine's stop carries
// exactly the confidence of infer's SampleScored for the same prompt.
func TestModelEngineConfidenceIsTheModels(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tokenizer")
	}
	ctx := context.Background()
	prog := readProgram(t, "calls.py", "f('ab', 2)")
	tiny := infertest.Tiny(t, 1024, prog.Source)
	b, err := NewNeural(prog, InferPredictor{P: tiny}, Draw{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := b.prompt(s.History(), format.Step{Action: debugger.StepInto})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
	if err != nil {
		t.Fatal(err)
	}
	want, err := tiny.SampleScored(ctx, prompt, 1, infer.Greedy)
	if err != nil {
		t.Fatal(err)
	}
	c := st.Confidence
	if !st.Predicted || c == nil || c.Tokens != len(want[0].Probs) || c.Frames != 1 ||
		math.Abs(c.Mean-want[0].Mean()) > 1e-4 || math.Abs(c.Min-want[0].Min()) > 1e-4 {
		t.Fatalf("stop confidence %+v; SampleScored mean %v min %v over %d tokens", c, want[0].Mean(), want[0].Min(), len(want[0].Probs))
	}
	if c.Min <= 0 || c.Min > c.Mean || c.Mean > 1 {
		t.Fatalf("confidence out of order: %+v", c)
	}
}

// TestOpenAIConfidenceFromLogprobs: the openai engine asks for logprobs
// and turns the chosen tokens' into the confidence (tokens past the stop
// text left out); a server that returns none gives no confidence.
func TestOpenAIConfidenceFromLogprobs(t *testing.T) {
	withLogprobs := true
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Logprobs *int `json:"logprobs"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if req.Logprobs == nil || *req.Logprobs != 1 {
			http.Error(w, "no logprobs asked", 400)
			return
		}
		tokens := []string{"<|line_sep|>", "<|arg_sep|>", "{}", "<|src_sep|>", "    return fib(2)", "<|action_sep|>", "junk"}
		lps := []float64{math.Log(0.5), 0, 0, math.Log(0.25), 0, math.Log(0.01), math.Log(0.01)}
		ch := map[string]any{"index": 0, "text": strings.Join(tokens, ""), "finish_reason": "stop"}
		if withLogprobs {
			ch["logprobs"] = map[string]any{"tokens": tokens, "token_logprobs": lps}
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{ch}})
	}))
	ctx := context.Background()
	for _, with := range []bool{true, false} {
		withLogprobs = with
		e, err := New("openai", Options{OpenAI: openai.Config{BaseURL: srv.URL + "/v1"}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := e.Open(ctx, readProgram(t, "fib.py", "fib(2)"))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := debugger.NewSession(ctx, b)
		st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
		if err != nil || st.Lineno != 8 {
			t.Fatalf("%+v %v", st, err)
		}
		// The five tokens before <|action_sep|>: (0.5+1+1+0.25+1)/5.
		want := &debugger.Confidence{Mean: 0.75, Min: 0.25, Tokens: 5, Frames: 1}
		if !with {
			want = nil
		}
		if !st.Predicted || (st.Confidence == nil) != (want == nil) || want != nil && *st.Confidence != *want {
			t.Errorf("logprobs %v: predicted %v, confidence %+v, want %+v", with, st.Predicted, st.Confidence, want)
		}
	}
}
