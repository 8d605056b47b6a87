package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// PredictOutput predicts the return value of call (e.g. "f(1, 'a')") on
// code as SPEC section 6 does: from main's call, step into the line and
// into f's call, then one step_return; the return state's value is the
// answer (its repr). The real engine runs the code and answers exactly.
func PredictOutput(ctx context.Context, e Engine, code, call string) (string, debugger.Stop, error) {
	if strings.TrimSpace(call) == "" {
		return "", debugger.Stop{}, errors.New("predict_output: a call such as f(1, 'a') is required")
	}
	b, err := e.Open(ctx, Program{Source: code, Call: call})
	if err != nil {
		return "", debugger.Stop{}, err
	}
	s, err := debugger.NewSession(ctx, b)
	if err != nil {
		closeBackend(b)
		return "", debugger.Stop{}, err
	}
	defer s.Close() // a live run holds a worker, its folder and its process
	st := s.Current()
	if st.IsExit() {
		// It never started (a syntax error in the code or the call): say
		// why, not "the program has exited" from the first step.
		return "", st, endedBeforeReturn(st)
	}
	for _, a := range []debugger.Action{debugger.StepInto, debugger.StepInto, debugger.StepReturn} {
		if st, err = s.Do(ctx, debugger.Command{Action: a}); err != nil {
			return "", st, err
		}
		if st.IsExit() {
			return "", st, endedBeforeReturn(st)
		}
	}
	switch st.Event {
	case tracer.EventReturn:
		if !s.Predicted() {
			// A real return after an uncaught exception carries None: look
			// at how the run ended.
			if end, err := s.Do(ctx, debugger.Command{Action: debugger.Continue}); err == nil && end.Exit == tracer.ExitError {
				return "", st, fmt.Errorf("the call raises: %s", end.Arg)
			}
		}
		return st.Arg, st, nil
	case tracer.EventException:
		return "", st, fmt.Errorf("the call raises: %s", st.Arg)
	}
	return "", st, fmt.Errorf("step_return stopped at a %s state, not a return", st.Event)
}

// closeBackend releases what a backend holds (a live run's worker).
func closeBackend(b debugger.Backend) {
	if c, ok := b.(interface{ Close() error }); ok {
		c.Close()
	}
}

// endedBeforeReturn is PredictOutput's error for a run that ended at exit
// st before the call returned.
func endedBeforeReturn(st debugger.Stop) error {
	if st.Exit == tracer.ExitError {
		return fmt.Errorf("the call raises: %s", st.Arg)
	}
	return fmt.Errorf("the program ended (%s) before the call returned", st.Exit)
}

// InputPredictor is a backend that predicts the call state of a function
// from its return state.
type InputPredictor interface {
	PredictCall(ctx context.Context, function, output string) (debugger.Stop, error)
}

// PredictInput predicts the arguments function was called with when it
// returned output (a repr), as SPEC section 6 does: one inv_step_call from
// its return state. The return state is placed at the function's last
// return statement.
func PredictInput(ctx context.Context, e Engine, code, function, output string) (tracer.Locals, debugger.Stop, error) {
	b, err := e.Open(ctx, Program{Source: code})
	if err != nil {
		return nil, debugger.Stop{}, err
	}
	ip, ok := b.(InputPredictor)
	if !ok {
		closeBackend(b)
		return nil, debugger.Stop{}, debugger.ErrNoInverse
	}
	st, err := ip.PredictCall(ctx, function, output)
	if err != nil {
		return nil, st, err
	}
	return st.Locals, st, nil
}

// PredictCall implements InputPredictor.
func (b *Neural) PredictCall(ctx context.Context, function, output string) (debugger.Stop, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acc = confidenceSum{}
	function, output = strings.TrimSpace(function), strings.TrimSpace(output)
	if output == "" || strings.ContainsAny(output, "\r\n") || format.ContainsSpecialToken(output) {
		return debugger.Stop{}, errors.New("predict_input: the output must be one line of Python repr text")
	}
	line := b.ix.lastReturn(function)
	if line == 0 {
		return debugger.Stop{}, fmt.Errorf("predict_input: the code defines no function %q", function)
	}
	ret := debugger.Stop{State: tracer.State{Event: tracer.EventReturn, Lineno: line, Function: function,
		Src: b.ix.line(line), Arg: output}, Index: -1}
	hist := []debugger.Step{{Stop: ret}}
	st, err := b.predict(ctx, hist, format.Step{Action: debugger.InvStepCall}, 0)
	if err != nil {
		return st, err
	}
	if st.Event != tracer.EventCall {
		return st, fmt.Errorf("predict_input: the model answered a %s state, not the call", st.Describe())
	}
	return st, nil
}

// lastReturn is the line of the last return statement of function (a
// name pysource.Index.Lookup finds, `C.m` too), else the last line of its
// body; 0 if the source defines no such function.
func (ix *sourceIndex) lastReturn(function string) int {
	s := ix.px.Lookup(function)
	if s == nil {
		return 0
	}
	if r := ix.px.Returns(s); len(r) > 0 {
		return r[len(r)-1]
	}
	last := s.Body // a one-line body runs on its header's line
	for n := s.Body; n <= s.End; n++ {
		if ix.px.StatementStarts(n) && ix.px.Owner(n) == s {
			last = n
		}
	}
	return last
}
