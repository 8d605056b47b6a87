// Package pysource is the one index of a Python program's text: its
// functions and classes with their line ranges, the code objects whose
// events may fire on each line, and the names each frame may hold. It
// reads the source once with a small tokenizer (strings, comments and
// continuation lines skipped as Python skips them) and never runs it.
// Python 3.11 is the reference: comprehensions and lambdas have frames of
// their own, a class body's frame has a line event on its first line.
package pysource

import (
	"slices"
	"strings"
	"sync"
)

// Kind is the kind of a code object.
type Kind uint8

const (
	Module Kind = iota
	Function
	Class
	Lambda
	Comprehension
)

// Scope is one code object of the program: the module, a def, a class
// body, a lambda or a comprehension (3.11: a function of its own).
type Scope struct {
	Kind Kind
	// Name is the code's co_name: "f", "C", "<module>", "<lambda>",
	// "<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>".
	Name string
	// Qualname is Python's __qualname__: "C.m", "f.<locals>.g".
	Qualname string
	Async    bool
	Parent   *Scope   // nil for the module
	Children []*Scope // in source order
	// Line is the def or class keyword's line (a lambda's or
	// comprehension's first line); First is co_firstlineno, where its call
	// event fires: the first decorator's line, else Line.
	Line, First int
	// Body is the line of the first statement of the body, End the last
	// line of the body (for a lambda or comprehension: its last line).
	Body, End int
	Indent    int      // the header's indentation
	Params    []string // parameter names in order (".0" for a comprehension)

	bound, used, globals, nonlocals set
	free                            set
	open                            bool // exec, locals(), a star import: names the text does not show
	headerEnd                       int  // the line of the header's colon
	oneLine                         bool // the body is on the header's logical line
}

type set map[string]bool

func (s set) add(names ...string) {
	for _, n := range names {
		s[n] = true
	}
}

func (s set) sorted() []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// IsFunctionLike reports whether the scope's frame is a function's
// (optimized locals): a def, a lambda or a comprehension.
func (s *Scope) IsFunctionLike() bool {
	return s.Kind == Function || s.Kind == Lambda || s.Kind == Comprehension
}

// Locals are the names the scope's frame may hold in its f_locals, as
// Python 3.11 fills it: for a function, its parameters, the names it binds
// (assignments, for, with, except and import targets, del, def and class
// names, := targets of its comprehensions) less those it declares global,
// and its free variables (names of an enclosing function it reads, or
// passes to a nested one, `__class__` for super()); for a class body and
// the module, the names bound there (dunders are hidden by the tracer). The
// module's include the names functions declare global. Where the scope is
// Open (exec, locals(), vars(), a star import) its frame may hold more.
func (s *Scope) Locals() []string {
	out := set{}
	for n := range s.bound {
		if !s.globals[n] || s.Kind == Module { // `global x` in the module changes nothing
			out.add(n)
		}
	}
	if s.IsFunctionLike() {
		out.add(s.Params...)
		for n := range s.free {
			out.add(n)
		}
	}
	if c := s.enclosingClass(); c != "" {
		for n := range out {
			if m := mangle(c, n); m != n {
				delete(out, n)
				out.add(m)
			}
		}
	}
	return out.sorted()
}

// mangle is name as Python stores it in class (without its leading
// underscores; "" for none): a private name, __x but not __x__, becomes
// _class__x in a class and the functions in it.
func mangle(class, name string) string {
	if class == "" || !strings.HasPrefix(name, "__") || isDunder(name) {
		return name
	}
	return "_" + class + name
}

// isDunder reports whether name is a dunder (__x__), which no class
// mangles and the tracer hides in module and class frames.
func isDunder(name string) bool {
	return strings.HasPrefix(name, "__") && strings.HasSuffix(name, "__")
}

// enclosingClass is the name of the class s is or is in, without its
// leading underscores, "" if none (or all underscores).
func (s *Scope) enclosingClass() string {
	for p := s; p != nil; p = p.Parent {
		if p.Kind == Class {
			return strings.TrimLeft(p.Name, "_")
		}
	}
	return ""
}

// Used are the names the scope's own code reads (not attributes, not
// keyword argument names).
func (s *Scope) Used() []string { return s.used.sorted() }

// OneLine reports whether a def's or class's body is on its header's
// logical line (def f(): return 1).
func (s *Scope) OneLine() bool { return s.oneLine }

// Open reports whether the scope may bind names its text does not show.
func (s *Scope) Open() bool { return s.open }

// Contains reports whether line n is in the scope's lines (First to End).
func (s *Scope) Contains(n int) bool { return n >= s.First && n <= s.End }

// Index is a program's text read once.
type Index struct {
	Lines  []string // physical lines; line n is Lines[n-1]
	Module *Scope
	Scopes []*Scope // every scope but the module, in source order

	stmts    []logical
	comments []int      // per line: the byte offset of its comment, -1 for none
	unbound  set        // the names the program reads and binds nowhere they are visible
	stmtAt   []int      // per line: the logical line covering it, -1 for none
	owner    []*Scope   // per logical line: the scope its statement runs in
	runs     [][]*Scope // per line: the scopes whose line events may fire on it
	calls    map[*Scope]set
	flowOnce sync.Once
	flowG    *flowGraph // NextLines' reading of the statements, built at its first call
	// per line: whether a token on it may compile to an instruction (Silent)
	silentOnce sync.Once
	mayFire    []bool
	compiled   *Compiled // what the interpreter's compiler says (NewCompiled), nil if not asked
	// CallsProgram's reading: the module functions a call by name runs,
	// every def's and class's name, every name bound but by an import,
	// whether the program's code runs only where called
	callsOnce                              sync.Once
	plainFuncs, defNames, boundNotImported set
	instMethods                            map[string]set // a fixed instance -> the methods instMethodsOf gives
	closed                                 bool
	live                                   map[*Scope]bool // Dead's reading: the code a run may reach
	// AssignsLiteral's reading: whether code may hold a frame's namespace
	// as a value (locals(), globals(), vars(), __dict__, f_locals)
	aliasOnce sync.Once
	aliased   bool
	// per logical line: what it binds, its := targets and the names it may
	// unbind; per module name, how many module statements bind it, and the
	// names other code may bind or unbind at any time; ModuleOpen's answer
	// (readBinds)
	namesOnce              sync.Once
	binds, walrus, unbinds [][]string
	moduleBinds            map[string]int
	rebindable             set
	moduleOpen             bool
	// SelfRepr's methods: each one's first parameter and its value
	selfOnce sync.Once
	selves   map[*Scope][2]string
	// calledOnly's functions and their calls, read once (ArgReprs and
	// NoEscape both start from them)
	calledOnce sync.Once
	called     map[string]*Scope
	callSites  []callSite
	// ArgReprs' functions: each one's parameters that every call passes a
	// literal, and the literals' reprs
	argsOnce sync.Once
	args     map[*Scope]map[string][]string
	// NoEscape's functions
	escapeOnce sync.Once
	noEscape   map[*Scope]bool
	// ClassFixedReprs' classes
	classOnce  sync.Once
	classFixed map[*Scope]map[string]string
}

// Compiled is what a program's compiled code says about its lines, as its
// interpreter compiles it (tracer.Compile).
type Compiled struct {
	// Lines are the lines an instruction of any code object is on (and
	// each code object's first line), sorted: no event fires on another.
	Lines []int `json:"lines"`
	// Next maps each line of Lines to the lines where its frame's next
	// line event may fire after one there (the bytecode's flow under
	// CPython 3.11's rule for line events); nil where not known.
	Next map[int][]int `json:"next"`
}

// NewCompiled indexes src with what its compiled code says (nil: not
// known, as New): Silent is then exact on every line (a constant folded
// into a tuple, a continuation line no instruction is on), and NextLines
// keeps only the lines the bytecode's flow goes to (which continuation
// lines of a statement fire, and in what order).
func NewCompiled(src string, c *Compiled) *Index {
	ix := New(src)
	ix.compiled = c
	return ix
}

// New indexes src.
func New(src string) *Index {
	ix := &Index{Lines: splitLines(src)}
	ix.Module = &Scope{Kind: Module, Name: "<module>", Qualname: "<module>", Line: 1, First: 1, End: len(ix.Lines),
		bound: set{}, used: set{}, globals: set{}, nonlocals: set{}}
	ix.stmts, ix.comments = tokenize(ix.Lines)
	ix.stmtAt = make([]int, len(ix.Lines))
	for i := range ix.stmtAt {
		ix.stmtAt[i] = -1
	}
	for k, l := range ix.stmts {
		for n := l.first; n <= l.last && n <= len(ix.Lines); n++ {
			ix.stmtAt[n-1] = k
		}
	}
	b := builder{ix: ix, calls: map[*Scope]set{}}
	b.build()
	ix.calls = b.calls
	ix.unbound = resolve(ix.Module)
	if ix.namesAnywhere("_getframe", "currentframe", "f_locals", "f_back") {
		// code that holds a frame object may write any frame's locals
		// (sys._getframe(1).f_locals[name] = ...)
		ix.Module.open = true
		for _, s := range ix.Scopes {
			s.open = true
		}
	}
	ix.runs = make([][]*Scope, len(ix.Lines))
	for k, l := range ix.stmts {
		for n := l.first; n <= l.last && n <= len(ix.Lines); n++ {
			ix.addRun(n, ix.owner[k])
		}
	}
	bodies := map[*Scope][]int{}
	for k := range ix.stmts {
		bodies[ix.owner[k]] = append(bodies[ix.owner[k]], k)
	}
	for _, s := range ix.Scopes {
		if s.Kind == Class {
			ix.addRun(s.First, s) // the body's first line event is on co_firstlineno (3.11)
		}
		switch {
		case s.Kind == Function && !s.oneLine && ix.docstringOnly(bodies[s]):
			ix.addRun(s.First, s) // its one line event (and its return) are on co_firstlineno
		case s.oneLine && (s.Kind == Function || s.Kind == Class):
			for n := s.Body; n <= s.End; n++ {
				ix.addRun(n, s)
			}
		case s.Kind == Lambda || s.Kind == Comprehension:
			for n := s.Line; n <= s.End; n++ {
				ix.addRun(n, s)
			}
		}
	}
	return ix
}

// docstringOnly reports whether a body (its statements' indexes) is one
// string statement: a docstring, which compiles to no instruction of its own.
func (ix *Index) docstringOnly(body []int) bool {
	return len(body) == 1 && !slices.ContainsFunc(ix.stmts[body[0]].toks, func(t token) bool { return t.kind != tString })
}

func (ix *Index) addRun(n int, s *Scope) {
	if n >= 1 && n <= len(ix.runs) && !slices.Contains(ix.runs[n-1], s) {
		ix.runs[n-1] = append(ix.runs[n-1], s)
	}
}

// Line is the text of line n, "" out of range.
func (ix *Index) Line(n int) string {
	if n < 1 || n > len(ix.Lines) {
		return ""
	}
	return ix.Lines[n-1]
}

// Functions are the defs and classes in source order.
func (ix *Index) Functions() []*Scope {
	var out []*Scope
	for _, s := range ix.Scopes {
		if s.Kind == Function || s.Kind == Class {
			out = append(out, s)
		}
	}
	return out
}

// Statement is the logical line that line n is part of: its first and
// last physical lines; ok false for a blank or comment-only line.
func (ix *Index) Statement(n int) (first, last int, ok bool) {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return 0, 0, false
	}
	l := ix.stmts[ix.stmtAt[n-1]]
	return l.first, l.last, true
}

// StatementStarts reports whether a logical line starts on line n.
func (ix *Index) StatementStarts(n int) bool {
	first, _, ok := ix.Statement(n)
	return ok && first == n
}

// Owner is the def, class or module whose code runs the statement on line
// n (nil for a blank or comment-only line); a one-line body's statement is
// its function's.
func (ix *Index) Owner(n int) *Scope {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return nil
	}
	return ix.owner[ix.stmtAt[n-1]]
}

// RunsOn lists the code objects whose line events may fire on line n: the
// owner of its statement, a one-line def's function, a class body on its
// first line, lambdas and comprehensions on their lines. Nil for a line
// that runs nothing.
func (ix *Index) RunsOn(n int) []*Scope {
	if n < 1 || n > len(ix.runs) {
		return nil
	}
	return ix.runs[n-1]
}

// Opens lists the code objects whose call event fires on line n, in
// source order: a def or class whose co_firstlineno it is (a decorator's
// line or its header), lambdas and comprehensions that start there.
func (ix *Index) Opens(n int) []*Scope {
	var out []*Scope
	for _, s := range ix.Scopes {
		if s.First == n {
			out = append(out, s)
		}
	}
	return out
}

// Header is the def or class whose header (decorators, def or class line
// and its continuation lines up to the body) holds line n, nil if none.
func (ix *Index) Header(n int) *Scope {
	var in *Scope
	for _, s := range ix.Scopes {
		if (s.Kind == Function || s.Kind == Class) && n >= s.First && n <= s.headerEnd && (in == nil || s.First > in.First) {
			in = s
		}
	}
	return in
}

// Lookup finds a def or class by name as pdb's `b NAME` reads it: a
// qualified name (`C.m`, `f.<locals>.g`) exactly; a plain name, the
// module's own def of that name first, else the first def of that name at
// any depth. Nil if none.
func (ix *Index) Lookup(name string) *Scope {
	if strings.Contains(name, ".") {
		for _, s := range ix.Scopes {
			if (s.Kind == Function || s.Kind == Class) && s.Qualname == name {
				return s
			}
		}
		return nil
	}
	var any *Scope
	for _, s := range ix.Scopes {
		if (s.Kind == Function || s.Kind == Class) && s.Name == name {
			if s.Parent == ix.Module {
				return s
			}
			if any == nil {
				any = s
			}
		}
	}
	return any
}

// TopLevel lists the module's own defs (kind Function) or classes, in
// order.
func (ix *Index) TopLevel(kind Kind) []*Scope {
	var out []*Scope
	for _, s := range ix.Module.Children {
		if s.Kind == kind {
			out = append(out, s)
		}
	}
	return out
}

// Calls are the names scope s calls by a plain name (`f(...)`, not a
// method `x.f(...)`), in its own code and its lambdas and comprehensions.
func (ix *Index) Calls(s *Scope) []string { return ix.calls[s].sorted() }

// CallsOn reports whether the statement line n is part of calls name by
// a plain name (`name(`, not `x.name(`), outside strings and comments.
func (ix *Index) CallsOn(n int, name string) bool { return ix.CallLine(n, name) > 0 }

// CallLine is the line of the first plain call of name (`name(`, not
// `x.name(`, not a def or class header's own name) in the statement line n
// is part of: the caller's line while that call runs (3.11's f_lineno, a
// continuation line's where the call is on one); 0 if it calls none.
func (ix *Index) CallLine(n int, name string) int {
	toks := ix.statementTokens(n)
	if i := firstCall(toks, name); i >= 0 {
		return toks[i].line
	}
	return 0
}

// statementTokens are the tokens of the statement line n is part of, nil
// for none.
func (ix *Index) statementTokens(n int) []token {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return nil
	}
	return ix.stmts[ix.stmtAt[n-1]].toks
}

// firstCall is the index of the name token of the first plain call of
// name in toks (`name(`, not `x.name(`, not `def name(`), -1 if none.
func firstCall(toks []token, name string) int {
	for i, t := range toks {
		if t.kind == tName && t.text == name && i+1 < len(toks) && toks[i+1].kind == tOp && toks[i+1].text == "(" &&
			(i == 0 || !(toks[i-1].kind == tOp && toks[i-1].text == "." || toks[i-1].kind == tName && (toks[i-1].text == "def" || toks[i-1].text == "class"))) {
			return i
		}
	}
	return -1
}

// closers pairs each opening bracket with its closing one.
var closers = map[string]string{"(": ")", "[": "]", "{": "}"}

// CallArgs is the argument list, as written from "(" to its ")", of the
// first plain call of name (as CallLine finds it, an f-string's fields
// not searched) in the statement line n is part of; ok false if there is
// none or its parenthesis is not closed, or closed by another bracket.
func (ix *Index) CallArgs(n int, name string) (args string, ok bool) {
	var toks []token
	for _, t := range ix.statementTokens(n) {
		if !t.field {
			toks = append(toks, t)
		}
	}
	i := firstCall(toks, name)
	if i < 0 {
		return "", false
	}
	j := matching(toks, i+1)
	if j == len(toks) || toks[j].text != ")" {
		return "", false
	}
	return ix.text(toks[i+1], toks[j]), true
}

// text is the source from token from to token to (an operator), both
// included.
func (ix *Index) text(from, to token) string {
	if from.line == to.line {
		return ix.Lines[from.line-1][from.col : to.col+len(to.text)]
	}
	parts := []string{ix.Lines[from.line-1][from.col:]}
	parts = append(parts, ix.Lines[from.line:to.line-1]...)
	return strings.Join(append(parts, ix.Lines[to.line-1][:to.col+len(to.text)]), "\n")
}

// CallChain is the head name of the statement that starts on line n when
// the statement is one call chain: a name and then attributes (.name),
// calls and subscripts only, the last a call (f(1), C(3).m(4),
// g(x)[0](y)); ok false for anything else (an operator, an assignment, a
// keyword, a chain that ends in a name or a subscript).
func (ix *Index) CallChain(n int) (head string, ok bool) {
	if !ix.StatementStarts(n) {
		return "", false
	}
	toks := ix.statementTokens(n)
	if toks[0].kind != tName || keywords[toks[0].text] {
		return "", false
	}
	call := false
	for i := 1; i < len(toks); i++ {
		switch t := toks[i]; {
		case t.kind == tOp && t.text == "." && i+1 < len(toks) && toks[i+1].kind == tName && !keywords[toks[i+1].text]:
			i++
			call = false
		case t.kind == tOp && (t.text == "(" || t.text == "["):
			j := matching(toks, i)
			if j == len(toks) || toks[j].text != closers[t.text] {
				return "", false
			}
			call = t.text == "("
			i = j
		default:
			return "", false
		}
	}
	return toks[0].text, call
}

// Comment is the byte offset in line n where its comment starts (its #,
// outside strings), -1 for a line with none.
func (ix *Index) Comment(n int) int {
	if n < 1 || n > len(ix.comments) {
		return -1
	}
	return ix.comments[n-1]
}

// Unbound lists the names the program reads that it binds nowhere they
// are visible from, sorted: the builtins it uses and the names it lacks.
// For an expression, the names it needs from outside: not those its
// comprehensions, lambdas and := targets bind, not attributes or keyword
// argument names.
func (ix *Index) Unbound() []string { return ix.unbound.sorted() }

// IsMainGuard reports whether the statement that starts on line n is an
// `if` whose test is `__name__ == "__main__"` (either way round, in
// parentheses or not): a script's main block.
func (ix *Index) IsMainGuard(n int) bool {
	if !ix.StatementStarts(n) {
		return false
	}
	toks := ix.statementTokens(n)
	if toks[0].kind != tName || toks[0].text != "if" {
		return false
	}
	colon := headerColon(toks)
	if colon < 0 {
		return false
	}
	test := toks[1:colon]
	for len(test) > 2 && test[0].kind == tOp && test[0].text == "(" && matching(test, 0) == len(test)-1 {
		test = test[1 : len(test)-1]
	}
	if len(test) != 3 || test[1].kind != tOp || test[1].text != "==" {
		return false
	}
	isName := func(t token) bool { return t.kind == tName && t.text == "__name__" }
	isMain := func(t token) bool { return t.kind == tString && (t.text == `"__main__"` || t.text == `'__main__'`) }
	return isName(test[0]) && isMain(test[2]) || isMain(test[0]) && isName(test[2])
}

// ReturnedCall is the function name NAME when the statement that starts
// on line n is `return NAME(...)`, that one call its whole value (not
// `return NAME(x) + 1`, not `return NAME(x)(y)`); "" otherwise.
func (ix *Index) ReturnedCall(n int) string {
	if !ix.StatementStarts(n) {
		return ""
	}
	toks := ix.stmts[ix.stmtAt[n-1]].toks
	if len(toks) < 4 || toks[0].kind != tName || toks[0].text != "return" || toks[1].kind != tName || keywords[toks[1].text] ||
		toks[2].kind != tOp || toks[2].text != "(" || matching(toks, 2) != len(toks)-1 {
		return ""
	}
	return toks[1].text
}

// ReturnedName is NAME where line n's statement is, on one line in a
// function's own code, `return NAME` whose return runs nothing on the way
// out (no finally block or with exit crossed: flowGraph.crossed) and whose
// frame cannot suspend (no generator or coroutine), nor in a for loop over
// anything but a literal or range (returning drops the loop's iterator: a
// generator's is closed, which runs its code), or a generator's statement
// `yield NAME` (not an async generator's, which yields a wrapper), else "".
// After the line event there the next event is the frame's return of
// NAME's value, if NAME is bound: evaluating a name runs no code, and
// suspending leaves no block.
func (ix *Index) ReturnedName(n int) string {
	if !ix.StatementStarts(n) {
		return ""
	}
	k := ix.stmtAt[n-1]
	l := ix.stmts[k]
	if l.first != l.last || len(l.toks) != 2 || l.toks[1].kind != tName || keywords[l.toks[1].text] ||
		ix.owner[k].Kind != Function {
		return ""
	}
	switch l.toks[0].text {
	case "yield":
		if ix.owner[k].Async {
			return ""
		}
	case "return":
		if ix.Suspends(n) {
			return ""
		}
		if w := ix.flowWalk(); w.unknown || len(w.crossed(k, -1)) > 0 || ix.inIteratorLoop(k) {
			return ""
		}
	default:
		return ""
	}
	return l.toks[1].text
}

// inIteratorLoop reports whether statement k is in the body of a for loop
// of its frame whose iterable is not a literal list, tuple or str, nor the
// builtin range.
func (ix *Index) inIteratorLoop(k int) bool {
	for p := range ix.enclosing(k) {
		if ix.flowG.kw[p] == "for" && !ix.PlainIterable(ix.stmts[p].first, func(string) (string, bool) { return "", false }) {
			return true
		}
	}
	return false
}

// ReturnValues maps each line where the frame running line n may return,
// after a line event on n, to the repr of the value it returns there, ""
// where the text does not fix it; nil where it reads nothing (a generator,
// a frame of a lambda, a comprehension or the module, a construct the flow
// reading does not follow, a return that crosses a finally or a with exit,
// a finally block, whose lines may carry the try's return out). The lines
// are those of the statements returnReach finds. A return event fires on
// the line that runs `return`, or, with None, on the line an exception
// leaves the frame from or the last line run (CPython 3.11). `return
// LITERAL` and a bare return fix the value, and `return NAME` where every
// line that may run right before it in that reach is `NAME = LITERAL` with
// one literal (AssignsLiteral; not the return on n itself, whose NAME the
// frame's locals hold). Why: after `b 4` + c on `except
// ZeroDivisionError:`, whose handler is `result = None` before `return
// result`, r answered 0.0.
func (ix *Index) ReturnValues(n int) map[int]string {
	runs := ix.RunsOn(n)
	if !ix.StatementStarts(n) || ix.Suspends(n) || len(runs) != 1 || runs[0].Kind != Function {
		return nil
	}
	reach, before := ix.returnReach(n)
	if reach == nil {
		return nil
	}
	w := ix.flowWalk()
	out := map[int]string{}
	for l := range reach {
		k := ix.stmtAt[l-1]
		st := ix.stmts[k]
		if w.inFinally(k) {
			return nil // a return of the try may be on its way out through here
		}
		returns := slices.ContainsFunc(st.toks, func(t token) bool {
			return t.kind == tName && (t.text == "return" || t.text == "yield" || t.text == "await")
		})
		value := "None" // an exception's exit or the body's end
		if returns {
			if len(w.crossed(k, -1)) > 0 {
				return nil
			}
			value = ix.returned(k, l != n, before[l])
		}
		for m := st.first; m <= st.last; m++ {
			out[m] = value
		}
	}
	return out
}

// ReturnLines lists, sorted, the lines where the frame running line n
// may next return (its return event, a generator's yield included) after
// a line event on n: every line of the statements NextLines and an
// exception's ways reach from n (returnReach). Nil where the text does not
// say: a line a lambda's or comprehension's frame may run too, a construct
// the flow reading does not follow. Why: r from the module's frame named
// a line of a class body, where only the module's lines can end it.
func (ix *Index) ReturnLines(n int) []int {
	if runs := ix.RunsOn(n); len(runs) != 1 || runs[0].Kind == Lambda || runs[0].Kind == Comprehension {
		return nil
	}
	reach, _ := ix.returnReach(n)
	if reach == nil {
		return nil
	}
	var out []int
	for l := range reach {
		st := ix.stmts[ix.stmtAt[l-1]]
		for m := st.first; m <= st.last; m++ {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// EndLines lists, sorted, the lines of ReturnLines(n) where the frame may
// return when no exception that a call or an operation raises leaves it:
// its normal ends (the last line run before its code falls off its end, a
// for's header when the loop is done, a with's header after its exit,
// an if's header when its test fails), its return statements, its own
// raise statements, and its except clauses' headers (one that does not
// match re-raises with no exception event, so no trace tells it apart);
// empty where the frame cannot end from n but by an exception (as from a
// line no event fires on). Nil where ReturnLines is, and for a frame that may
// suspend (a generator's, a coroutine's). Why: r from a script's module
// frame named a line halfway down the file in 25 of 54 real-world
// examples, a line the module returns on only if the program crashes
// there; every one of the 54 returned at the module's end.
func (ix *Index) EndLines(n int) []int {
	runs := ix.RunsOn(n)
	if len(runs) != 1 || runs[0].Kind == Lambda || runs[0].Kind == Comprehension || ix.Suspends(n) {
		return nil
	}
	return ix.endLines(n, runs[0])
}

// ModuleEndLines is EndLines for the module's frame from its start: where
// a script's module may end when no exception leaves it.
func (ix *Index) ModuleEndLines() []int {
	entry := ix.EntryLines(ix.Module)
	if entry == nil {
		return nil
	}
	var out []int
	for _, n := range entry {
		lines := ix.endLines(n, ix.Module)
		if lines == nil {
			return nil
		}
		out = append(out, lines...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// endLines is EndLines for the frame of scope frame on line n.
func (ix *Index) endLines(n int, frame *Scope) []int {
	reach, _ := ix.returnReach(n)
	if reach == nil {
		return nil
	}
	w := ix.flowWalk()
	out := []int{} // none: the frame cannot end from n but by an exception
	for l := range reach {
		k := ix.stmtAt[l-1]
		if ix.owner[k] != frame || !w.mayEnd(k) {
			continue // another frame's line (a class body's), or one the frame goes on from
		}
		out = append(out, w.lines(k)...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// EscapeFreeEndLines is, for a frame of a NoEscape function, where it may
// return in a run that ends normally: EndLines after a line event on line
// n, after its call event on line n (call) those of its entry lines. Nil
// where the frame is no NoEscape function's or EndLines has no answer.
func (ix *Index) EscapeFreeEndLines(n int, call bool) []int {
	if !call {
		if runs := ix.RunsOn(n); len(runs) != 1 || !ix.NoEscape(runs[0]) {
			return nil
		}
		return ix.EndLines(n)
	}
	def := ix.defAt(n)
	if def == nil || !ix.NoEscape(def) {
		return nil
	}
	return ix.fromEntries(def, ix.EndLines)
}

// CallReturnLines is ReturnLines for a call event on line n: the lines
// where the frame of the def that call opens may next return (its yield
// or return), those its entry lines reach; nil where the text does not
// say (several code objects start on n, a class body, a lambda's or a
// comprehension's call, a generator resumed on a line no def starts on).
func (ix *Index) CallReturnLines(n int) []int {
	def := ix.defAt(n)
	if def == nil {
		return nil
	}
	return ix.fromEntries(def, ix.ReturnLines)
}

// fromEntries is the sorted union of lines(e) over the entry lines e of
// sc's frame, nil where lines has no answer for one.
func (ix *Index) fromEntries(sc *Scope, lines func(int) []int) []int {
	var out []int
	for _, e := range ix.EntryLines(sc) {
		at := lines(e)
		if at == nil {
			return nil
		}
		out = append(out, at...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// returnReach is the set of lines a frame may have a line event on after
// one on line n (n included): NextLines' closure, with where an exception
// goes (the handlers and finally blocks around a line, the exits of the
// withs), and per line the lines whose event may come right before its;
// nil where the flow reading does not follow the frame's code.
func (ix *Index) returnReach(n int) (reach map[int]bool, before map[int][]int) {
	w := ix.flowWalk()
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 || w.unknown {
		return nil, nil
	}
	reach, before = map[int]bool{n: true}, map[int][]int{}
	for queue := []int{n}; len(queue) > 0; queue = queue[1:] {
		next := ix.NextLines(queue[0])
		if next == nil {
			return nil, nil
		}
		// NextLines leaves out where an exception goes
		k := ix.stmtAt[queue[0]-1]
		next = append(append(next, w.handlers(k)...), w.crossed(k, -1)...)
		for _, m := range next {
			before[m] = append(before[m], queue[0])
			if !reach[m] {
				reach[m] = true
				queue = append(queue, m)
			}
		}
	}
	return reach, before
}

// returned is the repr of the value statement k returns where its text
// fixes it: a bare return's None, `return LITERAL`'s, `return NAME`'s
// where the line events before it (before; again: not the one already
// fired) are all `NAME = LITERAL` with one literal; "" otherwise.
func (ix *Index) returned(k int, again bool, before []int) string {
	st := ix.stmts[k]
	t := st.toks
	switch {
	case st.first != st.last || t[0].text != "return":
		return ""
	case len(t) == 1:
		return "None"
	case len(t) == 3:
		if repr, ok := emptyLiteral(t[1], t[2]); ok {
			return repr
		}
	}
	if len(t) == 2 || len(t) == 3 && t[1].kind == tOp && t[1].text == "-" {
		if repr, ok := literalRepr(t[len(t)-1], len(t) == 3); ok {
			return repr
		}
	}
	name := ix.ReturnedName(st.first)
	if name == "" || !again || len(before) == 0 {
		return ""
	}
	value := ""
	for _, p := range before {
		n, repr, ok := ix.AssignsLiteral(p)
		if !ok || n != name || value != "" && repr != value {
			return ""
		}
		value = repr
	}
	return value
}

// AssignsLiteral reports, where line n's statement is `NAME = LITERAL` on
// one line (a literal literalRepr reads, or [], {} or ()), NAME and the
// literal's repr:
// the statement calls nothing and cannot raise, so the frame's next event
// is its next line's (or its return, after its last statement), with NAME
// bound to that value and every other local as it was (not in an `except
// ... as` body, which deletes its name on the way out: InHandlerAs).
func (ix *Index) AssignsLiteral(n int) (name, repr string, ok bool) {
	if !ix.StatementStarts(n) {
		return "", "", false
	}
	l := ix.stmts[ix.stmtAt[n-1]]
	t := l.toks
	emptyRepr, empty := "", false
	if len(t) == 4 && t[0].kind == tName && t[1].text == "=" {
		emptyRepr, empty = emptyLiteral(t[2], t[3])
	}
	name, v, neg, ok := literalAssignment(t)
	if empty {
		name, ok = t[0].text, true
	}
	if l.first != l.last || !ok || keywords[name] {
		return "", "", false
	}
	// a global or nonlocal name is bound outside the frame's locals; the
	// tracer hides a module's dunders; a class mangles __private names; a
	// local that holds the frame's namespace shows the new binding too
	if sc := ix.owner[ix.stmtAt[n-1]]; ix.namespaceAliased() || sc.globals[name] || sc.nonlocals[name] || strings.HasPrefix(name, "__") || ix.InHandlerAs(n) {
		return "", "", false
	}
	if empty {
		return name, emptyRepr, true
	}
	repr, ok = literalRepr(v, neg)
	return name, repr, ok
}

// namespaceAliased reports whether the program may hold a frame's
// namespace as a value (locals(), globals(), vars(), __dict__, a frame's
// f_locals): a local that holds it shows a new binding too.
func (ix *Index) namespaceAliased() bool {
	ix.aliasOnce.Do(func() {
		ix.aliased = ix.namesAnywhere("locals", "globals", "vars", "__dict__", "f_locals", "f_globals", "_getframe", "currentframe")
	})
	return ix.aliased
}

// emptyLiteral is the repr of the empty list, dict or tuple tokens a and b
// write ([], {}, ()), and whether they write one.
func emptyLiteral(a, b token) (string, bool) {
	switch repr := a.text + b.text; repr {
	case "[]", "{}", "()":
		return repr, true
	}
	return "", false
}

// Returns are the lines of the return statements scope s runs, in order:
// a one-line body's (`if c: return x`, `def f(): return 1`) included, a
// nested def's not.
func (ix *Index) Returns(s *Scope) []int {
	var out []int
	for k, l := range ix.stmts {
		runner := ix.owner[k]
		if kw := keywordAt(l.toks); kw >= 0 {
			runner = ix.Header(l.toks[kw].line) // a one-line def's body is its own
		}
		if runner != s {
			continue
		}
		for _, t := range l.toks {
			if t.kind == tName && t.text == "return" {
				out = append(out, t.line)
			}
		}
	}
	return out
}

// NamesOn lists the names the code on line n holds, in order, each once:
// variables, functions, attributes (`x.name`) and keyword argument names,
// not keywords; strings and comments skipped, an f-string's fields read.
func (ix *Index) NamesOn(n int) []string {
	if _, _, ok := ix.Statement(n); !ok {
		return nil
	}
	var out []string
	for _, t := range ix.stmts[ix.stmtAt[n-1]].toks {
		if t.line == n && t.kind == tName && !keywords[t.text] && !slices.Contains(out, t.text) {
			out = append(out, t.text)
		}
	}
	return out
}

// Binds lists the names the statement that starts on line n binds in the
// scope that runs it, sorted: assignment, for, with, except and import
// targets, := targets, a def's or class's name; not attributes or
// subscripts (`x.a = 1`, `x[0] = 1` bind nothing). Nil for a line that
// starts no statement.
func (ix *Index) Binds(n int) []string {
	if !ix.StatementStarts(n) {
		return nil
	}
	toks := ix.stmts[ix.stmtAt[n-1]].toks
	if kw := keywordAt(toks); kw >= 0 {
		return []string{toks[kw+1].text}
	}
	if toks[0].kind == tOp && toks[0].text == "@" {
		return nil
	}
	// read the statement again into a scope of its own (and a builder
	// whose lambdas and comprehensions go nowhere)
	sc := &Scope{Kind: Module, bound: set{}, used: set{}, globals: set{}, nonlocals: set{}}
	b := builder{ix: &Index{}, calls: map[*Scope]set{}}
	b.statement(toks, sc)
	if len(sc.bound) == 0 {
		return nil
	}
	return sc.bound.sorted()
}

// StatementKeyword is the keyword a statement that starts on line n opens
// with ("import", "from", "def", "if", "return", ...; "def" for an async
// def, the decorated statement's for a decorator, "match" or "case" where
// they are keywords), "" for an expression or assignment statement or a
// line that starts none.
func (ix *Index) StatementKeyword(n int) string {
	if !ix.StatementStarts(n) {
		return ""
	}
	toks := ix.stmts[ix.stmtAt[n-1]].toks
	if kw := keywordAt(toks); kw >= 0 {
		return toks[kw].text
	}
	switch t := toks[0]; {
	case t.kind == tOp && t.text == "@":
		for k := ix.stmtAt[n-1] + 1; k < len(ix.stmts); k++ {
			if first := ix.stmts[k].toks[0]; first.kind != tOp || first.text != "@" {
				return ix.StatementKeyword(ix.stmts[k].first)
			}
		}
	case t.kind == tName && t.text == "async" && len(toks) > 1:
		return toks[1].text
	case t.kind == tName && keywords[t.text] && t.text != "None" && t.text != "True" && t.text != "False" &&
		t.text != "lambda" && t.text != "not" && t.text != "await" && t.text != "yield":
		return t.text
	case isMatchStatement(toks):
		return t.text
	}
	return ""
}
