package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"ndb/debugger"
	"ndb/engine/openai"
	"ndb/format"
	"ndb/internal/testnet"
	"ndb/tracer"
)

// cwmOracle answers CWM prompts from a real trace: the prompt must be
// exactly the CWM text of the trace's first n frames, and the answer is
// frame n (or <|end_of_text|> after the last).
type cwmOracle struct {
	t      *testing.T
	source string
	entry  int
	states []tracer.State
	calls  atomic.Int32
	mutate func(n int, text string) string // optional: make the model wrong
}

func (o *cwmOracle) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	o.calls.Add(1)
	n := strings.Count(prompt, format.TokFrameSep) - 1
	frames := format.CWMFrames(o.states)
	want, err := format.SerializeCWM(o.source, o.entry, frames[:n], false)
	if err != nil {
		return nil, err
	}
	if prompt != want {
		return nil, fmt.Errorf("cwm oracle: prompt of %d frames is not the trace's CWM text:\n%q\nwant\n%q", n, prompt, want)
	}
	if n >= len(frames) {
		return []string{format.TokEndOfText}, nil
	}
	text, err := format.CWMFrameText(frames[n])
	if o.mutate != nil {
		text = o.mutate(n, text)
	}
	return []string{text}, err
}

func TestCWMRolloutMatchesTheTrace(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		file, call string
		cmds       []cmdCase
	}{
		{"calls.py", "f('ab', 3)", []cmdCase{cS, cS, cS, cS, cS, cS, cN, cN, cR, cN, cN, cN, cRS, cRS, cRN, cRR, cS, cS, cC}},
		{"fib.py", "fib(4)", []cmdCase{cS, cS, cS, cS, cR, cN, cRS, cRN, cS, cC}},
		{"calls.py", "f('ab', 3)", []cmdCase{cB(2), cC, cRS, cB(9), cC, cC, cC}},
		{"raises.py", "g([1, 3, 2])", []cmdCase{cS, cS, cS, cS, cN, cN, cN, cN, cN, cN, cN, cN, cN, cC}},
	}
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.call, func(t *testing.T) {
			p := readProgram(t, tc.file, tc.call)
			re := testReal(t)
			tr, err := re.Trace(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			or := &cwmOracle{t: t, source: tr.Source, states: tr.States}
			cb, err := NewCWM(p, or, Draw{})
			if err != nil {
				t.Fatal(err)
			}
			or.entry = cb.entryLine
			rs, _ := debugger.NewSession(ctx, debugger.NewTraceBackend(tr))
			cs, err := debugger.NewSession(ctx, cb)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.cmds {
				if c.brk > 0 {
					rs.SetBreak(c.brk)
					cs.SetBreak(c.brk)
				}
				want, rerr := rs.Do(ctx, c.cmd)
				got, cerr := cs.Do(ctx, c.cmd)
				if (rerr == nil) != (cerr == nil) {
					t.Fatalf("command %d (%s): real err %v, cwm err %v", i, c.name, rerr, cerr)
				}
				if ds := debugger.Compare(i+1, got, want); len(ds) > 0 {
					t.Fatalf("command %d (%s): cwm %+v\nreal %+v\n%v", i, c.name, got, want, ds)
				}
			}
			if or.calls.Load() == 0 {
				t.Fatal("the model was never asked")
			}
		})
	}
}

func TestCWMEndsAndContinueLimit(t *testing.T) {
	p := readProgram(t, "fib.py", "fib(1)")
	// A model that never ends: the same line forever.
	loop := PredictorFunc(func(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
		return []string{`<|line_sep|>{}<|action_sep|>    return fib(1)<|frame_sep|>`}, nil
	})
	cb, _ := NewCWM(p, loop, Draw{})
	cb.MaxRollout = 20
	s, _ := debugger.NewSession(context.Background(), cb)
	st, err := s.Do(context.Background(), debugger.Command{Action: debugger.Continue})
	if err != nil {
		t.Fatal(err)
	}
	if st.Exit != tracer.ExitNever {
		t.Errorf("stop %+v: a rollout past its limit is exit never", st)
	}
}

// TestCWMEngineOverHTTP runs the cwm engine against a loopback
// OpenAI-compatible server that answers from the real trace, as a server
// would: the text cut before the stop sequence.
func TestCWMEngineOverHTTP(t *testing.T) {
	ctx := context.Background()
	p := readProgram(t, "calls.py", "f('ab', 1)")
	tr, err := testReal(t).Trace(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	or := &cwmOracle{t: t, source: tr.Source, states: tr.States}
	srv := testnet.Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string   `json:"prompt"`
			Stop   []string `json:"stop"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if !slices.Equal(req.Stop, []string{format.TokFrameSep, format.TokEndOfText}) {
			http.Error(w, "stop", 400)
			return
		}
		out, err := or.Predict(r.Context(), req.Prompt, 1, Draw{})
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		text, _ := openai.CutAtStop(out[0], req.Stop)
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "text": text, "finish_reason": "stop"}}})
	}))
	e, err := New("cwm", Options{OpenAI: openai.Config{BaseURL: srv.URL + "/v1", Model: "cwm"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	or.entry = b.(*CWM).entryLine
	s, _ := debugger.NewSession(ctx, b)
	st, err := s.Do(ctx, debugger.Command{Action: debugger.StepInto})
	if err != nil || st.Lineno != 20 {
		t.Fatalf("%+v %v", st, err)
	}
	st, err = s.Do(ctx, debugger.Command{Action: debugger.Continue})
	if err != nil || st.Exit != tracer.ExitNormal {
		t.Fatalf("%+v %v", st, err)
	}
	if int(or.calls.Load()) != len(tr.States) {
		t.Errorf("%d predictions for a trace of %d states (the last one ends it)", or.calls.Load(), len(tr.States))
	}
}
