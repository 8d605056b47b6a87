package pysource

import (
	"iter"
	"slices"
	"strconv"
	"strings"
)

// What a frame holds at a line: the names every frame running line n holds
// (SureLocals) and the names it may hold (PossibleLocals), read from the
// order of the statements of the function (or module) that runs the line.

// lineFrame is the function or module whose frame fires line n's events,
// the indentation of its body's first level and the index of the statement
// of that level that holds line n; ok false where the text does not say
// which frame that is or what it may bind: a line that a lambda,
// comprehension or one-line body may also run on, or a scope that may bind
// names its text does not show (Open; the module: ModuleOpen). On a def's
// or class's first line their own frames may fire a line event too (a
// class body's first, a body that is only a docstring): those are firing,
// and ok only where none may bind names its text does not show.
func (ix *Index) lineFrame(n int) (sc *Scope, level, top int, firing []*Scope, ok bool) {
	return ix.lineFrameBeside(n, nil)
}

// lineFrameBeside is lineFrame where inner, if not nil, takes the lambdas
// and comprehensions that also run on line n (frames of their own,
// beside the one lineFrame reads) instead of leaving the frame unknown.
func (ix *Index) lineFrameBeside(n int, inner *[]*Scope) (sc *Scope, level, top int, firing []*Scope, ok bool) {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return nil, 0, 0, nil, false
	}
	k := ix.stmtAt[n-1]
	sc = ix.owner[k]
	for _, r := range ix.RunsOn(n) {
		switch {
		case r == sc:
		case inner != nil && !r.open && (r.Kind == Lambda || r.Kind == Comprehension):
			*inner = append(*inner, r)
		case r.First != n || r.open || r.oneLine || r.Kind != Function && r.Kind != Class:
			return nil, 0, 0, nil, false
		default:
			firing = append(firing, r)
		}
	}
	if sc.open || sc.oneLine || sc.Kind != Module && sc.Kind != Function || sc.Kind == Module && ix.ModuleOpen() {
		return nil, 0, 0, nil, false
	}
	if sc.Kind == Function {
		b := ix.stmtAt[sc.Body-1]
		if b < 0 {
			return nil, 0, 0, nil, false
		}
		level = ix.stmts[b].indent
	}
	for top = k; top > 0 && !(ix.owner[top] == sc && ix.stmts[top].indent == level); top-- {
	}
	return sc, level, top, firing, true
}

// SureLocals lists the names every frame that fires a line event on line n
// holds in its locals, sorted: the parameters of the function it runs in
// and the names bound by the statements of its body's first level that
// come before the one holding line n and always bind when they run (an
// assignment, import, def, class or with statement; not a for, if, try or
// while, whose bodies may not run). A name the scope deletes anywhere (del,
// or an except ... as target, which Python deletes after its handler), a
// nonlocal one (an enclosing function may delete it) and, in the module, a
// dunder (the tracer hides those) is left out. Nil where lineFrame does not know the frame. Because
// every name a statement of the first level binds is bound once it has
// run, and a frame reaches line n only after every earlier statement of
// that level ran to its end (an exception would have left the frame), the
// list is a lower bound of the frame's keys in every run.
func (ix *Index) SureLocals(n int) []string {
	sc, _, _, firing, ok := ix.lineFrame(n)
	if !ok || len(firing) > 0 { // a class body starts with no name, a function with its parameters only
		return nil
	}
	sure := set{}
	if sc.Kind == Function {
		sure.add(sc.Params...)
	}
	ix.namesOnce.Do(ix.readBinds)
	var handlers []int // the `except ... as` headers whose handlers hold line n
	for j, enclosing := range ix.surelyRan(sc, n) {
		l := ix.stmts[j]
		kw := ix.StatementKeyword(l.first)
		if enclosing {
			switch kw {
			case "for", "with":
				sure.add(ix.binds[j]...) // the body runs with its targets bound
			case "except":
				handlers = append(handlers, j)
			}
			continue
		}
		switch kw {
		case "def", "class", "import", "from", "with":
		case "for":
			if !ix.loopsSurely(j) {
				continue
			}
		case "":
			if !assigns(l.toks) {
				continue
			}
		default:
			continue
		}
		sure.add(ix.binds[j]...)
	}
	// names some statement may unbind (in the module: anywhere, as a
	// function may declare them global)
	unbound := map[string]int{} // name -> how many statements of the scope unbind it
	for j, l := range ix.stmts {
		if sc.Kind == Module || l.first >= sc.First && l.last <= sc.End {
			for _, name := range ix.unbinds[j] {
				delete(sure, name)
				unbound[name]++
			}
		}
	}
	// but a handler's own name is bound until the handler ends, where no
	// other statement unbinds it
	for _, h := range handlers {
		for _, name := range ix.unbinds[h] {
			if unbound[name] == 1 {
				sure.add(name)
			}
		}
	}
	for name := range sc.nonlocals {
		delete(sure, name) // an enclosing function may delete it
	}
	return ix.frameKeys(sc, sure)
}

// surelyRan yields, walking back from line n's statement in scope sc, the
// statements that ran to their end before a frame of sc reached n (false)
// and the headers whose suites hold n (true): a statement of the suite
// that holds the path to n (n's own, then each enclosing header's) ran; one
// deeper is in an earlier statement's body, and one before a clause of the
// path's compound statement (else, elif, except, finally, case) in another
// branch, which may not have run.
func (ix *Index) surelyRan(sc *Scope, n int) iter.Seq2[int, bool] {
	return func(yield func(int, bool) bool) {
		k := ix.stmtAt[n-1]
		path, clause := ix.stmts[k].indent, clauseKeywords[ix.StatementKeyword(ix.stmts[k].first)]
		for j := k - 1; j >= 0; j-- {
			l := ix.stmts[j]
			if ix.owner[j] != sc || l.indent > path {
				continue
			}
			kw := ix.StatementKeyword(l.first)
			switch {
			case l.indent < path:
				path, clause = l.indent, clauseKeywords[kw]
				if !yield(j, true) {
					return
				}
			case clause: // an earlier branch of the compound statement of the path
				clause = clauseKeywords[kw]
			case !yield(j, false):
				return
			}
		}
	}
}

// LoopValues maps the names a frame running line n holds at fixed values
// after a loop to those values' reprs: a for loop over a literal with items
// or over range() of int literals (loopsSurely) that ran to its end before
// n (surelyRan; no break in its body) leaves its one target at the last
// item, where no other statement of the scope binds the name and no other
// code may (rebindable, a nested scope's nonlocal). Nil for none. Why: a
// step back from a script's end wrote k=4 after `for k in (3, 5):`.
func (ix *Index) LoopValues(n int) map[string]string {
	sc, _, _, firing, ok := ix.lineFrame(n)
	if !ok || len(firing) > 0 {
		return nil
	}
	ix.namesOnce.Do(ix.readBinds)
	var out map[string]string
	for j, enclosing := range ix.surelyRan(sc, n) {
		if enclosing || ix.StatementKeyword(ix.stmts[j].first) != "for" || !ix.loopsSurely(j) || ix.breaksIn(j) {
			continue
		}
		_, names, iter, ok := ix.forParts(ix.stmts[j].first)
		if !ok || len(names) != 1 || ix.rebindable[names[0]] || ix.bindings(sc, names[0]) != 1 {
			continue
		}
		if r, ok := lastItem(iter); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[names[0]] = r
		}
	}
	return out
}

// breaksIn reports whether the body of the compound statement at logical
// line j holds a break (of it or of a loop inside).
func (ix *Index) breaksIn(j int) bool {
	for k := j + 1; k < len(ix.stmts) && ix.stmts[k].indent > ix.stmts[j].indent; k++ {
		if slices.ContainsFunc(ix.stmts[k].toks, func(t token) bool { return t.kind == tName && t.text == "break" }) {
			return true
		}
	}
	return slices.ContainsFunc(ix.stmts[j].toks, func(t token) bool { return t.kind == tName && t.text == "break" })
}

// bindings counts the statements of scope sc that bind name, and those of
// scopes inside it that declare it nonlocal.
func (ix *Index) bindings(sc *Scope, name string) int {
	count := 0
	for j := range ix.stmts {
		if ix.owner[j] == sc && slices.Contains(ix.binds[j], name) {
			count++
		}
	}
	for _, d := range ix.Scopes {
		if d.nonlocals[name] && within(d, sc) {
			count++
		}
	}
	return count
}

// lastItem is the repr of the last item of a for loop's iterable iter
// that loopsSurely runs: a literal's last item where it is one literal
// token (a minus before a number too), range()'s stop less one.
func lastItem(iter []token) (string, bool) {
	switch t := iter[0]; {
	case t.text == "(" || t.text == "[":
		parts := splitTop(iter[1:len(iter)-1], ",")
		if len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1] // a trailing comma
		}
		last := parts[len(parts)-1]
		if neg := len(last) == 2 && last[0].text == "-" && last[1].kind == tNumber; len(last) == 1 || neg {
			return literalRepr(last[len(last)-1], neg)
		}
	case t.kind == tName && t.text == "range":
		args := splitTop(iter[2:len(iter)-1], ",")
		stop, ok := intLiteral(args[len(args)-1])
		if ok && len(args) <= 2 {
			return strconv.FormatInt(stop-1, 10), true
		}
	}
	return "", false
}

// clauseKeywords open the clauses a compound statement has after its
// first (and match's cases): the statements before one at its indent, back
// to the statement's first header, are other branches.
var clauseKeywords = map[string]bool{"else": true, "elif": true, "except": true, "finally": true, "case": true}

// loopsSurely reports whether the for statement at logical line j runs its
// body at least once, binding its targets: its iterable is a literal
// tuple, list or str with an item, or range() of int literals that counts
// one (the builtin: no statement binds range).
func (ix *Index) loopsSurely(j int) bool {
	_, _, iter, ok := ix.forParts(ix.stmts[j].first)
	if !ok || len(iter) == 0 {
		return false
	}
	switch t := iter[0]; {
	case len(iter) == 1 && t.kind == tString:
		body := strings.TrimLeft(t.text, "rRbBuU")
		q := 1
		if len(body) >= 6 && (strings.HasPrefix(body, `"""`) || strings.HasPrefix(body, "'''")) {
			q = 3
		}
		return len(body) > 2*q && !strings.Contains(body, "\\\n") // an escaped newline alone writes nothing
	case (t.text == "(" || t.text == "[") && matching(iter, 0) == len(iter)-1:
		inner, comprehension := iter[1:len(iter)-1], false
		scanTop(inner, func(k int) bool {
			comprehension = inner[k].kind == tName && inner[k].text == "for"
			return !comprehension
		})
		if comprehension {
			return false // which may hold nothing
		}
		parts := splitTop(inner, ",")
		if t.text == "(" && len(parts) < 2 {
			return false // a parenthesized expression, no tuple
		}
		// an item that is no starred iterable (which may be empty)
		return slices.ContainsFunc(parts, func(p []token) bool { return len(p) > 0 && p[0].text != "*" })
	case t.kind == tName && t.text == "range" && len(iter) > 3 && iter[1].text == "(" && matching(iter, 1) == len(iter)-1 && !ix.bindsAnywhere("range"):
		var bounds []int64
		for _, part := range splitTop(iter[2:len(iter)-1], ",") {
			v, ok := intLiteral(part)
			if !ok {
				return false
			}
			bounds = append(bounds, v)
		}
		switch len(bounds) {
		case 1:
			return bounds[0] > 0
		case 2:
			return bounds[1] > bounds[0]
		}
	}
	return false
}

// PossibleLocals lists the names a frame that fires a line event on line n
// may hold in its locals, sorted: the parameters and free variables of the
// function it runs in, the names its statements before the one of the
// first level that holds line n bind, and those that statement binds too
// where it may run more than once before reaching n (a compound statement:
// a loop) or has run in part (n is not its first line: a := earlier in
// it), but an `except ... as NAME` only on its handler's own lines, since
// Python deletes NAME when the handler ends. Names some other code may
// bind at any time are in as well: in the
// module, those a function or class declares global; in a function, those
// a nested function declares nonlocal; anywhere, := targets (a
// comprehension's bind in the function). ok false where lineFrame does not
// know the frame. The frame runs its statements in order, so at line n
// nothing later in the text has bound a name yet: an upper bound of the
// frame's keys in every run.
func (ix *Index) PossibleLocals(n int) (names []string, ok bool) {
	return union(ix.possibleLocals(n, false))
}

// FirstLocals is PossibleLocals for the first line event a frame fires on
// line n: at a loop's header, nothing its own statement and body bind yet
// (the body runs only after the header's first event; an earlier round of
// an outer loop may have run anything else, a statement after n in the
// text too, where a branch skipped n). Why: a breakpoint from the
// module's frame into a function stops at the first run of its line in a
// fresh frame, and the model wrote `mid` at the first test of `while lo
// <= hi:`, where only a later round has it.
func (ix *Index) FirstLocals(n int) (names []string, ok bool) {
	return union(ix.possibleLocals(n, true))
}

// PossibleLocalGroups is PossibleLocals (first: FirstLocals) frame by
// frame: the names of the frame of the function or module that runs line n
// first, then those of each other frame whose line event may fire on it (a
// def's or class's first line event, a lambda's or comprehension's). One
// frame holds names of one group only. Why: the model wrote a list
// comprehension's `i` among the module's names on its line.
func (ix *Index) PossibleLocalGroups(n int, first bool) (groups [][]string, ok bool) {
	return ix.possibleLocals(n, first)
}

// union is the sorted names of every group.
func union(groups [][]string, ok bool) ([]string, bool) {
	if !ok {
		return nil, false
	}
	names := slices.Concat(groups...)
	slices.Sort(names)
	return slices.Compact(names), true
}

func (ix *Index) possibleLocals(n int, first bool) (groups [][]string, ok bool) {
	var inner []*Scope
	sc, level, top, firing, ok := ix.lineFrameBeside(n, &inner)
	if !ok {
		return nil, false
	}
	may := set{}
	if sc.Kind == Function {
		may = sc.entryNames()
	}
	for _, d := range ix.Scopes {
		switch {
		case sc.Kind == Module:
			for name := range d.globals {
				may.add(name)
			}
		case d != sc && within(d, sc):
			for name := range d.nonlocals {
				may.add(name)
			}
		}
	}
	end := top + 1 // past the statement of the first level that holds n
	if l, kw := ix.stmts[top], ix.StatementKeyword(ix.stmts[top].first); l.first != n || kw != "" && !runOnceKeywords[kw] {
		for end < len(ix.stmts) && !(ix.owner[end] == sc && ix.stmts[end].indent <= level) {
			end++
		}
	} else {
		end = top
	}
	ran := func(j int) bool { return j < end }
	if k := ix.stmtAt[n-1]; ix.owner[k] == sc {
		ran = ix.ranBefore(n, ran)
		if kw := ix.StatementKeyword(n); first && (kw == "for" || kw == "while") && ix.stmts[k].first == n {
			// a loop's body runs only after its header's first event
			again, end := ran, ix.blockEnd(k)
			ran = func(j int) bool { return again(j) && !(j >= k && ix.stmts[j].last <= end) }
		}
	}
	ix.namesOnce.Do(ix.readBinds)
	unfinished := ix.unfinished(n)
	for j, l := range ix.stmts {
		if sc.Kind == Module || l.first >= sc.First && l.last <= sc.End {
			may.add(ix.walrus[j]...)
		}
		if ran(j) && ix.owner[j] == sc && !unfinished[j] {
			for _, name := range ix.binds[j] {
				if name != ix.exceptAs(j) || n > l.last && n <= ix.blockEnd(j) {
					may.add(name)
				}
			}
		}
	}
	groups = [][]string{ix.frameKeys(sc, may)}
	for _, f := range firing { // its own first line event: nothing bound yet (a class body's names are dunders)
		if f.Kind == Function {
			groups = append(groups, ix.frameKeys(f, f.entryNames()))
		} else {
			groups = append(groups, nil)
		}
	}
	for _, c := range inner { // a lambda's or comprehension's frame on the line: anything it may hold
		groups = append(groups, c.Locals())
	}
	return groups, true
}

// ranBefore narrows which statements of line n's frame (by logical line)
// may have run when n fires, from the first level (orElse) to its own
// statement k: every statement before k in the text; k itself where n is
// not its first line (a := earlier on it), where it fires again after its
// body (a loop's or with's header) or where a loop runs it again; and a
// statement after k only inside a loop holding k (an earlier round) or in
// the body of k's own loop or with. Python has no other way back up: a
// handler, an else or a finally comes after what it follows in the text.
// orElse where the control flow is not read.
func (ix *Index) ranBefore(n int, orElse func(int) bool) func(int) bool {
	ix.flowOnce.Do(ix.buildFlow)
	f := ix.flowG
	if f.unknown {
		return orElse
	}
	k := ix.stmtAt[n-1]
	loop := f.loopOf(k) // the outermost loop holding k: each round runs all of it
	for l := loop; l >= 0; l = f.loopOf(l) {
		loop = l
	}
	again := f.kw[k] == "for" || f.kw[k] == "while" || f.kw[k] == "with"
	// the last line a later statement may run from: the loop's, else the
	// body of k's own loop or with
	reach := 0
	if again {
		reach = ix.blockEnd(k)
	}
	if loop >= 0 {
		reach = max(reach, ix.blockEnd(loop))
	}
	return func(j int) bool {
		switch {
		case j < k:
			return true
		case j == k:
			return ix.stmts[k].first != n || again || loop >= 0
		}
		return ix.stmts[j].last <= reach
	}
}

// unfinished lists the statements whose names cannot be bound yet when
// line n, in an except clause (its header or its handler), fires: the last
// statement of the try body it handles, where binding names is that
// statement's last step (an assignment to names only, not an import, no
// `;`) and no loop of the frame runs the try again. An exception there
// came before the binding; had it come after, no handler would run.
func (ix *Index) unfinished(n int) map[int]bool {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return nil
	}
	ix.flowOnce.Do(ix.buildFlow)
	f := ix.flowG
	if f.unknown {
		return nil
	}
	var out map[int]bool
	for k := ix.stmtAt[n-1]; k >= 0; k = f.parent[k] {
		try := f.chain[k]
		if f.kw[k] != "except" || f.kw[try] != "try" || f.oneLine[try] || len(f.body[try]) == 0 || f.loopOf(try) >= 0 {
			continue
		}
		if last := f.body[try][len(f.body[try])-1]; f.kw[last] == "" && bindsLast(ix.stmts[last].toks) {
			if out == nil {
				out = map[int]bool{}
			}
			out[last] = true
		}
	}
	return out
}

// bindsLast reports whether a simple statement's only name bindings are
// its last steps: an assignment whose targets are names alone (no
// attribute or item, whose store may raise after a name's), not an import
// (which binds each name as it goes), not two statements.
func bindsLast(toks []token) bool {
	if len(toks) == 0 || toks[0].text == "import" || toks[0].text == "from" || indexTop(toks, ";") >= 0 {
		return false
	}
	parts := splitTop(toks, "=")
	for _, target := range parts[:len(parts)-1] {
		for i, t := range target {
			switch {
			case t.kind == tName && i+1 < len(target) && (target[i+1].text == "." || target[i+1].text == "[" || target[i+1].text == "("):
				return false
			case t.kind != tName && t.text != "," && t.text != "(" && t.text != ")" && t.text != "[" && t.text != "]" && t.text != "*":
				return false
			}
		}
	}
	return true
}

// exceptAs is the name an `except E as NAME:` clause at logical line j
// binds, "" for any other statement. Python deletes it when the handler
// ends, however it ends, so only the handler's own lines below the clause
// see it.
func (ix *Index) exceptAs(j int) string {
	toks := ix.stmts[j].toks
	if len(toks) == 0 || toks[0].text != "except" {
		return ""
	}
	colon := headerColon(toks)
	for i := 1; i+1 < len(toks) && (colon < 0 || i < colon); i++ {
		if toks[i].text == "as" && toks[i+1].kind == tName {
			return toks[i+1].text
		}
	}
	return ""
}

// blockEnd is the last line of the block that the header at logical line j
// opens (its own last line for a body on the header's line).
func (ix *Index) blockEnd(j int) int {
	end := ix.stmts[j].last
	for k := j + 1; k < len(ix.stmts) && ix.stmts[k].indent > ix.stmts[j].indent; k++ {
		end = ix.stmts[k].last
	}
	return end
}

// entryNames are the names a function's frame holds when it starts: its
// parameters and free variables.
func (s *Scope) entryNames() set {
	names := set{}
	names.add(s.Params...)
	for name := range s.free {
		names.add(name)
	}
	return names
}

// readBinds reads, once per index, what each statement binds (Binds), its
// := targets, the names it may unbind (a del's names, an except ... as
// name, which Python deletes after its handler), how many of the module's
// statements bind each name, the names other code may bind or unbind at
// any time (those, and the names a scope declares global) and whether the
// module may bind names its text does not show (ModuleOpen): SureLocals
// and PossibleLocals ask for them for every line, and a model engine's
// decoding for every line of a program.
func (ix *Index) readBinds() {
	ix.binds = make([][]string, len(ix.stmts))
	ix.walrus = make([][]string, len(ix.stmts))
	ix.unbinds = make([][]string, len(ix.stmts))
	ix.moduleBinds, ix.rebindable = map[string]int{}, set{}
	for _, sc := range ix.Scopes {
		for name := range sc.globals {
			ix.rebindable.add(name)
		}
	}
	for j, l := range ix.stmts {
		ix.binds[j] = ix.Binds(l.first)
		if ix.owner[j] == ix.Module {
			for _, name := range ix.binds[j] {
				ix.moduleBinds[name]++
			}
		}
		del := false
		for i, t := range l.toks {
			if i+1 < len(l.toks) && t.kind == tName && l.toks[i+1].kind == tOp && l.toks[i+1].text == ":=" {
				ix.walrus[j] = append(ix.walrus[j], t.text)
			}
			switch {
			case t.kind == tOp && t.text == ";":
				del = false
			case t.kind != tName:
			case t.text == "del":
				del = true
			case i > 0 && l.toks[i-1].text == ".":
			case del || i > 0 && l.toks[i-1].text == "as" && l.toks[0].text == "except":
				ix.unbinds[j] = append(ix.unbinds[j], t.text)
			}
		}
		ix.rebindable.add(ix.walrus[j]...)
		ix.rebindable.add(ix.unbinds[j]...)
	}
	ix.moduleOpen = ix.readModuleOpen()
}

// runOnceKeywords are the statement keywords of simple statements and of
// def and class statements (their bodies are other frames), which run once
// each time the frame reaches them.
var runOnceKeywords = map[string]bool{"def": true, "class": true, "import": true, "from": true, "return": true, "pass": true, "break": true,
	"continue": true, "raise": true, "del": true, "assert": true, "global": true, "nonlocal": true, "yield": true}

// within reports whether scope d is nested in scope sc.
func within(d, sc *Scope) bool {
	for p := d.Parent; p != nil; p = p.Parent {
		if p == sc {
			return true
		}
	}
	return false
}

// CallLocals lists, sorted, the names a call event on line n surely
// shows: the parameters of the function whose call fires there (every one
// is bound before its first event); nil where no def's code alone starts
// on n (a class body's call shows none, a lambda's or comprehension's line
// may start several).
func (ix *Index) CallLocals(n int) []string {
	def := ix.defAt(n)
	if def == nil || len(def.Params) == 0 {
		return nil
	}
	sure := set{}
	sure.add(def.Params...)
	return ix.frameKeys(def, sure)
}

// CallPossible lists, sorted, the names a call event on line n may show:
// the parameters and free variables of the def whose call fires there
// (nothing else is bound before its first instruction); nil where no def's
// code alone starts on n, or the def may bind names its text does not show.
func (ix *Index) CallPossible(n int) []string {
	def := ix.defAt(n)
	if def == nil || def.open {
		return nil
	}
	may := set{}
	may.add(def.Params...)
	for name := range def.free {
		may.add(name)
	}
	return ix.frameKeys(def, may)
}

// defAt is the def whose call event fires on line n when no other code
// object starts there (Opens), else nil.
func (ix *Index) defAt(n int) *Scope {
	if opens := ix.Opens(n); len(opens) == 1 && opens[0].Kind == Function {
		return opens[0]
	}
	return nil
}

// frameKeys keeps of names those the frame of sc shows, sorted: its locals
// (not a function's global names; a private name in a class mangled) less,
// in the module, dunders (the tracer hides those).
func (ix *Index) frameKeys(sc *Scope, names set) []string {
	locals := set{}
	locals.add(sc.Locals()...)
	class := sc.enclosingClass()
	var out []string
	for _, name := range names.sorted() {
		if sc.Kind == Module && isDunder(name) {
			continue
		}
		if name = mangle(class, name); locals[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// assigns reports whether a simple statement is an assignment (plain,
// augmented or annotated with a value) with no := in it, whose targets are
// bound whenever it completes.
func assigns(toks []token) bool {
	eq := false
	for _, t := range toks {
		if t.kind != tOp {
			continue
		}
		switch t.text {
		case ":=":
			return false
		case "=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<=":
			eq = true
		}
	}
	return eq
}

// ModuleOpen reports whether a program may bind or drop module names its
// text does not show: a scope that is Open (a star import), or code that
// writes them through exec (anywhere: exec(code, globals())), globals(),
// vars(), a module's __dict__, sys.modules or __import__ (a word in a
// string or a comment is none). Read once per index.
func (ix *Index) ModuleOpen() bool {
	ix.namesOnce.Do(ix.readBinds)
	return ix.moduleOpen
}

func (ix *Index) readModuleOpen() bool {
	// a star import (an open class body or function writes its own namespace)
	return ix.Module.open || ix.namesAnywhere("exec", "globals", "vars", "__dict__", "modules", "__import__")
}

// namesAnywhere reports whether the text names one of words on any line
// (a word in a string or a comment is none).
func (ix *Index) namesAnywhere(words ...string) bool {
	for n := 1; n <= len(ix.Lines); n++ {
		for _, w := range ix.NamesOn(n) {
			if slices.Contains(words, w) {
				return true
			}
		}
	}
	return false
}

// ModuleBindOrder gives, for each module name whose first binding comes at
// a place the text fixes, the first and last of the module statements
// (logical lines, in text order) that bind it. The module's namespace is a
// dict: its names keep the order they were first bound in, and its frame
// shows them in that order. Its statements run in text order but for
// loops, so where every statement binding x comes before every one
// binding y (Before), x comes first. Left out: names some statement binds
// inside a loop, names other code may bind or unbind (a function's
// `global`, `:=`, `del`, `except ... as`), and every name where the module
// may bind names its text does not show (nil then).
//
// Why: the model listed a module's functions in another order than their
// defs (`main` before `longest_palindrome`), a wrong frame though every
// value was right.
func (ix *Index) ModuleBindOrder() map[string]BindSpan {
	if ix.ModuleOpen() {
		return nil
	}
	ix.namesOnce.Do(ix.readBinds)
	ix.flowOnce.Do(ix.buildFlow)
	f := ix.flowG
	if f.unknown {
		return nil
	}
	spans, loose := map[string]BindSpan{}, set{}
	for j := range ix.stmts {
		if ix.owner[j] != ix.Module {
			continue
		}
		for _, name := range ix.binds[j] {
			if f.loopOf(j) >= 0 || f.kw[j] == "for" || f.kw[j] == "while" {
				loose.add(name)
			}
			s, ok := spans[name]
			if !ok {
				s.First = j
			}
			s.Last = j
			spans[name] = s
		}
	}
	for name := range spans {
		if loose[name] || ix.rebindable[name] {
			delete(spans, name)
		}
	}
	return spans
}

// BindSpan is where a module name's binding statements lie (ModuleBindOrder).
type BindSpan struct{ First, Last int }

// Before reports whether a name bound only at s is surely bound before
// one bound only at t: every statement of s comes before every one of t.
func (s BindSpan) Before(t BindSpan) bool { return s.Last < t.First }

// SureBinds lists, sorted, the names the statement on line n binds in its
// frame's locals whenever it completes, so that the next line event of the
// frame that runs it (Owner: on a class's line the class body's frame
// fires its first line event too) after one on n shows each of them: a
// statement on line n alone (one physical line, no line event of its own
// before it ends) that is an assignment, an expression, an import, an
// undecorated def or a class, leaving out the names it may also unbind,
// := targets (a branch of the expression may skip them), dunders (the
// tracer hides them) and names its scope declares global or nonlocal; a
// private name as its class mangles it. Empty (not nil) for such a
// statement that binds none; nil where the statement spans lines or is
// another kind, and where its frame may bind names its text does not show.
//
// Why: a step from `node = self.head` answered the next line without node.
func (ix *Index) SureBinds(n int) []string {
	first, last, ok := ix.Statement(n)
	if !ok || first != n || last != n {
		return nil
	}
	j := ix.stmtAt[n-1]
	sc := ix.owner[j]
	if sc.open || sc.Kind == Module && ix.ModuleOpen() || j > 0 && ix.stmts[j-1].toks[0].text == "@" {
		return nil // a decorator's line event follows its def's
	}
	switch ix.StatementKeyword(n) {
	case "", "import", "from", "def", "class":
	default:
		return nil
	}
	if toks := ix.stmts[j].toks; indexTop(toks, ":") >= 0 && indexTop(toks, "=") < 0 && keywordAt(toks) < 0 {
		return nil // an annotation alone (`x: int`) binds nothing
	}
	ix.namesOnce.Do(ix.readBinds)
	out := []string{}
	for _, name := range ix.binds[j] {
		if isDunder(name) || slices.Contains(ix.unbinds[j], name) || slices.Contains(ix.walrus[j], name) ||
			sc.Kind != Module && (sc.globals[name] || sc.nonlocals[name]) {
			continue
		}
		out = append(out, mangle(sc.enclosingClass(), name))
	}
	slices.Sort(out)
	return out
}

// MayUnbind reports whether some statement of the program may unbind
// name (`del`, the end of an `except ... as` handler).
func (ix *Index) MayUnbind(name string) bool {
	ix.namesOnce.Do(ix.readBinds)
	return slices.ContainsFunc(ix.unbinds, func(names []string) bool { return slices.Contains(names, name) })
}
