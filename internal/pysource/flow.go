package pysource

import (
	"iter"
	"slices"
)

// NextLines lists the lines where the next line event of a frame may fire
// after a line event on line n, when no event of another kind (a call of
// a Python function, an exception, the frame's return) comes between: the
// successors of n's statement in CPython 3.11's control flow, read from the
// text alone. It over-approximates: every line a real run can go to is in
// it (the statement's own lines, for continuation lines and loops on one
// line; where the statement falls through to; a compound header's body,
// its other clauses and what follows; a loop's header after its body; a
// with's header, which fires again at its exit; finally blocks crossed by
// a jump; a decorated definition's decorators, which fire again as they are
// applied; not a line that runs nothing, pysource's Silent: a string's
// inside), and a construct it does not know sets no rule (nil). Nil also
// for a line that runs nothing. Sorted, without repeats.
//
// Why: a model stepping over code at module level or in a long function
// often names a line it cannot reach next (the body of the def it steps
// over, a line two statements on); this is what the model engine may allow.
func (ix *Index) NextLines(n int) []int {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return nil
	}
	out := ix.flowWalk().succ(ix.stmtAt[n-1])
	if out == nil {
		return nil
	}
	out = slices.DeleteFunc(out, ix.Silent) // a string's inside: no event fires there
	if c := ix.compiled; c != nil && c.Next != nil {
		// the bytecode's flow: which of the statement's lines fire, in what order
		next := c.Next[n]
		out = slices.DeleteFunc(out, func(m int) bool { return !slices.Contains(next, m) })
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// flowGraph holds, per logical line, what NextLines needs: the statement's
// keyword, its block's header and its clause chain.
type flowGraph struct {
	ix      *Index
	kw      []string      // the compound keyword ("if", "for", ... "@" for a decorator), "" for a simple statement
	oneLine []bool        // a compound header with its body on the same logical line
	parent  []int         // the header whose body holds it directly, -1 at a frame's top (module, def or class body)
	body    [][]int       // a header's statements, in order
	chain   []int         // the first header of its if/for/while/try chain (itself if none)
	top     map[int][]int // the statements at a frame's top level (parent -1), by indent
	unknown bool          // the text has a construct this reading does not follow

	entering map[int]bool // entry's statements being expanded (a loop of empty statements ends there)
	ends     bool         // next found the frame's end (mayEnd)
}

// buildFlow reads the statements' structure once per index.
func (ix *Index) buildFlow() {
	n := len(ix.stmts)
	f := &flowGraph{ix: ix, kw: make([]string, n), oneLine: make([]bool, n),
		parent: make([]int, n), body: make([][]int, n), chain: make([]int, n), top: map[int][]int{}}
	var stack []int // open headers
	for k, l := range ix.stmts {
		for len(stack) > 0 && l.indent <= ix.stmts[stack[len(stack)-1]].indent {
			stack = stack[:len(stack)-1]
		}
		f.parent[k] = -1
		if len(stack) == 0 {
			f.top[l.indent] = append(f.top[l.indent], k)
		} else {
			f.parent[k] = stack[len(stack)-1]
			f.body[f.parent[k]] = append(f.body[f.parent[k]], k)
		}
		f.chain[k] = k
		toks := l.toks
		w := toks[0].text
		if toks[0].kind == tName && w == "async" && len(toks) > 1 {
			w = toks[1].text
		}
		switch {
		case toks[0].kind == tOp && w == "@":
			f.kw[k] = "@"
			continue
		case toks[0].kind == tName && compound[w], keywordAt(toks) >= 0:
			f.kw[k] = w
		case isMatchStatement(toks) && w == "match":
			f.kw[k] = w
		case isMatchStatement(toks) && f.parent[k] >= 0 && f.kw[f.parent[k]] == "match":
			f.kw[k] = "case"
		default:
			continue
		}
		c := headerColon(toks)
		if c < 0 {
			f.unknown = true
			continue
		}
		f.oneLine[k] = c < len(toks)-1
		if clause[w] {
			// the header before it at the same indent, in the same block
			prev := f.prevSibling(k)
			if prev < 0 || !follows(f.kw[prev], w) {
				f.unknown = true
			} else {
				f.chain[k] = f.chain[prev]
			}
		}
		if !f.oneLine[k] {
			stack = append(stack, k)
		}
	}
	ix.flowG = f
}

var clause = map[string]bool{"elif": true, "else": true, "except": true, "finally": true}

// follows reports whether clause c may follow a header of kind h in a chain.
func follows(h, c string) bool {
	switch c {
	case "elif":
		return h == "if" || h == "elif"
	case "else":
		return h == "if" || h == "elif" || h == "for" || h == "while" || h == "except"
	case "except":
		return h == "try" || h == "except"
	case "finally":
		return h == "try" || h == "except" || h == "else"
	}
	return false
}

// prevSibling is the statement before k in its block (-1 if k is first).
func (f *flowGraph) prevSibling(k int) int {
	sibs := f.siblings(k)
	i := slices.Index(sibs, k)
	if i <= 0 {
		return -1
	}
	return sibs[i-1]
}

// siblings is the block that holds k: its header's body, or the
// statements at a frame's top level that share k's scope.
func (f *flowGraph) siblings(k int) []int {
	if p := f.parent[k]; p >= 0 {
		return f.body[p]
	}
	return f.top[f.ix.stmts[k].indent]
}

// lines are the physical lines of statement k (a compound's header).
func (f *flowGraph) lines(k int) []int {
	var out []int
	for n := f.ix.stmts[k].first; n <= f.ix.stmts[k].last; n++ {
		out = append(out, n)
	}
	return out
}

// frameTop reports whether k's block is a frame's own top level: the module
// or a def or class body (whose end is the frame's return, no line).
func (f *flowGraph) frameTop(k int) bool {
	p := f.parent[k]
	return p < 0 || f.kw[p] == "def" || f.kw[p] == "class"
}

// clauses is the chain headed by h, in order (h first).
func (f *flowGraph) clauses(h int) []int {
	out := []int{h}
	sibs := f.siblings(h)
	for i := slices.Index(sibs, h) + 1; i < len(sibs) && f.chain[sibs[i]] == h && sibs[i] != h; i++ {
		out = append(out, sibs[i])
	}
	return out
}

// definition is the decorated unit that k belongs to: its decorators and
// its def or class header (k alone if it is none of them).
func (f *flowGraph) definition(k int) []int {
	if f.kw[k] != "@" && f.kw[k] != "def" && f.kw[k] != "class" {
		return []int{k}
	}
	sibs := f.siblings(k)
	i := slices.Index(sibs, k)
	lo, hi := i, i
	for lo > 0 && f.kw[sibs[lo-1]] == "@" {
		lo--
	}
	for hi < len(sibs)-1 && f.kw[sibs[hi]] == "@" {
		hi++
	}
	return sibs[lo : hi+1]
}

// flowWalk is the program's flow graph for one walk of its own: the
// statements entry is expanding are per walk.
func (ix *Index) flowWalk() *flowGraph {
	ix.flowOnce.Do(ix.buildFlow)
	w := *ix.flowG
	w.entering = map[int]bool{}
	return &w
}

// entry is where a line event may first fire when control reaches k: its
// lines (a decorated definition's, all of them); for a statement that may
// compile to nothing, also what follows it; for a try, its body too.
func (f *flowGraph) entry(k int) []int {
	var out []int
	for _, d := range f.definition(k) {
		out = append(out, f.lines(d)...)
	}
	if f.entering[k] { // a loop of statements that may all be empty
		return out
	}
	f.entering[k] = true
	defer delete(f.entering, k)
	if f.mayBeEmpty(k) {
		out = append(out, f.next(k)...)
	}
	if f.kw[k] == "try" {
		out = append(out, f.bodyEntry(k)...)
	}
	return out
}

// mayBeEmpty: global, nonlocal, a function's docstring and, in a
// function, a name's annotation without a value (never evaluated there)
// compile to no instruction with a line of its own.
func (f *flowGraph) mayBeEmpty(k int) bool {
	toks := f.ix.stmts[k].toks
	if f.kw[k] != "" {
		return false
	}
	if toks[0].kind == tName && (toks[0].text == "global" || toks[0].text == "nonlocal") {
		return true
	}
	if f.ix.owner[k].Kind == Function && len(toks) > 2 && toks[0].kind == tName && toks[1].kind == tOp && toks[1].text == ":" &&
		!slices.ContainsFunc(toks, func(t token) bool { return t.kind == tOp && t.text == "=" }) {
		return true
	}
	for _, t := range toks {
		if t.kind != tString && t.kind != tNumber && t.text != "..." {
			return false
		}
	}
	// A lone constant compiles to a NOP that keeps its line's event, but
	// a function's docstring is no code at all.
	p := f.parent[k]
	return p >= 0 && f.kw[p] == "def" && f.body[p][0] == k
}

// bodyEntry is where header k's body starts (its own lines for a body on
// the header's line).
func (f *flowGraph) bodyEntry(k int) []int {
	if f.oneLine[k] || len(f.body[k]) == 0 {
		return f.lines(k)
	}
	return f.entry(f.body[k][0])
}

// next is where control goes when statement k (with its whole chain and
// decorators) completes normally: the next statement of its block, else
// where the block's end goes.
func (f *flowGraph) next(k int) []int {
	last := k
	if unit := f.clauses(f.chain[k]); len(unit) > 1 {
		last = unit[len(unit)-1]
	}
	if d := f.definition(k); len(d) > 1 {
		last = d[len(d)-1]
	}
	sibs := f.siblings(last)
	if i := slices.Index(sibs, last); i+1 < len(sibs) {
		return f.entry(sibs[i+1])
	}
	if f.frameTop(last) {
		f.ends = true
		return nil // the frame returns
	}
	return f.after(f.parent[last])
}

// after is where control goes when the body of header p ends.
func (f *flowGraph) after(p int) []int {
	switch f.kw[p] {
	case "for", "while":
		return f.loopBack(p)
	case "with": // its exit fires on its header: the frame cannot end before it
		ends := f.ends
		defer func() { f.ends = ends }()
		return append(f.lines(p), f.next(p)...)
	case "try", "except":
		out := f.afterHandlers(p)
		for _, c := range f.clauses(f.chain[p]) {
			if toks := f.ix.stmts[c].toks; f.kw[c] == "except" && len(toks) > 1 && toks[1].text == "*" {
				out = append(out, f.lines(c)...) // except*: each matching clause runs in turn
			}
		}
		return out
	case "else":
		if f.kw[f.chain[p]] == "try" {
			return f.afterHandlers(p)
		}
	case "finally": // also where a jump that crossed it goes on
		out := append(f.next(p), f.jumpTargets(p, "break")...)
		return append(out, f.jumpTargets(p, "continue")...)
	case "case":
		return f.next(f.parent[p])
	}
	return f.next(p) // if, elif, a loop's else
}

// afterHandlers is where a try's body (from = the try), one of its
// handlers or its else goes on: after the body its else clause, then its
// finally clause, else what follows the statement.
func (f *flowGraph) afterHandlers(from int) []int {
	chain := f.clauses(f.chain[from])
	for _, c := range chain {
		if f.kw[c] == "else" && f.kw[from] == "try" {
			return f.bodyEntry(c)
		}
	}
	if last := chain[len(chain)-1]; f.kw[last] == "finally" {
		return f.bodyEntry(last)
	}
	return f.next(from)
}

// loopOf is the loop whose body holds k (a break or continue there), -1
// if none in k's frame.
func (f *flowGraph) loopOf(k int) int {
	for p := f.parent[k]; p >= 0; p = f.parent[p] {
		switch f.kw[p] {
		case "for", "while":
			return p
		case "def", "class":
			return -1
		}
	}
	return -1
}

// jumpTargets are where a break (or a continue) in k's loop goes, with the
// with exits and finally blocks on the way.
func (f *flowGraph) jumpTargets(k int, jump string) []int {
	loop := f.loopOf(k)
	if loop < 0 {
		return nil
	}
	out := f.crossed(k, loop)
	if jump == "break" {
		return append(out, f.next(loop)...)
	}
	return append(out, f.loopBack(loop)...)
}

// loopBack is where loop p goes at the end of its body or on a continue
// (3.11): its header, a for's FOR_ITER, a while's test compiled again at
// the body's end (a constant one too: `while True:` fires its line each
// round).
func (f *flowGraph) loopBack(p int) []int { return f.lines(p) }

// crossed lists what a jump from k out to header stop (-1: out of the
// frame, a return) runs on its way: the headers of the withs it leaves
// (their exits) and the finally blocks of the trys.
func (f *flowGraph) crossed(k, stop int) []int {
	var out []int
	for p := f.parent[k]; p >= 0 && p != stop && f.kw[p] != "def" && f.kw[p] != "class"; p = f.parent[p] {
		switch f.kw[p] {
		case "with":
			out = append(out, f.lines(p)...)
		case "try", "except", "else":
			if chain := f.clauses(f.chain[p]); f.kw[chain[len(chain)-1]] == "finally" && chain[len(chain)-1] != p {
				out = append(out, f.bodyEntry(chain[len(chain)-1])...)
			}
		}
	}
	return out
}

// around yields the compound headers whose blocks hold statement k in
// its frame, innermost first, up to its def or class (not included).
func (f *flowGraph) around(k int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for p := f.parent[k]; p >= 0 && f.kw[p] != "def" && f.kw[p] != "class"; p = f.parent[p] {
			if !yield(p) {
				return
			}
		}
	}
}

// enclosing is flowGraph.around for statement k of the index.
func (ix *Index) enclosing(k int) iter.Seq[int] {
	ix.flowOnce.Do(ix.buildFlow)
	return ix.flowG.around(k)
}

// inFinally reports whether statement k is in a finally block of its frame.
func (f *flowGraph) inFinally(k int) bool {
	for p := range f.around(k) {
		if f.kw[p] == "finally" {
			return true
		}
	}
	return false
}

// handlers are where an exception inside k may go in k's frame: the
// except clauses and finally blocks of the trys around it.
func (f *flowGraph) handlers(k int) []int {
	var out []int
	add := func(p int) {
		if f.kw[f.chain[p]] != "try" {
			return
		}
		for _, c := range f.clauses(f.chain[p]) {
			switch f.kw[c] {
			case "except":
				out = append(out, f.lines(c)...)
			case "finally":
				out = append(out, f.bodyEntry(c)...)
			}
		}
	}
	if f.oneLine[k] && f.kw[k] == "try" {
		add(k) // `try: return int(s)`: its body is on its own line
	}
	for p := range f.around(k) {
		add(p)
	}
	return out
}

// lastIn is the last statement nested in k (k itself for a simple one).
func (f *flowGraph) lastIn(k int) int {
	for len(f.body[k]) > 0 {
		k = f.body[k][len(f.body[k])-1]
	}
	return k
}

// jumpsIn lists the jumps (break, continue, return, raise: hard keywords,
// which only start a statement; a bare raise as "reraise") of the
// statements starting on lines first to last.
func (f *flowGraph) jumpsIn(first, last int) []string {
	var out []string
	for _, l := range f.ix.stmts {
		if l.first < first || l.first > last {
			continue
		}
		for i, t := range l.toks {
			if t.kind == tName && (t.text == "break" || t.text == "continue" || t.text == "return" || t.text == "raise") {
				if t.text == "raise" && (i+1 == len(l.toks) || l.toks[i+1].text == ";") {
					out = append(out, "reraise")
					continue
				}
				out = append(out, t.text)
			}
		}
	}
	return out
}

// ownLines are the lines of statement k a line event may fire on again
// after one on k: its continuation lines, and its first line too where
// the statement spans lines (an instruction of a later line can hand back
// to it), may repeat after its one-line body (a loop's, a body on the
// header's line), or runs a comprehension's or lambda's frame,
// whose events are on its lines (a comprehension loops there). A statement
// on one line runs once: CPython fires a line event when the line changes
// or a jump goes back.
func (f *flowGraph) ownLines(k int) []int {
	l := f.ix.stmts[k]
	if l.first < l.last || f.oneLine[k] ||
		slices.ContainsFunc(f.ix.RunsOn(l.first), func(s *Scope) bool { return s.Kind == Comprehension || s.Kind == Lambda }) {
		return f.lines(k)
	}
	return []int{}
}

// succ is NextLines for statement k, unsorted; nil for no rule.
func (f *flowGraph) succ(k int) []int {
	if f.unknown {
		return nil
	}
	out := f.ownLines(k)
	switch f.kw[k] {
	case "@", "def", "class":
		if len(f.definition(k)) > 1 { // decorators fire again as they are applied
			out = f.entry(k)
		}
		out = append(out, f.next(k)...)
		for _, d := range f.definition(k) {
			if f.kw[d] == "class" { // the class body's frame starts on its first line (3.11)
				out = append(out, f.bodyEntry(d)...)
			}
		}
		return out
	case "if", "elif":
		out = append(out, f.bodyEntry(k)...)
		chain := f.clauses(f.chain[k])
		switch i := slices.Index(chain, k); {
		case i+1 == len(chain):
			out = append(out, f.next(k)...)
		case f.kw[chain[i+1]] == "elif":
			out = append(out, f.lines(chain[i+1])...)
		default: // else
			out = append(out, f.bodyEntry(chain[i+1])...)
		}
	case "for", "while":
		out = append(out, f.bodyEntry(k)...)
		if chain := f.clauses(k); len(chain) > 1 {
			out = append(out, f.bodyEntry(chain[1])...)
		}
		out = append(out, f.next(k)...)
	case "except":
		out = append(out, f.bodyEntry(k)...)
		chain := f.clauses(f.chain[k])
		for _, c := range chain[slices.Index(chain, k)+1:] {
			switch f.kw[c] {
			case "except":
				out = append(out, f.lines(c)...)
			case "finally":
				out = append(out, f.bodyEntry(c)...)
			}
		}
	case "match":
		for _, c := range f.body[k] {
			out = append(out, f.lines(c)...)
		}
		out = append(out, f.next(k)...)
	case "case":
		out = append(out, f.bodyEntry(k)...)
		cases := f.body[f.parent[k]]
		for _, c := range cases[slices.Index(cases, k)+1:] {
			out = append(out, f.lines(c)...)
		}
		out = append(out, f.next(f.parent[k])...)
	case "try", "else", "finally":
		out = append(out, f.bodyEntry(k)...)
	case "with":
		// its exit fires on it again: then on to what follows, to an
		// enclosing handler after an exception, or where a jump goes
		out = append(append(out, f.bodyEntry(k)...), f.after(k)...)
		out = append(out, f.handlers(k)...)
		last := f.ix.stmts[k].last
		if b := f.body[k]; len(b) > 0 {
			last = f.ix.stmts[f.lastIn(b[len(b)-1])].last
		}
		out = append(out, f.jumpsOut(k, f.ix.stmts[k].first, last)...)
	default: // a simple statement: on to the next one, unless it jumps (added below)
		if first := f.ix.stmts[k].first; len(f.jumpsIn(first, first)) == 0 {
			out = append(out, f.next(k)...)
		}
	}
	if f.oneLine[k] {
		out = append(out, f.after(k)...)
	}
	// A jump anywhere on the logical line (`x += 1; break`, `if x: return`).
	first := f.ix.stmts[k].first
	return append(out, f.jumpsOut(k, first, first)...)
}

// mayEnd reports whether the frame may return right after a line event
// of statement k with no exception leaving it: where k goes next is the
// frame's end, or k returns or raises; a with's header and a finally
// block's statements too (a return on its way out runs them), and an
// except clause's header, which re-raises what it does not match with no
// exception event (sys.exit's SystemExit in a try that catches IOError).
func (f *flowGraph) mayEnd(k int) bool {
	if f.kw[k] == "with" || f.kw[k] == "except" || f.inFinally(k) {
		return true
	}
	f.ends = false
	f.succ(k)
	first := f.ix.stmts[k].first
	return f.ends || slices.ContainsFunc(f.jumpsIn(first, first), func(j string) bool { return j != "break" && j != "continue" })
}

// jumpsOut are where the jumps of the statements starting on lines first
// to last, in k, may go.
func (f *flowGraph) jumpsOut(k, first, last int) []int {
	var out []int
	for _, j := range f.jumpsIn(first, last) {
		switch j {
		case "break", "continue":
			out = append(out, f.jumpTargets(k, j)...)
		case "return":
			out = append(out, f.crossed(k, -1)...)
		case "reraise":
			// A bare raise re-raises with no exception event (3.11's
			// RAISE_VARARGS 0 skips it): the next line may be a handler's.
			out = append(out, f.handlers(k)...)
		}
	}
	return out
}

// Passed reports whether no line event can fire on line l any more once
// the module's frame is on line m, a line after l's statement or l itself
// where that statement is on one line (its event came first); Ahead,
// whether none has fired on l yet while the frame is on a line m before
// it. Both need l to be module code that runs once: a statement of the
// module's own frame (no other code object's events fire on its lines)
// that no loop holds and that is no with header (its exit fires it again)
// and no decorated definition (decorators fire again as they are applied).
// The module's frame runs once, and those are its only ways back up (an
// exception jumps down, to a handler). Ahead also needs m to be no with
// header or decorator, which fire again after lines below them.
//
// Why: a model asked to continue to a breakpoint the run has left behind
// (or, going back, not yet reached) names a stop there anyway; pdb runs
// to the end (or back to the start).
func (ix *Index) Passed(l, m int) bool {
	first, last, ok := ix.runsOnceInModule(l)
	return ok && (m > last || m == first && first == last) && ix.Owner(m) == ix.Module
}

// Ahead: see Passed.
func (ix *Index) Ahead(l, m int) bool {
	first, _, ok := ix.runsOnceInModule(l)
	if !ok || m < 1 || m >= first || ix.Owner(m) != ix.Module {
		return false
	}
	k := ix.stmtAt[m-1]
	return ix.flowG.kw[k] != "with" && len(ix.flowG.definition(k)) == 1
}

// runsOnceInModule is l's statement's lines when it is module code that
// runs once (Passed).
func (ix *Index) runsOnceInModule(l int) (first, last int, ok bool) {
	first, last, ok = ix.Statement(l)
	if !ok || ix.Owner(l) != ix.Module {
		return 0, 0, false
	}
	for n := first; n <= last; n++ {
		if runs := ix.RunsOn(n); len(runs) != 1 || runs[0] != ix.Module {
			return 0, 0, false
		}
	}
	ix.flowOnce.Do(ix.buildFlow)
	f := ix.flowG
	k := ix.stmtAt[l-1]
	if f.unknown || f.kw[k] == "with" || len(f.definition(k)) > 1 {
		return 0, 0, false
	}
	for a := k; a >= 0; a = f.parent[a] {
		if h := f.kw[f.chain[a]]; h == "for" || h == "while" {
			return 0, 0, false
		}
	}
	return first, last, true
}

// EntryLines lists the lines where a fresh frame of s fires its first line
// event (3.11): the module's and a function's first statement (what may
// follow a docstring or `global`, which compile to nothing; a body that is
// only a docstring fires on co_firstlineno), a class body's first line.
// Sorted; nil for a lambda, a comprehension, a def with its body on its
// line, or a text whose flow is not read.
//
// Why: the model stepped into a script's first line as `import math`, past
// the `from __future__ import annotations` above it.
func (ix *Index) EntryLines(s *Scope) []int {
	f := ix.flowWalk()
	if f.unknown {
		return nil
	}
	var out []int
	switch {
	case s.Kind == Module:
		k := slices.IndexFunc(ix.owner, func(o *Scope) bool { return o == ix.Module })
		if k < 0 {
			return nil
		}
		out = f.entry(k)
	case s.Kind == Class:
		return []int{s.First}
	case s.Kind == Function && !s.oneLine:
		k := ix.stmtAt[s.Line-1]
		if body := f.body[k]; len(body) == 0 || ix.docstringOnly(body) {
			return []int{s.First}
		}
		out = f.bodyEntry(k)
	default:
		return nil
	}
	out = slices.DeleteFunc(out, ix.Silent) // what compiles to nothing, as entry keeps it
	slices.Sort(out)
	return slices.Compact(out)
}
