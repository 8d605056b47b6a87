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
	if items[0].kind == tName && items[0].text == "range" {
		prev, first, ok = ix.rangeBefore(items, cur)
	} else if reprs, whole := ix.loopItems(j, items, name, valueOf); whole {
		prev, first, ok = itemBefore(reprs, cur)
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

// LoopPlace is what a for header's event knows of its place in the run
// of its loop beyond the frame's values (zero: nothing).
type LoopPlace struct {
	// Prev is the line of the frame's line event before it (0: unknown).
	Prev int
	// Round counts the header's events in this run of the loop, this one
	// included: the item it takes is the Round-th (0: unknown).
	Round int
}

// ForTargets are the names the for loop whose header starts on line h
// binds to each item: its one name, or the names of a flat tuple (`k, v`,
// `(k, v)`); nil otherwise.
func (ix *Index) ForTargets(h int) []string {
	_, names, _, ok := ix.forParts(h)
	if !ok {
		return nil
	}
	return names
}

// forParts splits the plain for header on line h: its logical line, its
// target's names (as ForTargets) and its iterable's tokens.
func (ix *Index) forParts(h int) (j int, names []string, iter []token, ok bool) {
	j, toks, ok := ix.forHeader(h)
	if !ok {
		return 0, nil, nil, false
	}
	colon := headerColon(toks)
	in := -1
	for k := 1; k < colon; k++ {
		if toks[k].kind == tName && toks[k].text == "in" {
			in = k
			break
		}
	}
	if in < 2 || colon != len(toks)-1 || colon < in+2 {
		return 0, nil, nil, false
	}
	target := toks[1:in]
	if len(target) > 2 && target[0].text == "(" && matching(target, 0) == len(target)-1 {
		target = target[1 : len(target)-1]
	}
	parts := splitTop(target, ",")
	if n := len(parts); n > 1 && len(parts[n-1]) == 0 {
		parts = parts[:n-1] // a trailing comma
	}
	for _, p := range parts {
		if len(p) != 1 || p[0].kind != tName || keywords[p[0].text] || slices.Contains(names, p[0].text) {
			return 0, nil, nil, false
		}
		names = append(names, p[0].text)
	}
	return j, names, toks[in+1 : colon], true
}

// ItemAfter is what the targets of the for loop whose header starts on
// line h (ForTargets) take when the header's line event goes on, given
// the frame's locals there (valueOf) and its place (at): the next item's
// reprs, one per target (into: the body's first line comes next with
// them bound), or none (into false: the loop is done, nothing changes and
// a line after it comes next). After a line outside the body (at.Prev)
// the loop starts: its first item; after a line in the body it goes on
// from the item the targets hold, the at.Round-th where that is known (an
// item that repeats then sets a rule too). Without at.Prev: before the
// loop's first item no target is bound; once they are, the header's event
// goes on from the item they hold where the loop starts at most once per
// frame and nothing else in the frame binds them.
//
// Known for the loops ItemBefore reads, for `NAME.split()` on a str, a
// dict's keys, `range(...)` whose start, stop and step are int literals,
// ints or `len(NAME)` of names the body does not change, and, for a tuple
// of targets, a list of tuples, `enumerate(NAME)`, `NAME.items()` and
// `zip(NAME, ...)`; ok false otherwise (a header over several lines,
// where an event may fire on each), where the item's place is ambiguous,
// or where a done loop would leave an `except ... as` body (InHandlerAs).
func (ix *Index) ItemAfter(h int, at LoopPlace, valueOf func(name string) (string, bool)) (next []string, into, ok bool) {
	prev := at.Prev
	j, names, iter, ok := ix.forParts(h)
	if !ok || ix.ModuleOpen() || !ix.oneLine(h) || prev == h {
		return nil, false, false
	}
	var cur []string
	for _, name := range names {
		if !ix.loopOwnsTarget(j, name) || ix.declared(name) {
			return nil, false, false
		}
		if v, bound := valueOf(name); bound {
			cur = append(cur, v)
		}
	}
	bound := len(cur) > 0
	first, last, _ := ix.ForBody(h)
	switch {
	case prev != 0 && (prev < first || prev > last):
		bound = false // the loop starts
	case prev != 0 && len(cur) != len(names):
		return nil, false, false
	case prev == 0 && bound && (len(cur) != len(names) || slices.ContainsFunc(names, func(name string) bool { return !ix.runsOnce(j, name) })):
		return nil, false, false // the loop may start again with the names bound
	}
	handler := ix.InHandlerAs(h) // a done loop leaves the body: its name is deleted
	if len(names) == 1 && iter[0].kind == tName && iter[0].text == "range" {
		n, into, ok := ix.rangeAfter(j, iter, strings.Join(cur, ""), bound, valueOf)
		return []string{n}, into, ok && (into || !handler)
	}
	var items [][]string
	if len(names) == 1 {
		reprs, whole := ix.loopItems(j, iter, names[0], valueOf)
		if !whole {
			return nil, false, false
		}
		for _, r := range reprs {
			items = append(items, []string{r})
		}
	} else if items, ok = ix.tupleItems(j, iter, names, valueOf); !ok {
		return nil, false, false
	}
	if r := at.Round; r > 0 {
		// the round decides where a repeated item cannot: the targets hold
		// the item before (none in the first round)
		if bound != (r > 1) || r > len(items)+1 || bound && strings.Join(items[r-2], "\x00") != strings.Join(cur, "\x00") {
			return nil, false, false
		}
		if r > len(items) {
			return nil, false, !handler
		}
		return items[r-1], true, true
	}
	if !bound {
		if len(items) == 0 {
			return nil, false, !handler
		}
		return items[0], true, true
	}
	keys := make([]string, len(items))
	for k, it := range items {
		keys[k] = strings.Join(it, "\x00")
	}
	n, into, ok := itemAfter(keys, strings.Join(cur, "\x00"))
	if !into {
		return nil, false, ok && !handler
	}
	return strings.Split(n, "\x00"), true, ok
}

// PlainIterable reports whether iterating the for loop's iterable on line
// h runs no Python code, given the frame's values (valueOf): the builtin
// range, or an iterable whose items ItemAfter reads (a generator's frame,
// say, may change what the locals hold before the loop finds no item).
func (ix *Index) PlainIterable(h int, valueOf func(name string) (string, bool)) bool {
	j, names, iter, ok := ix.forParts(h)
	switch {
	case !ok:
		return false
	case len(iter) > 2 && iter[0].kind == tName && iter[0].text == "range" && iter[1].text == "(" && matching(iter, 1) == len(iter)-1:
		return !ix.bindsAnywhere("range")
	case len(names) == 1:
		_, whole := ix.loopItems(j, iter, names[0], valueOf)
		return whole
	}
	_, whole := ix.tupleItems(j, iter, names, valueOf)
	return whole
}

// tupleItems are the items, as reprs per target, of a for loop at logical
// line j over iter that binds the len(names) > 1 names: a steady name's
// list or tuple of tuples that long, `enumerate(NAME)` (with a literal
// start), `NAME.items()` of a dict, or `zip(NAME, ...)` of lists, tuples or
// strs (one per name); whole false otherwise.
func (ix *Index) tupleItems(j int, iter []token, names []string, valueOf func(string) (string, bool)) (items [][]string, whole bool) {
	seq := func(t token) ([]string, bool) { // a steady local's items
		if t.kind != tName || keywords[t.text] || slices.Contains(names, t.text) || !ix.steady(j, t.text) {
			return nil, false
		}
		r, known := valueOf(t.text)
		if !known {
			return nil, false
		}
		return reprItems(r)
	}
	call := func(fn string) [][]token { // the arguments of `fn(...)`, the builtin
		if len(iter) < 3 || iter[0].kind != tName || iter[0].text != fn || iter[1].text != "(" || matching(iter, 1) != len(iter)-1 || ix.bindsAnywhere(fn) {
			return nil
		}
		return splitTop(iter[2:len(iter)-1], ",")
	}
	switch {
	case len(iter) == 1:
		reprs, whole := seq(iter[0])
		if !whole {
			return nil, false
		}
		for _, r := range reprs {
			parts, whole := reprItems(r)
			if !whole || len(r) == 0 || r[0] != '(' || len(parts) != len(names) {
				return nil, false
			}
			items = append(items, parts)
		}
		return items, true
	case len(iter) == 5 && iter[1].text == "." && iter[2].text == "items" && iter[3].text == "(" && iter[4].text == ")" && len(names) == 2:
		if iter[0].kind != tName || keywords[iter[0].text] || !ix.steady(j, iter[0].text) {
			return nil, false
		}
		r, known := valueOf(iter[0].text)
		pairs, whole := dictItems(r)
		if !known || !whole {
			return nil, false
		}
		return pairs, true
	}
	if args := call("enumerate"); len(names) == 2 && (len(args) == 1 || len(args) == 2) && len(args[0]) == 1 {
		start := int64(0)
		if len(args) == 2 {
			a := args[1]
			if len(a) > 2 && a[0].text == "start" && a[1].text == "=" {
				a = a[2:]
			}
			var ok bool
			if start, ok = intLiteral(a); !ok {
				return nil, false
			}
		}
		reprs, whole := seq(args[0][0])
		if !whole {
			return nil, false
		}
		for k, r := range reprs {
			items = append(items, []string{strconv.FormatInt(start+int64(k), 10), r})
		}
		return items, true
	}
	if args := call("zip"); len(args) == len(names) {
		var cols [][]string
		for _, a := range args {
			if len(a) != 1 {
				return nil, false
			}
			reprs, whole := seq(a[0])
			if !whole {
				return nil, false
			}
			cols = append(cols, reprs)
		}
		for k := 0; ; k++ {
			item := make([]string, len(cols))
			for c, col := range cols {
				if k >= len(col) {
					return items, true
				}
				item[c] = col[k]
			}
			items = append(items, item)
		}
	}
	return nil, false
}

// dictItems reads the repr of a dict: its items as [key, value] reprs;
// whole false for anything else.
func dictItems(r string) (pairs [][]string, whole bool) {
	if r == "{}" {
		return [][]string{}, true
	}
	if len(r) < 2 || r[0] != '{' || r[len(r)-1] != '}' {
		return nil, false
	}
	items, whole := reprItems("[" + r[1:len(r)-1] + "]")
	if !whole {
		return nil, false
	}
	for _, it := range items {
		k, ok := splitKey(it)
		if !ok {
			return nil, false
		}
		pairs = append(pairs, []string{k, it[len(k)+2:]})
	}
	return pairs, true
}

// loopItems are the reprs of the items of a for loop's iterable (items:
// its tokens; the loop at logical line j binds name): a list or tuple of
// literals, a str literal, or a name the body does not mention whose repr (valueOf) is a
// whole list, tuple or plain ASCII string, or such a string's `.split()`;
// whole false for anything else.
func (ix *Index) loopItems(j int, items []token, name string, valueOf func(string) (string, bool)) (reprs []string, whole bool) {
	switch {
	case items[0].kind == tOp && (items[0].text == "[" || items[0].text == "("):
		return literalItems(items)
	case len(items) == 1 && items[0].kind == tString:
		if r, ok := literalRepr(items[0], false); ok {
			return reprItems(r)
		}
		return nil, false
	case items[0].kind != tName || keywords[items[0].text] || items[0].text == name || !ix.steady(j, items[0].text):
		return nil, false
	}
	r, known := valueOf(items[0].text)
	switch {
	case !known:
		return nil, false
	case len(items) == 1 && strings.HasPrefix(r, "{"):
		pairs, whole := dictItems(r)
		for _, p := range pairs {
			reprs = append(reprs, p[0])
		}
		return reprs, whole
	case len(items) == 1:
		return reprItems(r)
	case len(items) == 5 && items[1].text == "." && items[2].text == "split" && items[3].text == "(" && items[4].text == ")":
		return splitWords(r)
	}
	return nil, false
}

// steady reports whether the name's value stays as it is while the for
// loop at logical line j runs: its body does not mention the name and no
// function declares it global or nonlocal.
func (ix *Index) steady(j int, name string) bool {
	return !ix.bodyNames(j, name) && !ix.declared(name)
}

// declared reports whether a global or nonlocal statement names name.
func (ix *Index) declared(name string) bool {
	for _, l := range ix.stmts {
		if kw := ix.StatementKeyword(l.first); (kw == "global" || kw == "nonlocal") && slices.Contains(ix.NamesOn(l.first), name) {
			return true
		}
	}
	return false
}

// splitWords is str.split() of the string whose repr is r, as the reprs of
// its words, for a str of printable ASCII with no quote or backslash.
func splitWords(r string) (reprs []string, whole bool) {
	if len(r) < 2 || r[0] != '\'' && r[0] != '"' {
		return nil, false
	}
	if _, whole := reprItems(r); !whole {
		return nil, false
	}
	for _, w := range strings.Fields(r[1 : len(r)-1]) {
		reprs = append(reprs, "'"+w+"'")
	}
	return reprs, true
}

// rangeAfter is ItemAfter for `range(...)` (items: the iterable's tokens)
// from the target's repr cur (bound false: no item yet).
func (ix *Index) rangeAfter(j int, items []token, cur string, bound bool, valueOf func(string) (string, bool)) (next string, into, ok bool) {
	if len(items) < 3 || items[1].text != "(" || matching(items, 1) != len(items)-1 || ix.bindsAnywhere("range") {
		return "", false, false
	}
	args := splitTop(items[2:len(items)-1], ",")
	vals := make([]int64, len(args))
	for k, a := range args {
		if vals[k], ok = ix.intArg(j, a, valueOf); !ok {
			return "", false, false
		}
	}
	start, stop, step := int64(0), int64(0), int64(1)
	switch len(vals) {
	case 1:
		stop = vals[0]
	case 2:
		start, stop = vals[0], vals[1]
	case 3:
		start, stop, step = vals[0], vals[1], vals[2]
	default:
		return "", false, false
	}
	if step == 0 {
		return "", false, false
	}
	in := func(v int64) bool { return step > 0 && v < stop || step < 0 && v > stop }
	v := start
	if bound {
		c, err := strconv.ParseInt(cur, 10, 64)
		if err != nil || (c-start)%step != 0 || (c-start)/step < 0 || !in(c) {
			return "", false, false
		}
		v = c + step
	}
	if !in(v) {
		return "", false, true
	}
	return strconv.FormatInt(v, 10), true, true
}

// intArg is the value of an argument of range (its tokens) at the loop at
// logical line j: an int literal, a name the body does not bind (an int
// cannot change otherwise) whose repr is an int, or len(NAME) of a steady
// name whose repr reprItems reads whole.
func (ix *Index) intArg(j int, toks []token, valueOf func(string) (string, bool)) (int64, bool) {
	if v, ok := intLiteral(toks); ok {
		return v, true
	}
	named := func(t token, kept func(int, string) bool) (string, bool) {
		if t.kind != tName || keywords[t.text] || !kept(j, t.text) {
			return "", false
		}
		return valueOf(t.text)
	}
	unbound := func(j int, name string) bool { return !ix.bodyBinds(j, name) && !ix.declared(name) }
	switch {
	case len(toks) == 1:
		if r, ok := named(toks[0], unbound); ok {
			v, err := strconv.ParseInt(r, 10, 64)
			return v, err == nil
		}
	case len(toks) == 4 && toks[0].text == "len" && toks[1].text == "(" && toks[3].text == ")" && !ix.bindsAnywhere("len"):
		if r, ok := named(toks[2], ix.steady); ok {
			if reprs, whole := reprItems(r); whole {
				return int64(len(reprs)), true
			}
		}
	}
	return 0, false
}

// itemAfter finds cur among reprs: the item after it (into), or none
// after the last; ok false where it is none of them or what follows it
// differs.
func itemAfter(reprs []string, cur string) (next string, into, ok bool) {
	for i, r := range reprs {
		if r != cur {
			continue
		}
		n, in := "", i+1 < len(reprs)
		if in {
			n = reprs[i+1]
		}
		if ok && (n != next || in != into) {
			return "", false, false
		}
		next, into, ok = n, in, true
	}
	return next, into, ok
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
	return !ix.bodyBinds(j, name)
}

// bodyBinds reports whether a statement of the body of the block at
// logical line j, in its frame, binds or deletes name.
func (ix *Index) bodyBinds(j int, name string) bool {
	for k := j + 1; k < len(ix.stmts) && ix.stmts[k].indent > ix.stmts[j].indent; k++ {
		if ix.owner[k] == ix.owner[j] && ix.bindsOrDeletes(ix.stmts[k].first, name) {
			return true
		}
	}
	return false
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
	for p := range ix.enclosing(j) {
		if kw := ix.flowG.kw[p]; kw == "for" || kw == "while" {
			return false
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
// repr cut short, a dict, an object's <...> repr, even as an item).
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
	body := r[:len(r)-1]
	sc, start := reprScan{s: body, i: 1}, 1
	for {
		i, ok := sc.next()
		if !ok {
			break
		}
		switch c := body[i]; {
		case c == '<':
			return nil, false // an object's repr may hold ", " (<FrameSummary file f, line 9>)
		case c == ')' || c == ']' || c == '}':
			if sc.depth < 0 {
				return nil, false
			}
		case c == ',' && sc.depth == 0:
			if i == start {
				return nil, false
			}
			reprs = append(reprs, body[start:i])
			if i+1 < len(body) && body[i+1] == ' ' {
				sc.i++ // repr's separator
			} else if i+1 < len(body) || r[0] != '(' {
				return nil, false
			}
			start = sc.i
		}
	}
	if sc.quote != 0 || sc.depth != 0 {
		return nil, false
	}
	if last := body[start:]; last != "" {
		reprs = append(reprs, last)
	} else if r[0] == '(' && len(reprs) != 1 || r[0] == '[' && len(reprs) > 0 {
		return nil, false // "()" is empty; a trailing comma only in "(x,)"
	}
	return reprs, true
}

// reprScan walks a repr's bytes outside its quoted strings ('...' or
// "...", with backslash escapes), keeping its bracket depth: the top level
// reprItems and splitKey read.
type reprScan struct {
	s     string
	i     int  // the next byte to read
	depth int  // the brackets open, up to and including the last byte read
	quote byte // the quote of the string being read, 0 outside one
}

// next is the index of the next byte outside quoted strings (a bracket
// counted in depth already); false at the end.
func (sc *reprScan) next() (int, bool) {
	for sc.i < len(sc.s) {
		i, c := sc.i, sc.s[sc.i]
		sc.i++
		switch {
		case sc.quote != 0:
			if c == '\\' {
				sc.i++
			} else if c == sc.quote {
				sc.quote = 0
			}
		case c == '\'' || c == '"':
			sc.quote = c
		default:
			switch c {
			case '(', '[', '{':
				sc.depth++
			case ')', ']', '}':
				sc.depth--
			}
			return i, true
		}
	}
	return 0, false
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
