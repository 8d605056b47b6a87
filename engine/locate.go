package engine

import (
	"slices"
	"strings"

	"ndb/debugger"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// A model's frame carries only a source line's text, an event and values;
// the debugger also needs the line number, the function and the call depth.
// sourceIndex finds them from the source text alone (the program is never
// run), and place() picks among the candidates with the call stack of the
// history, the event that came before and the action.

// sourceIndex knows, for every line of a program, which code object a line
// event on it belongs to, read from the program's index (internal/pysource).
type sourceIndex struct {
	lines []string                   // 1-based: lines[n-1]
	scope []string                   // function (code name) whose statement starts on line n; "" for blank or continuation lines
	calls map[string]map[string]bool // function -> the defined functions its lines call (by name)
	px    *pysource.Index
	// no frame of the program suspends (pysource's MaySuspend, which reads
	// every statement: read once, not at every command's Recall)
	noSuspends bool
}

// stepText is what the text tells debugger.Recall of a stop's line.
func (ix *sourceIndex) stepText() debugger.StepText {
	return debugger.StepText{
		NoCalls:    func(s debugger.Stop) bool { return ix.px.CallsProgram(s.Lineno) == pysource.NoCall },
		Suspends:   func(s debugger.Stop) bool { return ix.px.Suspends(s.Lineno) },
		NoSuspends: ix.noSuspends,
	}
}

// newSourceIndex indexes source, with what its compiled code says where
// known (compiledProgram; nil: the text alone).
func newSourceIndex(source string, code *pysource.Compiled) *sourceIndex {
	px := pysource.NewCompiled(source, code)
	ix := &sourceIndex{lines: debugger.SourceLines(source), calls: map[string]map[string]bool{}, px: px, noSuspends: !px.MaySuspend()}
	ix.scope = make([]string, len(ix.lines))
	for i := range ix.lines {
		if px.StatementStarts(i + 1) {
			ix.scope[i] = px.Owner(i + 1).Name
		}
	}
	defined := map[string]bool{}
	for _, f := range px.Functions() {
		defined[f.Name] = true
	}
	for _, f := range append([]*pysource.Scope{px.Module}, px.Functions()...) {
		for _, callee := range px.Calls(f) {
			if !defined[callee] {
				continue
			}
			if ix.calls[f.Name] == nil {
				ix.calls[f.Name] = map[string]bool{}
			}
			ix.calls[f.Name][callee] = true
		}
	}
	return ix
}

// callDistance is the fewest calls from function from to function to in the
// static call graph (0 when equal); false when none leads there.
func (ix *sourceIndex) callDistance(from, to string) (int, bool) {
	if from == to {
		return 0, true
	}
	seen := map[string]bool{from: true}
	frontier := []string{from}
	for dist := 1; len(frontier) > 0 && dist <= 64; dist++ {
		var next []string
		for _, f := range frontier {
			for g := range ix.calls[f] {
				if g == to {
					return dist, true
				}
				if !seen[g] {
					seen[g] = true
					next = append(next, g)
				}
			}
		}
		frontier = next
	}
	return 0, false
}

// line returns the text of line n, "" out of range.
func (ix *sourceIndex) line(n int) string {
	if n < 1 || n > len(ix.lines) {
		return ""
	}
	return ix.lines[n-1]
}

// function is the code name of a state of event ev on line n: for a call,
// the code whose call event fires there (its co_firstlineno, a decorator's
// line for a decorated def) or, on no such line, the innermost code running
// there (a resumed generator); else the code whose statement runs there.
// "" for a line that runs nothing.
func (ix *sourceIndex) function(ev string, n int) string {
	if fns := ix.functions(ev, n); len(fns) > 0 {
		return fns[0]
	}
	return ""
}

// functions lists every code name a state of event ev on line n may have,
// the likeliest first: besides function's, a line event may be a class
// body's on its first line (3.11), a one-line def's body, a lambda's or a
// comprehension's.
func (ix *sourceIndex) functions(ev string, n int) []string {
	runs := ix.px.RunsOn(n)
	if ev == tracer.EventCall {
		if opens := ix.px.Opens(n); len(opens) > 0 {
			var out []string
			for _, s := range opens {
				out = append(out, s.Name)
			}
			return out
		}
		if len(runs) > 0 {
			return []string{runs[len(runs)-1].Name}
		}
		return nil
	}
	var out []string
	if o := ix.px.Owner(n); o != nil {
		out = append(out, o.Name)
	}
	for _, s := range runs {
		if !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// codeNameOf is the code name of a call event whose source line the
// program does not have: the def, class, lambda or comprehension the line's
// own text opens, else "<unknown>".
func codeNameOf(src string) string {
	px := pysource.New(strings.TrimSpace(src))
	if len(px.Scopes) > 0 {
		return px.Scopes[0].Name
	}
	return "<unknown>"
}

// candidates lists the lines whose text is src: exactly, else with the
// indentation ignored.
func (ix *sourceIndex) candidates(src string) []int {
	var out []int
	for i, l := range ix.lines {
		if l == src {
			out = append(out, i+1)
		}
	}
	if len(out) > 0 || strings.TrimSpace(src) == "" {
		return out
	}
	t := strings.TrimSpace(src)
	for i, l := range ix.lines {
		if strings.TrimSpace(l) == t {
			out = append(out, i+1)
		}
	}
	return out
}

// frameRef is one entry of the call stack the history implies.
type frameRef struct {
	function string
	lineno   int
}

// stackOf rebuilds the call stack at the end of history (index = depth),
// as debugger.Session.Stack does: each stop replaces the entries at its
// depth and below it. Depths the history jumped over are left unknown.
func stackOf(history []debugger.Step) []frameRef {
	var stack []frameRef
	for _, h := range history {
		st := h.Stop
		if st.IsExit() {
			stack = stack[:0]
			continue
		}
		if st.Depth < 0 {
			continue
		}
		for len(stack) <= st.Depth {
			stack = append(stack, frameRef{})
		}
		stack = stack[:st.Depth+1]
		stack[st.Depth] = frameRef{st.Function, st.Lineno}
	}
	return stack
}

// place fills in Lineno, Function and Depth of a predicted state s (Event,
// Src and values set) reached from cur by action. It never fails: a line
// the source does not have gets Lineno 0 and the enclosing guess.
func (ix *sourceIndex) place(s *tracer.State, cur debugger.Stop, stack []frameRef, action debugger.Action, wantLine int) {
	depths := nextDepths(cur.State, s.Event, action)
	cands := ix.candidates(s.Src)
	if wantLine > 0 {
		for _, c := range cands {
			if c == wantLine {
				cands = []int{wantLine}
				break
			}
		}
	}
	fnAt := func(d int) string {
		if d >= 0 && d < len(stack) {
			return stack[d].function
		}
		return ""
	}
	backward := action.Inverse()
	// Prefer a (depth, line) pair where the line belongs to the function
	// the stack has at that depth; a depth past the stack is a new frame.
	for _, d := range depths {
		if d < 0 || s.Event == tracer.EventCall && isJump(action) {
			continue // a jump to a call: its depth comes from the call graph below
		}
		known := fnAt(d)
		var fit []int
		for _, c := range cands {
			fns := ix.functions(s.Event, c)
			// A call opens a new frame at d; otherwise the line must belong
			// to the frame the stack has there (or to a frame not seen yet).
			if s.Event == tracer.EventCall || d > cur.Depth && d >= len(stack) || known == "" || slices.Contains(fns, known) || isAnon(known) {
				fit = append(fit, c)
			}
		}
		if len(fit) == 0 {
			continue
		}
		s.Depth = d
		s.Lineno = nearest(fit, cur.Lineno, backward, d == cur.Depth)
		s.Function = ix.function(s.Event, s.Lineno)
		if (isAnon(known) || slices.Contains(ix.functions(s.Event, s.Lineno), known)) && d < len(stack) && s.Event != tracer.EventCall {
			s.Function = known
		}
		return
	}
	// Nothing fits the stack: trust the text, and for a jump into a call
	// not seen yet, take the depth of the shortest static call path from
	// the innermost frame that reaches its function.
	s.Depth = max(depths[0], 0)
	if len(cands) > 0 {
		s.Lineno = nearest(cands, cur.Lineno, backward, false)
		s.Function = ix.function(s.Event, s.Lineno)
		if isJump(action) {
			for k := min(cur.Depth, len(stack)-1); k >= 0; k-- {
				n, ok := ix.callDistance(stack[k].function, s.Function)
				if s.Event == tracer.EventCall {
					n = max(n, 1) // a call opens a frame below its caller
				}
				if ok && n > 0 {
					s.Depth = k + n
					break
				}
			}
		}
	} else {
		s.Lineno = 0
		s.Function = fnAt(s.Depth)
		if s.Event == tracer.EventCall {
			s.Function = codeNameOf(s.Src)
		}
	}
}

func isJump(a debugger.Action) bool { return a == debugger.Breakpoint || a == debugger.Continue }

func isAnon(fn string) bool { return strings.HasPrefix(fn, "<") && fn != "<module>" }

// nearest picks among candidate lines: in the same frame, the first after
// the current line going forwards (the last before it going backwards), as
// code runs downwards except in loops; elsewhere the first.
func nearest(cands []int, cur int, backward, sameFrame bool) int {
	if !sameFrame {
		return cands[0]
	}
	if backward {
		for i := len(cands) - 1; i >= 0; i-- {
			if cands[i] < cur {
				return cands[i]
			}
		}
		return cands[len(cands)-1]
	}
	for _, c := range cands {
		if c > cur {
			return c
		}
	}
	return cands[0]
}

// nextDepths lists the call depths a state of event next can have after
// cur and action, most likely first (SPEC sections 1-3 and settrace's order
// of events).
func nextDepths(cur tracer.State, next string, action debugger.Action) []int {
	d := cur.Depth
	call, line, ret, exc := tracer.EventCall, tracer.EventLine, tracer.EventReturn, tracer.EventException
	switch action {
	case debugger.StepInto:
		switch {
		case next == call && (cur.Event == ret || cur.Event == exc):
			return []int{d, d + 1} // a second call made by the same caller line
		case next == call:
			return []int{d + 1}
		case cur.Event == ret:
			return []int{d - 1}
		case cur.Event == exc && next == exc:
			return []int{d - 1, d}
		default:
			return []int{d, d - 1}
		}
	case debugger.StepOver:
		if cur.Event == ret || cur.Event == exc && next != line {
			return []int{d - 1, d}
		}
		return []int{d, d - 1}
	case debugger.StepReturn:
		if cur.Event == ret || cur.Event == exc {
			return []int{d - 1, d}
		}
		return []int{d, d - 1}
	case debugger.InvStepInto:
		switch {
		case cur.Event == call && next == line:
			return []int{d - 1}
		case cur.Event == call:
			return []int{d, d - 1}
		case next == exc:
			// An exception event is never just before a state of a caller
			// (the callee's return comes between): it is the frame's own,
			// where a callee's exception came into its line.
			return []int{d, d + 1}
		case next == ret:
			return []int{d + 1, d}
		default:
			return []int{d, d - 1}
		}
	case debugger.InvStepOver, debugger.InvStepCall:
		switch {
		case cur.Event == call && (next == ret || next == exc):
			return []int{d, d - 1} // the previous sibling call's end
		case cur.Event == call:
			return []int{d - 1, d}
		}
		return []int{d, d - 1}
	}
	// Jumps (breakpoint, continue): any frame on the stack, innermost
	// first; place() finds the depth of a frame not on it.
	out := []int{}
	for k := d; k >= 0; k-- {
		out = append(out, k)
	}
	return out
}
