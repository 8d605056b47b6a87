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

// The neural session commands that debugger.Session does not have itself:
// resample, set and verify. They work on any session whose backend comes
// from a model engine (Neural or CWM).

// Resampler is a backend that can draw another prediction.
type Resampler interface {
	// Resample makes the next prediction a sample instead of greedy.
	Resample()
}

// Programmer is a backend that knows the program it debugs.
type Programmer interface {
	Program() tracer.Program
}

// ErrNotPredicted says a neural command was used on the real engine.
var ErrNotPredicted = errors.New("this session runs the real program: its states are not predictions (use a model engine)")

// IsPredicted reports whether s's stops are predictions.
func IsPredicted(s *debugger.Session) bool {
	_, ok := s.Backend().(Resampler)
	return ok
}

// Resample undoes the last prediction and draws another one for the same
// command (temperature 0.6, top-p 0.95, a fresh seed each time).
func Resample(ctx context.Context, s *debugger.Session) (debugger.Stop, error) {
	r, ok := s.Backend().(Resampler)
	if !ok {
		return s.Current(), ErrNotPredicted
	}
	h := s.History()
	if len(h) < 2 {
		return s.Current(), errors.New("nothing to resample: no prediction yet")
	}
	cmd := h[len(h)-1].Command
	cmd.Breaks = nil // Do fills them in again
	if cmd.Action == debugger.Continue && !cmd.Backward {
		cmd.Src, cmd.Line = "", 0
	}
	s.Back()
	r.Resample()
	return s.Do(ctx, cmd)
}

// SetLocal edits a predicted local of the current stop (a counterfactual):
// the next prediction continues from the edited state, since the history is
// the model's context. value is the new repr text, e.g. "5" or "'abc'".
// It goes through debugger.Session.Amend, so the start cannot be edited.
func SetLocal(s *debugger.Session, name, value string) (debugger.Stop, error) {
	if !IsPredicted(s) {
		return s.Current(), ErrNotPredicted
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	cur := s.Current()
	switch {
	case cur.IsExit():
		return cur, errors.New("set: the program has exited")
	case cur.Event != tracer.EventLine && cur.Event != tracer.EventCall && cur.Event != debugger.KindInvLineCall:
		return cur, fmt.Errorf("set: a %s state has no locals", cur.Event)
	case !isIdentifier(name):
		return cur, fmt.Errorf("set: %q is not a variable name", name)
	case value == "" || strings.ContainsAny(value, "\r\n") || format.ContainsSpecialToken(value):
		return cur, errors.New("set: the value must be one line of Python repr text")
	}
	locals := append(tracer.Locals(nil), cur.Locals...)
	found := false
	for i := range locals {
		if locals[i].Name == name {
			locals[i].Value, found = value, true
		}
	}
	if !found {
		locals = append(locals, tracer.Var{Name: name, Value: value})
	}
	cur.Locals = locals
	cur.Confidence = nil // the values are the user's now, not the model's: still predicted, no figures
	if err := s.Amend(cur); err != nil {
		return s.Current(), fmt.Errorf("set: %w", err)
	}
	return s.Current(), nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// Divergence is one field where a predicted stop differs from the real one.
type Divergence struct {
	Step      int    `json:"step"`      // index in the session's history (0: the start)
	Field     string `json:"field"`     // event, line, function, depth, locals.NAME, value, exit
	Predicted string `json:"predicted"` // "" when absent
	Real      string `json:"real"`
}

func (d Divergence) String() string {
	show := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	return fmt.Sprintf("step %d: %s: predicted %s, real %s", d.Step, d.Field, show(d.Predicted), show(d.Real))
}

// Verification is the result of Verify.
type Verification struct {
	Steps       int             `json:"steps"`       // history entries compared
	Divergences []Divergence    `json:"divergences"` // every differing field, in order
	FirstStep   int             `json:"first_step"`  // the first step with a divergence; -1 if none
	RealStops   []debugger.Stop `json:"real_stops"`  // the real engine's answer to each command
}

// Verify runs the program for real (under the tracer's limits) and replays
// the session's commands on the trace, comparing every predicted stop with
// the real one. After a divergence the real side continues from its own
// state, so later steps show whether the model recovers.
func Verify(ctx context.Context, s *debugger.Session, real *RealEngine) (Verification, error) {
	pg, ok := s.Backend().(Programmer)
	if !ok {
		return Verification{FirstStep: -1}, ErrNotPredicted
	}
	tr, err := real.Trace(ctx, pg.Program())
	if err != nil {
		return Verification{FirstStep: -1}, err
	}
	rb := debugger.NewTraceBackend(tr)
	start, err := rb.Start(ctx)
	if err != nil {
		return Verification{FirstStep: -1}, err
	}
	h := s.History()
	v := Verification{FirstStep: -1}
	realHist := []debugger.Step{{Stop: start}}
	add := func(i int, ds []Divergence) {
		if len(ds) > 0 && v.FirstStep < 0 {
			v.FirstStep = i
		}
		v.Divergences = append(v.Divergences, ds...)
	}
	add(0, Compare(0, h[0].Stop, start))
	v.RealStops = append(v.RealStops, start)
	v.Steps = 1
	for i := 1; i < len(h); i++ {
		cmd := h[i].Command
		rs, err := rb.Next(ctx, realHist, cmd)
		if err != nil {
			add(i, []Divergence{{Step: i, Field: "exit", Predicted: describe(h[i].Stop), Real: "cannot move: " + err.Error()}})
			v.Steps = i + 1
			break
		}
		realHist = append(realHist, debugger.Step{Command: cmd, Stop: rs})
		v.RealStops = append(v.RealStops, rs)
		add(i, Compare(i, h[i].Stop, rs))
		v.Steps = i + 1
	}
	return v, nil
}

func describe(st debugger.Stop) string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	return fmt.Sprintf("line %d (%s)", st.Lineno, st.Event)
}

// Compare lists the fields where a predicted stop differs from a real one.
func Compare(step int, pred, real debugger.Stop) []Divergence {
	var out []Divergence
	diff := func(field, p, r string) {
		if p != r {
			out = append(out, Divergence{Step: step, Field: field, Predicted: p, Real: r})
		}
	}
	if pred.IsExit() || real.IsExit() {
		diff("exit", describe(pred), describe(real))
		return out
	}
	diff("event", pred.Event, real.Event)
	diff("line", fmt.Sprint(pred.Lineno), fmt.Sprint(real.Lineno))
	diff("function", pred.Function, real.Function)
	diff("depth", fmt.Sprint(pred.Depth), fmt.Sprint(real.Depth))
	seen := map[string]bool{}
	realLocals := real.Locals
	if real.Event == tracer.EventReturn || real.Event == tracer.EventException {
		// the real engine has locals here (issue 20), the model never
		// predicts them (its text has none at return and exception)
		realLocals = nil
	}
	for _, v := range realLocals {
		seen[v.Name] = true
		p, _ := pred.Locals.Get(v.Name)
		diff("locals."+v.Name, p, v.Value)
	}
	for _, v := range pred.Locals {
		if !seen[v.Name] {
			diff("locals."+v.Name, v.Value, "")
		}
	}
	diff("value", pred.Arg, real.Arg)
	return out
}
