package debugger

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"ndb/tracer"
)

// The neural session commands: back (every engine), resample, set and
// verify (a model engine's session: its backend is a Resampler, and a
// Verifier for verify). Every front end reaches them here, through the
// session (RunCommand for a console line).

// ErrNotPredicted says a neural command was used on the real engine.
var ErrNotPredicted = errors.New("this session runs the real program: its states are not predictions (use a model engine)")

// Predicted reports whether the session's stops are a model's predictions
// (a model engine: its backend is a Resampler).
func (s *Session) Predicted() bool {
	_, ok := s.b.(Resampler)
	return ok
}

// Resample undoes the last prediction and draws another one for the same
// command (temperature 0.6, top-p 0.95, a fresh seed each time).
func (s *Session) Resample(ctx context.Context) (Stop, error) {
	r, ok := s.b.(Resampler)
	if !ok {
		return s.Current(), ErrNotPredicted
	}
	h := s.History()
	if len(h) < 2 {
		return s.Current(), errors.New("nothing to resample: no prediction yet")
	}
	cmd := h[len(h)-1].Command
	cmd.Breaks = nil // Do fills them in again
	if cmd.Action == Continue && !cmd.Backward {
		cmd.Src, cmd.Line = "", 0
	}
	s.Back()
	r.Resample()
	return s.Do(ctx, cmd)
}

// SetLocal edits a predicted local of the current stop (a counterfactual):
// the next prediction continues from the edited state, since the history is
// the model's context. value is the new repr text, e.g. "5" or "'abc'".
// It goes through Amend, so the start cannot be edited.
func (s *Session) SetLocal(name, value string) (Stop, error) {
	if !s.Predicted() {
		return s.Current(), ErrNotPredicted
	}
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	cur := s.Current()
	switch {
	case cur.IsExit():
		return cur, errors.New("set: the program has exited")
	case cur.Event != tracer.EventLine && cur.Event != tracer.EventCall && cur.Event != KindInvLineCall:
		return cur, fmt.Errorf("set: a %s state has no locals", cur.Event)
	case !IsName(name):
		return cur, fmt.Errorf("set: %q is not a variable name", name)
	case value == "" || strings.ContainsAny(value, "\r\n") || !s.holdsRepr(value):
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

// holdsRepr reports whether the backend's context can hold value as a
// repr (a ReprChecker says; others hold any line).
func (s *Session) holdsRepr(value string) bool {
	rc, ok := s.b.(ReprChecker)
	return !ok || rc.HoldsRepr(value)
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
	Steps       int          `json:"steps"`       // history entries compared
	Divergences []Divergence `json:"divergences"` // every differing field, in order
	FirstStep   int          `json:"first_step"`  // the first step with a divergence; -1 if none
	RealStops   []Stop       `json:"real_stops"`  // the real engine's answer to each command
}

// Verify runs the program for real (the backend's Verifier: the real
// engine's tracer, under its limits) and replays the session's commands on
// the trace, comparing every predicted stop with the real one. After a
// divergence the real side continues from its own state, so later steps
// show whether the model recovers.
func (s *Session) Verify(ctx context.Context) (Verification, error) {
	vf, ok := s.b.(Verifier)
	if !ok || !s.Predicted() {
		return Verification{FirstStep: -1}, ErrNotPredicted
	}
	tr, err := vf.RealTrace(ctx)
	if err != nil {
		return Verification{FirstStep: -1}, err
	}
	rb := NewTraceBackend(tr)
	start, err := rb.Start(ctx)
	if err != nil {
		return Verification{FirstStep: -1}, err
	}
	h := s.History()
	v := Verification{FirstStep: -1}
	realHist := []Step{{Stop: start}}
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
			add(i, []Divergence{{Step: i, Field: "exit", Predicted: h[i].Stop.Describe(), Real: "cannot move: " + err.Error()}})
			v.Steps = i + 1
			break
		}
		realHist = append(realHist, Step{Command: cmd, Stop: rs})
		v.RealStops = append(v.RealStops, rs)
		add(i, Compare(i, h[i].Stop, rs))
		v.Steps = i + 1
	}
	return v, nil
}

// Describe is a stop in a few words, for messages: "exit normal",
// "line 4 (return)".
func (st Stop) Describe() string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	return fmt.Sprintf("line %d (%s)", st.Lineno, st.Event)
}

// Compare lists the fields where a predicted stop differs from a real one.
func Compare(step int, pred, real Stop) []Divergence {
	var out []Divergence
	diff := func(field, p, r string) {
		if p != r {
			out = append(out, Divergence{Step: step, Field: field, Predicted: p, Real: r})
		}
	}
	if pred.IsExit() || real.IsExit() {
		diff("exit", pred.Describe(), real.Describe())
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

// CommandHelp is one neural session command, for a front end's help.
type CommandHelp struct {
	Name, Args, Help string
}

// NeuralCommands are the commands RunCommand takes, in help order. Every
// front end (terminal, DAP console) offers them with this text.
var NeuralCommands = []CommandHelp{
	{"back", "", "Undo the last step (the last prediction, on a model engine)."},
	{"resample", "", "Draw another prediction for the last step: undo it and sample again (temperature 0.6, top-p 0.95); model engines only."},
	{"set", "NAME = VALUE", "Change a predicted local: VALUE is its repr text, and the next prediction continues from the edited state; model engines only."},
	{"verify", "", "Check the predictions against a real run: list every field where a predicted stop differs from the real one; model engines only."},
}

// CommandResult is what a neural command did.
type CommandResult struct {
	Message      string        // one line, or the divergences one per line
	Moved        bool          // the current stop changed (show it again)
	Verification *Verification // for verify
}

// RunCommand runs one neural session command line ("back", "resample",
// "set NAME = VALUE", "verify"); ok is false when line is none of them.
func (s *Session) RunCommand(ctx context.Context, line string) (res CommandResult, ok bool, err error) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch word {
	case "back":
		if _, did := s.Back(); !did {
			return res, true, errors.New("back: already at the start")
		}
		return CommandResult{Message: "undid the last step", Moved: true}, true, nil
	case "resample":
		if _, err := s.Resample(ctx); err != nil {
			return res, true, err
		}
		return CommandResult{Message: "drew another prediction", Moved: true}, true, nil
	case "set":
		name, value, found := strings.Cut(rest, "=")
		if !found {
			return res, true, errors.New("usage: set NAME = VALUE")
		}
		if _, err := s.SetLocal(name, value); err != nil {
			return res, true, err
		}
		return CommandResult{Message: strings.TrimSpace(name) + " = " + strings.TrimSpace(value), Moved: true}, true, nil
	case "verify":
		v, err := s.Verify(ctx)
		if errors.Is(err, ErrNoRealEngine) {
			return res, true, errors.New("verify: no real engine")
		}
		if err != nil {
			return res, true, err
		}
		r := CommandResult{Verification: &v}
		if len(v.Divergences) == 0 {
			r.Message = fmt.Sprintf("all %d stops match the real program", v.Steps)
			return r, true, nil
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d divergences in %d stops (first at step %d):", len(v.Divergences), v.Steps, v.FirstStep)
		for _, d := range v.Divergences {
			b.WriteString("\n  " + d.String())
		}
		r.Message = b.String()
		return r, true, nil
	}
	return res, false, nil
}
