package dap

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// Line and exception breakpoints: the client's lists, translated to the
// session's breakpoints (Session.AddBreak); function breakpoints are in
// funcbreak.go.

// applyPending sets the breakpoints given before launch: the program's
// (a refusal, or any breakpoint with noDebug, becomes a breakpoint event
// that unverifies it) and other files' (unverified: ndb debugs one file).
func (c *conn) applyPending() {
	paths := make([]string, 0, len(c.pending))
	for p := range c.pending {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, b := range c.pending[p] {
			why := ""
			switch {
			case c.args.NoDebug:
				why = "noDebug: the program runs without stopping"
			case p != "" && !samePath(p, c.args.Program):
				why = "ndb debugs only " + c.args.Program
			default:
				why = c.addBreak(b.line, b.cond)
			}
			if why != "" {
				src := b.src
				c.send(&godap.BreakpointEvent{Event: c.event("breakpoint"), Body: godap.BreakpointEventBody{Reason: "changed",
					Breakpoint: godap.Breakpoint{Id: b.id, Line: b.line, Source: &src, Message: why}}})
			}
		}
	}
	c.pending = nil
}

// addBreak sets a line breakpoint of the program with its condition in
// the session (Session.AddBreak, as the terminal's `b LINE, COND`); it
// returns why it was refused ("" when set).
func (c *conn) addBreak(line int, cond string) string {
	if err := c.sess.AddBreak(debugger.BreakSpec{Line: line, Cond: cond}); err != nil {
		return err.Error()
	}
	c.lineBreaks = append(c.lineBreaks, lineBreak{line, cond})
	return ""
}

// maxBreakpoints bounds the breakpoints of one request: a program has
// fewer lines, and each costs a check and an answer (a megabyte of them
// made hundreds of megabytes of work).
const maxBreakpoints = 10000

func (c *conn) onSetBreakpoints(r *godap.SetBreakpointsRequest) error {
	src := r.Arguments.Source
	bps := r.Arguments.Breakpoints
	if n := max(len(bps), len(r.Arguments.Lines)); n > maxBreakpoints {
		return fmt.Errorf("setBreakpoints: %d breakpoints, over the limit of %d", n, maxBreakpoints)
	}
	if len(bps) == 0 {
		for _, l := range r.Arguments.Lines {
			bps = append(bps, godap.SourceBreakpoint{Line: l})
		}
	}
	out := make([]godap.Breakpoint, len(bps))
	for i, b := range bps {
		c.nextBP++
		out[i] = godap.Breakpoint{Id: c.nextBP, Line: b.Line, Verified: true, Source: &src}
	}
	refuse := func(i int, why string) { out[i].Verified, out[i].Message = false, why }
	switch {
	case c.sess == nil:
		// Before launch: kept per file until launch knows the program.
		key := src.Path
		if abs, err := filepath.Abs(key); err == nil && key != "" {
			key = filepath.Clean(abs)
		}
		if c.pending == nil {
			c.pending = map[string][]pendingBreak{}
		}
		var text []byte
		if key != "" {
			if real, err := c.srv.confine("source", key, MaxProgramBytes); err == nil { // files of the workspace only
				text, _ = os.ReadFile(real)
			}
		}
		list := make([]pendingBreak, 0, len(bps))
		for i, b := range bps {
			// The condition is the session's to judge at launch (applyPending):
			// a Python expression holds on a live run, not on a model engine.
			why := ""
			if text != nil {
				why = debugger.CheckBreakLine(string(text), b.Line)
			}
			if why != "" {
				refuse(i, why)
				continue
			}
			list = append(list, pendingBreak{id: out[i].Id, line: b.Line, cond: b.Condition, src: src})
		}
		c.pending[key] = list
	case c.args.NoDebug:
		for i := range out {
			refuse(i, "noDebug: the program runs without stopping")
		}
	case src.Path != "" && !samePath(src.Path, c.args.Program):
		for i := range out {
			refuse(i, "ndb debugs only "+c.args.Program) // breakpoints elsewhere never hit
		}
	default:
		// The client's list replaces the file's: the session starts over
		// from the function breakpoints, then takes these.
		c.lineBreaks = nil
		c.syncBreaks()
		for i, b := range bps {
			if why := c.addBreak(b.Line, b.Condition); why != "" {
				refuse(i, why)
			}
		}
	}
	c.send(&godap.SetBreakpointsResponse{Response: c.response(r), Body: godap.SetBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// samePath reports whether a and b name one file (symbolic links resolved
// where they can be).
func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return false
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		a = r
	}
	if r, err := filepath.EvalSymlinks(b); err == nil {
		b = r
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

func (c *conn) onSetExceptionBreakpoints(r *godap.SetExceptionBreakpointsRequest) error {
	ids := append([]string(nil), r.Arguments.Filters...)
	for _, o := range r.Arguments.FilterOptions {
		ids = append(ids, o.FilterId)
	}
	c.raised, c.uncaught = false, false
	out := make([]godap.Breakpoint, 0, len(ids))
	for _, id := range ids {
		b := godap.Breakpoint{Verified: true}
		switch id {
		case "raised":
			c.raised = true
		case "uncaught":
			c.uncaught = true
		default:
			b.Verified, b.Message = false, fmt.Sprintf("no exception filter %q (ndb has raised and uncaught)", id)
		}
		out = append(out, b)
	}
	c.send(&godap.SetExceptionBreakpointsResponse{Response: c.response(r), Body: godap.SetExceptionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}
