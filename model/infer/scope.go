package infer

import (
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"

	"ndb/debugger"
	"ndb/format"
	"ndb/internal/pysource"
)

// A step never leaves the running function without an event that says so:
// from a line (or the call) of function F, step_into, step_over and
// step_return show a line, return or exception event of F itself, or a
// call event (into another function); backwards, the state before a line
// of F is a line or the call of F, or a callee's return or exception. So
// the source line of such a frame is one of F's lines (stepScopes), and its
// LOCALS keys are F's names (namesOf). Scopes are the program's index's
// (internal/pysource): def and class blocks, with lines inside brackets,
// strings and backslash continuations belonging to the statement they
// continue. Where the text is ambiguous (the same line text in two
// functions, a one-line def, a class body's first line) a line belongs to
// every scope it may run in, which only makes the rules looser.

// scopeRules is what stepScopes and namesOf need from a program, read
// from its index (internal/pysource): the blocks are its defs and classes
// (ids in source order, -1 the module).
type scopeRules struct {
	lines  []string          // every line of the program
	ix     *pysource.Index   // the program's index
	member [][]int           // per line: the blocks whose code runs on it (-1 = module); a blank line, the statement's before it
	opens  []int             // per line: the block a def or class header (or its decorator) opens, else noBlock
	names  map[int]sortedSet // per block: the names its frames may hold or read (lambdas' and comprehensions' in it too), "..", ".0" to ".9"
	starts []bool            // per line: a statement (logical line) starts on it
	fns    []*pysource.Scope // the defs and classes: block b is fns[b]
	// per line text: every line with it runs in the module alone (moduleOnly)
	moduleText map[string]bool
	calling    map[string]pysource.Calling  // per line text: whether its lines call the program (calls)
	sure       map[string][]string          // per line text: sureLocals
	loops      map[string]map[string]string // per line text: loopValues
	held       map[string]sortedSet         // per line text: heldAt
	groups     map[string][]sortedSet       // per line text: heldGroups
	args       map[string]argValues         // per line text and frame kind: argsOf
	block      map[*pysource.Scope]int
}

// argValues maps a frame's parameters to the values it may show for
// them (pysource's ArgReprs); nil for no rule.
type argValues map[string][]string

// argsOf is the argValues every frame on a line with text src shows (a
// call event's frame: the function its line opens; else the one running
// it), where all of them agree.
func (s *scopeRules) argsOf(src string, call bool) argValues {
	key := src
	if call {
		key = "call\x00" + src
	}
	if v, ok := s.args[key]; ok {
		return v
	}
	var v argValues
	seen := false
	for n := range s.linesWith(src) {
		scopes := s.ix.RunsOn(n)
		if call {
			scopes = s.ix.Opens(n)
		}
		for _, sc := range scopes {
			w := argValues(s.ix.ArgReprs(sc))
			if w == nil || seen && !maps.EqualFunc(v, w, slices.Equal) {
				s.args[key] = nil
				return nil
			}
			v, seen = w, true
		}
	}
	s.args[key] = v
	return v
}

const noBlock = -2

// programScopes indexes src.
func programScopes(code *pysource.Compiled, src string) *scopeRules {
	lines := strings.Split(src, "\n")
	ix := pysource.NewCompiled(src, code)
	s := &scopeRules{lines: lines, ix: ix, member: make([][]int, len(lines)), opens: make([]int, len(lines)), names: map[int]sortedSet{},
		starts: make([]bool, len(lines)), fns: ix.Functions(), block: map[*pysource.Scope]int{ix.Module: -1},
		sure: map[string][]string{}, held: map[string]sortedSet{}, groups: map[string][]sortedSet{}, args: map[string]argValues{}}
	block, blockOf := s.block, s.blockOf
	for b, f := range s.fns {
		block[f] = b
	}
	var last []int
	for i := range lines {
		n := i + 1
		s.opens[i] = noBlock
		s.starts[i] = ix.StatementStarts(n)
		if h := ix.Header(n); h != nil && s.starts[i] && n <= h.Line {
			s.opens[i] = block[h]
		}
		if _, _, ok := ix.Statement(n); !ok {
			s.member[i] = last
			continue
		}
		var m []int
		for _, sc := range ix.RunsOn(n) {
			if b := blockOf(sc); !slices.Contains(m, b) {
				m = append(m, b)
			}
		}
		slices.Sort(m)
		s.member[i], last = m, m
	}
	words := map[int][]string{}
	open := map[int]bool{-1: ix.ModuleOpen()}
	for _, sc := range append([]*pysource.Scope{ix.Module}, ix.Scopes...) {
		b := blockOf(sc)
		words[b] = append(words[b], sc.Locals()...)
		open[b] = open[b] || sc.Open()
	}
	for b, w := range words {
		if !open[b] { // a block that may bind names its text does not show has no rule
			s.names[b] = localNames(w)
		}
	}
	return s
}

// blockOf is the def, class or module whose lines a scope's are (a
// lambda's or comprehension's: its function's).
func (s *scopeRules) blockOf(sc *pysource.Scope) int {
	for ; sc != nil; sc = sc.Parent {
		if b, ok := s.block[sc]; ok {
			return b
		}
	}
	return -1
}

// programNames is the set of LOCALS keys some frame of the program may
// hold: every block's names; nil (any name) where a block may bind names
// its text does not show (a star import's, exec's).
func (s *scopeRules) programNames() sortedSet {
	var all sortedSet
	for b := -1; b < len(s.fns); b++ {
		n, ok := s.names[b]
		if !ok {
			return nil
		}
		all = append(all, n...)
	}
	all.sort()
	return all
}

// namesOf is the set of LOCALS keys a frame at source line src may have:
// the names of the function it runs in (for a call, the function the line
// opens; for the module, the names its own lines, function and class
// names and `global` statements bind), or nil when that is not known (a
// line that is not the program's, a block that may bind names its text
// does not show).
func (s *scopeRules) namesOf(src string, call bool) sortedSet {
	if !executable(src) {
		return nil
	}
	var blocks []int
	for j, l := range s.lines {
		switch {
		case l != src:
		case call && s.opens[j] != noBlock:
			blocks = append(blocks, s.opens[j])
		default:
			blocks = append(blocks, s.member[j]...)
		}
	}
	if len(blocks) == 0 {
		return nil
	}
	var names sortedSet
	for _, b := range blocks {
		n, ok := s.names[b]
		if !ok {
			return nil
		}
		names = append(names, n...)
	}
	names.sort()
	return names
}

// heldAt narrows namesOf for a line frame at line src: where pysource
// places the line in one frame, the names that frame may hold there
// (PossibleLocals: nothing the text binds later, no comprehension's ".0";
// with first, FirstLocals at a line of a function or class body, whose
// frame fires there for the first time) and ".." where it may hold one (a
// frame with no local leaves none out: its LOCALS is {}), else namesOf.
// Read once per line text.
func (s *scopeRules) heldAt(src string, first bool) sortedSet {
	key := src
	if first {
		key = "first\x00" + src
	}
	if names, ok := s.held[key]; ok {
		return names
	}
	var names sortedSet
	for n := range s.linesWith(src) {
		possible := s.ix.PossibleLocals
		if first && s.freshFrame(n) {
			possible = s.ix.FirstLocals
		}
		may, ok := possible(n)
		if !ok {
			names = s.namesOf(src, false)
			break
		}
		if names == nil {
			names = sortedSet{}
		}
		if len(may) > 0 { // with no local at all, none is left out: no ".."
			names = append(append(names, ".."), may...)
		}
	}
	if names != nil {
		names.sort()
		names = slices.Compact(names)
	}
	s.held[key] = names
	return names
}

// linesWith yields the numbers (from 1) of the program's lines whose text
// is src: a frame shows a line by its text only, so a rule on it holds for
// every line with that text.
// heldGroups is heldAt frame by frame (pysource's PossibleLocalGroups):
// the names each frame that may fire a line event on a line with text src
// may hold, each with "..". Nil where heldAt has no rule or one frame alone
// fires there.
func (s *scopeRules) heldGroups(src string, first bool) []sortedSet {
	key := src
	if first {
		key = "first\x00" + src
	}
	if groups, ok := s.groups[key]; ok {
		return groups
	}
	var groups []sortedSet
	for n := range s.linesWith(src) {
		fresh := first && s.freshFrame(n)
		gs, ok := s.ix.PossibleLocalGroups(n, fresh)
		if !ok {
			groups = nil
			break
		}
		for _, g := range gs {
			names := append(sortedSet{".."}, g...)
			names.sort()
			groups = append(groups, slices.Compact(names))
		}
	}
	if len(groups) < 2 {
		groups = nil
	}
	s.groups[key] = groups
	return groups
}

func (s *scopeRules) linesWith(src string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for j, l := range s.lines {
			if l == src && !yield(j+1) {
				return
			}
		}
	}
}

// freshFrame reports whether every frame firing line n's events is made
// anew when it runs: a function's that cannot be on hold (no generator or
// coroutine) or a class body's, not the module's.
func (s *scopeRules) freshFrame(n int) bool {
	runs := s.ix.RunsOn(n)
	return len(runs) > 0 && !s.ix.Suspends(n) && !slices.ContainsFunc(runs, func(sc *pysource.Scope) bool {
		return sc.Kind != pysource.Function && sc.Kind != pysource.Class
	})
}

// indentWidth is a line's indentation, tabs to the next multiple of 8.
func indentWidth(l string) int { return pysource.IndentWidth(l) }

// statementLines lists line j (0-based) and the lines that continue its
// statement (brackets, strings and backslashes spanning lines).
func (s *scopeRules) statementLines(j int) []int {
	out := []int{j}
	if _, last, ok := s.ix.Statement(j + 1); ok {
		for k := j + 1; k < last && k < len(s.lines); k++ {
			out = append(out, k)
		}
	}
	return out
}

// stepScopes maps the kinds of frame a step's answer may take (their
// tokens) to the lines their source may be, read from the prompt's last
// frame and action (nil: no rule):
//
//   - step_into, step_over, step_return from a line or call of F: a line,
//     return or exception frame shows one of F's lines;
//   - breakpoint SRC: any frame but the exit shows SRC; where no line of
//     text SRC runs anything (a docstring's line, a closing bracket's), only
//     the exit answers, and where the module's frame has left every one
//     behind, only the kinds of event that may still come there
//     (leftBehind);
//   - inv_step_into, inv_step_over, inv_step_call from a line, return or
//     exception of F: a line frame (inv_line, inv_line_call) shows one of
//     F's lines, and a call frame F's header (or a decorator of it) or one
//     of F's lines (a comprehension, lambda or resumed generator called
//     there). A callee's return and exception frames are left free.
//
// A frame the program's text does not place, or a call with no block to
// read (a comprehension, lambda, resumed generator or the module), sets no
// rule; nor does the module's own scope seen backwards (its call shows no
// line).
func (s *scopeRules) stepScopes(prompt string, script bool) map[string]sortedSet {
	return s.withFlow(s.functionLines(prompt, script), prompt, script)
}

// functionLines is stepScopes' rule of the running function.
func (s *scopeRules) functionLines(prompt string, script bool) map[string]sortedSet {
	last, k, step, err := lastStep(prompt)
	switch {
	case err != nil || step.Action == debugger.Continue:
		return nil
	case step.Action == debugger.Breakpoint:
		// the first future state whose line is SRC (SPEC section 3), else the exit
		if !executable(step.Src) || !slices.Contains(s.lines, step.Src) {
			return nil
		}
		noLine, noCall, noEnd := s.leftBehind(s.moduleLine(prompt), step.Src)
		if s.silent(step.Src, script) {
			noLine, noCall, noEnd = true, true, true
		}
		pick := func(no bool) sortedSet {
			if no {
				return sortedSet{} // a kind with no line is refused
			}
			return sortedSet{step.Src}
		}
		return map[string]sortedSet{format.TokCallSep: pick(noCall), format.TokLineSep: pick(noLine), format.TokReturnSep: pick(noEnd), format.TokExceptionSep: pick(noEnd)}
	}
	inverse := step.Action.Inverse()
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	if err != nil {
		return nil
	}
	if step.Action == debugger.InvStepCall && script && s.backToModuleCall(f) {
		// the module's call: no line (a script's module has no caller)
		none := sortedSet{}
		return map[string]sortedSet{format.TokInvCallSep: {""}, format.TokInvLineSep: none, format.TokInvLineCallSep: none,
			format.TokInvReturnSep: none, format.TokInvExceptionSep: none, format.TokInvExitEntry: none}
	}
	if f.Kind == format.Return {
		return s.afterReturn(f.Src, inverse)
	}
	scopes := map[int]bool{}
	for n := range s.linesWith(f.Src) {
		switch f.Kind {
		case format.Line, format.InvLine, format.InvLineCall, format.InvReturn, format.InvException:
			if inverse != f.Kind.Inverse() {
				return nil
			}
			for _, sc := range s.member[n-1] {
				scopes[sc] = true
			}
		case format.Call:
			if inverse || s.opens[n-1] == noBlock {
				return nil
			}
			scopes[s.opens[n-1]] = true
		default:
			return nil
		}
	}
	if len(scopes) == 0 || inverse && scopes[-1] {
		return nil
	}
	var lines, calls sortedSet
	for j, l := range s.lines {
		if !executable(l) {
			continue
		}
		for _, sc := range s.member[j] {
			if scopes[sc] {
				lines = append(lines, l)
				break
			}
		}
		if scopes[s.opens[j]] {
			calls = append(calls, l)
		}
	}
	lines.sort()
	if !inverse {
		return map[string]sortedSet{format.TokLineSep: lines, format.TokReturnSep: lines, format.TokExceptionSep: lines}
	}
	calls = append(calls, lines...)
	calls.sort()
	return map[string]sortedSet{format.TokInvLineSep: lines, format.TokInvLineCallSep: lines, format.TokInvCallSep: calls}
}

// afterReturn is functionLines' rule for a step forward from a return
// frame on a line of text src: the caller goes on, so a line, return or
// exception frame shows a line of a frame that calls the returning
// function (pysource's ReturnsTo, every line of the text alike); nil for
// no rule. Why: the model answered a step from `return total` with that
// return again, and from binary_search's `return mid` with its `return -1`.
func (s *scopeRules) afterReturn(src string, inverse bool) map[string]sortedSet {
	if inverse {
		return nil
	}
	seen := map[string]bool{}
	for n := range s.linesWith(src) {
		to, ok := s.ix.ReturnsTo(n)
		if !ok {
			return nil
		}
		for _, m := range to {
			if l := s.lines[m-1]; executable(l) {
				seen[l] = true
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	lines := sortedSet(slices.Sorted(maps.Keys(seen)))
	return map[string]sortedSet{format.TokLineSep: lines, format.TokReturnSep: lines, format.TokExceptionSep: lines}
}

// backToModuleCall reports whether inv_step_call from frame f goes back to
// a script's module call: f is the module's (on a line only the module
// runs), or the call of a def only the module's frame calls (pysource's
// CalledByModule, every def starting on a line of f's text alike), from
// whose call the step goes back to its caller's call.
func (s *scopeRules) backToModuleCall(f format.Frame) bool {
	switch f.Kind {
	case format.InvLine, format.InvLineCall, format.InvReturn, format.InvException:
		return s.moduleOnly(f.Src)
	case format.InvCall:
		found := false
		for n := range s.linesWith(f.Src) {
			opens := s.ix.Opens(n)
			if len(opens) != 1 || !s.ix.CalledByModule(opens[0]) {
				return false
			}
			found = true
		}
		return found && f.Src != "" // a script's module call: its caller is none
	}
	return false
}

// silent reports whether every line of text src runs nothing (pysource's
// NeverRuns: Silent, or Dead in a script), so that no state can show it.
func (s *scopeRules) silent(src string, script bool) bool {
	return s.everyLine(func(n int) bool { return s.ix.NeverRuns(n, script) })[src]
}

// runsAsScript reports whether a frame of the prompt is the module's (its
// call, no line; or a line, return or exception on a line only the module
// runs): the program runs as a script, entered at the module. A --call
// program's or an outside caller's trace shows no module frame.
func (s *scopeRules) runsAsScript(prompt string) bool {
	return slices.ContainsFunc(promptFrames(prompt), func(f format.Frame) bool {
		if f.Kind == format.Call || f.Kind == format.InvCall {
			return f.Src == ""
		}
		return f.Src != "" && s.moduleOnly(f.Src)
	})
}

// promptFrames are the frames of a prompt, in order (those that parse).
func promptFrames(prompt string) []format.Frame {
	frames, _, _ := promptTrail(prompt)
	return frames
}

// promptTrail is the prompt's frames and the action asked from each, and
// whether every frame and action parsed (a frame that does not is left
// out).
func promptTrail(prompt string) (frames []format.Frame, actions []debugger.Action, whole bool) {
	whole = true
	texts := strings.Split(strings.TrimSuffix(prompt, format.TokFrameSep), format.TokFrameSep)
	for _, text := range texts[1:] { // texts[0] is the header
		frame, action := text, ""
		if k := strings.LastIndex(text, format.TokActionSep); k >= 0 {
			frame, action = text[:k+len(format.TokActionSep)], text[k:]
		}
		f, err := format.ParseFrame(frame)
		if err != nil {
			whole = false
			continue
		}
		step, err := format.ParseStep(action)
		whole = whole && err == nil
		frames, actions = append(frames, f), append(actions, step.Action)
	}
	return frames, actions, whole
}

// everyLine maps each line text of the program to whether every line with
// that text satisfies p (by line number).
func (s *scopeRules) everyLine(p func(n int) bool) map[string]bool {
	out := map[string]bool{}
	for j, l := range s.lines {
		all, seen := out[l]
		out[l] = (all || !seen) && p(j+1)
	}
	return out
}

// moduleLine is the prompt's latest line frame of the module's frame (a
// line only the module runs; the zero Frame if none): where the module's frame is now
// or, after frames of the calls it made, is past. Why: a breakpoint asked
// from inside a call also cannot stop at module code the module has left
// behind (the model answered `if __name__ == "__main__":` from a function
// the main block had called).
func (s *scopeRules) moduleLine(prompt string) format.Frame {
	frames := promptFrames(prompt)
	for i := len(frames) - 1; i >= 0; i-- {
		if f := frames[i]; f.Kind == format.Line && s.moduleOnly(f.Src) {
			return f
		}
	}
	return format.Frame{}
}

// leftBehind reports, where frame is a line event of the module's frame,
// which events can no longer show a line of text src because each is
// module code that runs once and that the frame has left behind
// (pysource's Passed: before the frame's line, or the frame's own line on
// one line): no line event; no call event unless a def or class starts there
// (its frame's call is on that line); no return or exception unless one
// starts there or it is the frame's own line (the module's return or an
// exception may still come there).
func (s *scopeRules) leftBehind(f format.Frame, src string) (noLine, noCall, noEnd bool) {
	if f.Kind != format.Line || !s.moduleOnly(f.Src) {
		return false, false, false
	}
	found, opens, own := false, false, false
	for m, at := range s.lines {
		if at != f.Src {
			continue
		}
		for l, text := range s.lines {
			if text != src {
				continue
			}
			if !s.ix.Passed(l+1, m+1) {
				return false, false, false
			}
			found = true
			own = own || l == m
			opens = opens || slices.ContainsFunc(s.ix.Scopes, func(sc *pysource.Scope) bool { return sc.First == l+1 || sc.Line == l+1 })
		}
	}
	return found, found && !opens, found && !opens && !own
}

// withFlow narrows rule by the control flow of the last frame's line: after
// step_into or step_over from a line event, a line frame shows a line
// where that line can go next in its frame (pysource's NextLines), and
// none at all after a line its frame cannot go on from (its last
// statement, a return); after inv_step_into or inv_step_over from a line,
// an inverse line frame shows a line that can go to it. By what a line
// does about the program's code (pysource's CallsProgram): step_into from
// one that surely calls it answers no line or return frame, from one that
// surely calls none no call frame; inv_step_into back to the first finds
// its copy (inv_line_call), not its own line event, and to the second no
// copy. Where the text does not place the line (or the rule would leave
// nothing) the rule stays as it was.
func (s *scopeRules) withFlow(rule map[string]sortedSet, prompt string, script bool) map[string]sortedSet {
	last, k, step, err := lastStep(prompt)
	if err != nil {
		return rule
	}
	rule = s.withLineFlow(rule, last, k, step, script)
	if step.Action != debugger.InvStepInto && step.Action != debugger.InvStepOver {
		return rule
	}
	// a step back from a line lands on its frame's call only from its
	// first line (or a resumed generator's line): from a line that made a
	// call, back into the callee or to the line's own event
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	if err != nil || f.Kind != format.InvLineCall && (f.Kind != format.InvLine || !s.lineBefore(f.Src)) {
		return rule
	}
	out := maps.Clone(rule)
	if out == nil {
		out = map[string]sortedSet{}
	}
	out[format.TokInvCallSep] = sortedSet{}
	return out
}

// lineBefore reports whether a line event on every line with text src
// has a line event of its frame before it: no such line is its frame's
// first (pysource's EntryLines) or in a frame that is resumed (a
// generator's, whose resumption is a call event), nor the first line of a
// def (CPython 3.11 may put a body's first instruction there: a body that
// starts with `"<%s>" % (x,)` fires its first line event on the def line).
func (s *scopeRules) lineBefore(src string) bool {
	found := false
	for n := range s.linesWith(src) {
		runs := s.ix.RunsOn(n)
		if len(runs) == 0 || s.ix.Suspends(n) || len(s.ix.Opens(n)) > 0 {
			return false
		}
		for _, sc := range runs {
			if entry := s.ix.EntryLines(sc); entry == nil || slices.Contains(entry, n) {
				return false
			}
		}
		found = true
	}
	return found
}

// withLineFlow is withFlow's rule of the lines a step goes to.
func (s *scopeRules) withLineFlow(rule map[string]sortedSet, last string, k int, step format.Step, script bool) map[string]sortedSet {
	var toks []string
	backward := step.Action.Inverse()
	switch step.Action {
	case debugger.StepInto, debugger.StepOver:
		toks = []string{format.TokLineSep}
	case debugger.InvStepInto, debugger.InvStepOver:
		toks = []string{format.TokInvLineSep, format.TokInvLineCallSep}
	case debugger.StepReturn:
		return s.withReturnLines(rule, last[:k+len(format.TokActionSep)], script)
	default:
		return rule
	}
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	if err == nil && f.Kind == format.Call && !backward {
		return s.withEntry(rule, f.Src)
	}
	if err == nil && f.Kind == format.Exception && !backward && script && s.caught(f.Src) {
		// the frame's return right after its exception event would be the
		// exception leaving it (a handler's line comes next), but where the
		// frame ends normally on the line: a for loop's iterator is done
		// (StopIteration from a __next__ fires an exception event)
		ends, ok := sortedSet{}, true
		if s.forHeader(f.Src) {
			ends, ok = s.endsAfter(f.Src)
		}
		if ok {
			out := maps.Clone(rule)
			if out == nil {
				out = map[string]sortedSet{}
			}
			out[format.TokReturnSep] = ends
			return out
		}
	}
	if err == nil && f.Kind == format.InvReturn && script && s.caught(f.Src) {
		// backwards the same: the frame's return comes right after its own
		// exception event only where a for loop's iterator ended it
		out := maps.Clone(rule)
		if out == nil {
			out = map[string]sortedSet{}
		}
		out[format.TokInvExceptionSep] = sortedSet{}
		if ends, ok := s.endsAfter(f.Src); (!ok || len(ends) > 0) && s.forHeader(f.Src) {
			out[format.TokInvExceptionSep] = sortedSet{f.Src}
		}
		return out
	}
	if err != nil || !backward && f.Kind != format.Line || backward && f.Kind != format.InvLine && f.Kind != format.InvLineCall {
		return rule
	}
	flow := s.flowLines(f.Src, backward, f.Kind == format.InvLineCall)
	if flow == nil {
		return rule
	}
	out := maps.Clone(rule)
	if out == nil {
		out = map[string]sortedSet{}
	}
	for _, tok := range toks {
		if len(flow) == 0 {
			out[tok] = flow // the frame ends after the line: its return or an exception comes first
			continue
		}
		allowed := flow
		if cur, ok := out[tok]; ok {
			allowed = nil
			for _, l := range cur {
				if flow.contains(l) {
					allowed = append(allowed, l)
				}
			}
		}
		switch {
		case len(allowed) > 0 && tok == format.TokInvLineSep && step.Action == debugger.InvStepInto:
			// stepping back into a line that surely made a call finds its copy
			out[tok] = slices.DeleteFunc(slices.Clone(allowed), func(l string) bool {
				return s.calls(l) == pysource.CertainCall && !(f.Kind == format.InvLineCall && l == f.Src)
			})
		case len(allowed) > 0 && tok == format.TokInvLineCallSep && step.Action == debugger.InvStepInto:
			// and a line that made none has no copy
			out[tok] = slices.DeleteFunc(slices.Clone(allowed), func(l string) bool { return s.calls(l) == pysource.NoCall })
		case len(allowed) > 0:
			out[tok] = allowed
		}
	}
	switch {
	case step.Action == debugger.StepInto && s.calls(f.Src) == pysource.CertainCall:
		// its call comes next (or an exception): no line, no return
		out[format.TokLineSep], out[format.TokReturnSep] = sortedSet{}, sortedSet{}
		if def, ok := s.firstCall(f.Src); ok {
			out[format.TokCallSep] = sortedSet{def}
		}
	case step.Action == debugger.StepInto && s.calls(f.Src) == pysource.NoCall:
		out[format.TokCallSep] = sortedSet{}
	}
	if !backward {
		if ends, ok := s.endsAfter(f.Src); ok {
			if cur, ruled := out[format.TokReturnSep]; !ruled || len(cur) > 0 {
				out[format.TokReturnSep] = ends
			}
		}
	}
	return out
}

// endsAfter is where a frame returns right after a line event on a line
// with text src, with no event between: on that line, and only where the
// frame may end there when nothing raises (pysource's EndLines: after an
// exception its event comes first); nil and false where a line of the
// text has no EndLines (a generator's, a lambda's, a frame the text does
// not place) or no line has the text. Why: the model answered a step from a function's `print`
// with its return on that line, where the next line runs.
func (s *scopeRules) endsAfter(src string) (sortedSet, bool) {
	found, ends := false, sortedSet{}
	for n := range s.linesWith(src) {
		lines := s.ix.EndLines(n)
		if lines == nil {
			return nil, false
		}
		found = true
		if slices.Contains(lines, n) {
			ends = sortedSet{src}
		}
	}
	return ends, found
}

// escapeFree reports whether every line with text src (call: whose call
// event it fires) has EscapeFreeEndLines.
func (s *scopeRules) escapeFree(src string, call bool) bool {
	found := false
	for n := range s.linesWith(src) {
		if s.ix.EscapeFreeEndLines(n, call) == nil {
			return false
		}
		found = true
	}
	return found
}

// caught reports whether, in a script (which runs to its end: EndLines),
// an exception event on a line with text src is one its frame catches: a
// line only the module runs, or one of a function no exception leaves but
// into the module (pysource's NoEscape).
func (s *scopeRules) caught(src string) bool {
	return s.moduleOnly(src) && !s.ix.MayExitByRaise() || s.escapeFree(src, false)
}

// sureBindsAt is what pysource's SureBinds says line n binds once its
// statement completes, for a line event of the frame that runs it: on a
// class statement's line the class body fires its first line event too,
// with no name yet (the tracer hides its dunders) where no metaclass
// prepares its namespace (EmptyClassStart), so a frame that holds a name
// there (held) is the statement's; nil for no rule.
func (s *scopeRules) sureBindsAt(n int, held bool) []string {
	binds := s.ix.SureBinds(n)
	for _, sc := range s.ix.RunsOn(n) {
		if sc != s.ix.Owner(n) && (sc.Kind != pysource.Class || sc.Line != n || !held || !s.ix.EmptyClassStart(sc)) {
			return nil
		}
	}
	return binds
}

// forHeader reports whether a line with text src may be a for loop's
// header.
func (s *scopeRules) forHeader(src string) bool {
	for n := range s.linesWith(src) {
		if s.ix.StatementKeyword(n) == "for" {
			return true
		}
	}
	return false
}

// withReturnLines narrows rule after step_return from a line or call
// frame (the text last): the frame returns on one of the lines its code
// may reach from there (pysource's ReturnLines, CallReturnLines from a
// call; every line of the frame's text alike), and a script's module frame
// (from its call, or a line only the module runs) where it ends when no
// exception leaves it (EndLines, ModuleEndLines): the data holds no
// script that crashes, and the model named lines halfway down the file.
// Where the text does not place it, the rule stays as it was.
func (s *scopeRules) withReturnLines(rule map[string]sortedSet, last string, script bool) map[string]sortedSet {
	f, err := format.ParseFrame(last)
	if err != nil || f.Kind != format.Line && f.Kind != format.Call {
		return rule
	}
	froms, returnLines := slices.Collect(s.linesWith(f.Src)), s.ix.ReturnLines
	switch {
	case f.Kind == format.Call && f.Src == "": // a script's module call
		froms, returnLines = []int{0}, func(int) []int { return s.ix.ModuleEndLines() }
	case f.Kind == format.Call && script && s.escapeFree(f.Src, true):
		returnLines = func(n int) []int { return s.ix.EscapeFreeEndLines(n, true) }
	case f.Kind == format.Call:
		returnLines = s.ix.CallReturnLines
	case s.moduleOnly(f.Src):
		returnLines = s.ix.EndLines
	case script && s.escapeFree(f.Src, false):
		returnLines = func(n int) []int { return s.ix.EscapeFreeEndLines(n, false) }
	}
	if len(froms) == 0 {
		return rule
	}
	lines := sortedSet{}
	for _, n := range froms {
		at := returnLines(n)
		if at == nil {
			return rule
		}
		for _, m := range at {
			lines = append(lines, s.ix.Line(m))
		}
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return !executable(l) })
	lines.sort()
	if cur, ok := rule[format.TokReturnSep]; ok {
		lines = slices.DeleteFunc(lines, func(l string) bool { return !cur.contains(l) })
	}
	if len(lines) == 0 {
		return rule
	}
	out := maps.Clone(rule)
	if out == nil {
		out = map[string]sortedSet{}
	}
	out[format.TokReturnSep] = lines
	return out
}

// withEntry narrows rule after step_into or step_over from a call event
// on a line of text src: a fresh frame's first line event is on one of
// its code's EntryLines (pysource), the module's for a script's call (no
// line). The code is each def, class or module whose call shows src; a
// lambda's, a comprehension's or a resumed generator's (on a line no def
// starts on) sets no rule.
func (s *scopeRules) withEntry(rule map[string]sortedSet, src string) map[string]sortedSet {
	var entry sortedSet
	add := func(sc *pysource.Scope) bool {
		lines := s.ix.EntryLines(sc)
		for _, n := range lines {
			entry = append(entry, s.ix.Line(n))
		}
		return lines != nil
	}
	if src == "" {
		if !add(s.ix.Module) {
			return rule
		}
	} else {
		for _, sc := range s.ix.Scopes {
			if s.ix.Line(sc.First) == src && !add(sc) {
				return rule
			}
		}
	}
	entry = slices.DeleteFunc(entry, func(l string) bool { return !executable(l) })
	if len(entry) == 0 {
		return rule
	}
	entry.sort()
	out := maps.Clone(rule)
	if out == nil {
		out = map[string]sortedSet{}
	}
	if cur, ok := out[format.TokLineSep]; ok {
		entry = slices.DeleteFunc(entry, func(l string) bool { return !cur.contains(l) })
		if len(entry) == 0 {
			return rule
		}
	}
	out[format.TokLineSep] = entry
	return out
}

// calls is what every line of text src does about the program's code
// when it runs (pysource's CallsProgram): surely calls it, surely not, or either.
func (s *scopeRules) calls(src string) pysource.Calling {
	if s.calling == nil {
		s.calling = map[string]pysource.Calling{}
		for j, l := range s.lines {
			c, seen := s.calling[l]
			if now := s.ix.CallsProgram(j + 1); !seen {
				s.calling[l] = now
			} else if c != now {
				s.calling[l] = pysource.MayCall
			}
		}
	}
	return s.calling[src]
}

// firstCall is the def line of the function whose call comes first after
// a line event on every line of text src (pysource's FirstCall); false
// where one of them does not fix it or two differ.
func (s *scopeRules) firstCall(src string) (string, bool) {
	def := ""
	for n := range s.linesWith(src) {
		name := s.ix.FirstCall(n)
		sc := s.ix.Lookup(name)
		if name == "" || sc == nil || sc.First < 1 || def != "" && s.lines[sc.First-1] != def {
			return "", false
		}
		def = s.lines[sc.First-1]
	}
	return def, def != ""
}

// flowLines are the texts of the lines a line event on a line of text src
// can go to next (backward: come from) in its frame, and src itself where
// copy is set: backwards from the copy of a line that made a call (an
// inv_line_call frame) the line's own event comes next. Empty (not nil)
// where the frame cannot go on to a line from any of them; nil where the
// text does not place it.
func (s *scopeRules) flowLines(src string, backward, copy bool) sortedSet {
	at := map[int]bool{}
	for n := range s.linesWith(src) {
		at[n] = true
	}
	if len(at) == 0 {
		return nil
	}
	out := sortedSet{}
	for n := range at {
		next := s.ix.NextLines(n)
		if next == nil { // the text does not place it (or the program's flow is unread)
			return nil
		}
		if !backward {
			for _, m := range next {
				out = append(out, s.ix.Line(m))
			}
		}
	}
	if copy {
		out = append(out, src)
	}
	if backward {
		for m := 1; m <= len(s.lines); m++ {
			if slices.ContainsFunc(s.ix.NextLines(m), func(n int) bool { return at[n] }) {
				out = append(out, s.ix.Line(m))
			}
		}
	}
	out = slices.DeleteFunc(out, func(l string) bool { return !executable(l) })
	out.sort()
	return out
}

// moduleOnly reports whether every line of text src runs in the module's
// frame alone (no def or class body shares the text, nor a comprehension
// or lambda on the line). The texts are read once per program: decoding
// asks for each token of a module frame's LOCALS.
func (s *scopeRules) moduleOnly(src string) bool {
	if s.moduleText == nil {
		s.moduleText = s.everyLine(func(n int) bool {
			runs := s.ix.RunsOn(n)
			return len(runs) == 1 && runs[0] == s.ix.Module
		})
	}
	return s.moduleText[src]
}

// sureLocals is the intersection of pysource's SureLocals over the lines
// of text src, nil where one has none (read once per text).
func (s *scopeRules) sureLocals(src string) []string {
	if names, ok := s.sure[src]; ok {
		return names
	}
	sure := commonNames(func(yield func([]string) bool) {
		for n := range s.linesWith(src) {
			if !yield(s.ix.SureLocals(n)) {
				return
			}
		}
	})
	s.sure[src] = sure
	return sure
}

// loopValues is pysource's LoopValues of the lines of text src, the names
// every one of them fixes at the same value (read once per text).
func (s *scopeRules) loopValues(src string) map[string]string {
	if values, ok := s.loops[src]; ok {
		return values
	}
	var common map[string]string
	first := true
	for n := range s.linesWith(src) {
		values := s.ix.LoopValues(n)
		if first {
			common, first = maps.Clone(values), false
		}
		maps.DeleteFunc(common, func(name, v string) bool { return values[name] != v })
	}
	if s.loops == nil {
		s.loops = map[string]map[string]string{}
	}
	s.loops[src] = common
	return common
}

// callNames is the union of pysource's CallPossible over the lines of
// text src that start a def's code (the names its call event may show);
// nil where one of them does not say.
func (s *scopeRules) callNames(src string) sortedSet {
	var names sortedSet
	for n := range s.linesWith(src) {
		may := s.ix.CallPossible(n)
		if may == nil {
			return nil
		}
		names = append(names, may...)
	}
	if names == nil {
		return nil
	}
	names.sort()
	return names
}

// callLocals is the intersection of pysource's CallLocals over the lines
// of text src: the parameters a call event there surely shows.
func (s *scopeRules) callLocals(src string) []string {
	return commonNames(func(yield func([]string) bool) {
		for n := range s.linesWith(src) {
			if !yield(s.ix.CallLocals(n)) {
				return
			}
		}
	})
}

// commonNames is the names every list of each holds, nil where one holds
// none (each stops there).
func commonNames(each iter.Seq[[]string]) []string {
	var common []string
	first := true
	for names := range each {
		if !first {
			names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(common, n) })
		}
		if common, first = names, false; len(common) == 0 {
			return nil
		}
	}
	return common
}

// lastStep splits a prompt's last frame and action: last is the frame's
// text and the action's, k where the action's <|action_sep|> starts.
func lastStep(prompt string) (last string, k int, step format.Step, err error) {
	body := strings.TrimSuffix(prompt, format.TokFrameSep)
	i := strings.LastIndex(body, format.TokFrameSep)
	if i < 0 || len(body) == len(prompt) {
		return "", 0, format.Step{}, errors.New("no frame before the action")
	}
	last = body[i+len(format.TokFrameSep):]
	if k = strings.LastIndex(last, format.TokActionSep); k < 0 {
		return "", 0, format.Step{}, errors.New("no action")
	}
	step, err = format.ParseStep(last[k:])
	return last, k, step, err
}

// lastFrame is the prompt's last frame and the step asked from it.
func lastFrame(prompt string) (format.Frame, format.Step, error) {
	last, k, step, err := lastStep(prompt)
	if err != nil {
		return format.Frame{}, step, err
	}
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	return f, step, err
}

// inModule reports whether the prompt's last frame is the module's (a
// line or exception event on a line only the module runs, or a script's
// module call: no line), and the step asked from it.
func (s *scopeRules) inModule(prompt string) (format.Step, bool) {
	f, step, err := lastFrame(prompt)
	if err != nil {
		return step, false
	}
	switch f.Kind {
	case format.Line, format.Exception:
		return step, s.moduleOnly(f.Src)
	case format.Call:
		return step, f.Src == ""
	}
	return step, false
}

// stepsInModule reports whether the prompt asks a step_into or step_over
// from the module's frame (inModule): a line event it answers is the
// module's too, whatever frames share its line (a class statement's),
// since another frame's line events come after its call.
func (s *scopeRules) stepsInModule(prompt string) bool {
	step, ok := s.inModule(prompt)
	return ok && (step.Action == debugger.StepInto || step.Action == debugger.StepOver)
}

// freshBreak reports whether the prompt asks a breakpoint from the
// module's frame of a script (inModule): no other frame is running, so
// the stop, if in a function or class body, is the first run of its line
// in a new frame (heldAt with first).
func (s *scopeRules) freshBreak(prompt string) bool {
	step, ok := s.inModule(prompt)
	return ok && step.Action == debugger.Breakpoint
}

// returnValues maps the head of a return frame (its kind token, source line
// and <|arg_sep|>) to the value it must show, read from the prompt's last
// frame and action: after the return of F with value V, step_into,
// step_over and step_return stop next in F's caller, and a return there at
// a line `return F(...)`, whose whole expression is that call, returns V.
// Why: a small model miscopies a long value it has just read, and the
// wrapped call `def main(): return f(...)` makes this a common step.
// Nil where the last frame is no return of a function the program's text
// names (a line in two functions of other names, a lambda, the module).
// From a line frame: the return of `return NAME` (returnedName) or, by
// step_return, the values the text fixes on the way out (returnedValues).
func (s *scopeRules) returnValues(prompt string) map[string]string {
	last, k, step, err := lastStep(prompt)
	if err != nil || step.Action != debugger.StepInto && step.Action != debugger.StepOver && step.Action != debugger.StepReturn {
		return nil
	}
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	if err == nil && f.Kind == format.Line {
		if step.Action == debugger.StepReturn {
			if v := s.returnedValues(f.Src); v != nil {
				return v
			}
		}
		return s.returnedName(prompt, f.Src)
	}
	if err != nil || f.Kind != format.Return {
		return nil
	}
	value := last[strings.LastIndex(last[:k], format.TokArgSep)+len(format.TokArgSep) : k]
	name := ""
	for n := range s.linesWith(f.Src) {
		for _, b := range s.member[n-1] {
			n := s.blockName(b)
			if n == "" || name != "" && n != name {
				return nil
			}
			name = n
		}
	}
	if name == "" {
		return nil
	}
	out := map[string]string{}
	for j, l := range s.lines {
		if s.ix.ReturnedCall(j+1) == name {
			out[format.TokReturnSep+format.TokSrcSep+l+format.TokArgSep] = value
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// loopLocals maps the heads of the inverse line frames (inv_line,
// inv_line_call) that a step back (inv_step_into, inv_step_over) from a
// line event may reach on a for loop's header to the LOCALS they must
// show. From the first line of the loop's body, the header's event came
// before the target took its item: the header shows the item before
// (pysource's ItemBefore), or no target at all before the first item;
// from a line after the loop, the header found no item more and changed
// nothing, where iterating runs no code (PlainIterable: a generator's
// frame may change what the locals hold). Nil for no rule. Why: going back into a loop's header is
// common, and the model kept the item the body holds (13 of the 26 steps
// back to a header on the hand-written scripts were wrong, 9 of 11 on
// realworld files). Not in a program that may run threads.
func (s *scopeRules) loopLocals(prompt string) map[string]string {
	f, step, err := lastFrame(prompt)
	if err != nil || step.Action != debugger.InvStepInto && step.Action != debugger.InvStepOver {
		return nil
	}
	if f.Kind != format.Line && f.Kind != format.InvLine && f.Kind != format.InvLineCall {
		return nil
	}
	locals, ok := format.LastLocals(promptFrames(prompt))
	if !ok || s.ix.RunsThreads() {
		return nil
	}
	valueOf := locals.Get
	texts := map[string]string{} // a header's text: its LOCALS ("": two disagree)
	for h := range s.lines {
		h++
		first, last, ok := s.ix.ForBody(h)
		if !ok {
			continue
		}
		for l := range s.linesWith(f.Src) {
			if l == h || !slices.Contains(s.ix.NextLines(h), l) {
				continue // on the header's own line runs a comprehension's frame too
			}
			// after the loop: as it is, where finding no item ran no code
			text, ok := format.StepLocalsText(locals, locals, step.Action)
			ok = ok && s.ix.PlainIterable(h, locals.Get)
			if first <= l && l <= last {
				// from the body's first line: the target held the item before
				name := s.ix.ForTarget(h)
				cur, found := valueOf(name)
				prev, unbound, known := s.ix.ItemBefore(h, cur, valueOf)
				switch {
				case !found || !known:
					text, ok = "", false
				case unbound:
					text, ok = format.UnboundLocalsText(locals, name, step.Action)
				default:
					text, ok = format.BoundLocalsText(locals, name, prev, step.Action)
				}
			}
			if seen, dup := texts[s.lines[h-1]]; !ok || dup && seen != text {
				text = ""
			}
			texts[s.lines[h-1]] = text
		}
	}
	var out map[string]string
	for src, text := range texts {
		if text == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		for _, kind := range []string{format.TokInvLineSep, format.TokInvLineCallSep} {
			out[kind+format.TokSrcSep+src+format.TokArgSep] = text
		}
	}
	return out
}

// stepAhead is the answer to a step (step_into, step_over) from a line
// event on a header whose next line the frame's values decide, every line
// of the last frame's text alike: a for loop's (pysource's ItemAfter: the
// targets bound to the next item, or the loop done) or an if, elif or
// while header's (CondHolds: the condition's truth). It gives the LOCALS
// of the step's line frame (nothing changed but the loop's targets) and the
// lines that frame may be on (NextLines in the body, where a statement's
// event may be on a later line of it, or those after it); into: the step
// surely lands in the body. ok false for no rule. Why: 27 of 44 steps from
// a loop header on the held-out programs were wrong, on the item or on
// whether the loop goes on, and a branch's way is the commonest next-line
// error left. Not in a program that may run threads.
func (s *scopeRules) stepAhead(prompt string) (locals string, lines sortedSet, into, ok bool) {
	f, step, err := lastFrame(prompt)
	if err != nil || step.Action != debugger.StepInto && step.Action != debugger.StepOver {
		return "", nil, false, false
	}
	if f.Kind != format.Line || s.ix.RunsThreads() {
		return "", nil, false, false
	}
	held, ok := format.LastLocals(promptFrames(prompt))
	if !ok {
		return "", nil, false, false
	}
	frames, steps := promptSteps(prompt)
	prev := s.prevLine(frames, steps)
	found := false
	for h := range s.linesWith(f.Src) {
		text, textOK := format.StepLocalsText(held, held, step.Action)
		first, end, loop := s.ix.ForBody(h)
		var in, known bool
		if loop {
			var items []string
			at := pysource.LoopPlace{Prev: prev, Round: s.loopRound(frames, steps, h)}
			if items, in, known = s.ix.ItemAfter(h, at, held.Get); in {
				text, textOK = format.BoundAllLocalsText(held, s.ix.ForTargets(h), items, step.Action)
			}
		} else if first, end, known = s.ix.CondBody(h); known {
			in, known = s.ix.CondHolds(h, held.Get)
		}
		if !known {
			return "", nil, false, false
		}
		next := sortedSet{} // the body's lines it may go on to, or the others
		for _, n := range s.ix.NextLines(h) {
			if (first <= n && n <= end) == in {
				next = append(next, s.lines[n-1])
			}
		}
		next.sort()
		if !textOK || in && len(next) == 0 || found && (text != locals || in != into || !slices.Equal(next, lines)) {
			return "", nil, false, false
		}
		locals, lines, into, found = text, next, in, true
	}
	return locals, lines, into, found
}

// prevLine is the line of the line event that came before the last of
// frames (a prompt's, steps between them: promptSteps) in its Python
// frame, where they show it: the frame before the last is a line frame on
// a line of its own text, and the step from it (step_into, step_over)
// reached a line frame, which is the next event of its frame (a call
// would have shown its call first, a return its return). 0 otherwise.
func (s *scopeRules) prevLine(frames []format.Frame, steps []format.Step) int {
	n := len(frames)
	if n < 2 || len(steps) != n-1 || frames[n-2].Kind != format.Line ||
		steps[n-2].Action != debugger.StepInto && steps[n-2].Action != debugger.StepOver {
		return 0
	}
	line := 0
	for n := range s.linesWith(frames[n-2].Src) {
		if line != 0 {
			return 0
		}
		line = n
	}
	return line
}

// promptSteps are the prompt's frames in order and, for each but the
// last, the step that led from it to the next; nil where one does not
// parse.
func promptSteps(prompt string) ([]format.Frame, []format.Step) {
	texts := strings.Split(strings.TrimSuffix(prompt, format.TokFrameSep), format.TokFrameSep)
	var frames []format.Frame
	var steps []format.Step
	for _, text := range texts[1:] { // texts[0] is the header
		k := strings.LastIndex(text, format.TokActionSep)
		if k < 0 {
			return nil, nil
		}
		f, err := format.ParseFrame(text[:k+len(format.TokActionSep)])
		if err != nil {
			return nil, nil
		}
		step, err := format.ParseStep(text[k:])
		if err != nil {
			return nil, nil
		}
		frames, steps = append(frames, f), append(steps, step)
	}
	if len(steps) > 0 {
		steps = steps[:len(steps)-1] // the last is the step asked
	}
	return frames, steps
}

// loopRound counts the events of the for header on line h (the last
// frame's) in the run of its loop, this one included, where the prompt
// shows the whole run: walking back through steps that skip no event of
// the loop's frame (step_into, step_over, and step_return from a call it
// made), over the frames of calls it made, to the frame's line event
// before the loop or its call. 0 where unknown. Why: an item that repeats
// ('banana', the words of a sentence) leaves the next one to the round.
func (s *scopeRules) loopRound(frames []format.Frame, steps []format.Step, h int) int {
	first, end, ok := s.ix.ForBody(h)
	header := s.lines[h-1]
	if !ok || len(frames) == 0 || len(steps) != len(frames)-1 || frames[len(frames)-1].Src != header || s.ix.Suspends(h) {
		return 0 // a generator's frame returns and is called again at each yield
	}
	if len(slices.Collect(s.linesWith(header))) != 1 {
		return 0
	}
	inBody := func(src string) (in, known bool) { // every line of text src alike
		seen := false
		for n := range s.linesWith(src) {
			if seen && in != (first <= n && n <= end) {
				return false, false
			}
			in, seen = first <= n && n <= end, true
		}
		return in, seen
	}
	round, depth := 1, 0
	for i := len(frames) - 2; i >= 0; i-- {
		// depth before frame i+1: a call frame is one deeper, a return's
		// next frame one shallower
		if frames[i+1].Kind == format.Call {
			depth--
		}
		if frames[i].Kind == format.Return {
			depth++
		}
		switch a := steps[i].Action; {
		case a == debugger.StepInto || a == debugger.StepOver:
		case a == debugger.StepReturn && depth > 0:
		default:
			return 0
		}
		f := frames[i]
		switch {
		case depth > 0:
			continue
		case depth < 0 || f.Kind == format.Call:
			return round // the frame's call: the loop started after it
		case f.Kind != format.Line:
			return 0
		case f.Src == header:
			round++
			continue
		}
		in, known := inBody(f.Src)
		switch {
		case !known:
			return 0
		case !in:
			return round // the line before the loop
		}
	}
	return 0
}

// returnedName pins the return frame that follows a line event on
// `return NAME` (pysource's ReturnedName, every line of text src the same
// name) to NAME's value in the frame's locals, merged from the prompt's
// frames (nil where the prompt does not show NAME). Why: the model
// miscopies a value it has just read (CruxEval-O by breakpoint stops on
// the return line, then asks step_return).
func (s *scopeRules) returnedName(prompt, src string) map[string]string {
	name := ""
	for at := range s.linesWith(src) {
		n := s.ix.ReturnedName(at)
		if n == "" || name != "" && n != name {
			return nil
		}
		name = n
	}
	if name == "" {
		return nil
	}
	locals, _ := format.LastLocals(promptFrames(prompt))
	for _, v := range locals {
		if v.Name != name {
			continue
		}
		if head, value, ok := returnFrame(src, v.Value); ok {
			return map[string]string{head: value}
		}
	}
	return nil
}

// assignedLocals is the LOCALS text of the line frame that step_into or
// step_over reaches from a line event on `NAME = LITERAL` (pysource's
// AssignsLiteral) or on an assignment whose value the frame's locals fix
// (AssignsValue: `total += v`, `mid = (lo + hi) // 2`; AppendsValue:
// `out.append(ch.upper())`), every line of the last frame's text alike:
// the frame's locals with NAME bound to the value, written as the format writes the step's frame (format.Builder:
// what changed, ".." for the rest); "" for no rule. Why: a step is the
// commonest command, and a session that drifts mostly drifts on a value.
func (s *scopeRules) assignedLocals(prompt string) string {
	f, step, err := lastFrame(prompt)
	if err != nil || step.Action != debugger.StepInto && step.Action != debugger.StepOver {
		return ""
	}
	if f.Kind != format.Line {
		return ""
	}
	locals, known := format.LastLocals(promptFrames(prompt))
	name, repr := "", ""
	for at := range s.linesWith(f.Src) {
		n, r, ok := s.ix.AssignsLiteral(at)
		if !ok && known {
			n, r, ok = s.ix.AssignsValue(at, locals.Get)
		}
		if !ok && known {
			n, r, ok = s.ix.AppendsValue(at, locals.All())
		}
		if !ok || name != "" && (n != name || r != repr) {
			return ""
		}
		name, repr = n, r
	}
	if name == "" || !known {
		return ""
	}
	text, _ := format.BoundLocalsText(locals, name, repr, step.Action)
	return text
}

// newNames lists the names a line frame that step_into or step_over
// reaches from a line event must show because the step binds them anew:
// those the line's statement surely binds once it completes (sureBindsAt;
// a line answer means it did: a call or an exception would come first)
// that the frame's complete locals (known from the prompt) lack, every
// line of the last frame's text alike; nil for no rule. From a return
// event, a line answer is the caller's next one (callerLine): it shows the
// caller's names and those its calling line binds. Why: a step from
// `node = self.head` answered the next line without node, and one from
// tick()'s return the module's next line without the `a` that `a =
// tick()` bound.
func (s *scopeRules) newNames(prompt string) []string {
	f, step, err := lastFrame(prompt)
	if err != nil || step.Action != debugger.StepInto && step.Action != debugger.StepOver {
		return nil
	}
	if f.Kind != format.Line && f.Kind != format.Return {
		return nil
	}
	src, before := f.Src, promptFrames(prompt)
	if f.Kind == format.Return {
		if src, before = callerLine(prompt); before == nil {
			return nil
		}
	}
	locals, known := format.LastLocals(before)
	if !known {
		return nil
	}
	var names []string
	seen := false
	for n := range s.linesWith(src) {
		binds := s.sureBindsAt(n, len(locals) > 0)
		if binds == nil || seen && !slices.Equal(binds, names) {
			return nil
		}
		names, seen = binds, true
	}
	if f.Kind == format.Return {
		// back in the caller, whose frame the format shows whole: its names
		// stay (but one some statement may delete)
		for _, v := range locals {
			if !slices.Contains(names, v.Name) && !s.ix.MayUnbind(v.Name) {
				names = append(names, v.Name)
			}
		}
		return names
	}
	return slices.DeleteFunc(names, func(name string) bool { _, had := locals.Get(name); return had })
}

// callerNames lists the names a line frame that a step forward from a
// return frame reaches surely holds: it is the caller's (pysource's
// SureAfterReturn, every line of the return's text alike); nil for none.
func (s *scopeRules) callerNames(prompt string) []string {
	f, step, err := lastFrame(prompt)
	if err != nil || f.Kind != format.Return || step.Action != debugger.StepInto && step.Action != debugger.StepOver && step.Action != debugger.StepReturn {
		return nil
	}
	return commonNames(func(yield func([]string) bool) {
		for n := range s.linesWith(f.Src) {
			if !yield(s.ix.SureAfterReturn(n)) {
				return
			}
		}
	})
}

// callerLine finds, for a prompt whose last frame is a return event that
// forward steps reached from the call it ends, the line frame that made
// that call (by step_into): its line, and the prompt's frames up to it
// (nil where the prompt does not show them).
func callerLine(prompt string) (src string, before []format.Frame) {
	frames, actions, whole := promptTrail(prompt)
	if !whole {
		return "", nil
	}
	last := len(frames) - 1
	if last < 0 || frames[last].Kind != format.Return {
		return "", nil
	}
	depth := 0 // callees' frames between the call and its return
	for i := last - 1; i >= 0; i-- {
		switch a := actions[i]; {
		case a != debugger.StepInto && a != debugger.StepOver && a != debugger.StepReturn:
			return "", nil // a jump or a step back: the stack is not followed
		case frames[i].Kind == format.Return:
			depth++
		case frames[i].Kind == format.Call && depth > 0:
			depth--
		case frames[i].Kind == format.Call:
			if i == 0 || frames[i-1].Kind != format.Line || actions[i-1] != debugger.StepInto {
				return "", nil
			}
			return frames[i-1].Src, frames[:i]
		case frames[i].Kind != format.Line && frames[i].Kind != format.Exception:
			return "", nil
		}
	}
	return "", nil
}

// returnedValues pins the return frames step_return may reach from a line
// event on text src to the values the program's text fixes there
// (pysource's ReturnValues), where every line of text src that may
// return on a line of one text agrees on its value.
func (s *scopeRules) returnedValues(src string) map[string]string {
	byText := map[string]string{}
	for n := range s.linesWith(src) {
		values := s.ix.ReturnValues(n)
		if values == nil {
			return nil
		}
		for m, repr := range values {
			text := s.ix.Line(m)
			if v, seen := byText[text]; seen && v != repr {
				repr = ""
			}
			byText[text] = repr
		}
	}
	var out map[string]string
	for text, repr := range byText {
		if repr == "" {
			continue
		}
		if head, value, ok := returnFrame(text, repr); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[head] = value
		}
	}
	return out
}

// returnFrame is the head (kind, line, <|arg_sep|>) and the value text of
// the return frame on line text src returning the repr value.
func returnFrame(src, value string) (head, text string, ok bool) {
	frame := format.FrameText(format.Frame{Kind: format.Return, Src: src, Arg: value})
	head = format.TokReturnSep + format.TokSrcSep + src + format.TokArgSep
	if !strings.HasPrefix(frame, head) || !strings.HasSuffix(frame, format.TokActionSep) {
		return "", "", false
	}
	return head, strings.TrimSuffix(frame[len(head):], format.TokActionSep), true
}

// blockName is the name of the def or class block b ("" for the module or
// a block whose header does not say).
func (s *scopeRules) blockName(b int) string {
	if b >= 0 && b < len(s.fns) {
		return s.fns[b].Name
	}
	return ""
}

// executable reports whether a source line can be an event's line: not
// blank and not only a comment.
func executable(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && !strings.HasPrefix(t, "#")
}
