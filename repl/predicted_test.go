package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"ndb/debugger"
)

// predictedBackend stands for a model engine: the trace backend's stops,
// marked predicted, each after the start with a made-up confidence.
type predictedBackend struct {
	debugger.Backend
	n int
}

func (b *predictedBackend) Start(ctx context.Context) (debugger.Stop, error) {
	st, err := b.Backend.Start(ctx)
	st.Predicted = true // the start: read from the source, no confidence
	return st, err
}

func (b *predictedBackend) Next(ctx context.Context, h []debugger.Step, cmd debugger.Command) (debugger.Stop, error) {
	st, err := b.Backend.Next(ctx, h, cmd)
	b.n++
	st.Predicted = true
	st.Confidence = &debugger.Confidence{Mean: 0.875 - 0.1*float64(b.n), Min: 0.25, Tokens: 20, Frames: 1}
	return st, err
}

// TestBatchMarksPredictedStops: the batch JSON of a model engine's stops has
// "predicted": true and the confidence; the real engine's has neither key
// (its lines are the golden files of TestBatch, unchanged).
func TestBatchMarksPredictedStops(t *testing.T) {
	for _, predicted := range []bool{false, true} {
		s := newSession(t, "f([1, 2])")
		if predicted {
			var err error
			if s, err = debugger.NewSession(context.Background(), &predictedBackend{Backend: s.Backend()}); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		if err := Batch(context.Background(), New(s, Options{}), strings.NewReader("s\ns\nc\n"), &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 4 {
			t.Fatalf("predicted=%v: %d lines:\n%s", predicted, len(lines), out.String())
		}
		for i, line := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			p, hasP := m["predicted"]
			c, hasC := m["confidence"].(map[string]any)
			switch {
			case !predicted && (hasP || m["confidence"] != nil):
				t.Errorf("real engine line %d has predicted or confidence: %s", i, line)
			case predicted && p != true:
				t.Errorf("model line %d lacks \"predicted\": true: %s", i, line)
			case predicted && i == 0 && m["confidence"] != nil:
				t.Errorf("the start has a confidence: %s", line)
			case predicted && i > 0 && (!hasC || c["mean"] != 0.875-0.1*float64(i) || c["min"] != 0.25):
				t.Errorf("model line %d: confidence %v, want mean %v min 0.25: %s", i, m["confidence"], 0.875-0.1*float64(i), line)
			}
			_ = hasP
		}
	}
}

// TestTerminalMarksPredictedStops: the terminal names the engine first and
// marks each predicted stop after its location line; a real session shows
// neither.
func TestTerminalMarksPredictedStops(t *testing.T) {
	for _, c := range []struct {
		name      string
		predicted bool
		extra     *Extra
		want      []string
		absent    []string
	}{
		{name: "real", absent: []string{"predicted", "ndb:"}},
		{name: "model", predicted: true, want: []string{
			"ndb: model engine (predicted states, not the real program)\n--Call--\n> prog.py(",
			"main()  [predicted]\n",
			"main()  [predicted 0.77 (min 0.25)]\n",
			"[predicted 0.67 (min 0.25)]\n",
			"--Exit-- the program finished  [predicted 0.57 (min 0.25)]",
		}, absent: []string{"verify"}},
		{name: "model with verify", predicted: true, extra: &Extra{Help: []ExtraHelp{{Name: "verify"}},
			Run: func(context.Context, *debugger.Session, string) (string, bool, bool, error) {
				return "", false, false, nil
			}},
			want: []string{"ndb: model engine (predicted states, not the real program) — use `verify` to check\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSession(t, "f([1, 2])")
			if c.predicted {
				var err error
				if s, err = debugger.NewSession(context.Background(), &predictedBackend{Backend: s.Backend()}); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			term := New(s, Options{Name: "prog.py", Engine: map[bool]string{true: "model", false: "real"}[c.predicted], Extra: c.extra})
			if err := term.Run(context.Background(), strings.NewReader("s\ns\nc\n"), &out, false); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(got, a) {
					t.Errorf("output has %q:\n%s", a, got)
				}
			}
		})
	}
	for _, c := range []struct {
		st   debugger.Stop
		want string
	}{
		{debugger.Stop{}, ""},
		{debugger.Stop{Predicted: true}, "[predicted]"},
		{debugger.Stop{Predicted: true, Confidence: &debugger.Confidence{Mean: 0.8749, Min: 0.0149}}, "[predicted 0.87 (min 0.01)]"},
		{debugger.Stop{Predicted: true, Confidence: &debugger.Confidence{Mean: 0.9999, Min: 0.41}}, "[predicted 0.99 (min 0.41)]"}, // cut, not rounded to 1.00
		{debugger.Stop{Predicted: true, Confidence: &debugger.Confidence{Mean: 1, Min: 1}}, "[predicted 1.00 (min 1.00)]"},
		{debugger.Stop{Confidence: &debugger.Confidence{Mean: 1, Min: 1}}, ""}, // not predicted: no mark
	} {
		if got := debugger.PredictedMark(c.st); got != c.want {
			t.Errorf("PredictedMark(%+v) = %q, want %q", c.st, got, c.want)
		}
	}
}
