package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"ndb/debugger"
)

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

// RunCommand runs one neural session command line on s ("back",
// "resample", "set NAME = VALUE", "verify"); ok is false when line is none
// of them. real runs verify (nil: verify fails).
func RunCommand(ctx context.Context, s *debugger.Session, real *RealEngine, line string) (res CommandResult, ok bool, err error) {
	word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch word {
	case "back":
		if _, did := s.Back(); !did {
			return res, true, errors.New("back: already at the start")
		}
		return CommandResult{Message: "undid the last step", Moved: true}, true, nil
	case "resample":
		if _, err := Resample(ctx, s); err != nil {
			return res, true, err
		}
		return CommandResult{Message: "drew another prediction", Moved: true}, true, nil
	case "set":
		name, value, found := strings.Cut(rest, "=")
		if !found {
			return res, true, errors.New("usage: set NAME = VALUE")
		}
		if _, err := SetLocal(s, name, value); err != nil {
			return res, true, err
		}
		return CommandResult{Message: strings.TrimSpace(name) + " = " + strings.TrimSpace(value), Moved: true}, true, nil
	case "verify":
		if real == nil {
			return res, true, errors.New("verify: no real engine")
		}
		v, err := Verify(ctx, s, real)
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
