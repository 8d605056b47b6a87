package synth

import (
	"regexp"
	"slices"
	"strings"
)

// sliceRE finds a subscript with a colon: a slice.
var sliceRE = regexp.MustCompile(`\[[^\[\]'"]*:[^\[\]'"]*\]`)

// program builds function number i of the stream seeded by seed.
func (kn Knobs) program(seed int64, i int) *program {
	g := &gen{
		r:       newRand(seed, i, 1),
		kn:      kn,
		strLits: map[string]bool{},
		intLits: map[int]bool{},
	}
	p := &program{recCounter: -1}
	x := g.r.Float64()
	switch {
	case x < kn.PRecF:
		p.params, p.recCounter = g.recFunction("f", true)
		g.feat.RecF = true
		g.feat.RecursiveFuncs = []string{"f"}
	case x < kn.PRecF+kn.PRecHelper:
		g.recFunction(oneOf(g, recNames...), false)
		g.feat.RecHelper = true
		g.feat.RecursiveFuncs = []string{g.helper.name}
		p.params = g.mainF()
	case x < kn.PRecF+kn.PRecHelper+kn.PHelper:
		g.plainHelper()
		g.feat.Helper = true
		p.params = g.mainF()
	default:
		p.params = g.mainF()
	}
	g.feat.Params = len(p.params)
	p.source = g.out.String()
	g.feat.Slice = sliceRE.MatchString(p.source)
	p.features = g.feat
	for s := range g.strLits {
		p.strLits = append(p.strLits, s)
	}
	slices.Sort(p.strLits)
	for n := range g.intLits {
		p.intLits = append(p.intLits, n)
	}
	slices.Sort(p.intLits)
	return p
}

// paramTypes draws 1-3 parameter types.
func (g *gen) paramTypes(max int) []typ {
	n := 1 + g.pick(4, 4, 2)
	if n > max {
		n = max
	}
	ts := make([]typ, n)
	for j := range ts {
		ts[j] = []typ{tStr, tInt, tListInt, tListStr, tDict, tSet}[g.pick(3.5, 2.2, 2, 1.2, 1, 0.3)]
	}
	return ts
}

// params binds parameters of types ts, all frozen when freezeAll is set
// (helpers never mutate what they are given: no hidden aliasing).
func (g *gen) params(ts []typ, freezeAll bool) ([]variable, string) {
	var names []string
	var out []variable
	for _, t := range ts {
		name := g.freshName(paramNames[t])
		v := g.bind(name, t)
		v.param = true
		// an int parameter left unchanged may bound range() and recursion
		if freezeAll || (t == tInt && g.chance(0.5)) {
			v.frozen = 1
		}
		names = append(names, name)
		out = append(out, *v)
	}
	return out, strings.Join(names, ", ")
}

func (g *gen) retType() typ {
	return typ(g.pick(3, 3, 1, 1.5, 1.2, 0.8, 0.25))
}

// mainF writes the non-recursive entry function f.
func (g *gen) mainF() []variable {
	g.vars = nil
	g.fname = "f"
	g.self = nil
	pts := g.paramTypes(3)
	g.ret = g.retType()
	if g.chance(0.4) { // CruxEval functions often return what they were given, transformed
		g.ret = oneOf(g, pts...)
	}
	ps, list := g.params(pts, false)
	g.emit("def f(%s):", list)
	g.indent = 1
	g.budget = g.kn.MinStmts + g.r.IntN(g.kn.MaxStmts-g.kn.MinStmts+1)
	var forced []stmtKind
	if g.helper != nil {
		forced = append(forced, sHelperCall)
	}
	if g.chance(g.kn.PLoop) {
		forced = append(forced, sFor)
	}
	if g.chance(g.kn.PWhile) {
		forced = append(forced, sWhile)
	}
	if g.chance(g.kn.PTry) {
		forced = append(forced, sTry)
	}
	g.r.Shuffle(len(forced), func(a, b int) { forced[a], forced[b] = forced[b], forced[a] })
	g.budget += len(forced)
	for top := 0; (g.budget > 0 || len(forced) > 0) && top < 24; top++ {
		if len(forced) > 0 && (g.chance(0.45) || g.budget <= len(forced)) {
			k := forced[0]
			forced = forced[1:]
			g.stmt(k)
			continue
		}
		g.stmt(-1)
	}
	g.finalReturn()
	g.indent = 0
	return ps
}

// finalReturn returns what the function computed, CruxEval style.
func (g *gen) finalReturn() {
	vs := g.varsOf(g.ret)
	var locals []*variable
	for _, v := range vs {
		if !v.param {
			locals = append(locals, v)
		}
	}
	var unread []*variable
	for _, v := range locals {
		if !v.read {
			unread = append(unread, v)
		}
	}
	switch {
	case len(unread) > 0 && g.chance(0.8):
		g.emit("return %s", unread[len(unread)-1].name)
		return
	case len(locals) > 0 && g.chance(0.5):
		g.emit("return %s", locals[len(locals)-1].name)
		return
	}
	// otherwise compute the result, from a value nothing has read yet if possible
	fresh := g.fname != "f"
	if u := g.unreadLocal(); u != nil {
		for range 8 {
			e := g.value(g.ret, 2, fresh)
			if mentions(e.s, func(n string) bool { return n == u.name }) {
				g.emit("return %s", e.s)
				return
			}
		}
	}
	g.emit("return %s", g.value(g.ret, 2, fresh).s)
}

// plainHelper writes a non-recursive helper above f.
func (g *gen) plainHelper() {
	g.vars = nil
	name := oneOf(g, helperNames...)
	g.fname = name
	g.ret = typ(g.pick(3, 3, 1.5, 1.2, 1))
	ts := g.paramTypes(2)
	// helpers take simple values more often than f does
	for j := range ts {
		if g.chance(0.4) {
			ts[j] = oneOf(g, tInt, tStr)
		}
	}
	_, list := g.params(ts, true)
	g.emit("def %s(%s):", name, list)
	g.indent = 1
	g.budget = 1 + g.r.IntN(3)
	raises := g.chance(g.kn.PHelperRaises)
	if raises {
		g.feat.Raise = true
		g.emit("if %s:", g.value(tBool, 2, false).s)
		g.indent++
		g.emit("raise ValueError(%s)", pyStr(oneOf(g, "invalid", "bad value", "negative", "empty", "too short", "no match")))
		g.indent--
	}
	for g.budget > 0 {
		g.stmt(-1)
	}
	g.finalReturn()
	g.indent = 0
	g.helper = &fn{name: name, params: ts, ret: g.ret, raises: raises}
	g.vars = nil
}

// recFunction writes a function that recurses on a shrinking parameter:
// structurally on a str or list (p[1:], p[:-1], ...) or on an int counter
// (n - 1, n // 2). The depth is at most the input's size, so it always ends.
// It returns the parameters and, for a counter, the counter's index.
func (g *gen) recFunction(name string, isF bool) ([]variable, int) {
	g.vars = nil
	g.fname = name
	g.ret = []typ{tInt, tStr, tListInt, tListStr, tBool}[g.pick(3, 3, 1.5, 1, 1)]
	counter := g.chance(0.3)
	var recT typ
	if counter {
		recT = tInt
	} else {
		recT = oneOf(g, tStr, tStr, tListInt, tListStr)
	}
	ts := []typ{recT}
	if g.chance(0.4) {
		ts = append(ts, oneOf(g, tInt, tStr, tListInt))
	}
	self := &fn{name: name, params: ts, ret: g.ret, recursive: true}
	g.self = self
	ps, list := g.params(ts, true)
	p := ps[0].name
	g.emit("def %s(%s):", name, list)
	g.indent = 1

	var base, shrink string
	if counter {
		base = p + oneOf(g, " <= 0", " < 1", " <= 1")
		shrink = oneOf(g, p+" - 1", p+" - 1", p+" // 2", p+" - 2")
	} else {
		shrink = oneOf(g, p+"[1:]", p+"[1:]", p+"[:-1]", p+"[2:]", p+"[1:-1]")
		if strings.HasSuffix(shrink, "[1:]") || strings.HasSuffix(shrink, "[:-1]") {
			base = oneOf(g, "not "+p, "len("+p+") == 0", "len("+p+") <= 1")
		} else {
			base = oneOf(g, "len("+p+") < 2", "len("+p+") <= 1")
		}
	}
	g.loopDepth = 1 // a recursive body is treated like a loop body: no growth feedback
	g.emit("if %s:", base)
	g.indent++
	g.emit("return %s", g.baseValue(ps[0]).s)
	g.indent--
	var elem *variable
	if !counter {
		en := g.freshName(map[typ][]string{tStr: {"first", "head", "c", "ch"}, tListInt: {"first", "head", "x"}, tListStr: {"first", "head", "w"}}[recT])
		idx := "0"
		if strings.HasSuffix(shrink, "[:-1]") {
			idx = "-1"
			en = g.freshName([]string{"last", "tail", "end"})
		}
		g.emit("%s = %s[%s]", en, p, idx)
		elem = g.bind(en, recT.elem())
		elem.frozen = 1
		elem.char = recT == tStr
	}
	args := []string{shrink}
	for _, q := range ps[1:] {
		args = append(args, q.name)
	}
	rest := g.freshName([]string{"rest", "sub", "prev", "res", "inner"})
	g.emit("%s = %s(%s)", rest, name, strings.Join(args, ", "))
	rv := g.bind(rest, g.ret)
	rv.frozen = 1 // the body may read it; only the combine below extends it, once
	g.budget = g.r.IntN(3)
	for g.budget > 0 {
		g.stmt(-1)
	}
	g.emit("return %s", g.combine(rv, g.vars[0]))
	g.loopDepth = 0
	g.indent = 0
	g.self = nil
	self.recParam = 0
	counterIdx := -1
	if counter {
		counterIdx = 0
	}
	if !isF {
		g.helper = self
		g.vars = nil
	}
	return ps, counterIdx
}

// baseValue is what a recursion returns at its base case.
func (g *gen) baseValue(p variable) ex {
	switch g.ret {
	case tStr:
		if p.t == tStr && g.chance(0.4) {
			return atom(p.name)
		}
		return atom(oneOf(g, "''", "''", g.strLit().s))
	case tInt:
		return atom(oneOf(g, "0", "0", "1", "-1"))
	case tBool:
		return atom(oneOf(g, "True", "False"))
	default:
		if p.t == g.ret && g.chance(0.3) {
			return atom(p.name + "[:]")
		}
		return atom("[]")
	}
}

// combine returns the recursive result extended once by a piece that does
// not read the shrinking parameter p and, for a str, is at most one
// character: the output is then no longer than the input, so helper(helper(s))
// cannot blow up (nor recurse past Python's limit).
func (g *gen) combine(rest, p *variable) string {
	r := rest.name
	p.frozen--
	defer func() { p.frozen++ }()
	switch g.ret {
	case tInt:
		x := wrap(g.expr(tInt, 1, false), pAdd+1)
		return oneOf(g, r+" + "+x, x+" + "+r, "max("+r+", "+x+")", "min("+r+", "+x+")",
			r+" + (1 if "+g.cond(1).s+" else 0)", x+" - "+r)
	case tStr:
		x := g.charLit().s
		if c := g.charVar(); c != nil && g.chance(0.75) {
			x = oneOf(g, c.name, c.name, c.name+".upper()", c.name+".lower()", c.name+".swapcase()")
		}
		return oneOf(g, r+" + "+x, x+" + "+r, x+" + "+r, "("+x+" if "+g.cond(1).s+" else '') + "+r)
	case tListInt, tListStr:
		x := wrap(g.expr(g.ret.elem(), 1, false), pCond+1)
		return oneOf(g, "["+x+"] + "+r, r+" + ["+x+"]", "sorted("+r+" + ["+x+"])",
			"(["+x+"] if "+g.cond(1).s+" else []) + "+r)
	default:
		c := wrap(g.cond(1), pAnd+1)
		return oneOf(g, r+" and "+c, c+" or "+r, "not "+r+" if "+c+" else "+r)
	}
}
