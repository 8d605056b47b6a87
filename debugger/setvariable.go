package debugger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"ndb/internal/pysource"
	"ndb/tracer"
)

// SetVariable sets the local name of the frame level frames below the
// current stop's (a front end's "set value", DAP's setVariable) and returns
// its new value's repr.
//
// Where the live program waits, valueExpr is one Python expression,
// evaluated in that frame as pdb's !NAME = EXPR would. The name and the
// expression travel apart, never as one line of source: the name must be
// an identifier (not a keyword), and the expression reaches the program as
// a string literal that eval compiles alone, as an expression, so that a
// value holding a statement (`1; import os`, a second line) is refused
// with a SyntaxError before anything runs, and the variable keeps its value.
//
// On a model engine (Predicted) the local of the current stop is edited,
// as SetLocal does (the next prediction continues from the edit), to the
// repr of valueExpr evaluated over the stop's predicted values (Eval: the
// same rule, one expression); a backend that cannot evaluate takes
// valueExpr as the repr text itself.
func (s *Session) SetVariable(ctx context.Context, level int, name, valueExpr string) (string, error) {
	name, valueExpr = strings.TrimSpace(name), strings.TrimSpace(valueExpr)
	switch {
	case !pysource.IsVariableName(name):
		return "", fmt.Errorf("set: %q is not a variable name", name)
	case valueExpr == "" || strings.ContainsAny(valueExpr, "\r\n"):
		return "", errors.New("set: the value must be one Python expression on one line")
	case level < 0:
		return "", fmt.Errorf("set: no frame %d", level)
	}
	if s.Predicted() {
		if level != 0 {
			return "", errors.New("set: only the current stop's predicted locals can be edited")
		}
		repr := valueExpr
		res, err := s.Eval(ctx, 0, valueExpr, tracer.EvalExpr)
		switch {
		case errors.Is(err, ErrNotLive): // nothing evaluates here: the text is the repr
		case err != nil:
			return "", fmt.Errorf("set: %w", err)
		case !res.OK:
			return "", valueError(res.Text)
		default:
			repr = res.Text
		}
		st, err := s.SetLocal(name, repr)
		if err != nil {
			return "", err
		}
		v, _ := st.Locals.Get(name)
		return v, nil
	}
	quoted, err := json.Marshal(valueExpr) // a JSON string is a Python string literal
	if err != nil {
		return "", err
	}
	// __import__('builtins').eval: the program's own names cannot stand in
	// for eval; it reads the frame's globals and locals, as the statement
	// itself would.
	res, err := s.Eval(ctx, level, name+" = __import__('builtins').eval("+string(quoted)+")", tracer.EvalExec)
	switch {
	case err != nil:
		return "", fmt.Errorf("set: %w", err)
	case !res.OK:
		return "", valueError(res.Text)
	}
	if v, ok := res.Locals.Get(name); ok {
		return v, nil
	}
	if frames := s.Frames(); level < len(frames) {
		v, _ := frames[len(frames)-1-level].Locals.Get(name)
		return v, nil
	}
	return "", nil
}

// valueError is SetVariable's error for a value whose evaluation failed
// with Python's error line text: not one expression, or what it raised.
func valueError(text string) error {
	if strings.HasPrefix(text, "SyntaxError") {
		return fmt.Errorf("set: the value must be one Python expression: %s", text)
	}
	return errors.New(text) // what evaluating it raised, as pdb shows it
}
