package dap

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"ndb/debugger"
	"ndb/engine"
	"ndb/tracer"
)

// A model engine never runs the program, so a watch or hover expression
// there (`s + x`, `len(xs)`) is evaluated over the stop's predicted values
// instead: the real engine runs it as the call of a tiny program whose
// globals are those values, in the tracer's sandbox and under its limits.
// The values travel as data, never as code: the program's only variable
// part besides the expression is a JSON string literal that it decodes,
// and each value goes through ast.literal_eval, so a value that is not a
// Python literal (`<A object at 0x...>`) is left out and an expression
// that needs it is refused, saying so.

// literalPrelude defines the stop's literal values as globals; %s is the
// JSON-quoted JSON object of name -> repr.
const literalPrelude = `import ast as _ndb_ast, json as _ndb_json
_ndb_opaque = []
for _ndb_k, _ndb_v in _ndb_json.loads(%s).items():
    try:
        globals()[_ndb_k] = _ndb_ast.literal_eval(_ndb_v)
    except Exception:
        _ndb_opaque.append(_ndb_k)
del _ndb_ast, _ndb_json, _ndb_k, _ndb_v
`

// maxPredEvalCache bounds a connection's cache of evaluations (a client
// asks for each watch at each stop).
const maxPredEvalCache = 256

var nameErrorRe = regexp.MustCompile(`^NameError\("name '([A-Za-z_][A-Za-z0-9_]*)' is not defined"\)$`)

// evalPredicted evaluates expr over the literal values of a predicted
// stop's frame f; the error says why it cannot (a value that is not a
// literal, what the expression raised).
func (c *conn) evalPredicted(ctx context.Context, f debugger.Stop, expr string) (string, error) {
	if strings.ContainsAny(expr, "\r\n") || strings.TrimSpace(expr) == "" {
		return "", fmt.Errorf("a model engine evaluates one-line expressions over the predicted values")
	}
	vals := map[string]string{}
	for _, l := range f.Locals {
		if isName(l.Name) {
			vals[l.Name] = l.Value
		}
	}
	data, err := json.Marshal(vals)
	if err != nil {
		return "", err
	}
	key := expr + "\x00" + string(data)
	if r, ok := c.predEval[key]; ok {
		return r.value, r.err
	}
	quoted, _ := json.Marshal(string(data)) // a JSON string is a Python string literal
	prog := engine.Program{Path: "<watch>", Source: fmt.Sprintf(literalPrelude, quoted), Call: expr}
	tr, err := c.srv.reg.Real().Trace(ctx, prog)
	var value string
	switch {
	case err != nil:
		err = fmt.Errorf("cannot evaluate %q over the predicted values: %w", expr, err)
	case tr.Exit.Kind == tracer.ExitNormal && len(tr.States) > 0:
		value = tr.States[len(tr.States)-1].Arg // the wrapper's return: the value's repr
	case tr.Exit.Kind == tracer.ExitError:
		err = predEvalError(expr, tr.Exit.Error, vals)
	default:
		err = fmt.Errorf("%q did not finish over the predicted values (%s)", expr, tr.Exit.Reason)
	}
	if c.predEval == nil || len(c.predEval) >= maxPredEvalCache {
		c.predEval = map[string]predEvalResult{}
	}
	c.predEval[key] = predEvalResult{value, err}
	return value, err
}

type predEvalResult struct {
	value string
	err   error
}

// predEvalError says why an expression failed: a name whose predicted
// value is not a literal, else what it raised, as pdb shows it.
func predEvalError(expr, exc string, vals map[string]string) error {
	if m := nameErrorRe.FindStringSubmatch(exc); m != nil {
		if v, ok := vals[m[1]]; ok {
			return fmt.Errorf("%s's predicted value %s is not a Python literal: a model engine evaluates expressions over literal values only", m[1], clip(v))
		}
		return fmt.Errorf("NameError: name '%s' is not defined (not among the predicted locals)", m[1])
	}
	typ, rest, _ := strings.Cut(exc, "(")
	return fmt.Errorf("%s: %s", typ, strings.TrimSuffix(rest, ")"))
}
