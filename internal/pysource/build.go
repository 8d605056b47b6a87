package pysource

import (
	"strings"
	"unicode"
)

// The builder reads logical lines in order with a stack of the open def
// and class blocks (by indentation), and each statement's tokens for what
// it binds, reads, calls, and the lambdas and comprehensions it makes.

type builder struct {
	ix    *Index
	calls map[*Scope]set
}

type openBlock struct {
	indent int
	scope  *Scope
}

// keywords are Python 3's hard keywords (keyword.kwlist).
var keywords = set{}

func init() {
	keywords.add(strings.Fields(`False None True and as assert async await break class continue def del elif else
		except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield`)...)
}

// IsKeyword reports whether s is one of Python 3's hard keywords.
func IsKeyword(s string) bool { return keywords[s] }

// IsVariableName reports whether s can name a variable: an identifier
// (a letter or _, then letters, digits, _) that is not a keyword.
func IsVariableName(s string) bool {
	if s == "" || keywords[s] {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

func (b *builder) newScope(kind Kind, name string, parent *Scope, line int) *Scope {
	s := &Scope{Kind: kind, Name: name, Parent: parent, Line: line, First: line, Body: line, End: line,
		bound: set{}, used: set{}, globals: set{}, nonlocals: set{}}
	switch {
	case parent.Kind == Module:
		s.Qualname = name
	case parent.Kind == Class:
		s.Qualname = parent.Qualname + "." + name
	default:
		s.Qualname = parent.Qualname + ".<locals>." + name
	}
	parent.Children = append(parent.Children, s)
	b.ix.Scopes = append(b.ix.Scopes, s)
	return s
}

func (b *builder) build() {
	ix := b.ix
	ix.owner = make([]*Scope, len(ix.stmts))
	var stack []openBlock
	decorator := 0 // the first line of decorators waiting for their def or class
	for k, l := range ix.stmts {
		for len(stack) > 0 && l.indent <= stack[len(stack)-1].indent {
			stack = stack[:len(stack)-1]
		}
		owner := ix.Module
		if len(stack) > 0 {
			owner = stack[len(stack)-1].scope
		}
		for _, o := range stack {
			o.scope.End = max(o.scope.End, l.last)
		}
		if len(stack) > 0 && owner.Body == 0 && !(l.toks[0].kind == tOp && l.toks[0].text == "@") {
			// the first statement's line; a decorated def's is its def line
			owner.Body = l.first
			if kw := keywordAt(l.toks); kw >= 0 {
				owner.Body = l.toks[kw].line
			}
		}
		ix.owner[k] = owner
		toks := l.toks
		if toks[0].text == "@" && toks[0].kind == tOp {
			if decorator == 0 {
				decorator = l.first
			}
			b.walk(toks[1:], owner, false)
			continue
		}
		first := decorator
		decorator = 0
		head := keywordAt(toks)
		if head < 0 {
			b.statement(toks, owner)
			continue
		}
		s := b.header(toks, head, owner, l)
		if first > 0 {
			s.First = first
		}
		if s.Body == s.Line && s.End == s.Line && !b.oneLine(toks) {
			s.Body, s.End = 0, 0 // filled in by the body's lines
			stack = append(stack, openBlock{l.indent, s})
		}
	}
	// a block whose body never came (the file ends after its header)
	for _, s := range ix.Scopes {
		if s.Body == 0 {
			s.Body, s.End = s.Line, s.Line
		}
	}
}

// keywordAt is the index of a def or class statement's keyword, -1 if the
// tokens are no def or class.
func keywordAt(toks []token) int {
	head := 0
	if toks[0].text == "async" && len(toks) > 1 && toks[1].text == "def" {
		head = 1
	}
	if toks[head].kind != tName || (toks[head].text != "def" && toks[head].text != "class") || len(toks) < head+2 || toks[head+1].kind != tName {
		return -1
	}
	return head
}

// oneLine reports whether a def or class header has its body after the
// colon on the same logical line.
func (b *builder) oneLine(toks []token) bool {
	c := headerColon(toks)
	return c >= 0 && c < len(toks)-1
}

// header reads a def or class statement: the scope it opens, its
// parameters (defaults, annotations and bases are read in the enclosing
// scope) and a one-line body.
func (b *builder) header(toks []token, head int, owner *Scope, l logical) *Scope {
	kind := Function
	if toks[head].text == "class" {
		kind = Class
	}
	name := toks[head+1].text
	owner.bound.add(name)
	s := b.newScope(kind, name, owner, toks[head].line)
	s.Async = head == 1
	s.Indent = l.indent
	s.Body = s.Line
	s.End = s.Line
	colon := headerColon(toks)
	s.headerEnd = l.last
	if colon >= 0 {
		s.headerEnd = toks[colon].line
	}
	rest := toks[head+2:]
	if colon >= 0 {
		rest = toks[head+2 : colon]
	}
	if len(rest) > 0 && rest[0].text == "(" && rest[0].kind == tOp {
		j := matching(rest, 0)
		if kind == Function {
			s.Params = b.params(rest[1:j], owner, true)
		} else {
			b.walk(rest[1:j], owner, true) // bases and keywords
			// a base's metaclass may put names in the body's namespace
			// (__prepare__: an Enum's body holds _generate_next_value_)
			s.open = j > 1
		}
		if j < len(rest) {
			b.walk(rest[j+1:], owner, false) // a return annotation
		}
	}
	if colon >= 0 && colon < len(toks)-1 {
		body := toks[colon+1:]
		s.Body, s.End = body[0].line, l.last
		s.oneLine = true
		b.statement(body, s)
	}
	return s
}

// params reads a parameter list (a def's between its parentheses, a
// lambda's between lambda and its colon): the names in order; defaults and
// (for a def) annotations are read in the enclosing scope.
func (b *builder) params(toks []token, outer *Scope, annotations bool) []string {
	var names []string
	for _, part := range splitTop(toks, ",") {
		for len(part) > 0 && part[0].kind == tOp && (part[0].text == "*" || part[0].text == "**" || part[0].text == "/") {
			part = part[1:]
		}
		if len(part) == 0 || part[0].kind != tName {
			continue
		}
		names = append(names, part[0].text)
		rest := part[1:]
		if len(rest) > 0 && (rest[0].text == ":" && annotations || rest[0].text == "=") {
			b.walk(rest[1:], outer, false)
		}
	}
	return names
}

// compound statement keywords whose header ends at a colon.
var compound = set{"if": true, "elif": true, "else": true, "while": true, "for": true, "try": true, "except": true,
	"finally": true, "with": true}

// statement reads one logical line (not a def or class) run in scope sc:
// a compound statement's header and its one-line body, or simple
// statements separated by semicolons.
func (b *builder) statement(toks []token, sc *Scope) {
	if len(toks) == 0 {
		return
	}
	kw := toks[0].text
	if toks[0].kind == tName && kw == "async" && len(toks) > 1 && (toks[1].text == "for" || toks[1].text == "with") {
		toks = toks[1:]
		kw = toks[0].text
	}
	if toks[0].kind == tName && (compound[kw] || isMatchStatement(toks)) {
		colon := headerColon(toks)
		if colon < 0 {
			colon = len(toks)
		}
		head := toks[1:colon]
		switch kw {
		case "for":
			in := indexTop(head, "in")
			if in < 0 {
				in = len(head)
			}
			b.target(head[:in], sc)
			if in < len(head) {
				b.walk(head[in+1:], sc, false)
			}
		case "with":
			if len(head) > 0 && head[0].text == "(" && matching(head, 0) == len(head)-1 && indexTop(head[1:len(head)-1], "as") >= 0 {
				head = head[1 : len(head)-1]
			}
			for _, item := range splitTop(head, ",") {
				b.asClause(item, sc)
			}
		case "except":
			if len(head) > 0 && head[0].text == "*" {
				head = head[1:]
			}
			b.asClause(head, sc)
		case "case":
			g := indexTop(head, "if")
			pat := head
			if g >= 0 {
				pat = head[:g]
				b.walk(head[g+1:], sc, false)
			}
			b.pattern(pat, sc)
		default:
			b.walk(head, sc, false)
		}
		if colon < len(toks)-1 {
			b.statement(toks[colon+1:], sc)
		}
		return
	}
	for _, st := range splitTop(toks, ";") {
		b.simple(st, sc)
	}
}

// isMatchStatement reports whether toks are a match or case statement's
// header: match and case are soft keywords, a statement's only before a
// subject or pattern and a header colon (match = 1, match(x) are not).
func isMatchStatement(toks []token) bool {
	return toks[0].kind == tName && (toks[0].text == "match" || toks[0].text == "case") && len(toks) > 2 && headerColon(toks) > 1 &&
		!(toks[1].kind == tOp && !strings.Contains("([{-*~", toks[1].text))
}

// simple reads a simple statement.
func (b *builder) simple(toks []token, sc *Scope) {
	if len(toks) == 0 {
		return
	}
	switch t := toks[0]; {
	case t.kind == tName && (t.text == "global" || t.text == "nonlocal"):
		for _, n := range toks[1:] {
			if n.kind == tName {
				if t.text == "global" {
					sc.globals.add(n.text)
				} else {
					sc.nonlocals.add(n.text)
				}
			}
		}
		return
	case t.kind == tName && t.text == "import":
		for _, part := range splitTop(toks[1:], ",") {
			if as := indexTop(part, "as"); as >= 0 && as+1 < len(part) {
				sc.bound.add(part[as+1].text)
			} else if len(part) > 0 && part[0].kind == tName {
				sc.bound.add(part[0].text)
			}
		}
		return
	case t.kind == tName && t.text == "from":
		imp := indexTop(toks, "import")
		if imp < 0 {
			return
		}
		names := toks[imp+1:]
		if len(names) > 0 && names[0].text == "(" {
			names = names[1:matching(names, 0)]
		}
		for _, part := range splitTop(names, ",") {
			switch as := indexTop(part, "as"); {
			case len(part) > 0 && part[0].text == "*":
				sc.open = true
			case as >= 0 && as+1 < len(part):
				sc.bound.add(part[as+1].text)
			case len(part) > 0 && part[0].kind == tName:
				sc.bound.add(part[0].text)
			}
		}
		return
	case t.kind == tName && t.text == "del":
		b.walk(toks[1:], sc, false) // a deleted name was bound elsewhere
		return
	}
	// assignments: targets = ... = value; augmented; annotated
	var parts [][]token
	augmented, annotated := false, -1
	last := 0
	scanTop(toks, func(i int) bool {
		switch op := toks[i]; {
		case op.kind != tOp:
		case op.text == "=":
			parts = append(parts, toks[last:i])
			last = i + 1
		case augmentedOp(op) && len(parts) == 0:
			parts = append(parts, toks[last:i])
			last = i + 1
			augmented = true
		case op.text == ":" && len(parts) == 0 && annotated < 0:
			annotated = i
		}
		return true
	})
	parts = append(parts, toks[last:])
	if annotated >= 0 && (len(parts) == 1 || annotated < len(parts[0])) {
		b.target(toks[:annotated], sc) // `x: int` alone makes x local, as symtable says
		end := len(toks)
		if len(parts) > 1 {
			end = len(parts[0])
		}
		b.walk(toks[annotated+1:end], sc, false)
		if len(parts) > 1 {
			b.walk(parts[len(parts)-1], sc, false)
		}
		return
	}
	for i, p := range parts {
		if i == len(parts)-1 {
			b.walk(p, sc, false)
			continue
		}
		if augmented {
			b.walk(p, sc, false) // x += 1 reads x too
		}
		b.target(p, sc)
	}
}

// asClause reads `EXPR [as TARGET]` (a with item, an except clause).
func (b *builder) asClause(toks []token, sc *Scope) {
	if as := indexTop(toks, "as"); as >= 0 {
		b.walk(toks[:as], sc, false)
		b.target(toks[as+1:], sc)
		return
	}
	b.walk(toks, sc, false)
}

// target reads an assignment target: the names it binds (a, (a, *b),
// [a, b]); the parts of a subscript or attribute target are read.
func (b *builder) target(toks []token, sc *Scope) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tOp && (t.text == "(" || t.text == "[" || t.text == "{"):
			j := matching(toks, i)
			if i > 0 && isAtomEnd(toks[i-1]) {
				b.walk(toks[i+1:j], sc, t.text == "(")
			} else {
				b.target(toks[i+1:j], sc)
			}
			i = j
		case t.kind == tName && !keywords[t.text]:
			attr := i > 0 && toks[i-1].text == "." && toks[i-1].kind == tOp
			next := ""
			if i+1 < len(toks) && toks[i+1].kind == tOp {
				next = toks[i+1].text
			}
			switch {
			case attr:
			case next == "." || next == "[" || next == "(":
				sc.used.add(t.text)
			default:
				sc.bound.add(t.text)
			}
		case t.kind == tOp && t.text == ":=":
			// not a target: read the rest as an expression
			b.walk(toks[max(i-1, 0):], sc, false)
			return
		}
	}
}

// pattern reads a match statement's case pattern: capture names are bound,
// dotted names and class names are read.
func (b *builder) pattern(toks []token, sc *Scope) {
	for i, t := range toks {
		if t.kind != tName || keywords[t.text] && t.text != "as" {
			continue
		}
		if t.text == "as" || t.text == "_" {
			continue
		}
		attr := i > 0 && toks[i-1].kind == tOp && toks[i-1].text == "."
		next := ""
		if i+1 < len(toks) && toks[i+1].kind == tOp {
			next = toks[i+1].text
		}
		switch {
		case attr, next == "=":
		case next == "." || next == "(":
			sc.used.add(t.text)
		default:
			sc.bound.add(t.text)
		}
	}
}

// walk reads an expression in scope sc: the names it reads, the calls it
// makes, := targets, and the lambdas and comprehensions it holds. call says
// toks are a call's arguments (NAME= is a keyword, not a name).
func (b *builder) walk(toks []token, sc *Scope, call bool) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == tOp && (t.text == "(" || t.text == "[" || t.text == "{"):
			j := matching(toks, i)
			inner := toks[i+1 : j]
			isCall := t.text == "(" && i > 0 && isAtomEnd(toks[i-1])
			if f := indexTop(inner, "for"); f >= 0 && !(t.text == "[" && i > 0 && isAtomEnd(toks[i-1])) {
				b.comprehension(t, inner, toks[min(j, len(toks)-1)], sc)
			} else {
				b.walk(inner, sc, isCall)
			}
			if isCall && toks[i-1].kind == tName && (i < 2 || toks[i-2].text != ".") {
				b.call(sc, toks[i-1].text)
			}
			i = j
		case t.kind == tName && t.text == "lambda":
			i = b.lambda(toks, i, sc) - 1
		case t.kind == tName && !keywords[t.text]:
			attr := i > 0 && toks[i-1].kind == tOp && toks[i-1].text == "."
			next := ""
			if i+1 < len(toks) && toks[i+1].kind == tOp {
				next = toks[i+1].text
			}
			switch {
			case attr:
			case call && next == "=":
			case next == ":=":
				target := sc
				for target.Kind == Comprehension {
					sc.used.add(t.text) // a free variable of the comprehension
					target = target.Parent
				}
				target.bound.add(t.text)
			default:
				sc.used.add(t.text)
			}
		}
	}
}

func (b *builder) call(sc *Scope, name string) {
	// a lambda's or comprehension's calls are its function's (the call graph
	// is by function)
	for sc.Kind == Lambda || sc.Kind == Comprehension {
		sc = sc.Parent
	}
	if b.calls[sc] == nil {
		b.calls[sc] = set{}
	}
	b.calls[sc].add(name)
}

// lambda reads the lambda whose keyword is toks[i]: its parameters
// (defaults read in sc) and body in a scope of its own. It returns the
// index after the lambda's body.
func (b *builder) lambda(toks []token, i int, sc *Scope) int {
	colon := -1
	depth := 0
	for k := i + 1; k < len(toks) && colon < 0; k++ {
		switch t := toks[k]; {
		case t.kind != tOp:
		case t.text == "(" || t.text == "[" || t.text == "{":
			depth++
		case t.text == ")" || t.text == "]" || t.text == "}":
			depth--
		case t.text == ":" && depth == 0:
			colon = k
		}
	}
	if colon < 0 {
		return len(toks)
	}
	end := lambdaEnd(toks, colon+1)
	s := b.newScope(Lambda, "<lambda>", sc, toks[i].line)
	s.Params = b.params(toks[i+1:colon], sc, false)
	s.Body = toks[i].line
	s.End = toks[max(end-1, colon)].end
	b.walk(toks[colon+1:end], s, false)
	return end
}

// lambdaEnd is where a lambda's body that starts at toks[from] ends: a
// comma, semicolon, colon, closing bracket or `for` at its level.
func lambdaEnd(toks []token, from int) int {
	depth, lambdas := 0, 0
	for k := from; k < len(toks); k++ {
		t := toks[k]
		switch {
		case t.kind == tName && t.text == "lambda" && depth == 0:
			lambdas++
		case t.kind == tName && (t.text == "for" || t.text == "async" && k+1 < len(toks) && toks[k+1].text == "for") && depth == 0:
			return k
		case t.kind != tOp:
		case t.text == "(" || t.text == "[" || t.text == "{":
			depth++
		case t.text == ")" || t.text == "]" || t.text == "}":
			if depth == 0 {
				return k
			}
			depth--
		case depth == 0 && lambdas == 0 && (t.text == "," || t.text == ";" || t.text == "="):
			return k
		case depth == 0 && t.text == ":":
			if lambdas == 0 {
				return k
			}
			lambdas--
		}
	}
	return len(toks)
}

// comprehension reads a comprehension or generator expression: the
// bracket's inner tokens with a `for` at their top level. Its first
// iterable is read in sc; the rest runs in its own scope (3.11).
func (b *builder) comprehension(open token, inner []token, close token, sc *Scope) {
	name := "<genexpr>"
	first := indexTop(inner, "for")
	elt := inner[:first]
	if len(elt) > 0 && elt[len(elt)-1].text == "async" {
		elt = elt[:len(elt)-1]
	}
	switch open.text {
	case "[":
		name = "<listcomp>"
	case "{":
		name = "<setcomp>"
		if indexTop(elt, ":") >= 0 {
			name = "<dictcomp>"
		}
	}
	s := b.newScope(Comprehension, name, sc, open.line)
	s.Params = []string{".0"}
	s.End = close.end
	// clauses: for TARGET in ITER, if COND
	var starts []int
	scanTop(inner, func(k int) bool {
		if t := inner[k]; k >= first && t.kind == tName && (t.text == "for" || t.text == "if") {
			starts = append(starts, k)
		}
		return true
	})
	for c, k := range starts {
		end := len(inner)
		if c+1 < len(starts) {
			end = starts[c+1]
		}
		clause := inner[k+1 : end]
		if len(clause) > 0 && clause[len(clause)-1].text == "async" {
			clause = clause[:len(clause)-1]
		}
		if inner[k].text == "if" {
			b.walk(clause, s, false)
			continue
		}
		in := indexTop(clause, "in")
		if in < 0 {
			b.target(clause, s)
			continue
		}
		b.target(clause[:in], s)
		if c == 0 {
			b.walk(clause[in+1:], sc, false)
		} else {
			b.walk(clause[in+1:], s, false)
		}
	}
	b.walk(elt, s, false)
}

// isAtomEnd reports whether t ends an expression a bracket after it
// subscripts or calls.
func isAtomEnd(t token) bool {
	return t.kind == tName && (!keywords[t.text] || t.text == "None" || t.text == "True" || t.text == "False") ||
		t.kind == tString || t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}")
}

// matching is the index of the bracket closing toks[i], len(toks) if it
// is never closed.
func matching(toks []token, i int) int {
	depth := 0
	for k := i; k < len(toks); k++ {
		if toks[k].kind != tOp {
			continue
		}
		switch toks[k].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth--; depth == 0 {
				return k
			}
		}
	}
	return len(toks)
}

// scanTop calls fn with the index of every token at bracket depth 0 that
// is not in a lambda's parameters or its colon, until fn returns false.
func scanTop(toks []token, fn func(int) bool) {
	depth, lambdas := 0, 0
	for k, t := range toks {
		if t.kind == tOp {
			switch t.text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				depth = max(depth-1, 0)
				continue
			}
		}
		if depth > 0 {
			continue
		}
		if t.kind == tName && t.text == "lambda" {
			lambdas++
			continue
		}
		if lambdas > 0 {
			if t.kind == tOp && t.text == ":" {
				lambdas--
			}
			continue
		}
		if !fn(k) {
			return
		}
	}
}

// indexTop is the index of the first top-level token with text s, -1.
func indexTop(toks []token, s string) int {
	at := -1
	scanTop(toks, func(k int) bool {
		if toks[k].text == s && toks[k].kind != tString {
			at = k
			return false
		}
		return true
	})
	return at
}

// splitTop splits toks at top-level tokens with text sep.
func splitTop(toks []token, sep string) [][]token {
	var out [][]token
	last := 0
	scanTop(toks, func(k int) bool {
		if toks[k].text == sep && toks[k].kind == tOp {
			out = append(out, toks[last:k])
			last = k + 1
		}
		return true
	})
	return append(out, toks[last:])
}

// augmentedOp reports whether t is an augmented assignment's operator
// (`+=`, `//=`, ...): not `=`, a comparison or `:=`.
func augmentedOp(t token) bool {
	return t.kind == tOp && len(t.text) >= 2 && strings.HasSuffix(t.text, "=") && !strings.Contains("== != <= >= :=", t.text)
}

// headerColon is the index of the colon that ends a compound statement's
// header, -1 if none.
func headerColon(toks []token) int {
	at := -1
	scanTop(toks, func(k int) bool {
		if toks[k].kind == tOp && toks[k].text == ":" {
			at = k
			return false
		}
		return true
	})
	return at
}
