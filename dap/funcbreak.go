package dap

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// funcBreak is a function breakpoint: a name, resolved to the first line
// of the function's body (where pdb's `b FUNC` stops).
type funcBreak struct {
	id   int
	name string
	cond string
}

// FunctionLine returns the first line of the body of the function called
// name in source (a method as Class.method or method), skipping a
// multi-line header, blank and comment lines and the docstring, which
// CPython does not execute; 0 when there is none.
func FunctionLine(source, name string) int {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if !isName(name) {
		return 0
	}
	def := regexp.MustCompile(`^\s*(async\s+)?def\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	lines := debugger.SourceLines(source)
	for i, l := range lines {
		if !def.MatchString(l) {
			continue
		}
		// The header ends at the line where its brackets close.
		j, depth := i, 0
		for ; j < len(lines); j++ {
			depth += bracketDelta(stripComment(lines[j]))
			if depth <= 0 {
				break
			}
		}
		if j >= len(lines) {
			return 0
		}
		// A one-line def (def f(): return 1) has its body on its own line.
		if h := strings.TrimSpace(stripComment(lines[j])); !strings.HasSuffix(h, ":") {
			return j + 1
		}
		first := true
		for k := j + 1; k < len(lines); k++ {
			t := strings.TrimSpace(lines[k])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if first && (strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, `'''`) || isStrRepr(t)) {
				first = false
				q := t[:3]
				if !strings.HasPrefix(t, `"""`) && !strings.HasPrefix(t, `'''`) {
					continue // a one-line docstring 'doc'
				}
				if strings.Count(t, q) >= 2 {
					continue // """doc""" on one line
				}
				for k++; k < len(lines) && !strings.Contains(lines[k], q); k++ {
				}
				continue
			}
			return k + 1
		}
		return 0
	}
	return 0
}

// bracketDelta is the openers minus the closers of l outside strings.
func bracketDelta(l string) int {
	d := 0
	scan(l, func(_ int, ch byte, _ int) bool {
		switch ch {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		}
		return true
	})
	return d
}

// stripComment drops a # comment outside strings.
func stripComment(l string) string {
	at := -1
	scan(l, func(i int, ch byte, _ int) bool {
		if ch == '#' {
			at = i
			return false
		}
		return true
	})
	if at >= 0 {
		return l[:at]
	}
	return l
}

func (c *conn) onSetFunctionBreakpoints(r *godap.SetFunctionBreakpointsRequest) error {
	c.funcs = c.funcs[:0]
	out := make([]godap.Breakpoint, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		c.nextBP++
		c.funcs = append(c.funcs, funcBreak{id: c.nextBP, name: b.Name, cond: b.Condition})
		out[i] = godap.Breakpoint{Id: c.nextBP, Message: "resolved when the program is launched"}
	}
	if c.sess != nil {
		for i, b := range c.resolveFuncs() {
			out[i] = b
		}
	}
	c.send(&godap.SetFunctionBreakpointsResponse{Response: c.response(r), Body: godap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// resolveFuncs sets the function breakpoints' lines (replacing earlier
// ones) and says what became of each.
func (c *conn) resolveFuncs() []godap.Breakpoint {
	c.funcLines = map[int]string{}
	out := make([]godap.Breakpoint, len(c.funcs))
	src := c.sess.Source()
	for i, f := range c.funcs {
		b := godap.Breakpoint{Id: f.id}
		line := FunctionLine(src, f.name)
		_, cerr := parseCondition(f.cond)
		switch {
		case c.args.NoDebug:
			b.Message = "noDebug: the program runs without stopping"
		case line == 0:
			b.Message = fmt.Sprintf("no function %q in %s", f.name, c.args.Program)
		case cerr != nil:
			b.Message = cerr.Error()
		default:
			if why := debugger.CheckBreakLine(src, line); why != "" {
				b.Message = why
				break
			}
			b.Verified, b.Line, b.Source = true, line, c.source(line)
			c.funcLines[line] = f.cond
		}
		out[i] = b
	}
	c.rebuildBreaks()
	return out
}

// rebuildBreaks sets the session's breakpoints to the line breakpoints and
// the function breakpoints' lines, with their conditions (a line with an
// unconditional breakpoint of either kind stops unconditionally).
func (c *conn) rebuildBreaks() {
	c.sess.ClearBreaks()
	c.conds = map[int]*condition{}
	plain := map[int]bool{}
	for _, m := range []map[int]string{c.lineBreaks, c.funcLines} {
		lines := make([]int, 0, len(m))
		for l := range m {
			lines = append(lines, l)
		}
		sort.Ints(lines)
		for _, l := range lines {
			if c.sess.SetBreak(l) != nil {
				continue
			}
			cd, _ := parseCondition(m[l])
			switch {
			case cd == nil:
				plain[l] = true
				delete(c.conds, l)
			case !plain[l]:
				c.conds[l] = cd
			}
		}
	}
}
