package dap

import (
	"fmt"
	"regexp"
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

// FunctionLine is where a function breakpoint on name goes, as pdb puts
// `b FUNC` once the function is defined: its code's co_firstlineno, the
// line of its first decorator, else of its `def` (the session's function
// breakpoint then stops at the first line the function runs, as pdb's).
// name is a function (`total`: an unindented def first, as pdb's search,
// else a method of that name) or a method (`C.method`: a def indented
// under `class C`); 0 when source has none.
func FunctionLine(source, name string) int {
	name = strings.TrimSpace(name)
	cls := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		cls, name = name[:i], name[i+1:]
	}
	if !isName(name) || cls != "" && !isName(cls) {
		return 0
	}
	lines := debugger.SourceLines(source)
	def := regexp.MustCompile(`^([ \t]*)(async\s+)?def\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	class := regexp.MustCompile(`^([ \t]*)class\s+` + regexp.QuoteMeta(cls) + `\s*[(:]`)
	// firstLine is the def at line i with its decorators above it.
	firstLine := func(i int) int {
		ind := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		for i > 0 && strings.HasPrefix(lines[i-1], ind+"@") {
			i--
		}
		return i + 1
	}
	indentOf := func(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }
	if cls == "" {
		for _, top := range []bool{true, false} {
			for i, l := range lines {
				if m := def.FindStringSubmatch(l); m != nil && (m[1] == "") == top {
					return firstLine(i)
				}
			}
		}
		return 0
	}
	for i, l := range lines {
		m := class.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if indentOf(lines[j]) <= len(m[1]) {
				break // the class body ended
			}
			if def.MatchString(lines[j]) {
				return firstLine(j)
			}
		}
	}
	return 0
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
		line := FunctionLine(src, f.name)
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
