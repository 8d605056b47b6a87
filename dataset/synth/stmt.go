package synth

import (
	"slices"
	"strings"
)

// stmtKind names the statement productions; forced ones are scheduled so a
// program holds the features its knobs drew.
type stmtKind int

const (
	sAssign stmtKind = iota
	sReassign
	sMutate
	sIf
	sFor
	sWhile
	sTry
	sEarlyReturn
	sBreak
	sRaise
	sHelperCall
)

// block writes statements until n are used (at least one line: pass).
func (g *gen) block(n int) {
	if n < 1 {
		n = 1
	}
	g.indent++
	g.nest++
	drop := g.scope()
	start := g.line
	use := g.useFirst
	g.useFirst = nil
	first := func() {
		if v := g.focus; v != nil && g.inLoop && v.frozen == 0 {
			g.focus = nil
			g.budget--
			if v.t.mutable() && g.chance(0.8) {
				g.grow = true
				g.mutate(v)
				g.grow = false
			} else {
				g.reassign(v)
			}
			return
		}
		g.lastInBlock = n == 1
		g.stmt(-1)
		g.lastInBlock = false
	}
	// A loop body's first statement reads the loop's names: draw it again
	// (a few times) when it does not.
	for try := 0; ; try++ {
		sn := g.save()
		from := g.out.Len()
		first()
		text := string(g.out.Bytes()[from:])
		if len(use) == 0 || try == 3 || mentions(text, func(name string) bool {
			for _, u := range use {
				if u.name == name {
					return true
				}
			}
			return false
		}) {
			break
		}
		g.restore(sn)
	}
	n--
	for j := range n {
		if g.budget <= 0 && g.line > start {
			break
		}
		// a name bound by a block's last statement dies with the block
		g.lastInBlock = j == n-1 || g.budget <= 1
		g.stmt(-1)
		g.lastInBlock = false
	}
	if g.line == start {
		g.emit("pass")
	}
	drop()
	g.nest--
	g.indent--
}

// stmt writes one statement of kind k, or a drawn kind when k < 0.
func (g *gen) stmt(k stmtKind) {
	g.budget--
	if k < 0 {
		k = g.drawKind()
	}
	switch k {
	case sAssign:
		g.assignNew()
	case sReassign:
		g.reassign(nil)
	case sMutate:
		g.mutate(nil)
	case sIf:
		g.ifStmt()
	case sFor:
		g.forStmt()
	case sWhile:
		g.whileStmt()
	case sTry:
		g.tryStmt()
	case sEarlyReturn:
		g.feat.EarlyReturn = true
		g.feat.If = true
		g.emit("if %s:", g.value(tBool, 2, false).s)
		g.indent++
		g.emit("return %s", g.returnValue().s)
		g.indent--
	case sBreak:
		g.feat.BreakContinue = true
		g.feat.If = true
		g.emit("if %s:", g.value(tBool, 2, false).s)
		g.indent++
		if g.inWhile || g.chance(0.5) {
			g.emit("break")
		} else {
			g.emit("continue")
		}
		g.indent--
	case sRaise:
		g.feat.Raise = true
		g.feat.If = true
		g.emit("if %s:", g.value(tBool, 2, false).s)
		g.indent++
		g.emit("raise ValueError(%s)", pyStr(oneOf(g, "invalid", "bad input", "negative", "empty", "not found", "too long")))
		g.indent--
	case sHelperCall:
		g.helperCallStmt()
	}
}

func (g *gen) drawKind() stmtKind {
	deep := g.nest >= g.kn.MaxNest || g.budget < 2
	w := []float64{
		sAssign:      3.5,
		sReassign:    2.5,
		sMutate:      2.5,
		sIf:          3,
		sFor:         1.2,
		sWhile:       0.25,
		sTry:         0.4,
		sEarlyReturn: 0.8,
		sBreak:       0,
		sRaise:       0.1,
		sHelperCall:  0,
	}
	if g.lastInBlock && g.nest > 0 {
		w[sAssign] = 0.4
	}
	if g.inLoop {
		w[sBreak] = 1
		w[sReassign] += 1.5
		w[sMutate] += 1.5
		w[sFor] = 0.3
	}
	if g.loopDepth >= 2 {
		w[sFor], w[sWhile] = 0, 0
	}
	if deep {
		w[sIf], w[sFor], w[sWhile], w[sTry] = 0, 0, 0, 0
	}
	return stmtKind(g.pick(w...))
}

// varType draws the type of a new local.
func (g *gen) varType() typ {
	return typ(g.pick(2.5, 2.5, 0.6, 1.2, 1, 0.9, 0.4))
}

// derived lists the types a new value is naturally computed as from a value of type t.
var derived = [numTypes][]typ{
	tInt:     {tInt, tInt, tStr, tBool},
	tStr:     {tStr, tStr, tInt, tListStr, tBool, tDict},
	tBool:    {tInt, tStr, tBool},
	tListInt: {tInt, tListInt, tListInt, tSet, tStr},
	tListStr: {tStr, tListStr, tListStr, tInt, tDict},
	tDict:    {tInt, tListStr, tListInt, tDict},
	tSet:     {tInt, tListInt, tSet},
}

// unreadLocal returns a readable name nothing reads yet, if any.
func (g *gen) unreadLocal() *variable {
	var us []*variable
	for _, v := range g.vars {
		if !v.read && g.readable(v) {
			us = append(us, v)
		}
	}
	if len(us) == 0 {
		return nil
	}
	if g.chance(0.5) { // the newest: a loop's own name, what was just computed
		return us[len(us)-1]
	}
	return us[g.r.IntN(len(us))]
}

func (g *gen) assignNew() {
	t := g.varType()
	var e ex
	found := false
	if u := g.unreadLocal(); u != nil && g.chance(0.7) {
		// compute the new value from a value nothing has used yet
		t = oneOf(g, derived[u.t]...)
		for range 6 {
			e = g.value(t, 2, true)
			if mentions(e.s, func(n string) bool { return n == u.name }) {
				found = true
				break
			}
		}
	}
	if !found {
		e = g.value(t, 2, true)
	}
	name := g.freshName(localNames[t])
	g.emit("%s = %s", name, e.s)
	g.bind(name, t)
}

// reassign rebinds or updates a writable name.
// rebind is `v = value` with a value other than v itself.
func (g *gen) rebind(v *variable, fresh bool) {
	e := g.value(v.t, 2, fresh)
	for try := 0; e.s == v.name && try < 4; try++ {
		e = g.value(v.t, 2, fresh)
	}
	if e.s == v.name {
		e = g.lit(v.t)
	}
	g.emit("%s = %s", v.name, e.s)
}

func (g *gen) reassign(v *variable) {
	if v == nil {
		var cands []*variable
		for _, v := range g.vars {
			// a parameter is read before it is overwritten
			if v.frozen == 0 && (v.read || !v.param) {
				cands = append(cands, v)
			}
		}
		if len(cands) == 0 {
			g.assignNew()
			return
		}
		v = cands[g.r.IntN(len(cands))]
		if len(cands) > 1 && g.chance(0.4) {
			v = cands[len(cands)-1]
		}
	}
	switch v.t {
	case tInt:
		switch g.r.IntN(6) {
		case 0, 1:
			g.emit("%s += %s", v.name, g.expr(tInt, 1, false).s)
		case 2:
			g.emit("%s -= %s", v.name, g.expr(tInt, 1, false).s)
		case 3:
			g.emit("%s %s %s", v.name, oneOf(g, "*=", "//=", "%="), g.smallPos(2, 4))
		default:
			g.rebind(v, false)
		}
	case tStr:
		switch g.r.IntN(5) {
		case 0, 1:
			g.emit("%s += %s", v.name, g.expr(tStr, 1, false).s)
		case 2:
			g.emit("%s = %s", v.name, g.selfTransform(v))
		default:
			g.rebind(v, false)
		}
	case tBool:
		if g.chance(0.3) {
			g.emit("%s = not %s", v.name, v.name)
		} else {
			g.rebind(v, false)
		}
	case tListInt, tListStr:
		switch g.r.IntN(4) {
		case 0:
			g.emit("%s += %s", v.name, g.expr(v.t, 1, true).s)
		case 1, 2:
			g.emit("%s = %s", v.name, g.selfTransform(v))
		default:
			g.rebind(v, true)
		}
	default:
		g.rebind(v, true)
	}
}

// selfTransform is an expression of v's own value that never makes it
// larger, so it is safe on an accumulator inside a loop.
func (g *gen) selfTransform(v *variable) string {
	n := v.name
	switch v.t {
	case tStr:
		switch g.r.IntN(4) {
		case 0:
			return n + "." + oneOf(g, "upper", "lower", "strip", "capitalize", "swapcase", "title", "lstrip", "rstrip") + "()"
		case 1:
			return n + oneOf(g, "[::-1]", "[1:]", "[:-1]", "[::2]")
		case 2:
			return n + ".replace(" + g.strLit().s + ", " + oneOf(g, "''", g.charLit().s) + ")"
		default:
			return n + "." + oneOf(g, "strip", "rstrip", "lstrip") + "(" + g.strLit().s + ")"
		}
	default: // lists
		if g.chance(0.35) {
			name := g.freshName(compNames)
			drop := g.scope()
			x := g.bind(name, v.t.elem())
			x.frozen = 1
			c := g.condOn(x, 1).s
			drop()
			g.feat.Comprehension = true
			return "[" + name + " for " + name + " in " + n + " if " + c + "]"
		}
		return oneOf(g, n+"[::-1]", "sorted("+n+")", n+"[1:]", n+"[:-1]", "sorted("+n+", reverse=True)", n+"[::2]")
	}
}

func (g *gen) mutate(v *variable) {
	var cands []*variable
	for _, v := range g.vars {
		if v.frozen == 0 && v.t.mutable() {
			cands = append(cands, v)
		}
	}
	if v != nil {
		cands = []*variable{v}
	}
	if len(cands) == 0 {
		if g.chance(0.5) {
			g.reassign(nil)
			return
		}
		// make something to mutate later
		t := oneOf(g, tListInt, tListStr, tDict, tListInt)
		name := g.freshName(localNames[t])
		g.emit("%s = %s", name, g.lit(t).s)
		g.bind(name, t)
		return
	}
	if v == nil {
		v = cands[g.r.IntN(len(cands))]
	}
	n := v.name
	risky := g.kn.PRisky
	switch v.t {
	case tListInt, tListStr:
		e := func() string { return g.elemOf(v.t, 2).s }
		w := []float64{4, 1.2, 1, 1, 0.8, 0.8, 1, 0.5 * risky, 0.5 * risky, 0.5 * risky, 0.5 * risky}
		if g.grow {
			w = []float64{4, 1, 0, 0, 1}
		}
		switch g.pick(w...) {
		case 0:
			g.emit("%s.append(%s)", n, e())
		case 1:
			g.emit("%s.insert(%s, %s)", n, g.index(1).s, e())
		case 2:
			if g.chance(0.5) {
				g.emit("%s.sort()", n)
			} else {
				g.emit("%s.sort(reverse=True)", n)
			}
		case 3:
			g.emit("%s.reverse()", n)
		case 4:
			g.emit("%s.extend(%s)", n, g.expr(v.t, 1, false).s)
		case 5:
			g.emit("%s[%s] = %s", n, oneOf(g, "0", "-1"), e())
		case 6: // pop guarded by emptiness
			g.emit("if %s:", n)
			g.indent++
			name := g.freshName(elemNames[v.t.elem()])
			g.emit("%s = %s.pop(%s)", name, n, oneOf(g, "", "", "0", "-1"))
			g.indent--
			g.feat.If = true
		case 7:
			name := g.freshName(elemNames[v.t.elem()])
			g.emit("%s = %s.pop(%s)", name, n, oneOf(g, "", "0", "1"))
			g.bind(name, v.t.elem()).char = false
		case 8:
			g.emit("%s.remove(%s)", n, e())
		case 9:
			g.emit("del %s[%s]", n, oneOf(g, "0", "-1", "1"))
		default:
			g.emit("%s[%s] = %s", n, g.index(1).s, e())
		}
	case tDict:
		k := func() string { return g.elemOf(tDict, 2).s }
		w := []float64{3, 2.5, 1, 1, 1, 0.5 * risky, 0.5 * risky, 0.4 * risky}
		if g.grow {
			w = []float64{3, 3, 1, 1}
		}
		switch g.pick(w...) {
		case 0:
			g.emit("%s[%s] = %s", n, k(), g.expr(tInt, 1, false).s)
		case 1:
			key := k()
			g.emit("%s[%s] = %s.get(%s, 0) + %s", n, key, n, key, oneOf(g, "1", "1", g.expr(tInt, 1, false).s))
		case 2:
			g.emit("%s.setdefault(%s, %s)", n, k(), g.intLit().s)
		case 3:
			if g.chance(0.5) {
				g.emit("%s.update({%s: %s})", n, k(), g.expr(tInt, 1, false).s)
			} else {
				g.emit("%s.update(%s)", n, g.expr(tDict, 1, false).s)
			}
		case 4:
			name := g.freshName(localNames[tInt])
			g.emit("%s = %s.pop(%s, %s)", name, n, k(), g.intLit().s)
			g.bind(name, tInt)
		case 5:
			g.emit("del %s[%s]", n, k())
		case 6:
			name := g.freshName(localNames[tInt])
			g.emit("%s = %s.pop(%s)", name, n, k())
			g.bind(name, tInt)
		default:
			g.emit("%s[%s] += %s", n, k(), g.smallPos(1, 3))
		}
	default: // set
		e := g.elemOf(tSet, 2).s
		w := []float64{3, 1, 1, 0.4 * risky}
		if g.grow {
			w = []float64{3, 0, 1}
		}
		switch g.pick(w...) {
		case 0:
			g.emit("%s.add(%s)", n, e)
		case 1:
			g.emit("%s.discard(%s)", n, e)
		case 2:
			g.emit("%s.update(%s)", n, g.operand(tListInt, 1).s)
		default:
			g.emit("%s.remove(%s)", n, e)
		}
	}
}

func (g *gen) ifStmt() {
	g.feat.If = true
	g.emit("if %s:", g.value(tBool, 2, false).s)
	g.block(1 + g.r.IntN(2))
	if g.chance(0.3) {
		g.emit("elif %s:", g.value(tBool, 2, false).s)
		g.block(1)
	}
	if g.chance(0.45) {
		g.emit("else:")
		g.block(1 + g.r.IntN(2))
	}
}

// returnValue is a value of the function's return type; f sometimes returns
// a flag of another type early, as CruxEval functions do.
func (g *gen) returnValue() ex {
	if g.fname == "f" && g.self == nil && g.chance(0.12) {
		return atom(oneOf(g, "False", "True", "-1", "''", "[]", "None", "0"))
	}
	fresh := g.fname != "f"
	if v := g.anyVar(g.ret); v != nil && g.chance(0.5) && (!fresh || !g.ret.mutable()) {
		return atom(v.name)
	}
	return g.value(g.ret, 2, fresh)
}

// loopFreeze freezes what a loop iterates and, at random, other sized names
// (they may be read in the body); the rest are the loop's accumulators.
func (g *gen) loopFreeze(iters ...*variable) func() {
	fz := iters
	for _, v := range g.vars {
		if slices.Contains(iters, v) || v == g.focus || v.frozen > 0 || !v.t.sized() {
			continue
		}
		p := 0.4
		if v.param {
			p = 0.6
		}
		if g.chance(p) {
			fz = append(fz, v)
		}
	}
	return freeze(fz...)
}

// accumulator sometimes starts a fresh result before a top-level loop; the
// loop body's first statement then updates it.
func (g *gen) accumulator() {
	if g.nest > 0 || !g.chance(0.6) {
		return
	}
	t := oneOf(g, tListInt, tListStr, tStr, tInt, tInt, tDict, tStr, tSet)
	if t == tSet && g.chance(0.5) {
		t = tListInt
	}
	if g.ret != tBool && g.chance(0.5) {
		t = g.ret
	}
	name := g.freshName(localNames[t])
	init := map[typ]string{tInt: "0", tStr: "''", tListInt: "[]", tListStr: "[]", tDict: "{}", tSet: "set()"}[t]
	if t == tInt && g.chance(0.3) {
		init = "1"
	}
	g.emit("%s = %s", name, init)
	g.focus = g.bind(name, t)
}

func (g *gen) loopBody(header string, isWhile bool, unfreeze func(), bindLoopVars func()) {
	g.emit("%s", header)
	savedLoop, savedWhile := g.inLoop, g.inWhile
	g.loopDepth++
	g.inLoop = true
	g.inWhile = isWhile
	g.indent++
	g.nest++
	drop := g.scope()
	mark := len(g.vars)
	bindLoopVars()
	g.useFirst = append([]*variable(nil), g.vars[mark:]...)
	g.indent--
	g.nest--
	g.block(1 + g.r.IntN(3))
	g.focus = nil // unused (its loop froze it): never carry it to another loop
	drop()
	g.loopDepth--
	g.inLoop, g.inWhile = savedLoop, savedWhile
	unfreeze()
}

func (g *gen) forStmt() {
	g.feat.For = true
	g.accumulator()
	var iterVar *variable
	var header string
	var loopVars []struct {
		name string
		t    typ
		char bool
	}
	add := func(name string, t typ, char bool) {
		loopVars = append(loopVars, struct {
			name string
			t    typ
			char bool
		}{name, t, char})
	}
	reserve := func(pool []string) string {
		// bind temporarily so two loop names never clash
		n := g.freshName(pool)
		g.vars = append(g.vars, &variable{name: n})
		return n
	}
	mark := len(g.vars)
	kind := g.pick(5, 2, 1, 0.7, 0.5)
	anySized := false
	for _, v := range g.vars {
		anySized = anySized || (v.t.sized() && g.readable(v))
	}
	if !anySized {
		kind = 2 // nothing to iterate over but a range
	}
	switch kind {
	case 0: // over a collection
		t := g.existingSized()
		if !g.has(t) {
			for _, v := range g.vars {
				if v.t.sized() && g.readable(v) {
					t = v.t
				}
			}
		}
		vs := g.without(g.varsOf(t), g.focus) // not the empty accumulator just made
		var src string
		if len(vs) > 0 && g.chance(0.75) {
			iterVar = vs[g.r.IntN(len(vs))]
			src = iterVar.name
		} else {
			src = g.value(t, 1, false).s
		}
		switch {
		case t == tDict && g.chance(0.5):
			k := reserve([]string{"k", "key", "name"})
			v := reserve([]string{"v", "val", "value", "count"})
			header = "for " + k + ", " + v + " in " + wrapAtom(src) + ".items():"
			add(k, tStr, false)
			add(v, tInt, false)
		case t == tStr && g.chance(0.25):
			i := reserve([]string{"i", "idx", "j"})
			c := reserve(elemNames[tStr])
			header = "for " + i + ", " + c + " in enumerate(" + src + "):"
			add(i, tInt, false)
			add(c, tStr, true)
		default:
			x := reserve(elemNames[t.elem()])
			header = "for " + x + " in " + src + ":"
			add(x, t.elem(), t == tStr)
		}
	case 1: // over indices
		t := oneOf(g, tStr, tListInt, tListStr)
		vs := g.without(g.varsOf(t), g.focus) // not the empty accumulator just made
		src := ""
		if len(vs) > 0 {
			src = vs[g.r.IntN(len(vs))].name
		} else {
			src = g.value(t, 1, false).s
		}
		i := reserve([]string{"i", "j", "idx"})
		switch g.r.IntN(4) {
		case 0:
			header = "for " + i + " in range(len(" + src + ") - 1, -1, -1):"
		case 1:
			header = "for " + i + " in range(1, len(" + src + ")):"
		default:
			header = "for " + i + " in range(len(" + src + ")):"
		}
		add(i, tInt, false)
	case 2:
		i := reserve([]string{"i", "j", "step"})
		var fixed []*variable
		for _, v := range g.vars {
			if v.t == tInt && v.param && v.frozen > 0 {
				fixed = append(fixed, v)
			}
		}
		if len(fixed) > 0 && g.chance(0.6) {
			header = "for " + i + " in range(" + oneOf(g, fixed...).name + "):"
		} else {
			header = "for " + i + " in range(" + g.smallPos(2, 6) + "):"
		}
		add(i, tInt, false)
	case 3: // over a transformed collection
		x := reserve(elemNames[tStr])
		src := oneOf(g, tStr, tListStr)
		if !g.has(src) {
			src = tStr
		}
		e := g.operand(src, 1)
		if src == tStr && g.chance(0.4) {
			header = "for " + x + " in " + wrapAtom(e.s) + ".split(" + oneOf(g, "", "", g.splitSep().s) + "):"
			add(x, tStr, false)
			break
		}
		header = "for " + x + " in " + oneOf(g, "sorted("+e.s+")", wrapAtom(e.s)+"[::-1]", "reversed("+e.s+")") + ":"
		add(x, tStr, src == tStr)
	default: // zip of two
		st := oneOf(g, tStr, tListStr)
		if !g.has(st) {
			st = tStr
		}
		a := reserve(elemNames[tStr])
		b := reserve(elemNames[tInt])
		second := g.operand(tListInt, 1).s
		if !g.has(tListInt) {
			second = "range(" + g.smallPos(2, 6) + ")"
		}
		header = "for " + a + ", " + b + " in zip(" + g.operand(st, 1).s + ", " + second + "):"
		add(a, tStr, st == tStr)
		add(b, tInt, false)
	}
	g.vars = g.vars[:mark]
	// a name the header iterates over directly (not through range(len(...)))
	// must not change while the loop runs
	iters := []*variable{}
	if iterVar != nil {
		iters = append(iters, iterVar)
	}
	if !strings.Contains(header, " in range(") {
		for _, v := range g.vars {
			if v != iterVar && v.frozen == 0 && mentions(header, func(n string) bool { return n == v.name }) {
				iters = append(iters, v)
			}
		}
	}
	unfreeze := g.loopFreeze(iters...)
	g.loopBody(header, false, unfreeze, func() {
		for _, lv := range loopVars {
			v := g.bind(lv.name, lv.t)
			v.frozen = 1
			v.char = lv.char
		}
	})
}

func wrapAtom(s string) string {
	for _, c := range s {
		if c == ' ' {
			if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
				return s
			}
			return "(" + s + ")"
		}
	}
	return s
}

func (g *gen) whileStmt() {
	g.feat.While = true
	switch g.pick(3, 2, 2, 2) {
	case 0: // index counter
		t := g.existingSized()
		vs := g.varsOf(t)
		if len(vs) == 0 {
			g.forStmt()
			return
		}
		src := vs[g.r.IntN(len(vs))]
		g.accumulator()
		i := g.freshName([]string{"i", "j", "idx", "pos"})
		g.emit("%s = %s", i, oneOf(g, "0", "0", "1"))
		iv := g.bind(i, tInt)
		unfreeze := g.loopFreeze(src)
		undoI := freeze(iv)
		g.loopBody("while "+i+" < len("+src.name+"):", true, func() {}, func() {})
		g.indent++
		g.emit("%s += %s", i, oneOf(g, "1", "1", "2"))
		g.indent--
		undoI()
		unfreeze()
	case 1: // countdown
		g.accumulator()
		n := g.freshName([]string{"n", "m", "k", "left", "steps"})
		init := g.smallPos(2, 8)
		if vs := g.varsOf(g.existingSized()); len(vs) > 0 && g.chance(0.6) {
			init = "len(" + vs[g.r.IntN(len(vs))].name + ")"
		}
		g.emit("%s = %s", n, init)
		nv := g.bind(n, tInt)
		undoN := freeze(nv)
		unfreeze := g.loopFreeze()
		g.loopBody("while "+n+" > 0:", true, func() {}, func() {})
		g.indent++
		g.emit("%s %s", n, oneOf(g, "-= 1", "-= 1", "//= 2", "-= 2"))
		g.indent--
		unfreeze()
		undoN()
	case 2: // work stack
		t := oneOf(g, tListInt, tListStr, tStr)
		src := g.value(t, 1, false)
		g.accumulator()
		stack := g.freshName([]string{"stack", "queue", "todo", "pending"})
		g.emit("%s = list(%s)", stack, src.s)
		sv := g.bind(stack, map[typ]typ{tStr: tListStr, tListInt: tListInt, tListStr: tListStr}[t])
		undoS := freeze(sv)
		unfreeze := g.loopFreeze()
		item := g.freshName(elemNames[t.elem()])
		pop := oneOf(g, ".pop()", ".pop()", ".pop(0)")
		g.loopBody("while "+stack+":", false, func() {}, func() {
			g.emit("%s = %s%s", item, stack, pop)
			v := g.bind(item, t.elem())
			v.frozen = 1
			v.char = t == tStr
		})
		unfreeze()
		undoS()
	default: // trim while a condition holds
		var cands []*variable
		for _, v := range g.vars {
			if v.frozen == 0 && (v.t == tStr || v.t == tListInt || v.t == tListStr) {
				cands = append(cands, v)
			}
		}
		if len(cands) == 0 {
			g.forStmt()
			return
		}
		v := cands[g.r.IntN(len(cands))]
		end := oneOf(g, "0", "-1")
		var c string
		switch v.t {
		case tListInt:
			c = oneOf(g, v.name+"["+end+"] "+oneOf(g, "< ", "> ", "== ")+g.intLit().s, v.name+"["+end+"] % 2 == "+oneOf(g, "0", "1"))
		default:
			c = oneOf(g, v.name+"["+end+"] == "+g.strLit().s, v.name+"["+end+"] in "+g.wordLit().s, v.name+"["+end+"]."+oneOf(g, "isdigit", "isspace", "isupper", "islower")+"()")
		}
		g.emit("while %s and %s:", v.name, c)
		g.indent++
		switch {
		case v.t == tStr && end == "0":
			g.emit("%s = %s[1:]", v.name, v.name)
		case v.t == tStr:
			g.emit("%s = %s[:-1]", v.name, v.name)
		case end == "0":
			g.emit("%s.pop(0)", v.name)
		default:
			g.emit("%s.pop()", v.name)
		}
		g.indent--
	}
}

// tryStmt writes a try/except around an operation that fails for some
// inputs: ValueError, KeyError or IndexError, as Python raises them.
func (g *gen) tryStmt() {
	g.feat.Try = true
	type attempt struct {
		exc    string
		line   string // the risky statement; TARGET is the new name if bind is set
		bind   typ
		binds  bool
		noPass bool
	}
	var a attempt
	for a.line == "" {
		switch g.pick(1.5, 1.5, 1, 1.5, 1, 1, 1, 1, 0.7) {
		case 0:
			a = attempt{exc: "ValueError", line: "TARGET = int(" + g.operand(tStr, 1).s + ")", bind: tInt, binds: true}
		case 1:
			t := oneOf(g, tStr, tListInt)
			if !g.want(t) {
				continue
			}
			a = attempt{exc: "ValueError", line: "TARGET = " + wrap(g.operand(t, 1), pAtom) + ".index(" + g.elemOf(t, 1).s + ")", bind: tInt, binds: true}
		case 2:
			if vs := g.writable(oneOf(g, tListInt, tListStr)); len(vs) > 0 {
				v := oneOf(g, vs...)
				a = attempt{exc: "ValueError", line: v.name + ".remove(" + g.elemOf(v.t, 1).s + ")"}
			}
		case 3:
			if !g.has(tDict) {
				continue
			}
			a = attempt{exc: "KeyError", line: "TARGET = " + wrap(g.operand(tDict, 1), pAtom) + "[" + g.elemOf(tDict, 1).s + "]", bind: tInt, binds: true}
		case 4:
			if vs := g.writable(tDict); len(vs) > 0 {
				v := oneOf(g, vs...)
				a = attempt{exc: "KeyError", line: oneOf(g, "del ", "") + v.name + "[" + g.elemOf(tDict, 1).s + "]"}
				if !strings.HasPrefix(a.line, "del ") {
					a.line = "TARGET = " + v.name + ".pop(" + g.elemOf(tDict, 1).s + ")"
					a.bind, a.binds = tInt, true
				}
			}
		case 5:
			t := oneOf(g, tStr, tListInt, tListStr)
			if !g.has(t) {
				continue
			}
			a = attempt{exc: "IndexError", line: "TARGET = " + wrap(g.operand(t, 1), pAtom) + "[" + g.index(1).s + "]", bind: t.elem(), binds: true}
		case 6:
			if vs := g.writable(oneOf(g, tListInt, tListStr)); len(vs) > 0 {
				v := oneOf(g, vs...)
				a = attempt{exc: "IndexError", line: "TARGET = " + v.name + ".pop(" + oneOf(g, "", "0", "2") + ")", bind: v.t.elem(), binds: true}
			}
		case 7:
			a = attempt{exc: "IndexError", line: "TARGET = " + wrap(g.operand(tStr, 1), pAtom) + ".split(" + g.splitSep().s + ")[1]", bind: tStr, binds: true}
		default:
			if g.helper != nil && g.helper.raises {
				a = attempt{exc: "ValueError", line: "TARGET = " + g.helperCall(1).s, bind: g.helper.ret, binds: true}
			}
		}
	}
	target := ""
	if a.binds {
		target = g.freshName(localNames[a.bind])
		a.line = strings.Replace(a.line, "TARGET", target, 1)
	}
	g.emit("try:")
	g.indent++
	g.nest++
	drop := g.scope()
	g.emit("%s", a.line)
	if a.binds {
		g.bind(target, a.bind)
	}
	if g.chance(0.3) && g.budget > 1 {
		g.stmt(-1)
	}
	drop()
	g.nest--
	g.indent--
	exc := a.exc
	switch g.pick(8, 1, 1) {
	case 1:
		exc = "(" + exc + ", " + oneOf(g, "TypeError", "ZeroDivisionError", map[string]string{"ValueError": "IndexError", "KeyError": "IndexError", "IndexError": "KeyError"}[exc]) + ")"
	case 2:
		exc = "Exception"
	}
	g.emit("except %s:", exc)
	g.indent++
	g.feat.ExceptLines = append(g.feat.ExceptLines, g.line+1)
	switch {
	case g.chance(0.15):
		g.feat.EarlyReturn = true
		g.emit("return %s", g.returnValue().s)
	case a.binds:
		var fb string
		switch a.bind {
		case tInt:
			fb = oneOf(g, "-1", "0", g.intLit().s)
		case tBool:
			fb = "False"
		default:
			fb = g.lit(a.bind).s
		}
		g.emit("%s = %s", target, fb)
	case g.inLoop && !g.inWhile && g.chance(0.4):
		g.emit("continue")
	default:
		g.emit("pass")
	}
	g.indent--
	if a.binds {
		g.bind(target, a.bind)
	}
}

func (g *gen) helperCallStmt() {
	h := g.helper
	if h == nil {
		g.assignNew()
		return
	}
	if h.raises && g.chance(0.7) {
		// the raise is meant to be caught
		name := g.freshName(localNames[h.ret])
		g.feat.Try = true
		g.emit("try:")
		g.indent++
		g.emit("%s = %s", name, g.helperCall(2).s)
		g.indent--
		g.emit("except ValueError:")
		g.indent++
		g.feat.ExceptLines = append(g.feat.ExceptLines, g.line+1)
		g.emit("%s = %s", name, g.lit(h.ret).s)
		g.indent--
		g.bind(name, h.ret)
		return
	}
	name := g.freshName(localNames[h.ret])
	g.emit("%s = %s", name, g.helperCall(2).s)
	g.bind(name, h.ret)
}

// without drops x from vs.
func (g *gen) without(vs []*variable, x *variable) []*variable {
	out := vs[:0:0]
	for _, v := range vs {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
