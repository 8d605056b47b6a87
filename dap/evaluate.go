package dap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/tracer"
)

// evaluate (watch, hover, the debug console with the neural session
// commands) and exceptionInfo.

// onEvaluate evaluates an expression in a frame of the live program
// (Session.Eval, pdb's p; in the debug console, context "repl", the line
// runs as pdb runs a line that is not a command, so statements work too). On
// a model engine the session evaluates an expression over the frame's
// predicted values. Where nothing evaluates (a stop in the recorded past,
// the end, a statement on a model engine) it looks a name up in the
// frame's recorded locals. In the debug console it also takes the neural
// session commands: back, resample, verify and set NAME = VALUE.
func (c *conn) onEvaluate(ctx context.Context, r *godap.EvaluateRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	expr := strings.TrimSpace(r.Arguments.Expression)
	if r.Arguments.Context == "repl" {
		if res, moved, ok, err := c.neuralCommand(ctx, expr); ok {
			if err != nil {
				return err
			}
			c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: res}})
			if moved {
				c.report(c.sess.Current(), "step")
			}
			return nil
		}
	}
	fs := c.frames()
	id := r.Arguments.FrameId
	if id == 0 {
		id = 1
	}
	if id < 1 || id > len(fs) {
		return errors.New("the program is not stopped in a frame")
	}
	f := fs[id-1]
	if (expr == "__return__" && f.Event == "return" || expr == "__exception__" && f.Event == "exception") && id == 1 {
		c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: f.Arg}})
		return nil
	}
	var notLive error = debugger.ErrNotLive
	if !c.closed {
		res, mode, err := c.eval(ctx, id-1, expr, r.Arguments.Context == "repl")
		switch {
		case err == nil && !res.OK:
			return errors.New(res.Text) // pdb's line: NameError: name 'x' is not defined
		case err == nil:
			text := res.Text
			if mode == tracer.EvalExec {
				text = strings.TrimSuffix(text, "\n") // what the statement printed
			}
			v := c.variable("", text, "")
			c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: text,
				VariablesReference: v.VariablesReference, NamedVariables: v.NamedVariables, IndexedVariables: v.IndexedVariables}})
			if mode == tracer.EvalExec {
				// A statement may have changed the frame's variables.
				c.send(&godap.InvalidatedEvent{Event: c.event("invalidated"), Body: godap.InvalidatedEventBody{
					Areas: []godap.InvalidatedAreas{"variables"}, ThreadId: threadID}})
			}
			return nil
		case !errors.Is(err, debugger.ErrNotLive):
			return err
		default:
			notLive = err // why not, as the engine says it
		}
	}
	v, ok := f.Locals.Get(expr)
	if !ok {
		return fmt.Errorf("%q is not a local name of this frame, and %v", expr, notLive)
	}
	nv := c.variable("", v, "")
	c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: v,
		VariablesReference: nv.VariablesReference, NamedVariables: nv.NamedVariables, IndexedVariables: nv.IndexedVariables}})
	return nil
}

// eval evaluates src in the frame level frames below the current stop's:
// as an expression (pdb's p), or, with statements (the debug console), as
// pdb runs a line that is not a command: compiled like a line typed at the
// Python prompt, so an expression shows its repr and a statement runs.
// mode is how it ran.
func (c *conn) eval(ctx context.Context, level int, src string, statements bool) (tracer.EvalResult, string, error) {
	mode := tracer.EvalExpr
	if statements {
		mode = tracer.EvalExec
	}
	res, err := c.sess.Eval(ctx, level, src, mode)
	return res, mode, err
}

// onExceptionInfo describes the exception the session stops at: the
// uncaught one at a post-mortem (with Python's traceback), or the one an
// exception event passes.
func (c *conn) onExceptionInfo(r *godap.ExceptionInfoRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	var b godap.ExceptionInfoResponseBody
	cur := c.sess.Current()
	if pm, ok := c.sess.PostMortem(); ok {
		tb := strings.TrimRight(pm.Traceback, "\n")
		last := tb[strings.LastIndexByte(tb, '\n')+1:] // KeyError: 'x'
		if last == "" {
			last = cur.Arg
		}
		typ, _, _ := strings.Cut(last, ":")
		b = godap.ExceptionInfoResponseBody{ExceptionId: typ, Description: last, BreakMode: "unhandled",
			Details: &godap.ExceptionDetails{Message: last, TypeName: typ, StackTrace: pm.Traceback}}
	} else if cur.Event == "exception" || cur.IsExit() && cur.Exit == "error" {
		typ, _, _ := strings.Cut(cur.Arg, "(") // the exception's repr: KeyError('x')
		mode := godap.ExceptionBreakMode("always")
		if cur.IsExit() {
			mode = "unhandled"
		}
		b = godap.ExceptionInfoResponseBody{ExceptionId: typ, Description: cur.Arg, BreakMode: mode,
			Details: &godap.ExceptionDetails{Message: cur.Arg, TypeName: typ}}
	} else {
		return errors.New("not stopped at an exception")
	}
	c.send(&godap.ExceptionInfoResponse{Response: c.response(r), Body: b})
	return nil
}

// neuralCommand runs a console command; ok is false when expr is none.
func (c *conn) neuralCommand(ctx context.Context, expr string) (result string, moved, ok bool, err error) {
	res, ok, err := c.sess.RunCommand(ctx, expr)
	return res.Message, res.Moved, ok, err
}
