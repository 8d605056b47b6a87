package dap

import (
	"fmt"
	"strings"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// funcBreak is a function breakpoint as the client set it; the session
// holds it as a debugger.BreakSpec with Func (resolveFuncs).
type funcBreak struct {
	id   int
	name string
	cond string
}

func (c *conn) onSetFunctionBreakpoints(r *godap.SetFunctionBreakpointsRequest) error {
	if n := len(r.Arguments.Breakpoints); n > maxBreakpoints {
		return fmt.Errorf("setFunctionBreakpoints: %d breakpoints, over the limit of %d", n, maxBreakpoints)
	}
	c.funcs = c.funcs[:0]
	out := make([]godap.Breakpoint, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		c.nextBP++
		c.funcs = append(c.funcs, funcBreak{id: c.nextBP, name: b.Name, cond: b.Condition})
		out[i] = godap.Breakpoint{Id: c.nextBP, Message: "resolved when the program is launched"}
	}
	if c.sess != nil {
		out = c.syncBreaks()
	}
	c.send(&godap.SetFunctionBreakpointsResponse{Response: c.response(r), Body: godap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// syncBreaks makes the session's breakpoints the client's: its line
// breakpoints (already checked) and its function breakpoints, each
// through Session.AddBreak, the terminal's path (conditions, function
// breakpoints at co_firstlineno). It says what became of each function
// breakpoint.
func (c *conn) syncBreaks() []godap.Breakpoint {
	c.sess.ClearBreaks()
	kept := c.lineBreaks[:0]
	for _, b := range c.lineBreaks {
		if c.sess.AddBreak(debugger.BreakSpec{Line: b.line, Cond: b.cond}) == nil {
			kept = append(kept, b)
		}
	}
	c.lineBreaks = kept
	out := make([]godap.Breakpoint, len(c.funcs))
	src := c.sess.Source()
	for i, f := range c.funcs {
		b := godap.Breakpoint{Id: f.id}
		line := debugger.FunctionLine(src, f.name)
		name := f.name[strings.LastIndexByte(f.name, '.')+1:] // the code's name
		switch {
		case c.args.NoDebug:
			b.Message = "noDebug: the program runs without stopping"
		case line == 0:
			b.Message = fmt.Sprintf("no function %q in %s", f.name, c.args.Program)
		default:
			if err := c.sess.AddBreak(debugger.BreakSpec{Line: line, Func: name, Cond: f.cond}); err != nil {
				b.Message = err.Error()
				break
			}
			b.Verified, b.Line, b.Source = true, line, c.source(line)
		}
		out[i] = b
	}
	return out
}
