package synth

import "strings"

// expr returns an expression of type t nested at most d deep. fresh asks for
// a new object when t is mutable: never a bare name, so no two names alias
// one list (mutating an alias of an iterated list would never end).
func (g *gen) expr(t typ, d int, fresh bool) ex {
	if d <= 0 || g.chance(0.22) {
		return g.leaf(t, fresh)
	}
	switch t {
	case tInt:
		return g.intExpr(d)
	case tStr:
		return g.strExpr(d)
	case tBool:
		return g.cond(d)
	case tListInt:
		return g.listIntExpr(d)
	case tListStr:
		return g.listStrExpr(d)
	case tDict:
		return g.dictExpr(d)
	default:
		return g.setExpr(d)
	}
}

// operand is a read of t: usually a name, else a small expression.
func (g *gen) operand(t typ, d int) ex {
	if v := g.anyVar(t); v != nil && g.chance(0.85) {
		return atom(v.name)
	}
	var e ex
	for range 3 {
		if e = g.expr(t, d-1, false); g.mentionsVar(e.s) {
			return e
		}
	}
	return e
}

// leaf is a name, a copy of a name, or a literal.
func (g *gen) leaf(t typ, fresh bool) ex {
	v := g.anyVar(t)
	if v != nil && g.chance(0.8) {
		if !fresh || !t.mutable() {
			return atom(v.name)
		}
		switch t {
		case tListInt, tListStr:
			return atom(oneOf(g, v.name+"[:]", "list("+v.name+")", v.name+".copy()", "sorted("+v.name+")", v.name+"[::-1]"))
		case tDict:
			return atom(oneOf(g, v.name+".copy()", "dict("+v.name+")"))
		case tSet:
			return atom(oneOf(g, "set("+v.name+")", v.name+".copy()"))
		}
	}
	return g.lit(t)
}

func (g *gen) lit(t typ) ex {
	switch t {
	case tInt:
		return g.intLit()
	case tStr:
		return g.strLit()
	case tBool:
		return atom(oneOf(g, "True", "False"))
	case tListInt:
		if g.chance(0.5) {
			return atom("[]")
		}
		n := 1 + g.r.IntN(4)
		xs := make([]string, n)
		for i := range xs {
			xs[i] = g.intLit().s
		}
		return atom("[" + strings.Join(xs, ", ") + "]")
	case tListStr:
		if g.chance(0.5) {
			return atom("[]")
		}
		n := 1 + g.r.IntN(3)
		xs := make([]string, n)
		for i := range xs {
			xs[i] = g.strLit().s
		}
		return atom("[" + strings.Join(xs, ", ") + "]")
	case tDict:
		if g.chance(0.7) {
			return atom(oneOf(g, "{}", "dict()"))
		}
		return atom("{" + g.strLit().s + ": " + g.intLit().s + "}")
	default:
		if g.chance(0.7) {
			return atom("set()")
		}
		return atom("{" + g.intLit().s + ", " + g.intLit().s + "}")
	}
}

// sizedType draws a type that has a len().
func (g *gen) sizedType() typ {
	return []typ{tStr, tStr, tListInt, tListStr, tDict, tSet}[g.r.IntN(6)]
}

// existingSized prefers a sized type that has a readable name.
func (g *gen) existingSized() typ {
	for range 4 {
		t := g.sizedType()
		if len(g.varsOf(t)) > 0 {
			return t
		}
	}
	return g.sizedType()
}

// elemOf returns an expression of X's element type: a literal, a name, or
// (sometimes) one X is known to hold.
func (g *gen) elemOf(t typ, d int) ex {
	if t.elem() == tStr && t == tStr {
		if v := g.charVar(); v != nil && g.chance(0.5) {
			return atom(v.name)
		}
		return g.strLit()
	}
	if t == tDict {
		if v := g.charVar(); v != nil && g.chance(0.4) {
			return atom(v.name)
		}
		return g.strLit()
	}
	return g.operand(t.elem(), d-1)
}

func (g *gen) charVar() *variable {
	var cs []*variable
	for _, v := range g.vars {
		if v.char && g.readable(v) {
			cs = append(cs, v)
		}
	}
	if len(cs) == 0 {
		return nil
	}
	return cs[g.r.IntN(len(cs))]
}

// comp writes a comprehension over src: bind introduces the loop name while
// body and cond are generated. kind is "[", "{" (set/dict) or "(" (generator).
func (g *gen) comp(src typ, d int, body func(x *variable) string, withCond float64) (string, string) {
	g.feat.Comprehension = true
	iter := g.operand(src, d)
	name := g.freshName(compNames)
	drop := g.scope()
	x := g.bind(name, src.elem())
	x.frozen = 1
	x.char = src == tStr
	b := body(x)
	cond := ""
	if g.chance(withCond) {
		cond = " if " + g.condOn(x, d-1).s
	}
	drop()
	return b, " for " + name + " in " + wrap(iter, pOr+1) + cond
}

func (g *gen) intExpr(d int) ex {
	risky := g.kn.PRisky
	helperW := 0.0
	if g.helper != nil && g.helper.ret == tInt {
		helperW = 2
	}
	for {
		switch g.pick(2, 3, 1.2, 1, 1, 1, 2, 1, 1.2, 0.4, 0.5*risky, 0.4*risky, 0.6, 0.7, 0.4, helperW, 0.5) {
		case 0:
			return g.leaf(tInt, false)
		case 1:
			return atom("len(" + g.operand(g.existingSized(), d).s + ")")
		case 2:
			if g.chance(0.6) {
				return atom(wrap(g.operand(tStr, d), pAtom) + ".count(" + g.elemOf(tStr, d).s + ")")
			}
			lt := oneOf(g, tListInt, tListStr)
			if g.want(lt) {
				return atom(wrap(g.operand(lt, d), pAtom) + ".count(" + g.elemOf(lt, d).s + ")")
			}
		case 3:
			if !g.want(tStr) {
				continue
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + oneOf(g, ".find(", ".rfind(") + g.strLit().s + ")")
		case 4:
			if lt := oneOf(g, tListInt, tListInt, tSet); g.want(lt) {
				return atom("sum(" + g.operand(lt, d).s + ")")
			}
		case 5:
			if g.chance(0.5*risky) && g.want(tListInt) { // raises on an empty list
				return atom(oneOf(g, "max(", "min(") + g.operand(tListInt, d).s + ")")
			}
			a, b := g.operand(tInt, d), g.operand(tInt, d)
			if a.s == b.s {
				b = g.intLit()
			}
			return atom(oneOf(g, "max(", "min(") + a.s + ", " + b.s + ")")
		case 6:
			op := oneOf(g, " + ", " - ", " + ")
			l, r := g.operand(tInt, d), g.expr(tInt, d-1, false)
			if l.s == r.s || r.s == "0" {
				r = atom(g.smallPos(1, 5))
			}
			return ex{wrap(l, pAdd) + op + wrap(r, pAdd+1), pAdd}
		case 7: // a literal factor keeps ints small even inside loops
			return ex{wrap(g.operand(tInt, d), pMul) + " * " + g.smallPos(2, 5), pMul}
		case 8:
			return ex{wrap(g.operand(tInt, d), pMul) + oneOf(g, " // ", " % ", " % ") + g.smallPos(2, 7), pMul}
		case 9:
			return atom("abs(" + g.expr(tInt, d-1, false).s + ")")
		case 10: // ValueError when absent
			if g.chance(0.5) && g.want(tStr) {
				return atom(wrap(g.operand(tStr, d), pAtom) + ".index(" + g.elemOf(tStr, d).s + ")")
			}
			if g.want(tListInt) {
				return atom(wrap(g.operand(tListInt, d), pAtom) + ".index(" + g.elemOf(tListInt, d).s + ")")
			}
		case 11: // KeyError or IndexError
			if g.chance(0.5) && g.want(tDict) {
				return atom(wrap(g.operand(tDict, d), pAtom) + "[" + g.elemOf(tDict, d).s + "]")
			}
			if g.want(tListInt) {
				return atom(wrap(g.operand(tListInt, d), pAtom) + "[" + g.index(d).s + "]")
			}
		case 12:
			if g.want(tDict) {
				return atom(wrap(g.operand(tDict, d), pAtom) + ".get(" + g.elemOf(tDict, d).s + ", " + g.intLit().s + ")")
			}
		case 13:
			src := oneOf(g, tStr, tListInt, tListStr)
			if !g.want(src) {
				continue
			}
			if g.chance(0.5) {
				b, tail := g.comp(src, d, func(*variable) string { return "1" }, 1)
				return atom("sum(" + b + tail + ")")
			}
			b, tail := g.comp(src, d, func(x *variable) string { return x.name }, 1)
			return atom("len([" + b + tail + "])")
		case 14:
			return ex{wrap(g.expr(tInt, d-1, false), pOr) + " if " + wrap(g.cond(d-1), pOr) + " else " + wrap(g.expr(tInt, d-1, false), pCond), pCond}
		case 15:
			return g.helperCall(d)
		case 16:
			if c := g.charVar(); c != nil {
				return atom("ord(" + c.name + ")")
			}
		}
	}
}

// index is a list/str subscript: mostly small literals, sometimes a name.
func (g *gen) index(d int) ex {
	if v := g.anyVar(tInt); v != nil && g.chance(0.4) {
		return atom(v.name)
	}
	return atom(oneOf(g, "0", "-1", "1", "0", "-1", "2"))
}

// slice is a [a:b:c] suffix.
func (g *gen) slice(d int) string {
	g.feat.Slice = true
	switch g.pick(2, 1.5, 1.5, 1, 1, 1, 0.8) {
	case 0:
		return "[::-1]"
	case 1:
		return "[1:]"
	case 2:
		return "[:-1]"
	case 3:
		return "[" + g.operand(tInt, d-1).s + ":]"
	case 4:
		return "[:" + g.operand(tInt, d-1).s + "]"
	case 5:
		return "[::2]"
	default:
		return "[" + g.intLit().s + ":" + g.operand(tInt, d-1).s + "]"
	}
}

func (g *gen) strExpr(d int) ex {
	risky := g.kn.PRisky
	helperW := 0.0
	if g.helper != nil && g.helper.ret == tStr {
		helperW = 2
	}
	for {
		switch g.pick(1, 3, 1.5, 2, 2, 1.5, 1, 1, 0.3, 0.5*risky, 0.5, 0.4, 0.3, 0.4, helperW, 0.5) {
		case 0:
			return g.leaf(tStr, false)
		case 1:
			if !g.want(tStr) {
				continue
			}
			m := oneOf(g, "upper", "lower", "strip", "capitalize", "title", "swapcase", "lstrip", "rstrip", "casefold", "upper", "lower")
			return atom(wrap(g.operand(tStr, d), pAtom) + "." + m + "()")
		case 2:
			if !g.want(tStr) {
				continue
			}
			s := wrap(g.operand(tStr, d), pAtom)
			switch g.r.IntN(4) {
			case 0:
				return atom(s + "." + oneOf(g, "strip", "lstrip", "rstrip") + "(" + g.strLit().s + ")")
			case 1:
				return atom(s + "." + oneOf(g, "removeprefix", "removesuffix") + "(" + g.strLit().s + ")")
			default:
				return atom(s + ".replace(" + g.strLit().s + ", " + g.strLit().s + ")")
			}
		case 3:
			if !g.want(tStr) {
				continue
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + g.slice(d))
		case 4:
			l, r := g.expr(tStr, d-1, false), g.expr(tStr, d-1, false)
			return ex{wrap(l, pAdd) + " + " + wrap(r, pAdd+1), pAdd}
		case 5:
			sep := g.sepLit()
			switch g.r.IntN(4) {
			case 0:
				if g.want(tListStr) {
					return atom(sep.s + ".join(" + g.operand(tListStr, d).s + ")")
				}
				return atom(sep.s + ".join(" + g.operand(tStr, d).s + ")")
			case 1:
				return atom("''.join(" + oneOf(g, "sorted(", "reversed(") + g.operand(tStr, d).s + "))")
			default:
				src := oneOf(g, tStr, tListStr)
				if !g.want(src) {
					src = tStr
				}
				b, tail := g.comp(src, d, func(x *variable) string {
					switch g.r.IntN(3) {
					case 0:
						return x.name
					case 1:
						return x.name + "." + oneOf(g, "upper", "lower", "swapcase", "strip") + "()"
					default:
						return x.name + " if " + wrap(g.cond(d-1), pOr) + " else " + wrap(g.strLit(), pCond)
					}
				}, 0.6)
				if strings.Contains(b, " if ") && !strings.HasPrefix(b, "(") {
					b = "(" + b + ")"
				}
				return atom(sep.s + ".join([" + b + tail + "])")
			}
		case 6:
			return atom("str(" + g.expr(tInt, d-1, false).s + ")")
		case 7:
			if !g.want(tStr) {
				continue
			}
			return ex{wrap(g.operand(tStr, d), pMul) + " * " + g.smallPos(2, 3), pMul}
		case 8:
			if !g.want(tStr) {
				continue
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + "." + oneOf(g, "zfill", "ljust", "rjust", "center") + "(" + g.smallPos(3, 9) + ")")
		case 9: // IndexError on short input
			if g.chance(0.5) {
				return atom(wrap(g.operand(tStr, d), pAtom) + "[" + g.index(d).s + "]")
			}
			if g.want(tListStr) {
				return atom(wrap(g.operand(tListStr, d), pAtom) + "[" + g.index(d).s + "]")
			}
		case 10:
			if !g.want(tStr) {
				continue
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + ".split(" + g.splitSep().s + ")[" + oneOf(g, "0", "-1", "0") + "]")
		case 11:
			if !g.want(tStr) {
				continue
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + "." + oneOf(g, "partition", "rpartition") + "(" + g.strLit().s + ")[" + oneOf(g, "0", "2") + "]")
		case 12:
			return ex{wrap(g.expr(tStr, d-1, false), pOr) + " if " + wrap(g.cond(d-1), pOr) + " else " + wrap(g.expr(tStr, d-1, false), pCond), pCond}
		case 13:
			if c := g.charVar(); c != nil && g.chance(0.5) {
				return atom("chr(ord(" + c.name + ") + " + g.smallPos(1, 3) + ")")
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + "." + oneOf(g, "upper", "lower") + "()")
		case 14:
			return g.helperCall(d)
		case 15:
			if len(g.varsOf(tDict)) > 0 {
				return atom("''.join(" + g.operand(tDict, d).s + ")")
			}
		}
	}
}

// cond is a condition that reads some name when it can: a condition on
// literals alone is constant.
func (g *gen) cond(d int) ex {
	var e ex
	for range 4 {
		if e = g.condRaw(d); g.mentionsVar(e.s) {
			return e
		}
	}
	return e
}

func (g *gen) condRaw(d int) ex {
	if d <= 0 {
		if v := g.anyVar(tBool); v != nil && g.chance(0.6) {
			return atom(v.name)
		}
		d = 1
	}
	helperW := 0.0
	if g.helper != nil && g.helper.ret == tBool {
		helperW = 2
	}
	for {
		switch g.pick(2.5, 2, 1.5, 2, 1.5, 2, 0.7, 0.6, 0.5, 0.5, 0.4, 0.3, helperW, 0.5) {
		case 0:
			l := g.expr(tInt, d-1, false)
			r := g.expr(tInt, d-1, false)
			if l.s == r.s {
				r = g.intLit()
			}
			return ex{wrap(l, pCmp+1) + oneOf(g, " < ", " > ", " == ", " != ", " <= ", " >= ") + wrap(r, pCmp+1), pCmp}
		case 1:
			if !g.want(tStr) {
				continue
			}
			x := g.operand(tStr, d)
			return ex{wrap(x, pCmp+1) + oneOf(g, " == ", " != ", " in ", " not in ") + g.litLike(x).s, pCmp}
		case 2:
			return ex{"len(" + g.operand(g.existingSized(), d).s + ")" + oneOf(g, " > ", " < ", " == ", " >= ") + g.smallPos(1, 6), pCmp}
		case 3:
			t := g.existingSized()
			return ex{wrap(g.elemOf(t, d), pCmp+1) + oneOf(g, " in ", " not in ", " in ") + wrap(g.operand(t, d), pCmp+1), pCmp}
		case 4:
			if !g.want(tStr) {
				continue
			}
			x := g.operand(tStr, d)
			return atom(wrap(x, pAtom) + "." + oneOf(g, "startswith", "endswith") + "(" + g.litLike(x).s + ")")
		case 5:
			m := oneOf(g, "isdigit", "isalpha", "isupper", "islower", "isspace", "isalnum", "istitle", "isdecimal", "isnumeric")
			if c := g.charVar(); c != nil && g.chance(0.6) {
				return atom(c.name + "." + m + "()")
			}
			return atom(wrap(g.operand(tStr, d), pAtom) + "." + m + "()")
		case 6:
			return ex{"not " + wrap(g.cond(d-1), pNot), pNot}
		case 7:
			return ex{wrap(g.cond(d-1), pAnd) + " and " + wrap(g.cond(d-1), pAnd+1), pAnd}
		case 8:
			return ex{wrap(g.cond(d-1), pOr) + " or " + wrap(g.cond(d-1), pOr+1), pOr}
		case 9:
			return ex{wrap(g.operand(tInt, d), pMul) + " % " + g.smallPos(2, 3) + " == " + oneOf(g, "0", "1", "0"), pCmp}
		case 10:
			src := oneOf(g, tStr, tListInt, tListStr)
			if !g.want(src) {
				continue
			}
			b, tail := g.comp(src, d, func(x *variable) string { return g.condOn(x, d-1).s }, 0)
			return atom(oneOf(g, "all(", "any(") + b + tail + ")")
		case 11:
			return ex{"not " + wrap(g.operand(g.existingSized(), d), pNot), pNot}
		case 12:
			return g.helperCall(d)
		case 13:
			if v := g.anyVar(tBool); v != nil {
				return atom(v.name)
			}
		}
	}
}

func (g *gen) listIntExpr(d int) ex {
	helperW := 0.0
	if g.helper != nil && g.helper.ret == tListInt {
		helperW = 2
	}
	for {
		switch g.pick(1, 1.5, 1.5, 2.5, 1, 0.6, 1, 0.6, 0.6, 0.5, helperW) {
		case 0:
			return g.leaf(tListInt, true)
		case 1:
			rev := ""
			if g.chance(0.3) {
				rev = ", reverse=True"
			}
			return atom("sorted(" + g.operand(oneOf(g, tListInt, tListInt, tSet), d).s + rev + ")")
		case 2:
			if !g.want(tListInt) {
				continue
			}
			return atom(wrap(g.operand(tListInt, d), pAtom) + g.slice(d))
		case 3:
			if !g.want(tListInt) {
				continue
			}
			b, tail := g.comp(tListInt, d, func(x *variable) string {
				switch g.r.IntN(4) {
				case 0:
					return x.name
				case 1:
					return x.name + oneOf(g, " * ", " + ", " - ", " % ", " // ") + g.smallPos(2, 4)
				case 2:
					return "abs(" + x.name + ")"
				default:
					return wrap(g.intExpr(1), pCond+1)
				}
			}, 0.6)
			return atom("[" + b + tail + "]")
		case 4:
			src := oneOf(g, tStr, tListStr)
			b, tail := g.comp(src, d, func(x *variable) string {
				if src == tStr {
					return oneOf(g, "ord("+x.name+")", "int("+x.name+".isdigit())", x.name+".count('a')")
				}
				return oneOf(g, "len("+x.name+")", x.name+".count("+g.charLit().s+")", x.name+".find("+g.charLit().s+")")
			}, 0.3)
			return atom("[" + b + tail + "]")
		case 5:
			return atom("list(range(" + oneOf(g, g.smallPos(1, 6), "len("+g.operand(tStr, d).s+")") + "))")
		case 6:
			if !g.want(tListInt) {
				continue
			}
			return ex{wrap(g.operand(tListInt, d), pAdd) + " + " + wrap(g.operand(tListInt, d), pAdd+1), pAdd}
		case 7:
			if !g.want(tDict) {
				continue
			}
			return atom("list(" + wrap(g.operand(tDict, d), pAtom) + ".values())")
		case 8:
			if g.chance(0.5) {
				src := g.operand(tStr, d).s
				i, c := g.freshName([]string{"i", "j", "k"}), g.freshName([]string{"c", "ch", "x"})
				g.feat.Comprehension = true
				return atom("[" + i + " for " + i + ", " + c + " in enumerate(" + src + ") if " + c + " == " + g.charLit().s + "]")
			}
			return ex{"[" + g.operand(tInt, d).s + "] * " + g.smallPos(1, 3), pMul}
		case 9:
			if !g.want(tSet) {
				continue
			}
			return atom(oneOf(g, "list(", "sorted(") + g.operand(tSet, d).s + ")")
		case 10:
			return g.helperCall(d)
		}
	}
}

func (g *gen) listStrExpr(d int) ex {
	helperW := 0.0
	if g.helper != nil && g.helper.ret == tListStr {
		helperW = 2
	}
	for {
		switch g.pick(1, 2.5, 1, 1, 1, 2, 0.8, 0.6, 0.5, helperW) {
		case 0:
			return g.leaf(tListStr, true)
		case 1:
			s := wrap(g.operand(tStr, d), pAtom)
			if g.chance(0.4) {
				return atom(s + ".split()")
			}
			return atom(s + ".split(" + g.splitSep().s + ")")
		case 2:
			return atom("list(" + g.operand(tStr, d).s + ")")
		case 3:
			rev := ""
			if g.chance(0.3) {
				rev = ", reverse=True"
			}
			return atom("sorted(" + g.operand(oneOf(g, tListStr, tStr), d).s + rev + ")")
		case 4:
			if !g.want(tListStr) {
				continue
			}
			return atom(wrap(g.operand(tListStr, d), pAtom) + g.slice(d))
		case 5:
			src := oneOf(g, tListStr, tStr)
			b, tail := g.comp(src, d, func(x *variable) string {
				switch g.r.IntN(4) {
				case 0:
					return x.name
				case 1:
					return x.name + "." + oneOf(g, "upper", "lower", "strip", "capitalize", "swapcase") + "()"
				case 2:
					return x.name + " + " + g.strLit().s
				default:
					return x.name + "[::-1]"
				}
			}, 0.6)
			return atom("[" + b + tail + "]")
		case 6:
			if !g.want(tDict) {
				continue
			}
			return atom(oneOf(g, "list(", "sorted(", "list(") + g.operand(tDict, d).s + ")")
		case 7:
			if !g.want(tListStr) {
				continue
			}
			return ex{wrap(g.operand(tListStr, d), pAdd) + " + " + wrap(g.operand(tListStr, d), pAdd+1), pAdd}
		case 8:
			return atom(wrap(g.operand(tStr, d), pAtom) + ".splitlines()")
		case 9:
			return g.helperCall(d)
		}
	}
}

func (g *gen) dictExpr(d int) ex {
	for {
		switch g.pick(1, 2, 1.2, 1, 1, 0.6, 0.8) {
		case 0:
			return g.leaf(tDict, true)
		case 1:
			src := oneOf(g, tStr, tListStr)
			val := ""
			b, tail := g.comp(src, d, func(x *variable) string {
				if src == tStr {
					val = oneOf(g, wrap(g.operand(tStr, d), pAtom)+".count("+x.name+")", "ord("+x.name+")", "0", g.intLit().s)
				} else {
					val = oneOf(g, "len("+x.name+")", "0", x.name+".count("+g.charLit().s+")")
				}
				return x.name + ": " + val
			}, 0.3)
			return atom("{" + b + tail + "}")
		case 2:
			if !g.want(tListInt) {
				continue
			}
			return atom("dict(zip(" + g.operand(oneOf(g, tListStr, tStr), d).s + ", " + g.operand(tListInt, d).s + "))")
		case 3:
			return atom("dict.fromkeys(" + g.operand(oneOf(g, tListStr, tStr), d).s + ", " + g.intLit().s + ")")
		case 4:
			if !g.want(tDict) {
				continue
			}
			src := g.operand(tDict, d)
			name := g.freshName([]string{"k", "key"})
			drop := g.scope()
			k := g.bind(name, tStr)
			k.frozen = 1
			vn := g.freshName([]string{"v", "val"})
			v := g.bind(vn, tInt)
			v.frozen = 1
			val := oneOf(g, vn+" * "+g.smallPos(2, 3), vn+" + "+g.smallPos(1, 3), vn, "-"+vn, "len("+name+")")
			cond := ""
			if g.chance(0.5) {
				cond = " if " + g.cond(d-1).s
			}
			drop()
			g.feat.Comprehension = true
			return atom("{" + name + ": " + val + " for " + name + ", " + vn + " in " + wrap(src, pAtom) + ".items()" + cond + "}")
		case 5:
			return atom("{" + g.strLit().s + ": " + g.intLit().s + ", " + g.strLit().s + ": " + g.intLit().s + "}")
		case 6: // {c: i for i, c in enumerate(s)}
			src := g.operand(tStr, d)
			g.feat.Comprehension = true
			i, c := g.freshName([]string{"i", "j", "k"}), g.freshName([]string{"c", "ch", "x"})
			return atom("{" + c + ": " + i + " for " + i + ", " + c + " in enumerate(" + src.s + ")}")
		}
	}
}

func (g *gen) setExpr(d int) ex {
	for {
		switch g.pick(1, 2, 1.5, 1.2, 0.6, 0.5) {
		case 0:
			return g.leaf(tSet, true)
		case 1:
			return atom("set(" + g.operand(oneOf(g, tListInt, tListInt, tSet), d).s + ")")
		case 2:
			if !g.want(tListInt) {
				continue
			}
			b, tail := g.comp(tListInt, d, func(x *variable) string {
				return oneOf(g, x.name+" % "+g.smallPos(2, 5), x.name, "abs("+x.name+")", x.name+" // "+g.smallPos(2, 3))
			}, 0.4)
			return atom("{" + b + tail + "}")
		case 3:
			if !g.want(tSet) {
				continue
			}
			l, r := g.operand(tSet, d), g.operand(oneOf(g, tSet, tSet), d)
			if l.s == r.s {
				r = atom("set(" + g.operand(tListInt, d).s + ")")
			}
			return ex{wrap(l, pBand+1) + oneOf(g, " & ", " - ") + wrap(r, pBand+1), pBor}
		case 4:
			if !g.want(tDict) {
				continue
			}
			return atom("set(" + wrap(g.operand(tDict, d), pAtom) + ".values())")
		case 5:
			return atom("set(range(" + g.smallPos(1, 6) + "))")
		}
	}
}

// helperCall calls the helper with arguments of its parameter types.
func (g *gen) helperCall(d int) ex {
	h := g.helper
	if h == nil {
		return g.lit(tInt)
	}
	args := make([]string, len(h.params))
	for range 4 {
		for i, t := range h.params {
			args[i] = g.helperArg(h, i, t, d)
		}
		if g.mentionsVar(strings.Join(args, " ")) {
			break
		}
	}
	return atom(h.name + "(" + strings.Join(args, ", ") + ")")
}

// helperArg bounds a recursive helper's depth argument: an int counter only
// ever comes from a length, an unchanged int parameter or a literal.
func (g *gen) helperArg(h *fn, i int, t typ, d int) string {
	if h.recursive && i == h.recParam && t == tInt {
		var fixed []*variable
		for _, v := range g.vars {
			if v.t == tInt && v.param && v.frozen > 0 {
				fixed = append(fixed, v)
			}
		}
		switch {
		case len(fixed) > 0 && g.chance(0.4):
			return oneOf(g, fixed...).name
		case g.chance(0.6):
			return "len(" + g.operand(g.existingSized(), d).s + ")"
		default:
			return g.smallPos(0, 8)
		}
	}
	return g.operand(t, d).s
}

// litLike is a literal to compare x with: a character when x holds one
// (comparing a character with "hello" is always False).
func (g *gen) litLike(x ex) ex {
	for _, v := range g.vars {
		if v.name == x.s && v.char {
			return g.charLit()
		}
	}
	return g.strLit()
}
