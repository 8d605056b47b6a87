package pysource

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// resolve finds every function-like scope's free variables, as CPython's
// symtable does: a name a scope (or a scope nested in it) reads without
// binding it, that an enclosing function binds, is free in every function
// between (each passes it down, and 3.11's f_locals shows it); `nonlocal`
// names are free; `__class__` is free in a function inside a class that
// reads `super` or `__class__`. A class body's names are not visible to
// the functions in it. exec, eval-free locals() and vars() leave a scope
// open. It returns the names s and the code in it need from the scopes
// around it; for the module, the names the program binds nowhere.
func resolve(s *Scope) set {
	for _, w := range []string{"exec", "locals", "vars"} {
		if s.used[w] && !s.bound[w] {
			s.open = true
		}
	}
	needs := set{}
	for _, c := range s.Children {
		for n := range resolve(c) {
			needs.add(n)
		}
	}
	if s.Kind == Class {
		// the class gives its functions __class__ (their super()'s cell), so
		// no function around it has one for them
		delete(needs, "__class__")
		// the class's own names are not its functions'; its reads of them
		// are its own
		for n := range s.used {
			if !s.bound[n] || s.globals[n] {
				needs.add(n)
			}
		}
		return needs
	}
	for n := range s.used {
		needs.add(n)
	}
	for n := range s.nonlocals {
		needs.add(n)
	}
	s.free = set{}
	if s.IsFunctionLike() && (s.used["super"] || s.used["__class__"]) && inClass(s) {
		s.free.add("__class__") // the compiler's rule: a use of the name super, even a local one
	}
	if s.IsFunctionLike() {
		params := set{}
		params.add(s.Params...)
		for n := range needs {
			if s.bound[n] && !s.nonlocals[n] || params[n] || s.globals[n] {
				delete(needs, n)
				continue
			}
			if n == "__class__" && inClass(s) {
				s.free.add(n) // passed down to a nested function that uses super()
				continue
			}
			if s.nonlocals[n] || enclosingBinds(s, n) {
				s.free.add(n)
			}
		}
		if s.free["__class__"] {
			needs.add("__class__")
		}
		return needs
	}
	// the module: names declared global anywhere are its names
	var globals func(*Scope)
	globals = func(c *Scope) {
		for n := range c.globals {
			if c != s {
				s.bound.add(n)
			}
		}
		for _, k := range c.Children {
			globals(k)
		}
	}
	globals(s)
	for n := range s.used {
		needs.add(n)
	}
	for n := range needs {
		if s.bound[n] {
			delete(needs, n)
		}
	}
	return needs
}

// enclosingBinds reports whether a function scope enclosing s binds n.
func enclosingBinds(s *Scope, n string) bool {
	for p := s.Parent; p != nil && p.Kind != Module; p = p.Parent {
		if p.Kind == Class {
			continue
		}
		if p.globals[n] {
			return false
		}
		if p.bound[n] && !p.nonlocals[n] || containsName(p.Params, n) {
			return true
		}
		if p.nonlocals[n] {
			return true
		}
	}
	return false
}

func inClass(s *Scope) bool {
	for p := s.Parent; p != nil; p = p.Parent {
		if p.Kind == Class {
			return true
		}
	}
	return false
}

func containsName(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

// FixedFunctions lists the module's functions whose name keeps the function
// for the whole run once its def has run: a top-level, undecorated def
// whose name the text uses nowhere else but to call it, read one of its
// attributes or close a bracket after it (`f(`, `f.`, `f)`), so no
// statement rebinds or deletes it. A module frame that holds such a name
// holds that function. Nil for a program that may bind names its text does
// not show.
func (ix *Index) FixedFunctions() []string {
	if ix.Module.open {
		return nil
	}
	defs := map[string]int{} // name -> its def's logical line
	for k, l := range ix.stmts {
		if l.indent == 0 && ix.owner[k] == ix.Module {
			if head := keywordAt(l.toks); head >= 0 && l.toks[head].text == "def" && (k == 0 || ix.stmts[k-1].toks[0].text != "@") {
				if _, twice := defs[l.toks[head+1].text]; twice {
					defs[l.toks[head+1].text] = -1
				} else {
					defs[l.toks[head+1].text] = k
				}
			}
		}
	}
	for k, l := range ix.stmts {
		for i, t := range l.toks {
			at, ok := defs[t.text]
			if !ok || at < 0 || t.kind != tName {
				continue
			}
			before, after := "", ""
			if i > 0 && l.toks[i-1].kind != tString {
				before = l.toks[i-1].text
			}
			if i+1 < len(l.toks) && l.toks[i+1].kind == tOp {
				after = l.toks[i+1].text
			}
			switch {
			case before == "def" || before == "class":
				if k != at && ix.owner[k] == ix.Module { // defined again in the module
					defs[t.text] = -1
				} // else its def, or the name of a function's or class's own
			case before == ".": // another object's attribute
			case (after == "(" || after == "." || after == ")") && l.toks[0].text != "del":
			default:
				defs[t.text] = -1
			}
		}
	}
	var out []string
	for name, k := range defs {
		if k >= 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// FixedClasses lists the module's classes whose name holds the class for
// the whole run once its class statement has run: an undecorated class
// statement of the module, the only statement of the module that binds the
// name (no scope declares it global; no del, except ... as or := names
// it), whose bases are none, builtin classes the program does not shadow
// (object, int, str, ..., the exceptions: their metaclass is type) or other
// such classes of the program, with no keyword (a metaclass). A module
// frame that holds such a name holds that class, which the tracer shows as
// <class '__main__.NAME'>. Nil for a program that may bind names its text
// does not show.
func (ix *Index) FixedClasses() []string {
	fixed, _ := ix.fixedClasses()
	if fixed == nil {
		return nil
	}
	return fixed.sorted()
}

// fixedClasses is FixedClasses as a set, with each one's bases.
func (ix *Index) fixedClasses() (set, map[string][]string) {
	if ix.ModuleOpen() {
		return nil, nil
	}
	bases := map[string][]string{} // a candidate class -> its bases
	for j, l := range ix.stmts {
		kw := keywordAt(l.toks)
		if ix.owner[j] != ix.Module || kw != 0 || l.toks[0].text != "class" || kw+1 >= len(l.toks) ||
			j > 0 && ix.stmts[j-1].toks[0].text == "@" {
			continue
		}
		name := l.toks[1].text
		if ix.moduleBinds[name] != 1 || ix.rebindable[name] {
			continue
		}
		bs, ok := []string{}, true
		if len(l.toks) > 3 && l.toks[2].text == "(" && l.toks[3].text != ")" {
			for _, part := range splitTop(l.toks[3:matching(l.toks, 2)], ",") {
				if len(part) != 1 || part[0].kind != tName {
					ok = false // a keyword (metaclass=...), an attribute, a call
					break
				}
				bs = append(bs, part[0].text)
			}
		}
		if ok {
			bases[name] = bs
		}
	}
	fixed := set{}
	for grown := true; grown; { // a base of the program must be fixed first
		grown = false
		for name, bs := range bases {
			if !fixed[name] && !slices.ContainsFunc(bs, func(b string) bool { return !fixed[b] && !(typeBuiltins[b] && ix.unbound[b]) }) {
				fixed.add(name)
				grown = true
			}
		}
	}
	return fixed, bases
}

// stdlibBases are the standard-library classes ("module.Name") a program
// class may derive from and still show as <class '__main__.C'> ("class") or,
// under enum's metaclass, as <enum 'C'> ("enum"). Flag and IntFlag are
// left out: Python 3.11 writes <flag 'C'>, 3.10 <enum 'C'>.
var stdlibBases = map[string]string{"enum.Enum": "enum", "enum.IntEnum": "enum", "enum.StrEnum": "enum",
	"typing.NamedTuple": "class", "typing.Protocol": "class", "typing.TypedDict": "class", "abc.ABC": "class"}

// sameClassDecorators return the class they decorate (or, dataclass with
// slots=True, one of the same name).
var sameClassDecorators = map[string]bool{"dataclasses.dataclass": true, "functools.total_ordering": true, "enum.unique": true}

// classReprs maps each module class whose value a module frame shows
// exactly to that text: the fixed classes (fixedClasses) as
// <class '__main__.C'>, and, bound the same way, classes the text
// decorates only with sameClassDecorators or derives from stdlibBases (an
// enum's subclass, and one of an enum, as <enum 'C'>). Why: the model wrote
// <class '__main__.Semaphore'> for an Enum and cut DataclassRGB's name.
func (ix *Index) classReprs(fixed set) map[string]string {
	out := map[string]string{}
	for c := range fixed {
		out[c] = "<class '__main__." + c + "'>"
	}
	if fixed == nil || ix.namesAnywhere("__qualname__", "__module__", "__class_getitem__") {
		return out
	}
	mods, from := ix.ImportedModules(), ix.FromImported()
	stdlib := func(toks []token) string { // "module.Name" a base or decorator names, "" for other text
		switch {
		case len(toks) == 1 && toks[0].kind == tName:
			return from[toks[0].text]
		case len(toks) == 3 && toks[0].kind == tName && toks[1].text == "." && toks[2].kind == tName && mods[toks[0].text] != "":
			return mods[toks[0].text] + "." + toks[2].text
		}
		return ""
	}
	kinds := map[string]string{} // a class whose bases are known -> "class" or "enum"
	pending := map[string][][]token{}
	for j, l := range ix.stmts {
		if ix.owner[j] != ix.Module || keywordAt(l.toks) != 0 || l.toks[0].text != "class" || fixed[l.toks[1].text] {
			continue
		}
		name := l.toks[1].text
		decorated := true
		for k := j - 1; k >= 0 && ix.stmts[k].toks[0].text == "@" && ix.owner[k] == ix.Module; k-- {
			d := ix.stmts[k].toks[1:]
			if len(d) > 1 && d[len(d)-1].text == ")" {
				if open := slices.IndexFunc(d, func(t token) bool { return t.text == "(" }); open > 0 && matching(d, open) == len(d)-1 {
					d = d[:open]
				}
			}
			decorated = decorated && sameClassDecorators[stdlib(d)]
		}
		if !decorated || ix.moduleBinds[name] != 1 || ix.rebindable[name] {
			continue
		}
		var parts [][]token
		if len(l.toks) > 3 && l.toks[2].text == "(" && l.toks[3].text != ")" {
			parts = splitTop(l.toks[3:matching(l.toks, 2)], ",")
		}
		pending[name] = parts
	}
	for grown := true; grown; { // a base of the program must be known first
		grown = false
	next:
		for name, parts := range pending {
			kind := "class"
			for _, p := range parts {
				b := ""
				if len(p) == 1 && p[0].kind == tName {
					b = p[0].text
				}
				switch k := stdlibBases[stdlib(p)]; {
				case k != "":
					if k == "enum" {
						kind = k
					}
				case fixed[b] || typeBuiltins[b] && ix.unbound[b]:
				case kinds[b] != "":
					if kinds[b] == "enum" {
						kind = "enum"
					}
				default:
					continue next
				}
			}
			kinds[name] = kind
			delete(pending, name)
			grown = true
		}
	}
	for c, kind := range kinds {
		if kind == "enum" {
			out[c] = "<enum '" + c + "'>"
		} else {
			out[c] = "<class '__main__." + c + "'>"
		}
	}
	return out
}

// EmptyClassStart reports whether the body of class sc starts with a
// namespace the tracer shows empty (it hides dunders): the statement names
// no base but object and no keyword, so no metaclass's __prepare__ fills
// it (Enum's holds _generate_next_value_).
func (ix *Index) EmptyClassStart(sc *Scope) bool {
	if sc.Kind != Class || sc.Line < 1 || sc.Line > len(ix.stmtAt) || ix.stmtAt[sc.Line-1] < 0 {
		return false
	}
	toks := ix.stmts[ix.stmtAt[sc.Line-1]].toks
	kw := keywordAt(toks)
	if kw < 0 || kw+2 >= len(toks) {
		return false
	}
	rest := toks[kw+2:]
	switch {
	case rest[0].text == ":":
		return true
	case rest[0].text == "(" && len(rest) > 2 && rest[1].text == ")":
		return true
	case rest[0].text == "(" && len(rest) > 3 && rest[1].text == "object" && rest[2].text == ")":
		return !ix.bindsAnywhere("object")
	}
	return false
}

// FixedInstances maps each module name whose every binding is `NAME =
// C(...)` with one class C to C, where C is a fixed class (FixedClasses)
// derived from object alone, through fixed classes: the tracer shows such
// an instance as <__main__.C object at 0x0>. Nil where the program's text
// names __repr__, __new__ or __class__ anywhere (a repr or a class that
// may differ), or may bind names its text does not show.
func (ix *Index) FixedInstances() map[string]string {
	return ix.fixedInstances(ix.fixedClasses())
}

// fixedInstances is FixedInstances of the fixed classes given, with their
// bases.
func (ix *Index) fixedInstances(fixed set, bases map[string][]string) map[string]string {
	if fixed == nil || ix.namesAnywhere("__repr__", "__new__", "__class__") {
		return nil
	}
	plain := plainClasses(fixed, bases)
	inst, calls := map[string]string{}, map[string]int{}
	for j, l := range ix.stmts {
		t := l.toks
		if ix.owner[j] != ix.Module || len(ix.binds[j]) != 1 {
			continue
		}
		name := ix.binds[j][0]
		// NAME = C( ... ) and nothing after the call's closing bracket
		ok := len(t) >= 5 && t[0].kind == tName && t[0].text == name && t[1].text == "=" && t[2].kind == tName &&
			plain[t[2].text] && t[3].text == "(" && matching(t, 3) == len(t)-1
		switch prev, seen := inst[name]; {
		case !ok || seen && prev != t[2].text || ix.rebindable[name]:
			inst[name] = ""
		default:
			inst[name] = t[2].text
			calls[name]++
		}
	}
	for name, c := range inst {
		if c == "" || calls[name] != ix.moduleBinds[name] {
			delete(inst, name)
		}
	}
	return inst
}

// plainClasses are the fixed classes (with their bases) derived from
// object alone, through fixed classes: their instances show object's
// repr.
func plainClasses(fixed set, bases map[string][]string) set {
	plain := set{}
	for grown := true; grown; {
		grown = false
		for name := range fixed {
			if !plain[name] && !slices.ContainsFunc(bases[name], func(b string) bool { return !plain[b] && b != "object" }) {
				plain.add(name)
				grown = true
			}
		}
	}
	return plain
}

// SelfRepr gives, for a method sc of a module-level class C, the name of
// its first parameter and the value every frame of sc shows for it,
// <__main__.C object at 0x0>: where C is a fixed class derived from
// object alone (as FixedInstances), no class statement names C among its
// bases, sc is undecorated (no staticmethod or classmethod) and not one
// Python makes a classmethod, its body never rebinds the parameter, and
// the text never reads the method off the class (C.m(other) passes any
// object). False where the program's text names __repr__, __new__ or
// __class__, or may bind names its text does not show.
//
// Why: a method's frame shows self on every line, and the model wrote
// another class's instance there (an exception class of the same file).
func (ix *Index) SelfRepr(sc *Scope) (param, repr string, ok bool) {
	ix.selfOnce.Do(ix.readSelves)
	v, ok := ix.selves[sc]
	return v[0], v[1], ok
}

// readSelves finds SelfRepr's methods, reading the program once.
func (ix *Index) readSelves() {
	fixed, bases := ix.fixedClasses()
	plain := plainClasses(fixed, bases)
	if len(plain) == 0 || ix.namesAnywhere("__repr__", "__new__", "__class__") {
		return
	}
	// the names class statements hold after their own (bases: a subclass's
	// instances run its base's methods too), the NAME.ATTR the text reads,
	// and the names each scope's statements bind or unbind
	inBases, reads, bound := set{}, set{}, map[*Scope]set{}
	for j, l := range ix.stmts {
		t := l.toks
		if kw := keywordAt(t); kw >= 0 && t[kw].text == "class" {
			for _, x := range t[kw+2:] {
				if x.kind == tName {
					inBases.add(x.text)
				}
			}
		}
		for i := 0; i+2 < len(t); i++ {
			if t[i].kind == tName && t[i+1].text == "." {
				reads.add(t[i].text + "." + t[i+2].text)
			}
		}
		if bound[ix.owner[j]] == nil {
			bound[ix.owner[j]] = set{}
		}
		bound[ix.owner[j]].add(ix.binds[j]...)
		bound[ix.owner[j]].add(ix.unbinds[j]...)
	}
	ix.selves = map[*Scope][2]string{}
	for _, sc := range ix.Scopes {
		if sc.Kind != Function || sc.Parent == nil || sc.Parent.Kind != Class || sc.Parent.Parent != ix.Module ||
			sc.First != sc.Line || len(sc.Params) == 0 || sc.Name == "__init_subclass__" || sc.Name == "__class_getitem__" {
			continue
		}
		c, param := sc.Parent.Name, sc.Params[0]
		if plain[c] && !inBases[c] && !reads[c+"."+sc.Name] && !bound[sc][param] {
			ix.selves[sc] = [2]string{param, "<__main__." + c + " object at 0x0>"}
		}
	}
}

// FixedReprs maps each module name whose value a module frame shows
// exactly, as the tracer writes it, to that text: a fixed function's
// <function NAME at 0x0>, a fixed class's <class '__main__.NAME'>, a fixed
// instance's <__main__.C object at 0x0> (FixedFunctions, FixedClasses,
// FixedInstances), a standard-library name imported from its module
// (FromImported, StdlibRepr: `from math import log10` shows <built-in
// function log10>), a constant one `NAME = LITERAL` binds (literalConstants).
func (ix *Index) FixedReprs() map[string]string {
	out := map[string]string{}
	for _, f := range ix.FixedFunctions() {
		out[f] = "<function " + f + " at 0x0>"
	}
	fixed, bases := ix.fixedClasses()
	for c, r := range ix.classReprs(fixed) {
		out[c] = r
	}
	for name, c := range ix.fixedInstances(fixed, bases) {
		out[name] = "<__main__." + c + " object at 0x0>"
	}
	for name, from := range ix.FromImported() {
		if r, ok := StdlibRepr(from); ok {
			out[name] = r
		}
	}
	for name, r := range ix.literalConstants() {
		out[name] = r
	}
	return out
}

// literalConstants maps each module name that one statement, `NAME =
// LITERAL`, binds and nothing may rebind to the literal's repr: a decimal
// int (a minus before it too), True, False, None, or a one-line string of
// printable ASCII with neither quote nor backslash in it ('...', as repr
// writes it).
func (ix *Index) literalConstants() map[string]string {
	if ix.ModuleOpen() {
		return nil
	}
	out := map[string]string{}
	for k, l := range ix.stmts {
		name, v, neg, ok := literalAssignment(l.toks)
		if ix.owner[k] != ix.Module || !ok {
			continue
		}
		if ix.moduleBinds[name] == 1 && !ix.rebindable[name] {
			if r, ok := literalRepr(v, neg); ok {
				out[name] = r
			}
		}
	}
	return out
}

// literalAssignment reads the tokens of a `NAME = VALUE` statement whose
// value is one token, or a minus and one token: the name, that token and
// whether the minus comes before it; ok false for any other statement.
func literalAssignment(toks []token) (name string, v token, neg, ok bool) {
	neg = len(toks) == 4 && toks[2].kind == tOp && toks[2].text == "-"
	if len(toks) != 3 && !neg || toks[0].kind != tName || toks[1].kind != tOp || toks[1].text != "=" {
		return "", token{}, false, false
	}
	return toks[0].text, toks[len(toks)-1], neg, true
}

// literalRepr is repr of the value of literal token v (negated: neg), for
// the literals literalConstants reads.
func literalRepr(v token, neg bool) (string, bool) {
	switch {
	case v.kind == tNumber:
		return numberRepr(v.text, neg)
	case neg:
		return "", false
	case v.kind == tName && (v.text == "True" || v.text == "False" || v.text == "None"):
		return v.text, true
	case v.kind == tString && len(v.text) >= 2 && (v.text[0] == '\'' || v.text[0] == '"') && v.text[len(v.text)-1] == v.text[0]:
		body := v.text[1 : len(v.text)-1]
		for _, c := range []byte(body) {
			if c < 0x20 || c > 0x7e || c == '\'' || c == '"' || c == '\\' {
				return "", false
			}
		}
		return "'" + body + "'", true
	}
	return "", false
}

// numberRepr is repr of the int or float a number token's text reads
// (negated: neg), as CPython 3.11 writes it: an int in decimal, a float by
// the shortest digits that read back to it, in exponent form where the
// decimal point would sit 4 or more places before them or more than 16
// after their start ('1e-05', '1e+16', '0.0001', '123.0'). False for a
// complex or a text Python would not read.
func numberRepr(text string, neg bool) (string, bool) {
	sign := ""
	if neg {
		sign = "-"
	}
	lower := strings.ToLower(text)
	if strings.HasPrefix(lower, "0x") || strings.HasPrefix(lower, "0o") || strings.HasPrefix(lower, "0b") {
		n, ok := new(big.Int).SetString(text, 0) // Go reads Python's prefixes and underscores alike
		if !ok {
			return "", false
		}
		if n.Sign() == 0 {
			sign = ""
		}
		return sign + n.String(), true
	}
	if strings.Contains(text, "__") || strings.HasSuffix(text, "_") || strings.Contains(lower, "j") {
		return "", false // a complex, or no Python number
	}
	digits := strings.ReplaceAll(text, "_", "")
	if !strings.ContainsAny(lower, ".e") {
		if strings.Trim(digits, "0123456789") != "" || len(digits) > 1 && digits[0] == '0' && strings.Trim(digits, "0") != "" {
			return "", false // 017 is no Python int
		}
		n, ok := new(big.Int).SetString(digits, 10)
		if !ok {
			return "", false
		}
		if n.Sign() == 0 {
			sign = ""
		}
		return sign + n.String(), true
	}
	if strings.Trim(strings.ToLower(digits), "0123456789.e+-") != "" {
		return "", false
	}
	f, err := strconv.ParseFloat(digits, 64)
	if err != nil && !math.IsInf(f, 0) {
		return "", false
	}
	if math.IsInf(f, 0) {
		return sign + "inf", true
	}
	// the shortest digits that read back (as Python's repr), and where the
	// decimal point sits among them
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	ds := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	point := x + 1
	if f == 0 {
		ds, point = "0", 1
	}
	switch {
	case point <= -4 || point > 16:
		m := ds[:1]
		if len(ds) > 1 {
			m += "." + ds[1:]
		}
		return fmt.Sprintf("%s%se%+03d", sign, m, point-1), true
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + ds, true
	case point >= len(ds):
		return sign + ds + strings.Repeat("0", point-len(ds)) + ".0", true
	}
	return sign + ds[:point] + "." + ds[point:], true
}

// typeBuiltins are builtin classes whose metaclass is type, so a class
// derived from them only has type's repr.
var typeBuiltins = map[string]bool{"object": true, "int": true, "float": true, "complex": true, "str": true,
	"bytes": true, "bytearray": true, "list": true, "dict": true, "set": true, "frozenset": true, "tuple": true,
	"BaseException": true, "Exception": true, "ArithmeticError": true, "AssertionError": true, "AttributeError": true,
	"BufferError": true, "EOFError": true, "ImportError": true, "ModuleNotFoundError": true, "LookupError": true,
	"IndexError": true, "KeyError": true, "MemoryError": true, "NameError": true, "UnboundLocalError": true,
	"OSError": true, "IOError": true, "EnvironmentError": true, "ConnectionError": true, "FileNotFoundError": true,
	"FileExistsError": true, "PermissionError": true, "TimeoutError": true, "ReferenceError": true,
	"RuntimeError": true, "NotImplementedError": true, "RecursionError": true, "StopIteration": true,
	"StopAsyncIteration": true, "SyntaxError": true, "SystemError": true, "TypeError": true, "ValueError": true,
	"UnicodeError": true, "UnicodeDecodeError": true, "UnicodeEncodeError": true, "ZeroDivisionError": true,
	"OverflowError": true, "FloatingPointError": true, "KeyboardInterrupt": true, "SystemExit": true,
	"GeneratorExit": true, "Warning": true, "UserWarning": true, "DeprecationWarning": true, "RuntimeWarning": true}

// ImportedModules maps each module name that only `import` statements of
// the module bind, all importing the same module, to that module's dotted
// name (`import a.b` binds a to a; `import a.b as c` binds c to a.b). No
// other statement of the module may bind it, no scope declare it global,
// no del or := name it, so a module frame that holds the name holds that
// module, which the tracer shows as <module 'a.b' ...>. Nil for a program
// that may bind names its text does not show.
func (ix *Index) ImportedModules() map[string]string { return ix.onlyBoundBy(importedNames) }

// FromImported maps each module name that only `from M import X [as
// NAME]` statements of the module bind, all importing the same M.X, to
// "M.X" (absolute imports only), under the conditions of ImportedModules:
// a module frame that holds the name holds that value. Nil for a program
// that may bind names its text does not show.
func (ix *Index) FromImported() map[string]string { return ix.onlyBoundBy(fromImportedNames) }

// onlyBoundBy maps each module name that only statements read by imports
// bind, all to the same value, to that value (imports: a statement's names
// and values; nil for another statement). No other statement may bind the
// name, no scope declare it global, no del or := name it.
func (ix *Index) onlyBoundBy(imports func([]token) map[string]string) map[string]string {
	if ix.ModuleOpen() {
		return nil
	}
	values, other := map[string]string{}, set{} // other: bound by another statement or to another value too
	for j, l := range ix.stmts {
		if ix.owner[j] != ix.Module {
			continue
		}
		imported := imports(l.toks)
		for _, name := range ix.binds[j] {
			v, ok := imported[name]
			if prev, seen := values[name]; !ok || seen && prev != v {
				other.add(name)
			}
			values[name] = v
		}
	}
	for name := range values {
		if other[name] || ix.rebindable[name] {
			delete(values, name)
		}
	}
	return values
}

// fromImportedNames maps the names a lone absolute `from M import ...`
// statement binds to "M.X", the value each holds; nil for any other
// statement (a relative or star import, one with a semicolon too).
func fromImportedNames(toks []token) map[string]string {
	if toks[0].kind != tName || toks[0].text != "from" {
		return nil
	}
	var mod []string
	i := 1
	for ; i < len(toks) && (toks[i].kind == tName && toks[i].text != "import" || toks[i].text == "."); i++ {
		if toks[i].text == "." && len(mod) == 0 {
			return nil // relative: the program's own package
		}
		if toks[i].kind == tName {
			mod = append(mod, toks[i].text)
		}
	}
	if len(mod) == 0 || i == len(toks) || toks[i].text != "import" {
		return nil
	}
	names := toks[i+1:]
	if len(names) > 1 && names[0].text == "(" && names[len(names)-1].text == ")" {
		names = names[1 : len(names)-1]
	}
	out := map[string]string{}
	for _, part := range splitTop(names, ",") {
		switch {
		case len(part) == 0: // a trailing comma
		case len(part) == 1 && part[0].kind == tName:
			out[part[0].text] = strings.Join(mod, ".") + "." + part[0].text
		case len(part) == 3 && part[0].kind == tName && part[1].text == "as" && part[2].kind == tName:
			out[part[2].text] = strings.Join(mod, ".") + "." + part[0].text
		default:
			return nil // a star, a semicolon and another statement, or text this does not read
		}
	}
	return out
}

// importedNames maps the names a lone `import` statement binds to the
// modules they hold; nil for any other statement (one with a semicolon
// too).
func importedNames(toks []token) map[string]string {
	if toks[0].kind != tName || toks[0].text != "import" {
		return nil
	}
	out := map[string]string{}
	for _, part := range splitTop(toks[1:], ",") {
		var dotted []string
		i := 0
		for ; i < len(part) && (part[i].kind == tName && part[i].text != "as" || part[i].text == "."); i++ {
			if part[i].kind == tName {
				dotted = append(dotted, part[i].text)
			}
		}
		switch {
		case len(dotted) == 0:
			return nil
		case i == len(part):
			out[dotted[0]] = dotted[0]
		case part[i].text == "as" && i+2 == len(part) && part[i+1].kind == tName:
			out[part[i+1].text] = strings.Join(dotted, ".")
		default:
			return nil // a semicolon and another statement, or text this does not read
		}
	}
	return out
}

// ArgReprs gives, for a scope sc, the names whose value every frame of sc
// that holds them shows from a short list, with that list: a method's self
// (SelfRepr), a class body's methods (ClassFixedReprs), and for a function
// every call of which the text shows, each parameter every call passes a
// literal (or leaves to a literal default) and the body never rebinds: the
// literals' reprs (as literalConstants writes them). A function's calls all show where it is an undecorated
// def of the module, the only statement binding its name, and the text
// names it nowhere but right before a call's bracket (`f(`), with no
// `*args` or `**kwargs` at a call and no `*`, `**` or `/` in its
// parameters. Nil for none, and for every function of a program whose
// text may reach its functions another way (globals(), getattr, a
// module's namespace) or bind names its text does not show.
//
// Why: a call's frame shows its arguments, and the model wrote
// binary_search(data, 7)'s target as 0.
func (ix *Index) ArgReprs(sc *Scope) map[string][]string {
	ix.argsOnce.Do(ix.readArgs)
	out := map[string][]string{}
	if param, repr, ok := ix.SelfRepr(sc); ok {
		out[param] = []string{repr}
	}
	maps.Copy(out, ix.args[sc])
	for name, repr := range ix.ClassFixedReprs(sc) {
		out[name] = []string{repr}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// readArgs finds ArgReprs' functions and the literals their calls pass,
// reading the program once.
func (ix *Index) readArgs() {
	// doctest and timeit run code a string holds
	if ix.namesAnywhere("getattr", "locals", "eval", "__main__", "nonlocal", "doctest", "timeit") {
		return
	}
	defs, sites := ix.calledOnly()
	defs = maps.Clone(defs) // narrowed below to the defs whose calls read
	params := map[*Scope][]argParam{}
	for k, l := range ix.stmts {
		kw := keywordAt(l.toks)
		sc := defs[tokenText(l.toks, kw+1)]
		if kw < 0 || l.toks[kw].text != "def" || sc == nil || ix.owner[k] != ix.Module || tokenText(l.toks, kw+2) != "(" {
			continue
		}
		open := kw + 2
		for _, part := range splitTop(l.toks[open+1:matching(l.toks, open)], ",") {
			switch {
			case len(part) == 0:
			case part[0].kind != tName: // *args, **kwargs, a bare * or /
				delete(defs, sc.Name)
			case indexTop(part, "=") > 0:
				params[sc] = append(params[sc], argParam{part[0].text, part[indexTop(part, "=")+1:]})
			default:
				params[sc] = append(params[sc], argParam{name: part[0].text})
			}
		}
	}
	// every call's literals per parameter ("" where one passes another
	// value)
	values := map[*Scope]map[string]set{}
	for _, site := range sites {
		l := ix.stmts[site.stmt]
		sc := defs[l.toks[site.tok].text]
		if sc == nil {
			continue
		}
		passed, ok := callArgs(l.toks[site.tok+2:matching(l.toks, site.tok+1)], params[sc])
		if passed == nil {
			if !ok {
				delete(defs, sc.Name)
			}
			continue
		}
		if values[sc] == nil {
			values[sc] = map[string]set{}
		}
		for name, r := range passed {
			if values[sc][name] == nil {
				values[sc][name] = set{}
			}
			values[sc][name].add(r)
		}
	}
	bound := map[*Scope]set{}
	for j := range ix.stmts {
		if bound[ix.owner[j]] == nil {
			bound[ix.owner[j]] = set{}
		}
		bound[ix.owner[j]].add(ix.binds[j]...)
		bound[ix.owner[j]].add(ix.unbinds[j]...)
	}
	ix.args = map[*Scope]map[string][]string{}
	for _, sc := range defs {
		for name, vs := range values[sc] {
			if vs[""] || bound[sc][name] {
				continue
			}
			if ix.args[sc] == nil {
				ix.args[sc] = map[string][]string{}
			}
			ix.args[sc][name] = vs.sorted()
		}
	}
}

// callSite is a call by name in the text: the logical line and the index
// of the name's token.
type callSite struct{ stmt, tok int }

// calledOnly lists the module's functions every call of which the text
// shows: an undecorated def of the module (not a dunder), the only
// statement binding its name (FixedFunctions), a name the text uses
// nowhere but right before a call's bracket (`f(`, not another object's
// attribute `x.f(`), and those calls. Nil where the program may bind names
// its text does not show (ModuleOpen: exec, globals(), a module's
// namespace).
func (ix *Index) calledOnly() (map[string]*Scope, []callSite) {
	ix.calledOnce.Do(ix.readCalledOnly)
	return ix.called, ix.callSites
}

// readCalledOnly finds calledOnly's functions and calls, reading the
// program once.
func (ix *Index) readCalledOnly() {
	if ix.ModuleOpen() {
		return
	}
	defs := map[string]*Scope{}
	for _, f := range ix.FixedFunctions() {
		for _, sc := range ix.Module.Children {
			if sc.Kind == Function && sc.Name == f && sc.First == sc.Line && !isDunder(f) {
				defs[f] = sc
			}
		}
	}
	var sites []callSite
	for j, l := range ix.stmts {
		for i, t := range l.toks {
			if prev := tokenText(l.toks, i-1); defs[t.text] == nil || t.kind != tName || prev == "." || prev == "def" {
				continue // another object's attribute, a def of the name
			}
			if tokenText(l.toks, i+1) != "(" {
				delete(defs, t.text)
				continue
			}
			sites = append(sites, callSite{j, i})
		}
	}
	ix.called = defs
	ix.callSites = slices.DeleteFunc(sites, func(c callSite) bool { return defs[ix.stmts[c.stmt].toks[c.tok].text] == nil })
}

// ReturnsTo lists the lines where, after a return event on line n, the
// next line, return or exception event may be: n's frame is a function's
// every call of which the text shows (calledOnly), and its caller is a
// frame running one of those calls, which goes on in its own code (every
// line of a scope that runs a call's line: the statement's owner, and a
// comprehension or lambda there). A call event may come first (another
// call on the caller's line, a finalizer, a closed generator), which this
// does not restrict. ok false where n runs in several scopes, in a
// generator or coroutine (resumed by whoever holds it), or in a program
// that may run threads or calls the text does not show (doctest, timeit,
// eval, a call through the module object: sys.modules, __main__).
func (ix *Index) ReturnsTo(n int) (lines []int, ok bool) {
	runs := ix.RunsOn(n)
	if len(runs) != 1 || runs[0].Kind != Function || ix.suspending(runs[0]) || ix.RunsThreads() ||
		ix.namesAnywhere("getattr", "eval", "exec", "__main__", "modules", "doctest", "timeit", "settrace", "setprofile") {
		return nil, false
	}
	sc := runs[0]
	defs, sites := ix.calledOnly()
	if defs[sc.Name] != sc {
		return nil, false
	}
	callers := map[*Scope]bool{}
	for _, site := range sites {
		t := ix.stmts[site.stmt].toks[site.tok]
		if t.text == sc.Name {
			for _, c := range ix.RunsOn(t.line) {
				callers[c] = true
			}
		}
	}
	if len(callers) == 0 {
		return nil, false // called from outside the text (a --call program's caller)
	}
	for m := 1; m <= len(ix.Lines); m++ {
		if slices.ContainsFunc(ix.RunsOn(m), func(c *Scope) bool { return callers[c] }) {
			lines = append(lines, m)
		}
	}
	return lines, true
}

// SureAfterReturn lists the names a line event that follows a return
// event on line n surely holds, sorted: where ReturnsTo knows the callers,
// the frame is one that ran a call's statement, whose SureLocals stay bound
// (SureLocals keeps no name a statement may unbind); the names every call
// statement's frame holds. Nil where ReturnsTo does not know, or a call's
// line runs in several scopes (a comprehension or lambda on it may be the
// caller). Why: a frame after a return shows every local, and the model
// left out names the caller had bound long before the call.
func (ix *Index) SureAfterReturn(n int) []string {
	if _, ok := ix.ReturnsTo(n); !ok {
		return nil
	}
	name := ix.RunsOn(n)[0].Name
	_, sites := ix.calledOnly()
	var common []string
	first := true
	for _, site := range sites {
		l := ix.stmts[site.stmt]
		if t := l.toks[site.tok]; t.text != name || len(ix.RunsOn(t.line)) != 1 {
			if t.text == name {
				return nil
			}
			continue
		}
		sure := ix.SureLocals(l.first)
		if !first {
			sure = slices.DeleteFunc(slices.Clone(sure), func(s string) bool { return !slices.Contains(common, s) })
		}
		if common, first = sure, false; len(common) == 0 {
			return nil
		}
	}
	return slices.Sorted(slices.Values(common))
}

// NoEscape reports whether no exception can leave a frame of function sc
// but into the module's frame, and from there out of the run: sc is a
// function every call of which the text shows (calledOnly) that neither
// yields nor awaits, and each of those calls is in a statement outside any
// try or with statement's body, run by the module, by another such
// function or by a list, set or dict comprehension of theirs. In a run
// that ends normally (a script the data keeps) such a frame ends only at
// its normal ends (EndLines). False for every function where the text
// names a way to end a run that counts as normal (exit, quit, SystemExit,
// KeyboardInterrupt) or to catch an exception elsewhere (atexit, signal,
// threads, suppress, excepthook, a doctest's or a unit test's runner).
//
// Why: r from the first line of a script's main() answered a return on
// its print line, where only an exception could end it.
func (ix *Index) NoEscape(sc *Scope) bool {
	ix.escapeOnce.Do(ix.readNoEscape)
	return ix.noEscape[sc]
}

// MayExitByRaise reports whether the text names a way to end a run by an
// exception that the tracer may count as a normal end: exit, quit,
// SystemExit, KeyboardInterrupt, or a library that raises SystemExit
// (unittest.main, argparse's and optparse's help and errors). Only then
// may an exception leave a script's module frame in a run that ends
// normally.
func (ix *Index) MayExitByRaise() bool {
	return ix.namesAnywhere("exit", "quit", "_exit", "SystemExit", "KeyboardInterrupt", "unittest", "argparse", "optparse", "getopt")
}

// readNoEscape finds NoEscape's functions: the largest set of calledOnly
// functions whose calls all come from the module or from the set (a
// recursive call keeps a function in it: an exception that leaves the
// innermost frame leaves each one around it the same way).
func (ix *Index) readNoEscape() {
	if ix.MayExitByRaise() || ix.namesAnywhere("BaseException", "GeneratorExit", "atexit", "signal", "threading", "Thread",
		"suppress", "excepthook", "concurrent", "multiprocessing", "asyncio", "doctest", "unittest", "pytest", "timeit") {
		return
	}
	defs, sites := ix.calledOnly()
	in := map[*Scope]bool{}
	for _, sc := range defs {
		if !sc.Async && !ix.yields(sc) {
			in[sc] = true
		}
	}
	runner := func(sc *Scope) bool { // code whose exceptions go on to the caller's statement
		if sc.Kind == Comprehension && sc.Name != "<genexpr>" {
			sc = sc.Parent
		}
		return sc == ix.Module || in[sc]
	}
	for changed := true; changed; {
		changed = false
		for _, c := range sites {
			t := ix.stmts[c.stmt].toks[c.tok]
			sc := defs[t.text]
			deferred := slices.ContainsFunc(ix.RunsOn(t.line), func(s *Scope) bool { return s.Kind == Lambda || s.Name == "<genexpr>" })
			if in[sc] && (deferred || !runner(ix.owner[c.stmt]) || ix.guarded(c.stmt)) {
				delete(in, sc)
				changed = true
			}
		}
	}
	ix.noEscape = in
}

// guarded reports whether logical line j is a try or with statement or
// lies in one's body (or header), within its scope: an exception raised
// there may be caught or suppressed.
func (ix *Index) guarded(j int) bool {
	owner, indent := ix.owner[j], ix.stmts[j].indent+1
	for k := j; k >= 0; k-- {
		l := ix.stmts[k]
		if owner != ix.Module && l.first < owner.Body {
			return false // the scope's first statement is behind
		}
		if ix.owner[k] != owner || l.indent >= indent {
			continue
		}
		switch ix.StatementKeyword(l.first) {
		case "try", "with":
			return true
		}
		if indent = l.indent; indent == 0 {
			return false
		}
	}
	return false
}

// argParam is a def's parameter and its default's tokens (nil: none).
type argParam struct {
	name  string
	deflt []token
}

// callArgs reads a call's arguments (the tokens inside its brackets) to a
// def with parameters ps: the repr of the literal each parameter gets
// ("" for another value). Nil, true for a call that raises a TypeError
// (no frame); nil, false for one whose arguments the text does not show
// (*args, **kwargs).
func callArgs(args []token, ps []argParam) (map[string]string, bool) {
	passed := map[string]string{}
	literal := func(toks []token) string {
		neg := len(toks) == 2 && toks[0].kind == tOp && toks[0].text == "-"
		if len(toks) != 1 && !neg {
			return ""
		}
		r, _ := literalRepr(toks[len(toks)-1], neg)
		return r
	}
	given := func(name string, value []token) bool {
		if _, twice := passed[name]; twice || !slices.ContainsFunc(ps, func(p argParam) bool { return p.name == name }) {
			return false
		}
		passed[name] = literal(value)
		return true
	}
	positional := 0
	for _, part := range splitTop(args, ",") {
		switch {
		case len(part) == 0: // f() or a trailing comma
		case part[0].kind == tOp && (part[0].text == "*" || part[0].text == "**"):
			return nil, false
		case len(part) > 1 && part[0].kind == tName && part[1].kind == tOp && part[1].text == "=":
			if !given(part[0].text, part[2:]) {
				return nil, true
			}
		default:
			if positional >= len(ps) || !given(ps[positional].name, part) {
				return nil, true
			}
			positional++
		}
	}
	for _, p := range ps {
		if _, ok := passed[p.name]; !ok {
			if p.deflt == nil {
				return nil, true // a missing argument
			}
			passed[p.name] = literal(p.deflt)
		}
	}
	return passed, true
}

// tokenText is the text of toks[i], "" out of range.
func tokenText(toks []token, i int) string {
	if i < 0 || i >= len(toks) {
		return ""
	}
	return toks[i].text
}

// ClassFixedReprs maps, for the body of a class sc that FixedClasses holds
// (a module-level class whose metaclass is type: its body's namespace is a
// plain dict), each name one undecorated def of the body binds, and no
// other statement of the body binds or deletes, to the value the body's
// frame shows for it once bound: <function QUALNAME at 0x0> (a private
// name as the class mangles it). Nil for none, and where the body may bind
// names its text does not show.
//
// Why: stepping through a class body the model wrote
// first=<__main__.CircularQueue object at 0x0> after `def first(self):`.
func (ix *Index) ClassFixedReprs(sc *Scope) map[string]string {
	ix.classOnce.Do(func() {
		ix.classFixed = map[*Scope]map[string]string{}
		fixed, _ := ix.fixedClasses()
		for _, c := range ix.Module.Children {
			if c.Kind == Class && !c.open && fixed[c.Name] {
				ix.classFixed[c] = ix.classFixedReprs(c)
			}
		}
	})
	return ix.classFixed[sc]
}

// classFixedReprs is ClassFixedReprs for one class.
func (ix *Index) classFixedReprs(sc *Scope) map[string]string {
	ix.namesOnce.Do(ix.readBinds)
	bindings := map[string]int{}
	defs := map[string]*Scope{}
	for j, l := range ix.stmts {
		if ix.owner[j] != sc {
			continue
		}
		for _, name := range append(slices.Clone(ix.binds[j]), ix.unbinds[j]...) {
			bindings[name]++
		}
		if kw := keywordAt(l.toks); kw >= 0 && l.toks[kw].text == "def" && (j == 0 || ix.stmts[j-1].toks[0].text != "@") {
			for _, c := range sc.Children {
				if c.Kind == Function && c.Line == l.first {
					defs[c.Name] = c
				}
			}
		}
	}
	out := map[string]string{}
	for name, def := range defs {
		if bindings[name] == 1 && !isDunder(name) {
			out[mangle(sc.enclosingClass(), name)] = "<function " + def.Qualname + " at 0x0>"
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
