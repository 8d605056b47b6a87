package pysource

import (
	"slices"
	"strconv"
	"strings"
)

// ForBody is the body of the for statement whose header starts on line h:
// its first and last lines (the else clause is not in it); ok false where
// h starts no `for` (an `async for` included) or the body is on the
// header's line.
func (ix *Index) ForBody(h int) (first, last int, ok bool) {
	j, _, ok := ix.forHeader(h)
	if !ok {
		return 0, 0, false
	}
	end := ix.blockEnd(j)
	if end == ix.stmts[j].last { // no statement after the header's is in its block
		return 0, 0, false
	}
	return ix.stmts[j+1].first, end, true
}

// forHeader is the logical line of the plain `for` header on line h and
// its tokens.
func (ix *Index) forHeader(h int) (int, []token, bool) {
	if !ix.StatementStarts(h) {
		return 0, nil, false
	}
	j := ix.stmtAt[h-1]
	toks := ix.stmts[j].toks
	if len(toks) < 5 || toks[0].kind != tName || toks[0].text != "for" {
		return 0, nil, false
	}
	return j, toks, true
}

// ForTarget is the name the for loop whose header starts on line h binds
// to each item, "" where its target is not one name.
func (ix *Index) ForTarget(h int) string {
	_, toks, ok := ix.forHeader(h)
	if !ok || toks[1].kind != tName || keywords[toks[1].text] || toks[2].kind != tName || toks[2].text != "in" {
		return ""
	}
	return toks[1].text
}

// ItemBefore is what the target of the for loop whose header starts on
// line h held at the header's line event, given cur, the repr it holds
// once the header went on into the body: the item before cur (prev), or
// nothing (unbound: cur is the loop's first item and nothing else in the
// frame binds the name, and the loop runs at most once per frame). Known
// only for a loop whose target is one name that its body does not bind,
// over `range(...)` (a literal start and step), a list or tuple of
// literals, or a name the body does not mention whose repr (valueOf, the
// frame's locals) is a whole list, tuple or plain ASCII string; ok false
// otherwise, or where cur's place is ambiguous (an item that repeats with
// different items before it).
func (ix *Index) ItemBefore(h int, cur string, valueOf func(name string) (string, bool)) (prev string, unbound, ok bool) {
	name := ix.ForTarget(h)
	if name == "" {
		return "", false, false
	}
	j, toks, _ := ix.forHeader(h)
	colon := headerColon(toks)
	if colon < 4 || colon != len(toks)-1 || !ix.loopOwnsTarget(j, name) {
		return "", false, false
	}
	items := toks[3:colon]
	var first bool
	switch {
	case items[0].kind == tName && items[0].text == "range":
		prev, first, ok = ix.rangeBefore(items, cur)
	case items[0].kind == tOp && (items[0].text == "[" || items[0].text == "("):
		reprs, whole := literalItems(items)
		prev, first, ok = itemBefore(reprs, cur)
		ok = ok && whole
	case len(items) == 1 && items[0].kind == tName && !keywords[items[0].text] && items[0].text != name && !ix.bodyNames(j, items[0].text):
		if r, known := valueOf(items[0].text); known {
			reprs, whole := reprItems(r)
			prev, first, ok = itemBefore(reprs, cur)
			ok = ok && whole
		}
	}
	switch {
	case !ok:
		return "", false, false
	case !first:
		return prev, false, true
	case ix.runsOnce(j, name):
		return "", true, true
	}
	return "", false, false
}

// loopOwnsTarget reports whether name, the target of the for loop at
// logical line j, is a plain local of its frame that the loop's body
// does not bind or delete (so that it holds the item until the header
// runs again).
func (ix *Index) loopOwnsTarget(j int, name string) bool {
	sc := ix.owner[j]
	if ix.namespaceAliased() || sc == nil || sc.Kind == Class || sc.globals[name] || sc.nonlocals[name] || strings.HasPrefix(name, "__") {
		return false
	}
	for k := j + 1; k < len(ix.stmts) && ix.stmts[k].indent > ix.stmts[j].indent; k++ {
		n := ix.stmts[k].first
		if ix.owner[k] == sc && ix.bindsOrDeletes(n, name) {
			return false
		}
	}
	return true
}

// bindsOrDeletes reports whether the statement starting on line n binds
// or deletes name.
func (ix *Index) bindsOrDeletes(n int, name string) bool {
	return slices.Contains(ix.Binds(n), name) || ix.StatementKeyword(n) == "del" && slices.Contains(ix.NamesOn(n), name)
}

// runsOnce reports whether the for loop at logical line j starts at most
// once in a run of its frame (no loop around it) and its target name is
// bound nowhere else in the frame: before its first item, the name is
// unbound.
func (ix *Index) runsOnce(j int, name string) bool {
	sc := ix.owner[j]
	if ix.ModuleOpen() || slices.Contains(sc.Params, name) {
		return false
	}
	// the blocks around it, up to its def or class
	indent := ix.stmts[j].indent
	for k := j - 1; k >= 0 && indent > 0; k-- {
		if ix.stmts[k].indent >= indent {
			continue
		}
		indent = ix.stmts[k].indent
		switch ix.StatementKeyword(ix.stmts[k].first) {
		case "for", "while":
			return false
		case "def", "class":
			indent = 0
		}
	}
	for k := range ix.stmts {
		n := ix.stmts[k].first
		if k != j && ix.owner[k] == sc && ix.bindsOrDeletes(n, name) ||
			sc.Kind == Module && ix.StatementKeyword(n) == "global" && slices.Contains(ix.NamesOn(n), name) {
			return false
		}
	}
	return true
}

// rangeBefore reads `range(...)` (items: the iterable's tokens) with a
// literal start and step: the int before cur, or first when cur is the
// start. The builtin: no statement may bind the name range.
func (ix *Index) rangeBefore(items []token, cur string) (prev string, first, ok bool) {
	if len(items) < 3 || items[1].text != "(" || matching(items, 1) != len(items)-1 || ix.bindsAnywhere("range") {
		return "", false, false
	}
	args := splitTop(items[2:len(items)-1], ",")
	start, step := int64(0), int64(1)
	switch len(args) {
	case 1:
	case 2, 3:
		if start, ok = intLiteral(args[0]); !ok {
			return "", false, false
		}
		if len(args) == 3 {
			if step, ok = intLiteral(args[2]); !ok || step == 0 {
				return "", false, false
			}
		}
	default:
		return "", false, false
	}
	v, err := strconv.ParseInt(cur, 10, 64)
	if err != nil || (v-start)%step != 0 || (v-start)/step < 0 {
		return "", false, false
	}
	if v == start {
		return "", true, true
	}
	return strconv.FormatInt(v-step, 10), false, true
}

// intLiteral is the value of an int literal in decimal (negated by a
// leading minus), as one argument's tokens write it.
func intLiteral(toks []token) (int64, bool) {
	neg := len(toks) == 2 && toks[0].kind == tOp && toks[0].text == "-"
	if neg {
		toks = toks[1:]
	}
	if len(toks) != 1 || toks[0].kind != tNumber {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(toks[0].text, "_", ""), 10, 64)
	if err != nil || len(toks[0].text) > 1 && toks[0].text[0] == '0' {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// literalItems reads a list or tuple of literals (items: the iterable's
// tokens): the reprs of its items; whole false where it is no such list.
func literalItems(items []token) (reprs []string, whole bool) {
	if matching(items, 0) != len(items)-1 {
		return nil, false
	}
	parts := splitTop(items[1:len(items)-1], ",")
	if len(parts) == 1 && items[0].text == "(" {
		return nil, false // (x) is no tuple
	}
	if n := len(parts); n > 1 && len(parts[n-1]) == 0 {
		parts = parts[:n-1] // a trailing comma
	}
	for _, p := range parts {
		neg := len(p) == 2 && p[0].kind == tOp && p[0].text == "-"
		if neg {
			p = p[1:]
		}
		if len(p) != 1 {
			return nil, false
		}
		r, ok := literalRepr(p[0], neg)
		if !ok {
			return nil, false
		}
		reprs = append(reprs, r)
	}
	return reprs, true
}

// reprItems reads the repr of a list or tuple (its items' reprs, split at
// the top level), or of a str of printable ASCII with no quote or
// backslash (its characters' reprs); whole false for anything else (a
// repr cut short, a dict, an object).
func reprItems(r string) (reprs []string, whole bool) {
	if len(r) >= 2 && (r[0] == '\'' || r[0] == '"') && r[len(r)-1] == r[0] {
		for _, c := range []byte(r[1 : len(r)-1]) {
			if c < 0x20 || c > 0x7e || c == '\'' || c == '"' || c == '\\' {
				return nil, false
			}
			reprs = append(reprs, "'"+string(c)+"'")
		}
		return reprs, true
	}
	if len(r) < 2 || !(r[0] == '[' && r[len(r)-1] == ']' || r[0] == '(' && r[len(r)-1] == ')') {
		return nil, false
	}
	depth, quote, start := 0, byte(0), 1
	body := r[:len(r)-1]
	for i := 1; i < len(body); i++ {
		c := body[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			if depth--; depth < 0 {
				return nil, false
			}
		case c == ',' && depth == 0:
			if i == start {
				return nil, false
			}
			reprs = append(reprs, body[start:i])
			if i+1 < len(body) && body[i+1] == ' ' {
				i++ // repr's separator
			} else if i+1 < len(body) || r[0] != '(' {
				return nil, false
			}
			start = i + 1
		}
	}
	if quote != 0 || depth != 0 {
		return nil, false
	}
	if last := body[start:]; last != "" {
		reprs = append(reprs, last)
	} else if r[0] == '(' && len(reprs) != 1 || r[0] == '[' && len(reprs) > 0 {
		return nil, false // "()" is empty; a trailing comma only in "(x,)"
	}
	return reprs, true
}

// itemBefore finds cur among reprs: the item before it, or first when it
// is the first; ok false where it is none of them or its items before
// differ.
func itemBefore(reprs []string, cur string) (prev string, first, ok bool) {
	for i, r := range reprs {
		if r != cur {
			continue
		}
		p, f := "", i == 0
		if !f {
			p = reprs[i-1]
		}
		if ok && (p != prev || f != first) {
			return "", false, false
		}
		prev, first, ok = p, f, true
	}
	return prev, first, ok
}

// bodyNames reports whether a line of the body of the for loop at
// logical line j names name.
func (ix *Index) bodyNames(j int, name string) bool {
	for k := j + 1; k < len(ix.stmts) && ix.stmts[k].indent > ix.stmts[j].indent; k++ {
		for n := ix.stmts[k].first; n <= ix.stmts[k].last; n++ {
			if slices.Contains(ix.NamesOn(n), name) {
				return true
			}
		}
	}
	return false
}

// bindsAnywhere reports whether a statement anywhere binds name (or the
// module may bind names its text does not show).
func (ix *Index) bindsAnywhere(name string) bool {
	if ix.ModuleOpen() {
		return true
	}
	for _, l := range ix.stmts {
		if slices.Contains(ix.Binds(l.first), name) {
			return true
		}
	}
	return false
}

// RunsThreads reports whether the program may run threads (it names
// threading, _thread or concurrent): another thread may change a value
// between two events of a frame.
func (ix *Index) RunsThreads() bool {
	return ix.namesAnywhere("threading", "_thread", "concurrent")
}
