package pysource

import (
	"slices"
	"strings"
)

// NeverRuns reports whether no event of any run can fire on line n: it
// is Silent, or, where the program runs as a script, Dead.
func (ix *Index) NeverRuns(n int, script bool) bool { return ix.Silent(n) || script && ix.Dead(n) }

// Dead reports whether line n is code no run of the program as a script
// reaches (a --call program or a function called from outside is entered
// where the text does not say): in a program whose code runs only where
// its text calls it by name (closedCalls), every code object with events
// on n (RunsOn, Opens) is a function no code a run reaches names. A def
// runs where its parent's code runs; a function runs where reached code
// names it (a call: nothing else is allowed), an __init__ or a decorated
// def wherever its class or decorator is. A class body, comprehension or
// the module runs where its parent does.
//
// Why: a breakpoint in a function the script never calls (a library
// file's helpers, a platform branch's) is never hit; the model named a
// stop there where the real run goes to the end.
func (ix *Index) Dead(n int) bool {
	ix.callsOnce.Do(ix.readCalls)
	if !ix.closed || n < 1 || n > len(ix.Lines) {
		return false
	}
	scopes := append(slices.Clone(ix.RunsOn(n)), ix.Opens(n)...)
	return len(scopes) > 0 && !slices.ContainsFunc(scopes, func(s *Scope) bool { return ix.live[s] })
}

// readLive finds the code a run may reach (Dead), from the module on.
func (ix *Index) readLive() {
	ix.live = map[*Scope]bool{ix.Module: true}
	named := set{} // the names reached code holds (calls, in a closed program)
	read := map[*Scope]bool{}
	for changed := true; changed; {
		changed = false
		for k, l := range ix.stmts {
			if sc := ix.owner[k]; ix.live[sc] && !read[sc] {
				for i, t := range l.toks {
					if t.kind == tName && (i == 0 || l.toks[i-1].text != "def" && l.toks[i-1].text != "class") {
						named.add(t.text)
					}
				}
			}
		}
		for sc := range ix.live {
			read[sc] = true
		}
		for _, s := range ix.Scopes {
			if ix.live[s] || s.Parent == nil || !ix.live[s.Parent] {
				continue
			}
			if s.Kind != Function || s.Name == "__init__" || s.First != s.Line || named[s.Name] {
				ix.live[s], changed = true, true
			}
		}
	}
}

// Silent reports whether no event of any kind can be on line n under
// CPython 3.11, because no instruction of any code object is located
// there: a line no statement covers (blank, a comment), the inside of a
// multi-line string and its closing line when only brackets or commas follow
// it, a line of only closing brackets and commas, a string that continues
// an implicit concatenation, a function's docstring, an `else:` or
// `finally:` with its body below it, a `global` or `nonlocal` statement.
// It under-approximates: every token that may compile to an instruction
// makes its line not silent (a parameter's name, a constant folded into a
// tuple), and an f-string's lines are never silent (its fields are code).
//
// An index made with the compiler's lines (NewCompiled) also calls silent
// every line no instruction is on.
//
// Why: pdb sets a breakpoint on any such line but never stops there; a
// model asked to run to one named a stop there (a docstring's line) where
// the real run goes to the end.
func (ix *Index) Silent(n int) bool {
	ix.silentOnce.Do(ix.readSilent)
	return n >= 1 && n <= len(ix.mayFire) && !ix.mayFire[n-1]
}

// readSilent marks, per line, whether a token on it may compile to an
// instruction.
func (ix *Index) readSilent() {
	ix.mayFire = make([]bool, len(ix.Lines))
	mark := func(first, last int) {
		for n := max(first, 1); n <= last && n <= len(ix.mayFire); n++ {
			ix.mayFire[n-1] = true
		}
	}
	docstring := map[int]bool{} // the logical lines that are a def's docstring
	seen := map[*Scope]bool{}
	for k, l := range ix.stmts {
		sc := ix.owner[k]
		if sc.Kind != Function || sc.oneLine || seen[sc] {
			continue
		}
		seen[sc] = true
		docstring[k] = ix.docstringOnly([]int{k}) && !hasFString(l.toks)
	}
	for k, l := range ix.stmts {
		if docstring[k] || noCode(l.toks) {
			continue
		}
		inString, fRun := false, false // the previous token is a string; its run of concatenated strings has an f-string
		for _, t := range l.toks {
			if t.field {
				continue
			}
			switch {
			case t.kind == tString && isFString(t):
				mark(t.line, t.end)
			case t.kind == tString && inString && !fRun:
				// one constant with the string before it, located where that one starts
			case t.kind == tString:
				mark(t.line, t.line)
			case t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ","):
			default:
				mark(t.line, t.end)
			}
			fRun = t.kind == tString && (fRun && inString || isFString(t))
			inString = t.kind == tString
		}
	}
	if ix.compiled != nil { // the compiler's word: no instruction, no event
		for i := range ix.mayFire {
			if _, found := slices.BinarySearch(ix.compiled.Lines, i+1); !found {
				ix.mayFire[i] = false
			}
		}
	}
}

// noCode reports whether a logical line compiles to no instruction: `else:`
// or `finally:` with the body on lines of its own, `global` or `nonlocal`
// names alone.
func noCode(toks []token) bool {
	if len(toks) == 0 {
		return true
	}
	switch toks[0].text {
	case "else", "finally":
		return len(toks) == 2 && toks[1].text == ":"
	case "global", "nonlocal":
		for _, t := range toks {
			if t.text == ";" {
				return false
			}
		}
		return toks[0].kind == tName
	}
	return false
}

func isFString(t token) bool {
	for i := 0; i < len(t.text) && t.text[i] != '\'' && t.text[i] != '"'; i++ {
		if t.text[i] == 'f' || t.text[i] == 'F' {
			return true
		}
	}
	return false
}

func hasFString(toks []token) bool {
	for _, t := range toks {
		if t.kind == tString && isFString(t) {
			return true
		}
	}
	return false
}

// Quiet reports whether no return or exception event can be on line n
// under CPython 3.11: its statement, on this one line, can neither raise
// nor end its frame there, and no other code object runs on it (a def's
// call event is still on its line). Such a
// statement is `pass`, `break`, `continue`, `try:`, a def header that
// evaluates nothing (no decorator, default or annotation) or NAME =
// LITERAL, in a module, a function or a class body without bases (a
// metaclass's namespace may refuse a name: an Enum's does), and its frame
// goes on to a line after it (NextLines: it is no last statement, where
// the frame returns).
//
// Why: a model stepping out of a frame named a def or an assignment in
// the middle of a module or class body as the line of its return.
func (ix *Index) Quiet(n int) bool {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return false
	}
	k := ix.stmtAt[n-1]
	l := ix.stmts[k]
	runs := ix.RunsOn(n)
	if l.first != n || l.last != n || len(runs) != 1 || runs[0] != ix.owner[k] || !plainNamespace(runs[0]) || !quietStatement(l.toks) ||
		k > 0 && ix.stmts[k-1].toks[0].text == "@" {
		return false
	}
	next := ix.NextLines(n)
	return len(next) > 0
}

// plainNamespace reports whether storing a name in scope s cannot fail:
// the module's and a function's can't; a class body's only when the class
// has no base (no metaclass to choose another namespace) and nothing else
// opens it.
func plainNamespace(s *Scope) bool {
	switch s.Kind {
	case Module, Function:
		return true
	case Class:
		return !s.open
	}
	return false
}

// quietStatement reports whether a one-line statement's tokens can neither
// raise nor return: see Quiet.
func quietStatement(toks []token) bool {
	switch first := toks[0]; {
	case len(toks) == 1 && first.kind == tName:
		return first.text == "pass" || first.text == "break" || first.text == "continue"
	case len(toks) == 2 && first.text == "try" && toks[1].text == ":":
		return true
	case first.text == "def" || first.text == "async" && len(toks) > 1 && toks[1].text == "def":
		if first.text == "async" {
			toks = toks[1:]
		}
		// def NAME ( names, * and / only ) :
		if len(toks) < 5 || toks[1].kind != tName || toks[2].text != "(" || toks[len(toks)-1].text != ":" || toks[len(toks)-2].text != ")" {
			return false
		}
		for _, t := range toks[3 : len(toks)-2] {
			if t.kind != tName && t.text != "," && t.text != "*" && t.text != "**" && t.text != "/" {
				return false
			}
		}
		return true
	case !IsKeyword(first.text):
		_, v, neg, ok := literalAssignment(toks)
		// a minus only before a number: -'a' and -None raise TypeError
		return ok && (v.kind == tNumber || !neg && (v.kind == tString && !isFString(v) || v.kind == tName && (v.text == "True" || v.text == "False" || v.text == "None")))
	}
	return false
}

// Calling is what a line's statement does about the program's own code
// when it runs (CallsProgram).
type Calling uint8

const (
	MayCall     Calling = iota // either, as far as the text tells
	CertainCall                // calls it whenever it runs on without an exception
	NoCall                     // never calls it
)

// CallsProgram tells whether line n's statement calls the program's code. After a
// line event on a CertainCall line the next event is a call (or an
// exception), and stepping back to it from a later line finds the copy of
// a line that made a call (inv_line_call); after one on a NoCall line no
// call comes, and no copy is there.
//
// Why: the model answered a line where the program had entered a call,
// stepped back to `print(solve(x))` as a line that had made none, and to
// `print(a4)` as the copy of one that had made one.
func (ix *Index) CallsProgram(n int) Calling {
	switch {
	case ix.certainCall(n):
		return CertainCall
	case ix.noCall(n):
		return NoCall
	}
	return MayCall
}

// callSite is line n's statement (its logical line k) and the tokens whose
// calls run each time its line event fires: a simple statement on that one
// line, or an if, elif or while header's condition; ok false for any
// other line.
func (ix *Index) callSite(n int) (k int, toks []token, ok bool) {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return 0, nil, false
	}
	ix.flowOnce.Do(ix.buildFlow)
	k = ix.stmtAt[n-1]
	l, f := ix.stmts[k], ix.flowG
	if l.first != n || l.last != n || f.unknown {
		return 0, nil, false
	}
	switch f.kw[k] {
	case "if", "elif", "while":
		return k, l.toks[1:], true
	case "":
		return k, l.toks, true
	}
	return 0, nil, false
}

// certainCall reports whether the statement on line n, whenever its line
// event fires and it runs on without an exception, calls the program's own
// code: a statement on one line that calls by name a module function no statement
// rebinds (FixedFunctions) and that is no generator or coroutine (calling
// one makes an object and runs nothing), with nothing that may skip the call:
// no `and`, `or`, conditional expression, lambda, comprehension, chained
// comparison or assert.
func (ix *Index) certainCall(n int) bool {
	k, toks, ok := ix.callSite(n)
	if !ok || toks[0].text == "assert" || toks[0].text == "@" {
		return false
	}
	comparisons := 0
	for _, t := range toks {
		switch t.text {
		case "and", "or", "if", "else", "lambda", "for", "yield", "await", "async":
			return false
		case "<", ">", "==", "!=", "<=", ">=", "in", "is":
			comparisons++
		}
	}
	if comparisons > 1 {
		return false
	}
	ix.callsOnce.Do(ix.readCalls)
	local := ix.owner[k].Locals()
	for i, t := range toks {
		if t.kind != tName || i > 0 && toks[i-1].text == "." || ix.owner[k] != ix.Module && slices.Contains(local, t.text) {
			continue
		}
		if ix.plainFuncs[t.text] && tokenText(toks, i+1) == "(" ||
			tokenText(toks, i+1) == "." && ix.instMethods[t.text][tokenText(toks, i+2)] && tokenText(toks, i+3) == "(" {
			return true
		}
	}
	return false
}

// instMethodsOf maps each fixed instance (FixedInstances: a module name only
// ever bound to `C(...)`) to the methods `NAME.m(...)` surely runs the body
// of: in C and every class of the program it derives from, each binding of
// m is an undecorated def that is no generator or coroutine, and the text
// never stores m as an attribute (`x.m = ...`). Nil where the text names a
// way to reach attributes the text does not show (__getattr__,
// __getattribute__, setattr, delattr, __dict__, vars).
func (ix *Index) instMethodsOf() map[string]set {
	fixed, bases := ix.fixedClasses()
	insts := ix.fixedInstances(fixed, bases)
	if len(insts) == 0 || ix.namesAnywhere("__getattr__", "__getattribute__", "setattr", "delattr", "__dict__", "vars") {
		return nil
	}
	stored := set{} // attribute names the text assigns
	for _, l := range ix.stmts {
		for i := 1; i+2 < len(l.toks); i++ {
			if op := l.toks[i+1]; l.toks[i-1].text == "." && l.toks[i].kind == tName && op.kind == tOp && (op.text == "=" || op.text == ":=" || augmentedOp(op)) {
				stored.add(l.toks[i].text)
			}
		}
	}
	classes := map[string]*Scope{}
	for _, sc := range ix.Module.Children {
		if sc.Kind == Class {
			classes[sc.Name] = sc
		}
	}
	// per class: each name its body binds -> whether every binding is a plain def
	plainIn := func(c *Scope) map[string]bool {
		out := map[string]bool{}
		for j := range ix.stmts {
			if ix.owner[j] != c {
				continue
			}
			for _, name := range ix.binds[j] {
				def := slices.ContainsFunc(c.Children, func(m *Scope) bool {
					return m.Kind == Function && m.Name == name && m.Line == ix.stmts[j].first && m.First == m.Line && !ix.suspending(m)
				})
				if prev, seen := out[name]; !seen || prev {
					out[name] = def
				}
			}
		}
		return out
	}
	out := map[string]set{}
	for inst, c := range insts {
		methods := map[string]bool{}
		for todo, seen := []string{c}, (set{}); len(todo) > 0; todo = todo[1:] {
			name := todo[0]
			sc := classes[name]
			if seen[name] || sc == nil {
				continue
			}
			seen.add(name)
			for m, plain := range plainIn(sc) {
				if prev, ok := methods[m]; !ok || prev {
					methods[m] = plain
				}
			}
			todo = append(todo, bases[name]...)
		}
		for m, plain := range methods {
			if plain && !stored[m] && !isDunder(m) {
				if out[inst] == nil {
					out[inst] = set{}
				}
				out[inst].add(m)
			}
		}
	}
	return out
}

// FirstCall is the module function whose call event comes first after a
// line event on line n (when no exception comes first), where the text
// fixes it: on a line certainCall says calls the program, the first call
// the statement's value makes in Python's order of evaluation (a call's
// arguments before the call; an assignment's value before its targets) is
// by name to a module function that runs its body (plainFunctions, not a
// local of the frame), and nothing evaluated before it may run code: only
// names, literals, list and tuple displays, keyword arguments and the
// open brackets of enclosing calls (no attribute, subscript, operator,
// unpacking or f-string field). "" else. Why: stepping into
// `out = shout(reverse_words(line))` the model entered shout first.
func (ix *Index) FirstCall(n int) string {
	if !ix.certainCall(n) {
		return ""
	}
	k, toks, _ := ix.callSite(n)
	value, ok := statementValue(toks, ix.flowG.kw[k] != "")
	if !ok {
		return ""
	}
	var open []string // the brackets open: a call's callee name, "(" or "["
	for i := 0; i < len(value); i++ {
		t := value[i]
		next := ""
		if i+1 < len(value) && value[i+1].kind == tOp {
			next = value[i+1].text
		}
		prev := ""
		if i > 0 && value[i-1].kind == tOp {
			prev = value[i-1].text
		}
		switch {
		case t.field:
			return ""
		case t.kind == tName && keywords[t.text] && t.text != "None" && t.text != "True" && t.text != "False":
			return ""
		case t.kind == tName && next == "(":
			open = append(open, t.text)
			i++
		case t.kind == tName && next == "=" && len(open) > 0 && (prev == "(" || prev == ","):
			i++ // a keyword argument's name
		case t.kind == tName || t.kind == tNumber || t.kind == tString:
			if next == "." || next == "[" || next == "(" {
				return ""
			}
		case t.text == "-" && i+1 < len(value) && value[i+1].kind == tNumber && (i == 0 || prev == "(" || prev == "," || prev == "["):
		case t.text == ",":
		case t.text == "(" || t.text == "[":
			open = append(open, t.text)
		case (t.text == ")" || t.text == "]") && len(open) > 0:
			top := open[len(open)-1]
			open = open[:len(open)-1]
			if top != "(" && top != "[" {
				if ix.plainFuncs[top] && (ix.owner[k] == ix.Module || !slices.Contains(ix.owner[k].Locals(), top)) {
					return top
				}
				return ""
			}
			if closers[top] != t.text || next == "." || next == "[" || next == "(" {
				return ""
			}
		default:
			return ""
		}
	}
	return ""
}

// statementValue is the tokens of what a simple statement's toks evaluate
// first: an assignment's value (after its last `=` outside brackets), a
// return's, an augmented assignment's to a name, else the whole
// expression statement; a header's (cond) condition, before its colon.
// False for other statements.
func statementValue(toks []token, cond bool) ([]token, bool) {
	if len(toks) == 0 {
		return nil, false
	}
	if cond {
		colon := headerColon(toks)
		return toks[:max(colon, 0)], colon > 0
	}
	if toks[0].kind == tName && toks[0].text == "return" {
		return toks[1:], len(toks) > 1
	}
	if toks[0].kind == tName && keywords[toks[0].text] {
		return nil, false
	}
	augmented := func(t token) bool { return augmentedOp(t) || t.kind == tOp && t.text == ":=" }
	if len(toks) > 2 && toks[0].kind == tName && augmented(toks[1]) {
		return toks[2:], true // NAME op= value: the name's load runs no code
	}
	from, bad := 0, false
	scanTop(toks, func(i int) bool {
		switch t := toks[i]; {
		case t.kind == tOp && t.text == "=":
			from = i + 1
		case t.kind == tOp && t.text == ":", augmented(t):
			bad = true // an annotation, a walrus, an augmented target that is no name
		}
		return !bad
	})
	if bad || from >= len(toks) {
		return nil, false
	}
	return toks[from:], true
}

// plainFunctions are the module functions FixedFunctions gives that are no
// generator or coroutine: calling one runs its body.
func (ix *Index) plainFunctions() set {
	out := set{}
	for _, name := range ix.FixedFunctions() {
		out.add(name)
	}
	for _, s := range ix.Scopes {
		if s.Kind == Function && s.Parent == ix.Module && out[s.Name] && (s.Async || ix.yields(s)) {
			delete(out, s.Name)
		}
	}
	return out
}

// Suspends reports whether a frame may suspend and resume on line n: some
// code running there is a generator or coroutine (a def whose own code
// holds yield, an async def, a generator expression). Stepping over such
// a line may come back to the frame as a new call (a resumption).
func (ix *Index) Suspends(n int) bool {
	return slices.ContainsFunc(ix.RunsOn(n), ix.suspending)
}

// MaySuspend reports whether any frame of the program may suspend: its text
// defines a generator, a generator expression or a coroutine.
func (ix *Index) MaySuspend() bool { return slices.ContainsFunc(ix.Scopes, ix.suspending) }

func (ix *Index) suspending(s *Scope) bool {
	return s.Async || s.Name == "<genexpr>" || s.Kind == Function && ix.yields(s)
}

// yields reports whether function s's own code holds yield (a generator).
func (ix *Index) yields(s *Scope) bool {
	for k, l := range ix.stmts {
		if ix.owner[k] == s && slices.ContainsFunc(l.toks, func(t token) bool { return t.kind == tName && t.text == "yield" }) {
			return true
		}
	}
	return false
}

// noCall reports whether the statement on line n can call none of the
// program's code: a simple statement on one line (or an if, elif or while
// header) whose calls are only of names no statement but an import binds
// (builtins, the standard library's) and of methods no def of the program
// is named after, in a program where nothing else can run its code
// unasked (closedCalls); or, in any program, a plain def's header
// (plainDef).
func (ix *Index) noCall(n int) bool {
	if ix.plainDef(n) {
		return true
	}
	_, toks, ok := ix.callSite(n)
	if !ok || !ix.closedCalls() {
		return false
	}
	for i, t := range toks {
		switch {
		case t.kind == tName && (t.text == "import" || t.text == "from" || t.text == "for" || t.text == "lambda" || t.text == "yield" || t.text == "await"):
			return false
		case t.kind == tOp && t.text == "@":
			return false
		case i+1 >= len(toks) || toks[i+1].text != "(" || t.kind == tName && keywords[t.text]:
		case t.kind != tName: // a call of what an expression gives
			if t.text == ")" || t.text == "]" || t.kind == tString {
				return false
			}
		case i > 0 && toks[i-1].text == ".":
			if ix.defNames[t.text] {
				return false
			}
		case ix.boundNotImported[t.text]:
			return false
		}
	}
	return true
}

// plainDef reports whether line n is the one-line header of an undecorated
// def in the module or a function, with no default, no annotation and its
// body on later lines: running it makes the function and binds its name
// (in a dict or a fast local, not a class body's namespace, which a
// metaclass may make), and calls nothing, in any program.
func (ix *Index) plainDef(n int) bool {
	sc := ix.Header(n)
	if sc == nil || sc.Kind != Function || sc.First != n || sc.Line != n || sc.oneLine || sc.Parent == nil ||
		sc.Parent.Kind != Module && sc.Parent.Kind != Function || !ix.StatementStarts(n) {
		return false
	}
	l := ix.stmts[ix.stmtAt[n-1]]
	head := keywordAt(l.toks)
	if l.first != n || l.last != n || head < 0 || tokenText(l.toks, head+2) != "(" {
		return false
	}
	end := matching(l.toks, head+2)
	if end+2 != len(l.toks) || l.toks[end+1].text != ":" {
		return false // a return annotation, or more on the line
	}
	for _, t := range l.toks[head+3 : end] {
		if t.kind == tOp && (t.text == "=" || t.text == ":") {
			return false // a default or an annotation, evaluated as the def runs
		}
	}
	return true
}

// closedCalls reports whether the program's code runs only where the text
// calls it by name: no class with bases other than object or an exception
// class (a library's base class calls the methods it overrides), no method
// with a dunder name but __init__ (operators, printing and iteration call
// them), no decorator in a class body or on a class, no generator,
// generator expression, lambda or coroutine, no def's name used but to call it or to define it (a
// function passed on may be called back from anywhere), and none of the
// names that run code from text or on events (exec, eval, getattr,
// doctest, unittest, atexit, signal, threading, weakref, settrace...).
func (ix *Index) closedCalls() bool {
	ix.callsOnce.Do(ix.readCalls)
	return ix.closed
}

// CalledByModule reports whether every call of def s comes from the
// module's own frame: s is a def of the module in a program whose code
// runs only where its text calls it by name (closedCalls), and every other
// token naming it is a call on a line only the module's code runs (not in
// a function, a class body or a comprehension). Then the frame a call of s
// returns to, and steps back to, is the module's.
func (ix *Index) CalledByModule(s *Scope) bool {
	if s == nil || s.Kind != Function || s.Parent != ix.Module || s.First != s.Line || !ix.closedCalls() {
		return false
	}
	for k, l := range ix.stmts {
		for i, t := range l.toks {
			if t.kind != tName || t.text != s.Name {
				continue
			}
			if i > 0 && l.toks[i-1].text == "def" && t.line == s.Line {
				continue // its own def
			}
			runs := ix.RunsOn(t.line)
			call := i+1 < len(l.toks) && l.toks[i+1].text == "(" && (i == 0 || l.toks[i-1].text != ".")
			if !call || ix.owner[k] != ix.Module || len(runs) != 1 || runs[0] != ix.Module {
				return false
			}
		}
	}
	return true
}

// readCalls reads what CallsProgram needs once per program.
func (ix *Index) readCalls() {
	ix.flowOnce.Do(ix.buildFlow)
	ix.plainFuncs = ix.plainFunctions()
	ix.instMethods = ix.instMethodsOf()
	ix.defNames, ix.boundNotImported = set{}, set{}
	for _, s := range ix.Scopes {
		if s.Kind == Function || s.Kind == Class {
			ix.defNames.add(s.Name)
		}
	}
	imported := set{}
	for name := range ix.ImportedModules() {
		imported.add(name)
	}
	for name := range ix.FromImported() {
		imported.add(name)
	}
	for _, s := range append([]*Scope{ix.Module}, ix.Scopes...) {
		for _, name := range s.Locals() {
			if !imported[name] {
				ix.boundNotImported.add(name)
			}
		}
		ix.boundNotImported.add(s.Params...)
	}
	ix.closed = !ix.flowG.unknown && !ix.ModuleOpen() && !ix.namesAnywhere("eval", "exec", "compile", "getattr", "setattr",
		"__getattribute__", "doctest", "testmod", "unittest", "pytest", "timeit", "atexit", "signal", "threading", "multiprocessing",
		"concurrent", "asyncio", "weakref", "finalize", "settrace", "setprofile", "excepthook", "displayhook", "sched", "runpy",
		"importlib", "__import__", "inspect", "gc", "code", "pdb", "bdb", "trace", "cProfile", "profile", "functools", "operator",
		"itertools", "contextlib", "abc", "copy", "copyreg", "pickle", "json", "logging", "socketserver", "http", "tkinter")
	for k, l := range ix.stmts {
		for i, t := range l.toks {
			switch {
			case t.kind == tName && (t.text == "lambda" || t.text == "yield" || t.text == "async" || t.text == "await"):
				ix.closed = false
			case t.kind == tName && ix.defNames[t.text]:
				def := i > 0 && (l.toks[i-1].text == "def" || l.toks[i-1].text == "class")
				if !def && (i+1 >= len(l.toks) || l.toks[i+1].text != "(") {
					ix.closed = false // passed on, stored, or a method read without a call
				}
			}
		}
		if l.toks[0].kind == tOp && l.toks[0].text == "@" && (ix.owner[k].Kind == Class || k+1 < len(ix.stmts) && ix.stmts[k+1].toks[0].text == "class") {
			ix.closed = false
		}
	}
	for _, s := range ix.Scopes {
		switch {
		case s.Kind == Comprehension && s.Name == "<genexpr>": // may be stored and run later
			ix.closed = false
		case s.Kind == Function && s.Parent != nil && s.Parent.Kind == Class && isDunder(s.Name) && s.Name != "__init__":
			ix.closed = false
		case s.Kind == Class && !plainBases(ix.stmts[ix.stmtAt[s.Line-1]].toks):
			ix.closed = false
		}
	}
	if ix.closed {
		ix.readLive()
	}
}

// plainBases reports whether a class statement's bases are none, object,
// or exception classes (names ending in Error, Exception or Warning) and
// no keyword (a metaclass).
func plainBases(toks []token) bool {
	open := slices.IndexFunc(toks, func(t token) bool { return t.text == "(" })
	if open < 0 {
		return true
	}
	for _, t := range toks[open+1 : matching(toks, open)] {
		switch {
		case t.text == ",", t.text == "object":
		case t.kind == tName && (strings.HasSuffix(t.text, "Error") || strings.HasSuffix(t.text, "Exception") || strings.HasSuffix(t.text, "Warning")):
		default:
			return false
		}
	}
	return true
}
