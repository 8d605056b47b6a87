package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// modelSession is what a model engine's backend (Neural, CWM) offers its
// session beside the predictions, through debugger's capabilities: verify
// (debugger.Verifier: its program run by the real engine), expressions
// over the predicted values (debugger.ValueEvaluator: p, watch and
// evaluate on every front end) and the check of an edited value
// (debugger.ReprChecker). The session commands themselves (resample, set,
// verify) are debugger.Session's.
type modelSession struct {
	program tracer.Program // what RealTrace runs
	// Real runs the program for verify and evaluates expressions over the
	// predicted values; nil: neither works (an engine made without a
	// registry: NewNeuralEngine, or a backend made directly).
	Real debugger.ProgramTracer

	evalMu sync.Mutex
	evals  map[string]valueEval // evaluations over predicted values, by request
}

// RealTrace implements debugger.Verifier.
func (m *modelSession) RealTrace(ctx context.Context) (*tracer.Trace, error) {
	if m.Real == nil {
		return nil, debugger.ErrNoRealEngine
	}
	return m.Real.Trace(ctx, m.program)
}

// HoldsRepr implements debugger.ReprChecker: a value may not hold a
// special token of the model's format (the prompt could not be read back).
func (m *modelSession) HoldsRepr(value string) bool { return !format.ContainsSpecialToken(value) }

// A model engine never runs the program, so an expression at a predicted
// stop (`s + x`, `len(xs)`) is evaluated over the frame's predicted values
// instead: the real engine runs a tiny program whose globals are those
// values, in the tracer's sandbox and under its limits. The values and
// the expression travel as data, never as code: the program's only
// variable part is a JSON string literal that it decodes; each value goes
// through ast.literal_eval, so a value that is not a Python literal
// (`<A object at 0x...>`) is left out and an expression that needs it is
// refused, saying so; the expression is compiled alone, in eval mode, so a
// statement never runs.

// valueEvalProgram answers one evaluation as a JSON line on its stdout;
// %s is the JSON-quoted request {"values": {name: repr}, "src", "mode"}.
const valueEvalProgram = `import ast as _ast, io as _io, json as _json, pprint as _pprint, sys as _sys, traceback as _tb
_req = _json.loads(%s)
_g, _opaque = {}, []
for _k, _v in _req["values"].items():
    try:
        _g[_k] = _ast.literal_eval(_v)
    except Exception:
        _opaque.append(_k)
_cut = lambda s: s if len(s) <= 100000 else s[:100000] + "..."
_err = lambda e: _tb.format_exception_only(type(e), e)[-1].strip()
_out, _saved = _io.StringIO(), _sys.stdout
try:
    _code = compile(_req["src"], "<stdin>", "eval", dont_inherit=True)
except SyntaxError as _e:
    _ans = {"error": _err(_e), "syntax": True}
    try:
        compile(_req["src"], "<stdin>", "single", dont_inherit=True)
        _ans["statement"] = True
    except SyntaxError:
        pass
else:
    _sys.stdout = _out
    try:
        _v = eval(_code, _g)
        _ans = {"ok": True, "value": _cut(_pprint.pformat(_v) if _req["mode"] == "pp" else repr(_v)), "none": _v is None}
    except BaseException as _e:
        _ans = {"error": _err(_e), "name": _e.name if isinstance(_e, NameError) else None}
    finally:
        _sys.stdout = _saved
_ans["printed"] = _cut(_out.getvalue())
_ans["opaque"] = _opaque
print(_json.dumps(_ans))
`

// valueEval is one evaluation's answer (cached: a client asks for each
// watch at each stop).
type valueEval struct {
	res tracer.EvalResult
	err error
}

// maxValueEvals bounds a backend's cache of evaluations.
const maxValueEvals = 256

// EvalValues implements debugger.ValueEvaluator: src evaluated over the
// predicted values of frame, as pdb's p (tracer.EvalExpr), pp (EvalPretty)
// or ! (EvalExec: an expression only; a statement is ErrNotLive, since
// nothing runs the program). A plain local name is answered from the
// frame itself, whatever its value.
func (m *modelSession) EvalValues(ctx context.Context, frame debugger.Stop, src, mode string) (tracer.EvalResult, error) {
	src = strings.TrimSpace(src)
	switch mode {
	case tracer.EvalExpr, tracer.EvalPretty, tracer.EvalExec:
	default:
		return tracer.EvalResult{}, fmt.Errorf("unknown evaluation mode %q", mode)
	}
	if v, ok := frame.Locals.Get(src); ok && debugger.IsName(src) {
		return tracer.EvalResult{OK: true, Text: shown(v, v == "None", "", mode)}, nil
	}
	switch {
	case src == "" || strings.ContainsAny(src, "\r\n"):
		return tracer.EvalResult{}, debugger.NotLive("a model engine evaluates one-line expressions over the predicted values")
	case m.Real == nil:
		return tracer.EvalResult{}, debugger.NotLive("a model engine without a real engine looks up local names only (nothing evaluates expressions over the predicted values)")
	}
	values := map[string]string{}
	for _, l := range frame.Locals {
		if debugger.IsName(l.Name) {
			values[l.Name] = l.Value
		}
	}
	req, err := json.Marshal(map[string]any{"values": values, "src": src, "mode": mode})
	if err != nil {
		return tracer.EvalResult{}, err
	}
	key := string(req)
	m.evalMu.Lock()
	if r, ok := m.evals[key]; ok {
		m.evalMu.Unlock()
		return r.res, r.err
	}
	m.evalMu.Unlock()
	res, err := m.evalValues(ctx, src, mode, values, req)
	if ctx.Err() != nil {
		return res, err // not an answer to keep
	}
	m.evalMu.Lock()
	if m.evals == nil || len(m.evals) >= maxValueEvals {
		m.evals = map[string]valueEval{}
	}
	m.evals[key] = valueEval{res, err}
	m.evalMu.Unlock()
	return res, err
}

func (m *modelSession) evalValues(ctx context.Context, src, mode string, values map[string]string, req []byte) (tracer.EvalResult, error) {
	quoted, _ := json.Marshal(string(req)) // a JSON string is a Python string literal
	tr, err := m.Real.Trace(ctx, tracer.Program{Path: "<watch>", Source: fmt.Sprintf(valueEvalProgram, quoted)})
	if err != nil {
		return tracer.EvalResult{}, fmt.Errorf("cannot evaluate %q over the predicted values: %w", src, err)
	}
	var ans struct {
		OK        bool     `json:"ok"`
		Value     string   `json:"value"`
		None      bool     `json:"none"`
		Error     string   `json:"error"`
		Syntax    bool     `json:"syntax"`
		Statement bool     `json:"statement"`
		Name      *string  `json:"name"`
		Printed   string   `json:"printed"`
		Opaque    []string `json:"opaque"`
	}
	lines := strings.Split(strings.TrimRight(tr.Stdout, "\n"), "\n")
	if tr.Exit.Kind != tracer.ExitNormal || json.Unmarshal([]byte(lines[len(lines)-1]), &ans) != nil {
		why := tr.Exit.Reason
		if tr.Exit.Error != "" {
			why = tr.Exit.Error
		}
		return tracer.EvalResult{}, fmt.Errorf("%q did not finish over the predicted values (%s)", src, why)
	}
	switch {
	case ans.OK:
		return tracer.EvalResult{OK: true, Text: shown(ans.Value, ans.None, ans.Printed, mode)}, nil
	case ans.Statement && mode == tracer.EvalExec:
		return tracer.EvalResult{}, debugger.NotLive("a model engine never runs the program: it evaluates expressions over the predicted values, not statements")
	case ans.Syntax:
		return tracer.EvalResult{Text: ans.Error}, nil
	case ans.Name != nil:
		if v, ok := values[*ans.Name]; ok {
			return tracer.EvalResult{Text: fmt.Sprintf("%s's predicted value %s is not a Python literal: a model engine evaluates expressions over literal values only", *ans.Name, clip(v))}, nil
		}
		return tracer.EvalResult{Text: ans.Printed + ans.Error + " (not among the predicted locals)"}, nil
	}
	return tracer.EvalResult{Text: ans.Printed + ans.Error}, nil
}

// shown is an evaluation's text as the live program's would be: what the
// expression printed, then its repr; a statement line (EvalExec) shows the
// repr on a line of its own, and nothing for None, as Python's prompt.
func shown(value string, none bool, printed, mode string) string {
	if mode != tracer.EvalExec {
		return printed + value
	}
	if none {
		return printed
	}
	return printed + value + "\n"
}

// clip shortens a repr for a message.
func clip(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}

// modelSession's capabilities, declared for both model backends.
var (
	_ debugger.Verifier       = (*Neural)(nil)
	_ debugger.ValueEvaluator = (*Neural)(nil)
	_ debugger.ReprChecker    = (*Neural)(nil)
	_ debugger.Resampler      = (*Neural)(nil)
	_ debugger.Verifier       = (*CWM)(nil)
	_ debugger.ValueEvaluator = (*CWM)(nil)
	_ debugger.ReprChecker    = (*CWM)(nil)
	_ debugger.Resampler      = (*CWM)(nil)
)
