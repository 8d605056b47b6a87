package synth

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// typ is the static type of a generated value. Lists, dicts and sets are
// homogeneous so that sort, sum, join and comparisons always type-check.
type typ uint8

const (
	tInt     typ = iota
	tStr         // also single characters
	tBool        //
	tListInt     // list[int]
	tListStr     // list[str]
	tDict        // dict[str, int]
	tSet         // set[int]; sets of str are never bound to names: their order depends on PYTHONHASHSEED
	numTypes
)

// sized types have a len() and grow: reading them inside loops is restricted
// (see gen.readable) so that no program blows up exponentially.
func (t typ) sized() bool   { return t == tStr || t.mutable() }
func (t typ) mutable() bool { return t == tListInt || t == tListStr || t == tDict || t == tSet }

// elem is the type an iteration over t yields.
func (t typ) elem() typ {
	switch t {
	case tListInt, tSet:
		return tInt
	default: // str, list[str], dict keys
		return tStr
	}
}

// variable is a name in scope.
type variable struct {
	name   string
	t      typ
	frozen int  // > 0: neither mutated nor rebound (iterated now, helper/recursion params)
	level  int  // gen.loopDepth when it was bound
	char   bool // holds one character (a str element)
	param  bool
	read   bool // a written line reads it
	picked bool // an expression drawn so far (maybe discarded) reads it
}

// ex is a Python expression and its precedence (higher binds tighter).
type ex struct {
	s string
	p int
}

const (
	pCond  = 0 // a if c else b
	pOr    = 1
	pAnd   = 2
	pNot   = 3
	pCmp   = 4
	pBor   = 5
	pBand  = 6
	pAdd   = 8
	pMul   = 9
	pUnary = 10
	pPow   = 11
	pAtom  = 12
)

// wrap parenthesizes e when its precedence is below min.
func wrap(e ex, min int) string {
	if e.p < min {
		return "(" + e.s + ")"
	}
	return e.s
}

func atom(s string) ex { return ex{s, pAtom} }

// gen holds the state of one program's generation.
type gen struct {
	r    *rand.Rand
	kn   Knobs
	out  bytes.Buffer
	line int // lines written so far

	vars      []*variable
	indent    int
	nest      int // block nesting
	loopDepth int // loops (and recursive bodies) around the current statement
	inLoop    bool
	inWhile   bool // continue is not allowed: it would skip the counter update
	ret       typ  // return type of the function being written
	fname     string
	budget    int // statements left for the current function

	helper *fn // callable helper, if any
	self   *fn // the function being written when it is recursive (not called freely)

	focus       *variable   // accumulator the next loop body updates first
	grow        bool        // mutate only adds (a fresh accumulator's first update)
	lastInBlock bool        // the statement being drawn ends a nested block
	useFirst    []*variable // loop names the next block's first statement should read

	strLits map[string]bool
	intLits map[int]bool
	feat    Features
}

// fn is a generated function's signature.
type fn struct {
	name      string
	params    []typ
	ret       typ
	raises    bool // raises ValueError for some inputs
	recursive bool
	recParam  int // index of the parameter that shrinks on each recursive call
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// pick returns an index drawn with the given weights.
func (g *gen) pick(w ...float64) int {
	total := 0.0
	for _, x := range w {
		total += x
	}
	x := g.r.Float64() * total
	for i, v := range w {
		if x < v {
			return i
		}
		x -= v
	}
	return len(w) - 1
}

func oneOf[T any](g *gen, xs ...T) T { return xs[g.r.IntN(len(xs))] }

// emit writes one line at the current indentation.
func (g *gen) emit(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	g.out.WriteString(strings.Repeat("    ", g.indent))
	g.out.WriteString(line)
	g.out.WriteByte('\n')
	g.line++
	g.markReads(line)
}

// markReads records which names a written line reads: an assignment's
// target and a mutated receiver (xs.append(...)) are writes, not reads.
func (g *gen) markReads(line string) {
	if strings.HasPrefix(line, "def ") {
		return
	}
	if m := writeTarget.FindStringIndex(line); m != nil {
		line = line[m[1]:]
	}
	for _, v := range g.vars {
		if !v.read && mentions(line, func(n string) bool { return n == v.name }) {
			v.read = true
		}
	}
}

// writeTarget matches the written part at the start of a statement.
var writeTarget = regexp.MustCompile(`^(?:[A-Za-z_][A-Za-z0-9_]* (?:=|\+=|-=|\*=|//=|%=) |[A-Za-z_][A-Za-z0-9_]*\.(?:append|insert|extend|sort|reverse|add|update|setdefault|discard|remove|clear)\(|[A-Za-z_][A-Za-z0-9_]*\[[^\]]*\] (?:=|\+=) )`)

// scope returns a function that drops the names bound since the call: a name
// bound in only one branch must not be read after the branch.
func (g *gen) scope() func() {
	mark := len(g.vars)
	return func() { g.vars = g.vars[:mark] }
}

// freeze marks vs read-only and returns the undo.
func freeze(vs ...*variable) func() {
	for _, v := range vs {
		v.frozen++
	}
	return func() {
		for _, v := range vs {
			v.frozen--
		}
	}
}

// readable reports whether v may be read as a value here. Inside a loop a
// sized value may only be read if it is frozen for the loop or was bound in
// the innermost loop's body (rebuilt every iteration): so no value that grows
// across iterations feeds another, and sizes stay polynomial in the inputs.
func (g *gen) readable(v *variable) bool {
	if g.loopDepth == 0 || !v.t.sized() {
		return true
	}
	return v.frozen > 0 || v.level == g.loopDepth
}

// varsOf lists readable variables of type t.
func (g *gen) varsOf(t typ) []*variable {
	var out []*variable
	for _, v := range g.vars {
		if v.t == t && g.readable(v) {
			out = append(out, v)
		}
	}
	return out
}

// writable lists variables of type t that may be mutated or rebound.
func (g *gen) writable(t typ) []*variable {
	var out []*variable
	for _, v := range g.vars {
		if v.t == t && v.frozen == 0 {
			out = append(out, v)
		}
	}
	return out
}

func (g *gen) anyVar(t typ) *variable {
	vs := g.varsOf(t)
	if len(vs) == 0 {
		return nil
	}
	v := vs[g.r.IntN(len(vs))]
	switch {
	case g.chance(0.8): // prefer a name not read yet: computed values flow somewhere
		var unread []*variable
		for _, u := range vs {
			if !u.read && !u.picked {
				unread = append(unread, u)
			}
		}
		if len(unread) > 0 {
			v = unread[g.r.IntN(len(unread))]
		}
	case len(vs) > 1 && g.chance(0.5): // or the most recent one
		v = vs[len(vs)-1]
	}
	v.picked = true
	return v
}

func (g *gen) inScope(name string) bool {
	for _, v := range g.vars {
		if v.name == name {
			return true
		}
	}
	return false
}

// Name pools, CruxEval-like. None shadows a builtin or a function name.
var (
	paramNames = [numTypes][]string{
		tInt:     {"n", "num", "k", "x", "count", "index", "size", "start", "m", "amount", "width", "pos", "limit", "step", "value"},
		tStr:     {"text", "s", "string", "word", "st", "sentence", "txt", "line", "name", "prefix", "suffix", "sub", "char", "letter", "sep", "pattern", "code"},
		tListInt: {"nums", "arr", "numbers", "array", "lst", "values", "items", "data", "xs", "scores", "digits"},
		tListStr: {"words", "strings", "names", "strs", "parts", "tokens", "letters", "items", "lines", "keys"},
		tDict:    {"d", "dic", "counts", "mapping", "table", "freq", "dct", "stock", "ages", "scores"},
		tSet:     {"seen", "nums_set", "ids", "pool", "group", "marks"},
	}
	localNames = [numTypes][]string{
		tInt:     {"count", "total", "res", "idx", "n", "acc", "cnt", "i", "j", "pos", "length", "best", "diff", "val", "m", "num", "score", "steps"},
		tStr:     {"result", "res", "out", "new_text", "temp", "s2", "ans", "buf", "word", "head", "tail", "key", "prefix", "piece", "chunk", "t"},
		tBool:    {"flag", "found", "ok", "done", "valid", "is_even", "has"},
		tListInt: {"result", "out", "output", "res", "temp", "stack", "evens", "vals", "acc", "positions", "lengths", "counts", "arr2"},
		tListStr: {"result", "parts", "words", "out", "chars", "tokens", "pieces", "ls", "names", "letters"},
		tDict:    {"d", "counts", "freq", "result", "seen", "table", "mapping", "res", "dic", "memo"},
		tSet:     {"seen", "uniq", "visited", "found", "common", "rest", "bag"},
	}
	elemNames = [numTypes][]string{
		tInt: {"x", "n", "num", "v", "item", "e", "val"},
		tStr: {"c", "ch", "char", "w", "letter", "word", "part", "k", "key", "token"},
	}
	compNames   = []string{"x", "c", "w", "y", "ch", "e", "t"}
	helperNames = []string{"helper", "g", "transform", "score", "combine", "check", "clean", "pick", "convert", "process", "count_of", "shift"}
	recNames    = []string{"rec", "walk", "go", "build", "fold", "reduce_", "helper", "solve"}
)

// freshName returns an unused name from pool, or pool[0] with a digit suffix.
func (g *gen) freshName(pool []string) string {
	start := g.r.IntN(len(pool))
	for j := range pool {
		n := pool[(start+j)%len(pool)]
		if !g.inScope(n) && !g.reserved(n) {
			return n
		}
	}
	for d := 1; ; d++ {
		n := fmt.Sprintf("%s%d", pool[start], d)
		if !g.inScope(n) && !g.reserved(n) {
			return n
		}
	}
}

func (g *gen) reserved(n string) bool {
	return n == "f" || (g.helper != nil && n == g.helper.name) || (g.self != nil && n == g.self.name)
}

// bind adds a new variable bound at the current loop depth.
func (g *gen) bind(name string, t typ) *variable {
	v := &variable{name: name, t: t, level: g.loopDepth}
	g.vars = append(g.vars, v)
	return v
}

// Literal pools.
var (
	litChars = []string{"a", "b", "c", "e", "x", "z", "o", "i", "s", " ", "-", "_", ".", ",", "!", "1", "0", "A", "B"}
	litWords = []string{"ab", "abc", "hello", "foo", "bar", "xy", "aa", "cat", "dog", "zz", "the", "ok", "ba", "no", "yes", "x", "", "a b", "12", "--"}
	litSeps  = []string{" ", ",", "-", "", "_", ":", ", "}
)

func (g *gen) intLit() ex {
	n := oneOf(g, 0, 1, 1, 2, 2, 3, 3, 4, 5, 7, 10, -1, 6, 8, 9, 0)
	g.intLits[n] = true
	if n < 0 {
		return ex{fmt.Sprint(n), pUnary}
	}
	return atom(fmt.Sprint(n))
}

// smallPos returns a positive literal for multipliers, moduli and widths.
func (g *gen) smallPos(lo, hi int) string {
	n := lo + g.r.IntN(hi-lo+1)
	g.intLits[n] = true
	return fmt.Sprint(n)
}

func (g *gen) charLit() ex {
	c := oneOf(g, litChars...)
	g.strLits[c] = true
	return atom(pyStr(c))
}

func (g *gen) wordLit() ex {
	w := oneOf(g, litWords...)
	if w != "" {
		g.strLits[w] = true
	}
	return atom(pyStr(w))
}

func (g *gen) strLit() ex {
	if g.chance(0.55) {
		return g.charLit()
	}
	return g.wordLit()
}

func (g *gen) sepLit() ex {
	s := oneOf(g, litSeps...)
	return atom(pyStr(s))
}

// pyStr is Python's repr() of an ASCII string.
func pyStr(s string) string {
	quote := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == quote:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// has reports whether a readable name of type t exists.
func (g *gen) has(t typ) bool { return len(g.varsOf(t)) > 0 }

// want gates a production on its receiver type: operating on a literal
// ('abc'.upper()) is rare in real code, so it mostly needs a name of that type.
func (g *gen) want(t typ) bool { return g.has(t) || g.chance(0.05) }

// mentionsVar reports whether the expression reads a name in scope (string
// literals skipped), so statements are not constant folding exercises.
func (g *gen) mentionsVar(s string) bool { return mentions(s, g.inScope) }

// mentions reports whether s reads an identifier for which is(name) holds.
func mentions(s string, is func(string) bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if (i == 0 || s[i-1] != '.') && is(s[i:j]) {
				return true
			}
			i = j
		default:
			i++
		}
	}
	return false
}

// value is expr (cond for bool) retried until it reads some name in scope.
func (g *gen) value(t typ, d int, fresh bool) ex {
	var e ex
	for range 8 {
		if t == tBool {
			e = g.cond(d)
		} else {
			e = g.expr(t, d, fresh)
		}
		if g.mentionsVar(e.s) {
			return e
		}
	}
	return e
}

// condOn is a condition that reads x (a comprehension's or loop's name).
func (g *gen) condOn(x *variable, d int) ex {
	var e ex
	for range 8 {
		e = g.cond(d)
		if mentions(e.s, func(n string) bool { return n == x.name }) {
			return e
		}
	}
	return e
}

// splitSep is a separator for str.split: never empty (that always raises).
func (g *gen) splitSep() ex {
	s := oneOf(g, litSeps...)
	if s == "" {
		s = " "
	}
	return atom(pyStr(s))
}

// snapshot is the generator state a statement changes, to draw it again.
type snapshot struct {
	outLen, line, vars, budget, excepts int
	focus                               *variable
	read                                []bool
	feat                                Features
}

func (g *gen) save() snapshot {
	sn := snapshot{outLen: g.out.Len(), line: g.line, vars: len(g.vars), budget: g.budget, excepts: len(g.feat.ExceptLines), focus: g.focus, feat: g.feat}
	for _, v := range g.vars {
		sn.read = append(sn.read, v.read)
	}
	return sn
}

func (g *gen) restore(sn snapshot) {
	g.out.Truncate(sn.outLen)
	g.line, g.budget, g.focus = sn.line, sn.budget, sn.focus
	g.vars = g.vars[:sn.vars]
	g.feat = sn.feat // flags set by the discarded draw do not describe the program
	g.feat.ExceptLines = g.feat.ExceptLines[:sn.excepts]
	for i, r := range sn.read {
		g.vars[i].read = r
	}
}
