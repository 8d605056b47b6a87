package pysource

// This file folds what a frame's values decide without running anything:
// a small reader of Python expressions over the reprs a frame shows
// (condEval, Expr), the way a branch takes (CondHolds), and the value an
// assignment or an append binds (AssignsValue, AppendsValue). The model
// engine's rules and breakpoint conditions where no program runs
// (debugger.Condition) share it.

import (
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
)

// CondBody is the body of the if, elif or while statement whose header
// starts on line h: its first and last lines (its other clauses are not in
// it); ok false where h starts no such header or the body is on its line.
func (ix *Index) CondBody(h int) (first, last int, ok bool) {
	if !ix.StatementStarts(h) {
		return 0, 0, false
	}
	j := ix.stmtAt[h-1]
	toks := ix.stmts[j].toks
	if toks[0].kind != tName || toks[0].text != "if" && toks[0].text != "elif" && toks[0].text != "while" {
		return 0, 0, false
	}
	if c := headerColon(toks); c < 2 || c != len(toks)-1 {
		return 0, 0, false
	}
	end := ix.blockEnd(j)
	if end == ix.stmts[j].last {
		return 0, 0, false
	}
	return ix.stmts[j+1].first, end, true
}

// CondHolds is the truth of the condition of the if, elif or while header
// on line h, given the frame's locals at its line event (valueOf, by
// name): known (ok) only for a condition that runs no Python code and
// cannot raise, on one line (an event may fire on each line of a longer
// one), made of int, bool, None, str and float literals, locals whose
// reprs are such values or lists, tuples and dicts of them, the operators
// not, and, or, comparisons, in, is None, unary and binary + and -, *, //
// and % on ints, list and tuple displays, conditional expressions,
// subscripts by an int, the builtins builtinFolds has and a str's methods
// (strMethods, strArgMethods); a false one whose way out may leave an `except ... as`
// body is not known either (InHandlerAs). Why: where a step goes from a
// branch is the commonest next-line error left, and the frame's values
// often decide it.
func (ix *Index) CondHolds(h int, valueOf func(name string) (string, bool)) (truth, ok bool) {
	if _, _, body := ix.CondBody(h); !body || ix.ModuleOpen() || !ix.oneLine(h) {
		return false, false
	}
	toks := ix.stmts[ix.stmtAt[h-1]].toks
	n, ok := ix.parseExpr(toks[1 : len(toks)-1])
	if !ok {
		return false, false
	}
	v, ok := n(valueOf)
	if !ok || !v.truth() && ix.InHandlerAs(h) {
		return false, false // leaving an except clause's body deletes its name
	}
	return v.truth(), true
}

// InHandlerAs reports whether line n's statement is in the body of an
// `except ... as NAME:` clause of its frame: a step that leaves that body
// deletes NAME from the locals.
func (ix *Index) InHandlerAs(n int) bool {
	if n < 1 || n > len(ix.stmtAt) || ix.stmtAt[n-1] < 0 {
		return false
	}
	for p := range ix.enclosing(ix.stmtAt[n-1]) {
		if ix.flowG.kw[p] == "except" && indexTop(ix.stmts[p].toks, "as") >= 0 {
			return true
		}
	}
	return false
}

// Expr is a Python expression of the forms CondHolds reads, parsed once
// to be evaluated over the reprs of a frame's locals (a breakpoint's
// condition where no program runs: debugger.Condition).
type Expr struct{ node condNode }

// ParseExpr reads one expression; false where it is not of the forms
// CondHolds reads.
func ParseExpr(src string) (*Expr, bool) {
	ix := New(src + "\n")
	if strings.ContainsAny(src, "\n\r") || len(ix.stmts) != 1 || ix.stmts[0].first != 1 {
		return nil, false
	}
	n, ok := (*Index)(nil).parseExpr(ix.stmts[0].toks)
	if !ok {
		return nil, false
	}
	return &Expr{node: n}, true
}

// Truth is the expression's truth over the locals env gives; ok false
// where it cannot be known (a name that is no local, a value it does not
// read, an operation that would raise).
func (x *Expr) Truth(env Env) (truth, ok bool) {
	v, ok := x.node(env)
	return v.truth(), ok
}

// parseExpr parses toks whole; ix (nil: no program) tells whether the
// program rebinds len.
func (ix *Index) parseExpr(toks []token) (condNode, bool) {
	e := &condEval{ix: ix, toks: toks}
	n, ok := e.cond()
	return n, ok && e.at == len(e.toks)
}

// AssignsValue reports, where line n's statement is `NAME = EXPR` or
// `NAME OP= EXPR` (+, -, *, //, %) on one line, NAME and the repr of the
// value it binds, given the frame's locals at its line event (valueOf):
// known where EXPR is one local's name (any value: NAME then shows its
// repr), or an expression CondHolds reads whose value is an int, a bool,
// None or a str it can write, and an augmented NAME holds an int (or a
// str, for +=). The statement then calls nothing and cannot raise: the
// frame's next event is its next line's (or its return), with NAME bound
// and every other local as it was. Not for a global, nonlocal or dunder
// NAME, nor where a local may hold the frame's namespace (as
// AssignsLiteral), nor in an `except ... as` body (InHandlerAs).
func (ix *Index) AssignsValue(n int, valueOf func(name string) (string, bool)) (name, repr string, ok bool) {
	if !ix.StatementStarts(n) || !ix.oneLine(n) || ix.InHandlerAs(n) {
		return "", "", false
	}
	t := ix.stmts[ix.stmtAt[n-1]].toks
	if len(t) < 3 || t[0].kind != tName || keywords[t[0].text] || t[1].kind != tOp {
		return "", "", false
	}
	name, op := t[0].text, strings.TrimSuffix(t[1].text, "=")
	if t[1].text != "=" && !slices.Contains([]string{"+", "-", "*", "//", "%"}, op) {
		return "", "", false
	}
	if sc := ix.owner[ix.stmtAt[n-1]]; ix.namespaceAliased() || sc.globals[name] || sc.nonlocals[name] || strings.HasPrefix(name, "__") {
		return "", "", false
	}
	if t[1].text == "=" && len(t) == 3 && t[2].kind == tName && !keywords[t[2].text] {
		if r, known := valueOf(t[2].text); known {
			return name, r, true
		}
		return "", "", false
	}
	node, ok := ix.parseExpr(t[2:])
	if !ok {
		return "", "", false
	}
	v, ok := node(valueOf)
	if !ok {
		return "", "", false
	}
	if t[1].text != "=" {
		r, known := valueOf(name)
		cur, parsed := parseValue(r)
		if !known || !parsed || !cur.number() && !(cur.kind == 's' && op == "+") {
			return "", "", false
		}
		if v, ok = arithmetic(op, cur, v); !ok {
			return "", "", false
		}
	}
	repr, ok = v.repr()
	return name, repr, ok && len(repr) <= maxFoldedRepr
}

// maxFoldedRepr bounds the repr of a str AssignsValue writes, or of a
// list AppendsValue does: a tracer cuts a long repr short at its own
// limit.
const maxFoldedRepr = 80

// AppendsValue reports, where line n's statement is `NAME.append(EXPR)`
// or `NAME.reverse()` on one line, NAME and the repr its list shows after
// it, given the frame's locals at its line event (locals, by name): NAME's
// repr is a whole list, and EXPR is another local's name (its repr) or an
// expression AssignsValue reads. The statement calls nothing Python runs
// and cannot raise: the frame's next event is its next line's (or its
// return), with NAME's list one item longer and every other local as it
// was. No rule where another local's repr holds NAME's (it may be the
// same list, or hold it), nor for a repr past maxFoldedRepr.
func (ix *Index) AppendsValue(n int, locals iter.Seq2[string, string]) (name, repr string, ok bool) {
	if !ix.StatementStarts(n) || !ix.oneLine(n) || ix.InHandlerAs(n) {
		return "", "", false
	}
	t := ix.stmts[ix.stmtAt[n-1]].toks
	reverse := len(t) == 5 && t[2].text == "reverse"
	appends := len(t) >= 6 && t[2].text == "append"
	if !reverse && !appends || t[0].kind != tName || keywords[t[0].text] || t[1].text != "." || t[3].text != "(" || matching(t, 3) != len(t)-1 {
		return "", "", false
	}
	valueOf := func(name string) (string, bool) {
		for k, v := range locals {
			if k == name {
				return v, true
			}
		}
		return "", false
	}
	name = t[0].text
	list, known := valueOf(name)
	if _, whole := reprItems(list); !known || !whole || list[0] != '[' {
		return "", "", false
	}
	for k, v := range locals {
		if k != name && strings.Contains(v, list) {
			return "", "", false
		}
	}
	if reverse {
		items, _ := reprItems(list)
		slices.Reverse(items)
		repr = "[" + strings.Join(items, ", ") + "]"
		return name, repr, len(repr) <= maxFoldedRepr
	}
	arg := t[4 : len(t)-1]
	var item string
	if len(arg) == 1 && arg[0].kind == tName && !keywords[arg[0].text] {
		if arg[0].text == name {
			return "", "", false
		}
		if item, known = valueOf(arg[0].text); !known || strings.HasPrefix(item, "<repr raised") {
			return "", "", false // the tracer's mark of a repr that raised: the list's raises too
		}
	} else {
		node, ok := ix.parseExpr(arg)
		if !ok {
			return "", "", false
		}
		v, ok := node(valueOf)
		if !ok {
			return "", "", false
		}
		if item, ok = v.repr(); !ok {
			return "", "", false
		}
	}
	if list == "[]" {
		repr = "[" + item + "]"
	} else {
		repr = list[:len(list)-1] + ", " + item + "]"
	}
	return name, repr, len(repr) <= maxFoldedRepr
}

// repr is CPython's repr of a value: a scalar, or a list or tuple whose
// items it knows (false for a dict, a float, or a str holding both
// quotes).
func (v pyValue) repr() (string, bool) {
	switch v.kind {
	case 'i':
		return strconv.FormatInt(v.i, 10), true
	case 'b':
		return map[bool]string{true: "True", false: "False"}[v.i != 0], true
	case 'n':
		return "None", true
	case 's':
		switch {
		case !strings.Contains(v.s, "'"):
			return "'" + v.s + "'", true
		case !strings.Contains(v.s, `"`):
			return `"` + v.s + `"`, true
		}
	case 'l':
		if len(v.items) != v.n {
			return "", false
		}
		reprs := make([]string, len(v.items))
		for k, item := range v.items {
			r, ok := item.repr()
			if !ok {
				return "", false
			}
			reprs[k] = r
		}
		if !v.tuple {
			return "[" + strings.Join(reprs, ", ") + "]", true
		}
		if len(reprs) == 1 {
			return "(" + reprs[0] + ",)", true
		}
		return "(" + strings.Join(reprs, ", ") + ")", true
	}
	return "", false
}

// pyValue is a value CondHolds reads: an int (bool: an int that is a
// bool), a str, None, or a list, tuple or dict of items (a dict's keys),
// known or not (n: the length).
type pyValue struct {
	kind  byte // 'i' int, 'b' bool, 'f' float, 's' str, 'n' None, 'l' list or tuple, 'd' dict
	i     int64
	f     float64
	s     string
	items []pyValue // nil where unknown
	n     int
	tuple bool // a tuple, not a list ('l')
}

func (v pyValue) truth() bool {
	switch v.kind {
	case 'i', 'b':
		return v.i != 0
	case 'f':
		return v.f != 0
	case 's':
		return v.s != ""
	case 'l', 'd':
		return v.n > 0
	}
	return false
}

func (v pyValue) number() bool { return v.kind == 'i' || v.kind == 'b' }

// real is v as a float64, for a comparison with a float: ok false for no
// number, or an int a float64 does not hold exactly.
func (v pyValue) real() (float64, bool) {
	switch {
	case v.kind == 'f':
		return v.f, true
	case v.number() && v.i > -1<<53 && v.i < 1<<53:
		return float64(v.i), true
	}
	return 0, false
}

// parseValue reads a repr into a pyValue.
func parseValue(r string) (pyValue, bool) {
	switch {
	case r == "None":
		return pyValue{kind: 'n'}, true
	case r == "True" || r == "False":
		return pyValue{kind: 'b', i: map[bool]int64{true: 1}[r == "True"]}, true
	case r == "":
		return pyValue{}, false
	case r[0] == '\'' || r[0] == '"':
		return parseStr(r)
	case r[0] == '[' || r[0] == '(':
		reprs, whole := reprItems(r)
		if !whole {
			return pyValue{}, false
		}
		v := seqValue('l', reprs)
		v.tuple = r[0] == '('
		return v, true
	case r[0] == '{':
		keys, whole := dictKeys(r)
		if !whole {
			return pyValue{}, false
		}
		return seqValue('d', keys), true
	}
	if r[0] == '-' || r[0] >= '0' && r[0] <= '9' {
		if i, err := strconv.ParseInt(r, 10, 64); err == nil && strconv.FormatInt(i, 10) == r {
			return pyValue{kind: 'i', i: i}, true
		}
		if strings.Trim(r, "-0123456789.e+") == "" && strings.ContainsAny(r, ".e") {
			if f, err := strconv.ParseFloat(r, 64); err == nil {
				return pyValue{kind: 'f', f: f}, true // a float's repr
			}
		}
	}
	return pyValue{}, false
}

// seqValue is a list or dict whose items have reprs reprs: items known
// where every one parses.
func seqValue(kind byte, reprs []string) pyValue {
	v := pyValue{kind: kind, n: len(reprs)}
	items := make([]pyValue, 0, len(reprs))
	for _, r := range reprs {
		item, ok := parseValue(r)
		if !ok {
			return v
		}
		items = append(items, item)
	}
	v.items = items
	return v
}

// parseStr reads the repr of a str of printable ASCII with no backslash
// (quoted as repr quotes it).
func parseStr(r string) (pyValue, bool) {
	if len(r) < 2 || r[len(r)-1] != r[0] {
		return pyValue{}, false
	}
	body := r[1 : len(r)-1]
	if r[0] == '"' && !strings.Contains(body, "'") {
		return pyValue{}, false // repr quotes with " only a str holding '
	}
	for _, c := range []byte(body) {
		if c < 0x20 || c > 0x7e || c == '\\' || c == r[0] {
			return pyValue{}, false
		}
	}
	return pyValue{kind: 's', s: body}, true
}

// dictKeys reads the repr of a dict (its keys' reprs); whole false for
// anything else.
func dictKeys(r string) (keys []string, whole bool) {
	pairs, whole := dictItems(r)
	for _, p := range pairs {
		keys = append(keys, p[0])
	}
	return keys, whole
}

// splitKey is the key of a dict item's repr "KEY: VALUE": the text before
// its first ": " outside quotes and brackets.
func splitKey(item string) (string, bool) {
	sc := reprScan{s: item}
	for {
		i, ok := sc.next()
		if !ok {
			return "", false
		}
		if item[i] == ':' && sc.depth == 0 && i > 0 && i+1 < len(item) && item[i+1] == ' ' {
			return item[:i], true
		}
	}
}

// condEval parses a condition's tokens into lazy nodes (so that and and
// or evaluate only what Python evaluates).
type condEval struct {
	ix   *Index // nil: an expression without its program
	toks []token
	at   int
}

// Env gives a local's repr by name (false: no such local).
type Env func(name string) (string, bool)

// condNode evaluates a parsed expression over a frame's locals.
type condNode func(env Env) (pyValue, bool)

func (e *condEval) peek(texts ...string) string {
	if e.at >= len(e.toks) || e.toks[e.at].kind == tString || e.toks[e.at].kind == tNumber {
		return ""
	}
	for _, t := range texts {
		if e.toks[e.at].text == t {
			return t
		}
	}
	return ""
}

// cond parses a conditional expression, `BODY if TEST else OTHER`: TEST
// first, then the one branch Python evaluates.
func (e *condEval) cond() (condNode, bool) {
	body, ok := e.or()
	if !ok || e.peek("if") == "" {
		return body, ok
	}
	e.at++
	test, ok := e.or()
	if !ok || e.peek("else") == "" {
		return nil, false
	}
	e.at++
	other, ok := e.cond()
	if !ok {
		return nil, false
	}
	return func(env Env) (pyValue, bool) {
		v, ok := test(env)
		switch {
		case !ok:
			return v, false
		case v.truth():
			return body(env)
		}
		return other(env)
	}, true
}

func (e *condEval) or() (condNode, bool) {
	return e.logic("or", e.and)
}

func (e *condEval) and() (condNode, bool) {
	return e.logic("and", e.not)
}

// logic parses operands of a chain of op ("and" or "or"), evaluated left
// to right until one decides.
func (e *condEval) logic(op string, operand func() (condNode, bool)) (condNode, bool) {
	first, ok := operand()
	if !ok {
		return nil, false
	}
	nodes := []condNode{first}
	for e.peek(op) != "" {
		e.at++
		n, ok := operand()
		if !ok {
			return nil, false
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 1 {
		return first, true
	}
	return func(env Env) (pyValue, bool) {
		var v pyValue
		for _, n := range nodes {
			var ok bool
			if v, ok = n(env); !ok {
				return v, false
			}
			if v.truth() == (op == "or") {
				return v, true
			}
		}
		return v, true
	}, true
}

func (e *condEval) not() (condNode, bool) {
	if e.peek("not") == "" {
		return e.comparison()
	}
	e.at++
	n, ok := e.not()
	if !ok {
		return nil, false
	}
	return func(env Env) (pyValue, bool) {
		v, ok := n(env)
		return pyValue{kind: 'b', i: map[bool]int64{true: 1}[!v.truth()]}, ok
	}, true
}

// comparison parses a chain a OP b OP c ...: each pair compared, b once.
func (e *condEval) comparison() (condNode, bool) {
	first, ok := e.arith()
	if !ok {
		return nil, false
	}
	operands, ops := []condNode{first}, []string{}
	for {
		op := e.peek("<", ">", "==", ">=", "<=", "!=", "in", "not", "is")
		switch op {
		case "":
			if len(ops) == 0 {
				return first, true
			}
			return func(env Env) (pyValue, bool) {
				left, ok := operands[0](env)
				for k, op := range ops {
					if !ok {
						return left, false
					}
					right, ok := operands[k+1](env)
					if !ok {
						return right, false
					}
					holds, known := compare(op, left, right)
					if !known {
						return pyValue{}, false
					}
					if !holds {
						return pyValue{kind: 'b'}, true
					}
					left = right
				}
				return pyValue{kind: 'b', i: 1}, true
			}, true
		case "not":
			if e.at+1 >= len(e.toks) || e.toks[e.at+1].text != "in" || e.toks[e.at+1].kind != tName {
				return nil, false
			}
			e.at++
			op = "not in"
		case "is":
			if e.at+1 < len(e.toks) && e.toks[e.at+1].kind == tName && e.toks[e.at+1].text == "not" {
				e.at++
				op = "is not"
			}
		}
		e.at++
		n, ok := e.arith()
		if !ok {
			return nil, false
		}
		operands, ops = append(operands, n), append(ops, op)
	}
}

// compare is Python's a OP b where it neither raises nor calls code.
func compare(op string, a, b pyValue) (holds, known bool) {
	switch op {
	case "is", "is not":
		if a.kind != 'n' && b.kind != 'n' {
			return false, false // identity of other values is CPython's choice
		}
		return (a.kind == b.kind) == (op == "is"), true
	case "==", "!=":
		eq, known := equal(a, b)
		return eq == (op == "=="), known
	case "in", "not in":
		in, known := contains(b, a)
		return in == (op == "in"), known
	}
	var c int
	x, xok := a.real()
	y, yok := b.real()
	switch {
	case a.number() && b.number():
		c = cmpInt(a.i, b.i)
	case (a.kind == 'f' || b.kind == 'f') && xok && yok && !math.IsNaN(x) && !math.IsNaN(y):
		c = cmpFloat(x, y)
	case a.kind == 's' && b.kind == 's':
		c = strings.Compare(a.s, b.s)
	default:
		return false, false
	}
	switch op {
	case "<":
		return c < 0, true
	case "<=":
		return c <= 0, true
	case ">":
		return c > 0, true
	}
	return c >= 0, true
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// equal is a == b for the values pyValue holds.
func equal(a, b pyValue) (eq, known bool) {
	x, xok := a.real()
	y, yok := b.real()
	switch {
	case a.number() && b.number():
		return a.i == b.i, true
	case (a.kind == 'f' || b.kind == 'f') && xok && yok:
		return x == y, true
	case a.kind == 'f' || b.kind == 'f':
		return false, a.kind == 's' || b.kind == 's' || a.kind == 'n' || b.kind == 'n'
	case a.kind != b.kind:
		return false, a.kind != 'l' && a.kind != 'd' || b.kind != 'l' && b.kind != 'd' // a list and a tuple look alike
	case a.kind == 's':
		return a.s == b.s, true
	case a.kind == 'n':
		return true, true
	}
	return false, false
}

// contains is x in c.
func contains(c, x pyValue) (in, known bool) {
	switch c.kind {
	case 's':
		if x.kind != 's' {
			return false, false
		}
		return strings.Contains(c.s, x.s), true
	case 'l', 'd':
		if c.items == nil || x.kind == 'l' || x.kind == 'd' {
			return false, false
		}
		for _, it := range c.items {
			eq, known := equal(it, x)
			if !known {
				return false, false
			}
			if eq {
				return true, true
			}
		}
		return false, true
	}
	return false, false
}

func (e *condEval) arith() (condNode, bool) {
	return e.binary([]string{"+", "-"}, e.term)
}

func (e *condEval) term() (condNode, bool) {
	return e.binary([]string{"*", "//", "%"}, e.unary)
}

// binary parses a left-associative chain of the operators ops.
func (e *condEval) binary(ops []string, operand func() (condNode, bool)) (condNode, bool) {
	left, ok := operand()
	if !ok {
		return nil, false
	}
	for {
		op := e.peek(ops...)
		if op == "" {
			return left, true
		}
		e.at++
		right, ok := operand()
		if !ok {
			return nil, false
		}
		l := left
		left = func(env Env) (pyValue, bool) {
			a, ok := l(env)
			if !ok {
				return a, false
			}
			b, ok := right(env)
			if !ok {
				return b, false
			}
			return arithmetic(op, a, b)
		}
	}
}

// arithmetic is a OP b on ints (and + on strs), where it cannot overflow
// int64 or raise.
func arithmetic(op string, a, b pyValue) (pyValue, bool) {
	if op == "+" && a.kind == 's' && b.kind == 's' {
		return pyValue{kind: 's', s: a.s + b.s}, true
	}
	if !a.number() || !b.number() || a.i <= math.MinInt32 || a.i >= math.MaxInt32 || b.i <= math.MinInt32 || b.i >= math.MaxInt32 {
		return pyValue{}, false
	}
	x, y := a.i, b.i
	switch op {
	case "+":
		return pyValue{kind: 'i', i: x + y}, true
	case "-":
		return pyValue{kind: 'i', i: x - y}, true
	case "*":
		return pyValue{kind: 'i', i: x * y}, true
	}
	if y == 0 {
		return pyValue{}, false // ZeroDivisionError
	}
	q, r := x/y, x%y
	if r != 0 && (r < 0) != (y < 0) { // Python floors
		q, r = q-1, r+y
	}
	if op == "//" {
		return pyValue{kind: 'i', i: q}, true
	}
	return pyValue{kind: 'i', i: r}, true
}

func (e *condEval) unary() (condNode, bool) {
	op := e.peek("-", "+")
	if op == "" {
		return e.atom()
	}
	e.at++
	n, ok := e.unary()
	if !ok {
		return nil, false
	}
	return func(env Env) (pyValue, bool) {
		v, ok := n(env)
		if !ok || !v.number() {
			return v, false
		}
		if op == "-" {
			return arithmetic("-", pyValue{kind: 'i'}, v)
		}
		return pyValue{kind: 'i', i: v.i}, true
	}, true
}

// atom parses a literal, a local's name, (expr), a list or tuple display
// or a call of a builtin builtinFolds has, then subscripts by an int and
// the str methods strMethod reads; nothing else may follow it (another
// attribute, call or subscript may run code CondHolds does not read).
func (e *condEval) atom() (condNode, bool) {
	if e.at >= len(e.toks) {
		return nil, false
	}
	t := e.toks[e.at]
	e.at++
	var n condNode
	switch {
	case t.kind == tOp && (t.text == "(" || t.text == "["):
		items, commas, ok := e.items(map[string]string{"(": ")", "[": "]"}[t.text])
		switch {
		case !ok:
			return nil, false
		case t.text == "(" && len(items) == 1 && commas == 0:
			n = items[0] // (expr)
		default:
			tuple := t.text == "("
			n = func(env Env) (pyValue, bool) {
				vs, ok := evalAll(items, env)
				return listValue(vs, tuple), ok
			}
		}
	case t.kind == tName && builtinFolds[t.text] != nil && e.peek("(") != "" && (e.ix == nil || !e.ix.bindsAnywhere(t.text)):
		name, fold := t.text, builtinFolds[t.text]
		e.at++
		args, commas, ok := e.items(")")
		if !ok || len(args) == 0 || commas >= len(args) || len(args) > 1 && name != "min" && name != "max" {
			return nil, false // no argument, a trailing comma, or more than one where one is read
		}
		n = func(env Env) (pyValue, bool) {
			if _, shadowed := env(name); shadowed {
				return pyValue{}, false
			}
			vs, ok := evalAll(args, env)
			switch {
			case !ok:
				return pyValue{}, false
			case len(vs) > 1: // min(a, b, ...): of the arguments themselves
				return fold(listValue(vs, false))
			}
			return fold(vs[0])
		}
	case t.kind == tName && !keywords[t.text]:
		name := t.text
		n = func(env Env) (pyValue, bool) {
			r, known := env(name)
			if !known {
				return pyValue{}, false
			}
			return parseValue(r)
		}
	case t.kind == tNumber || t.kind == tString || t.kind == tName && (t.text == "True" || t.text == "False" || t.text == "None"):
		r, ok := literalRepr(t, false)
		if !ok {
			return nil, false
		}
		v, ok := parseValue(r)
		if !ok {
			return nil, false
		}
		n = func(Env) (pyValue, bool) { return v, true }
	default:
		return nil, false
	}
	for e.peek(".", "[") != "" {
		recv := n
		if e.peek("[") != "" {
			e.at++
			index, ok := e.cond()
			if !ok || e.peek("]") == "" {
				return nil, false
			}
			e.at++
			n = func(env Env) (pyValue, bool) {
				v, ok := recv(env)
				i, known := index(env)
				if !ok || !known {
					return v, false
				}
				return subscript(v, i)
			}
			continue
		}
		m, ok := e.strMethod()
		if !ok {
			return nil, false
		}
		n = func(env Env) (pyValue, bool) {
			v, ok := recv(env)
			if !ok || v.kind != 's' {
				return v, false
			}
			return m(v.s, env)
		}
	}
	if e.peek("(", "[", ".") != "" {
		return nil, false
	}
	return n, true
}

// items parses the comma-separated expressions up to the closing bracket,
// which it passes, and counts the commas (as many as the items: a trailing
// one); false for a comprehension, which runs code of its own.
func (e *condEval) items(closing string) (items []condNode, commas int, ok bool) {
	for e.peek(closing) == "" {
		item, ok := e.cond()
		if !ok || e.peek("for") != "" {
			return nil, 0, false
		}
		items = append(items, item)
		if e.peek(",") == "" {
			break
		}
		e.at++
		commas++
	}
	if e.peek(closing) == "" {
		return nil, 0, false
	}
	e.at++
	return items, commas, true
}

// evalAll evaluates each of nodes; false where one is not known.
func evalAll(nodes []condNode, env Env) ([]pyValue, bool) {
	vs := make([]pyValue, len(nodes))
	for k, n := range nodes {
		v, ok := n(env)
		if !ok {
			return nil, false
		}
		vs[k] = v
	}
	return vs, true
}

// listValue is the list (or tuple) of items, all known.
func listValue(items []pyValue, tuple bool) pyValue {
	return pyValue{kind: 'l', n: len(items), items: items, tuple: tuple}
}

// builtinFolds are the builtins CondHolds reads, each of one argument
// whose value it knows: len of a str, list, tuple or dict; sum, min and
// max of a list or tuple of ints (min and max keep the first of equal
// items, as Python does; also of two or more int arguments); abs of an
// int; ord of a one-character str, chr of a printable ASCII code (no
// backslash); str of an int, bool, None or str; int of an int, bool or a
// str of decimal digits (a sign, spaces around); sorted, list and tuple of
// a list, tuple or str (sorted: of ints or of strs).
var builtinFolds = map[string]func(v pyValue) (pyValue, bool){
	"len": func(v pyValue) (pyValue, bool) {
		switch v.kind {
		case 's':
			return pyValue{kind: 'i', i: int64(len(v.s))}, true
		case 'l', 'd':
			return pyValue{kind: 'i', i: int64(v.n)}, true
		}
		return pyValue{}, false
	},
	"sum": func(v pyValue) (pyValue, bool) {
		total := pyValue{kind: 'i'}
		for _, item := range v.items {
			var ok bool
			if total, ok = arithmetic("+", total, item); !ok || !item.number() {
				return pyValue{}, false
			}
		}
		return total, v.kind == 'l' && len(v.items) == v.n
	},
	"min": func(v pyValue) (pyValue, bool) { return extreme(v, -1) },
	"max": func(v pyValue) (pyValue, bool) { return extreme(v, 1) },
	"sorted": func(v pyValue) (pyValue, bool) {
		items, ok := itemsOf(v)
		if !ok || len(items) == 0 {
			return listValue(items, false), ok
		}
		kind := items[0].kind
		for _, it := range items {
			if !(it.number() && items[0].number()) && !(it.kind == 's' && kind == 's') {
				return pyValue{}, false // TypeError, or an order CondHolds does not know
			}
		}
		items = slices.Clone(items)
		slices.SortStableFunc(items, func(a, b pyValue) int {
			if a.kind == 's' {
				return strings.Compare(a.s, b.s)
			}
			return cmpInt(a.i, b.i)
		})
		return listValue(items, false), true
	},
	"list": func(v pyValue) (pyValue, bool) {
		items, ok := itemsOf(v)
		return listValue(items, false), ok
	},
	"tuple": func(v pyValue) (pyValue, bool) {
		items, ok := itemsOf(v)
		return listValue(items, true), ok
	},
	"ord": func(v pyValue) (pyValue, bool) {
		if v.kind != 's' || len(v.s) != 1 {
			return pyValue{}, false
		}
		return pyValue{kind: 'i', i: int64(v.s[0])}, true
	},
	"chr": func(v pyValue) (pyValue, bool) {
		if !v.number() || v.i < ' ' || v.i > '~' || v.i == '\\' {
			return pyValue{}, false // a str CondHolds does not hold (a backslash, a control character, past ASCII)
		}
		return pyValue{kind: 's', s: string(rune(v.i))}, true
	},
	"str": func(v pyValue) (pyValue, bool) {
		switch v.kind {
		case 's':
			return v, true
		case 'i', 'b', 'n':
			r, ok := v.repr()
			return pyValue{kind: 's', s: r}, ok
		}
		return pyValue{}, false
	},
	"int": func(v pyValue) (pyValue, bool) {
		switch v.kind {
		case 'i', 'b':
			return pyValue{kind: 'i', i: v.i}, true
		case 's':
			i, err := strconv.ParseInt(strings.Trim(v.s, " "), 10, 64)
			return pyValue{kind: 'i', i: i}, err == nil && i > math.MinInt32 && i < math.MaxInt32
		}
		return pyValue{}, false
	},
	"abs": func(v pyValue) (pyValue, bool) {
		if !v.number() || v.i == math.MinInt64 {
			return pyValue{}, false
		}
		return pyValue{kind: 'i', i: max(v.i, -v.i)}, true
	},
}

// itemsOf is what iterating v gives where CondHolds knows it: a list's or
// tuple's items, a str's characters.
func itemsOf(v pyValue) ([]pyValue, bool) {
	switch {
	case v.kind == 'l' && len(v.items) == v.n:
		return v.items, true
	case v.kind == 's':
		return strList(strings.Split(v.s, "")).items, true
	}
	return nil, false
}

// extreme is min (sign -1) or max (sign 1) of a list or tuple of ints.
func extreme(v pyValue, sign int) (pyValue, bool) {
	if v.kind != 'l' || v.n == 0 || len(v.items) != v.n {
		return pyValue{}, false
	}
	best := v.items[0]
	for _, item := range v.items {
		if !item.number() {
			return pyValue{}, false
		}
		if cmpInt(item.i, best.i) == sign {
			best = item
		}
	}
	return best, true
}

// subscript is v[i] of a list, tuple or str whose items are known, by an
// int index (negative from the end); false out of range (IndexError).
func subscript(v pyValue, i pyValue) (pyValue, bool) {
	if !i.number() {
		return pyValue{}, false
	}
	items, ok := itemsOf(v)
	k := i.i
	if k < 0 {
		k += int64(len(items)) // from the end
	}
	if !ok || k < 0 || k >= int64(len(items)) {
		return pyValue{}, false
	}
	return items[k], true
}

// strMethods are the str methods CondHolds reads, on printable ASCII: no
// arguments, nothing run but the builtin.
var strMethods = map[string]func(s string) pyValue{
	"split":   func(s string) pyValue { return strList(strings.Fields(s)) },
	"upper":   func(s string) pyValue { return pyValue{kind: 's', s: strings.ToUpper(s)} },
	"lower":   func(s string) pyValue { return pyValue{kind: 's', s: strings.ToLower(s)} },
	"strip":   func(s string) pyValue { return pyValue{kind: 's', s: strings.TrimSpace(s)} },
	"lstrip":  func(s string) pyValue { return pyValue{kind: 's', s: strings.TrimLeft(s, " ")} },
	"rstrip":  func(s string) pyValue { return pyValue{kind: 's', s: strings.TrimRight(s, " ")} },
	"isdigit": func(s string) pyValue { return pyBool(s != "" && strings.Trim(s, "0123456789") == "") },
	"isalpha": func(s string) pyValue { return pyBool(s != "" && strings.Trim(s, letters) == "") },
	"isalnum": func(s string) pyValue { return pyBool(s != "" && strings.Trim(s, letters+"0123456789") == "") },
	"isspace": func(s string) pyValue { return pyBool(s != "" && strings.Trim(s, " ") == "") },
	"isupper": func(s string) pyValue { return pyBool(strings.ToUpper(s) == s && strings.ToLower(s) != s) },
	"islower": func(s string) pyValue { return pyBool(strings.ToLower(s) == s && strings.ToUpper(s) != s) },
}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func pyBool(b bool) pyValue { return pyValue{kind: 'b', i: map[bool]int64{true: 1}[b]} }

// strMethod parses `.NAME()` of a method strMethods has, or `.NAME(ARG)`
// of one strArgMethods has.
func (e *condEval) strMethod() (func(s string, env Env) (pyValue, bool), bool) {
	if e.at+3 >= len(e.toks) || e.toks[e.at+1].kind != tName || e.toks[e.at+2].text != "(" {
		return nil, false
	}
	name := e.toks[e.at+1].text
	if m, known := strMethods[name]; known && e.toks[e.at+3].text == ")" {
		e.at += 4
		return func(s string, _ Env) (pyValue, bool) { return m(s), true }, true
	}
	m, known := strArgMethods[name]
	if !known {
		return nil, false
	}
	e.at += 3
	arg, ok := e.cond()
	if !ok || e.peek(")") == "" {
		return nil, false
	}
	e.at++
	return func(s string, env Env) (pyValue, bool) {
		v, ok := arg(env)
		if !ok {
			return v, false
		}
		return m(s, v)
	}, true
}

// strArgMethods are the str methods of one argument CondHolds reads, on
// printable ASCII: split by a str, join of a str's characters or a list
// or tuple of strs, count, find, startswith and endswith of a str.
var strArgMethods = map[string]func(s string, arg pyValue) (pyValue, bool){
	"split": func(s string, sep pyValue) (pyValue, bool) {
		if sep.kind != 's' || sep.s == "" {
			return pyValue{}, false // ValueError, or a separator CondHolds does not read
		}
		return strList(strings.Split(s, sep.s)), true
	},
	"join": func(s string, parts pyValue) (pyValue, bool) {
		switch {
		case parts.kind == 's':
			return pyValue{kind: 's', s: strings.Join(strings.Split(parts.s, ""), s)}, true
		case parts.kind != 'l' || len(parts.items) != parts.n:
			return pyValue{}, false
		}
		strs := make([]string, len(parts.items))
		for k, p := range parts.items {
			if p.kind != 's' {
				return pyValue{}, false // TypeError
			}
			strs[k] = p.s
		}
		return pyValue{kind: 's', s: strings.Join(strs, s)}, true
	},
	"count": func(s string, sub pyValue) (pyValue, bool) {
		return pyValue{kind: 'i', i: int64(strings.Count(s, sub.s))}, sub.kind == 's'
	},
	"find": func(s string, sub pyValue) (pyValue, bool) {
		return pyValue{kind: 'i', i: int64(strings.Index(s, sub.s))}, sub.kind == 's'
	},
	"startswith": func(s string, p pyValue) (pyValue, bool) { return pyBool(strings.HasPrefix(s, p.s)), p.kind == 's' },
	"endswith":   func(s string, p pyValue) (pyValue, bool) { return pyBool(strings.HasSuffix(s, p.s)), p.kind == 's' },
}

// strList is the list of strs parts.
func strList(parts []string) pyValue {
	items := make([]pyValue, len(parts))
	for k, p := range parts {
		items[k] = pyValue{kind: 's', s: p}
	}
	return listValue(items, false)
}

// oneLine reports whether the statement starting on line h is on that
// line alone.
func (ix *Index) oneLine(h int) bool {
	l := ix.stmts[ix.stmtAt[h-1]]
	return l.first == h && l.last == h
}
