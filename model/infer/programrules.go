package infer

import (
	"maps"
	"slices"
	"strings"

	"ndb/debugger"
	"ndb/format"
	"ndb/internal/pysource"
)

// Constrained decoding by the program: the source lines, LOCALS keys and
// return values a frame of the prompt's program can hold.

// programAllowed keeps a frame to what the prompt's program can show, as
// the tracer writes it: a source line (after <|src_sep|>) is one of the
// program's lines that is not blank or a comment, and a key of LOCALS is
// one of the names the program's index gives the frame's function at its
// line (else any of its functions'; any name where the program may bind
// names its text does not show: a star import, exec), ".." (the elision)
// or ".0" (an implicit comprehension argument), a module frame's fixed
// functions and imported modules show themselves (fixedAllowed), LOCALS
// shows what the format and the line require (wholeAllowed), and a
// return's value and a literal assignment's LOCALS are the ones valueFor pins, where it does. Text must extend a prefix of an allowed
// string and the token that closes it must leave a whole one. Every frame
// ndb gen writes passes (checked on its shards: docs/inference.md), so the
// rule removes only frames no program state has. With or without a program
// (r nil), a LOCALS key may not be closed twice: format.CheckFrame refuses
// the name only once its value starts, and a frame in that dead end used to
// be cut back and closed with a made-up name ("s0") and no source line.
func (p *Predictor) programAllowed(cur string, id int, r *programRules) bool {
	last := lastSpecial(cur)
	switch {
	case cur == "" && r != nil:
		lines, ruled := r.scope[p.texts[id]]
		return !ruled || len(lines) > 0 // a kind of frame with no line to show is no answer
	case last == format.TokSrcSep && r != nil:
		src := cur[strings.LastIndex(cur, format.TokSrcSep)+len(format.TokSrcSep):]
		if p.tok.IsSpecial(int32(id)) {
			return r.linesFor(cur).contains(src)
		}
		return r.linesFor(cur).hasPrefix(src + p.texts[id])
	case last == format.TokArgSep && r.valueFor(cur) != "":
		want, json := r.valueFor(cur), cur[strings.LastIndex(cur, format.TokArgSep)+len(format.TokArgSep):]
		if p.tok.IsSpecial(int32(id)) {
			return json == want
		}
		return strings.HasPrefix(want, json+p.texts[id])
	case last == format.TokArgSep && !p.tok.IsSpecial(int32(id)):
		json := cur[strings.LastIndex(cur, format.TokArgSep)+len(format.TokArgSep):]
		names := r.oneFrame(cur, r.namesFor(cur))
		return r.keysAllowed(names, json, json+p.texts[id]) && r.fixedAllowed(cur, json+p.texts[id]) && r.loopValuesAllowed(cur, json+p.texts[id]) &&
			r.argsAllowed(cur, json+p.texts[id]) &&
			r.boundAllowed(cur, json+p.texts[id]) &&
			r.wholeAllowed(cur, json+p.texts[id]) && r.orderAllowed(cur, json+p.texts[id], names)
	}
	return true
}

// fixedAllowed checks, in a module frame's LOCALS (json), the values the
// module's names can only hold (pysource's FixedReprs: <function NAME at
// 0x0>, <class '__main__.NAME'>, <__main__.C object at 0x0>, a
// standard-library name, a literal constant) and those of its imported
// modules (the interpreter's repr where SampleOptions.ModuleReprs knows
// it, else moduleReprAllowed). A frame is the module's when
// its line is (an inverse frame writes its line first) or, for a forward
// line frame (LOCALS first), when every line the rules leave it is.
func (r *programRules) fixedAllowed(cur, json string) bool {
	if r == nil || len(r.fixed) == 0 && len(r.modules) == 0 || !r.moduleFrame(cur) {
		return true
	}
	return objectValues(json, func(key, s string, closed bool) bool {
		want, ok := r.fixed[key]
		if mod, isMod := r.modules[key]; isMod {
			if want, ok = r.exactModules[mod]; !ok {
				return moduleReprAllowed(mod, s, closed)
			}
		}
		return !ok || leadsTo(s, want, closed)
	})
}

// loopValuesAllowed checks, in a line frame's LOCALS (json), the values
// pysource's LoopValues fixes after a loop on every line the frame may be
// on (an inverse frame writes its line first; a forward line frame may be
// on any line the rules leave it).
func (r *programRules) loopValuesAllowed(cur, json string) bool {
	if r == nil {
		return true
	}
	var want map[string]string
	for k, l := range r.lineFrameLines(cur) {
		values := r.scopes.loopValues(l)
		if k == 0 {
			want = maps.Clone(values)
		}
		maps.DeleteFunc(want, func(name, v string) bool { return values[name] != v })
		if len(want) == 0 {
			return true
		}
	}
	return objectValues(json, func(key, s string, closed bool) bool {
		v, ok := want[key]
		return !ok || leadsTo(s, v, closed)
	})
}

// objectValues calls fn with each key of the LOCALS object json and its
// value so far (closed: whole), until fn says false.
func objectValues(json string, fn func(key, value string, closed bool) bool) bool {
	key := ""
	return objectStrings(json, func(i int, s string, _ int, closed bool) bool {
		if i%2 == 0 {
			key = s
			return true
		}
		return fn(key, s, closed)
	})
}

// leadsTo reports whether s, a text written so far (closed: whole), is
// want or can still become it.
func leadsTo(s, want string, closed bool) bool {
	return closed && s == want || !closed && strings.HasPrefix(want, s)
}

// oneFrame narrows names, the keys a line frame may hold (namesFor), to
// those of the frames that may hold every key it has written: a line may
// fire the events of more than one frame (a comprehension's, a lambda's, a
// def's first line: pysource's PossibleLocalGroups), and one frame's
// locals are its own names only. A frame's line is known where it is
// written first (an inverse line frame) or where the rules leave a forward
// line frame one line's text.
func (r *programRules) oneFrame(cur string, names sortedSet) sortedSet {
	if r == nil || names == nil {
		return names
	}
	var src string
	switch {
	case strings.HasPrefix(cur, format.TokLineSep):
		lines := r.linesFor(format.TokLineSep)
		if len(lines) != 1 {
			return names
		}
		src = lines[0]
	case strings.HasPrefix(cur, format.TokInvLineSep) || strings.HasPrefix(cur, format.TokInvLineCallSep):
		var ok bool
		if src, ok = headSrc(cur); !ok {
			return names
		}
	default:
		return names
	}
	keys := closedKeys(cur)
	groups := r.scopes.heldGroups(src, r.freshBreak)
	if len(keys) == 0 || groups == nil {
		return names
	}
	var held sortedSet
	for _, g := range groups {
		if allContained(g, keys) {
			held = append(held, g...)
		}
	}
	if held == nil {
		return names
	}
	var out sortedSet
	for _, n := range names {
		if slices.Contains(held, n) {
			out = append(out, n)
		}
	}
	return out
}

// boundAllowed checks that a forward line frame's LOCALS (json) show the
// names the step binds anew (newNames) before their elision ("..") and
// before the object closes: format.Builder writes a new name as changed.
func (r *programRules) boundAllowed(cur, json string) bool {
	if r == nil || len(r.bound) == 0 || !strings.HasPrefix(cur, format.TokLineSep) {
		return true
	}
	var keys []string
	shown := func() bool {
		return !slices.ContainsFunc(r.bound, func(name string) bool { return !slices.Contains(keys, name) })
	}
	ok := objectKeys(json, func(key string, _ int, closed bool) bool {
		if strings.HasPrefix(key, ".") && !shown() {
			return false
		}
		if closed {
			keys = append(keys, key)
		}
		return true
	})
	return ok && (!objectClosed(json) || shown())
}

// argsAllowed checks, in the LOCALS (json) of a function's or class
// body's frame, the values pysource's ArgReprs fixes (a method's self, an
// argument every call passes a literal, a method a class body defined): a
// frame is the scope's when its line is (a call's or an inverse frame's,
// written before its LOCALS) or, for a forward line frame, when every line
// the rules leave it is in it.
func (r *programRules) argsAllowed(cur, json string) bool {
	if r == nil {
		return true
	}
	var v argValues
	switch {
	case strings.HasPrefix(cur, format.TokLineSep):
		lines := r.linesFor(format.TokLineSep)
		for i, l := range lines {
			w := r.scopes.argsOf(l, false)
			if w == nil || i > 0 && !maps.EqualFunc(v, w, slices.Equal) {
				return true
			}
			v = w
		}
	case strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep):
		src, ok := headSrc(cur)
		if !ok {
			return true
		}
		v = r.scopes.argsOf(src, true)
	case strings.HasPrefix(cur, format.TokInvLineSep) || strings.HasPrefix(cur, format.TokInvLineCallSep):
		src, ok := headSrc(cur)
		if !ok {
			return true
		}
		v = r.scopes.argsOf(src, false)
	}
	if v == nil {
		return true
	}
	return objectValues(json, func(key, s string, closed bool) bool {
		want, ok := v[key]
		return !ok || slices.ContainsFunc(want, func(w string) bool { return leadsTo(s, w, closed) })
	})
}

// orderAllowed checks, in a module frame's LOCALS (json), that no key
// comes after one the module surely binds later (pysource's
// ModuleBindOrder: the frame lists its names in the order they were first
// bound), nor, where the frame shows every local, before a name it must
// hold that the module binds earlier; an open key must still be able to
// become a name of names (nil: any) that does. A forward line frame is
// held to it only where its line is fixed (after a breakpoint): else the
// names it must hold grow as its keys choose among its possible lines.
func (r *programRules) orderAllowed(cur, json string, names sortedSet) bool {
	if r == nil || len(r.order) == 0 || !r.moduleFrame(cur) {
		return true
	}
	if strings.HasPrefix(cur, format.TokLineSep) && len(r.linesFor(format.TokLineSep)) != 1 {
		// a forward line frame whose line its keys still choose: the names
		// it must hold may grow with each key, past one written too early
		return true
	}
	// where the frame shows every local, the names it must hold come in
	// their turn: one that goes before a key is written before it, or the
	// frame could never be closed
	var sure []string
	if r.wholeFrame(cur) {
		sure = r.sureNames(cur)
	}
	var written []pysource.BindSpan
	var keys []string
	fits := func(name string) bool {
		at, ok := r.order[name]
		if !ok {
			return true
		}
		return !slices.ContainsFunc(written, at.Before) && !slices.ContainsFunc(sure, func(y string) bool {
			before, ok := r.order[y]
			return ok && before.Before(at) && !slices.Contains(keys, y)
		})
	}
	return objectKeys(json, func(key string, _ int, closed bool) bool {
		if closed {
			if !fits(key) {
				return false
			}
			if at, ok := r.order[key]; ok {
				written = append(written, at)
			}
			keys = append(keys, key)
			return true
		}
		return names == nil || names.shortestWhere(key, func(n string) bool { return fits(n) && !slices.Contains(keys, n) }) != ""
	})
}

// moduleReprAllowed reports whether s (closed or still open) can be the
// tracer's repr of module mod: <module 'mod' (built-in)>, (frozen), or
// from '...'> and nothing after the path's closing quote. The file's name
// is left free: held to mod's (.py, a package's __init__.py, an
// extension's .so) a model that had written a wrong directory could only
// go on writing a path that never ends. A repr the tracer cut at its
// limit ("...") is checked as far as it goes.
func moduleReprAllowed(mod, s string, closed bool) bool {
	if body, cut := strings.CutSuffix(s, format.CutMarker); closed && cut {
		s, closed = body, false
	}
	head := `<module '` + mod + `' `
	if len(s) < len(head) {
		return strings.HasPrefix(head, s)
	}
	if !strings.HasPrefix(s, head) {
		return false
	}
	rest := s[len(head):]
	for _, whole := range []string{"(built-in)>", "(frozen)>"} {
		if closed && rest == whole || !closed && strings.HasPrefix(whole, rest) {
			return true
		}
	}
	from := "from '"
	if len(rest) < len(from) {
		return !closed && strings.HasPrefix(from, rest)
	}
	if !strings.HasPrefix(rest, from) {
		return false
	}
	path := rest[len(from):]
	end := strings.IndexByte(path, '\'')
	switch {
	case end < 0:
		return !closed
	case closed:
		return end > 0 && path[end:] == "'>"
	}
	return end > 0 && strings.HasPrefix("'>", path[end:])
}

// wholeAllowed checks what a LOCALS object (json) must show whole. Where
// the format shows every local (SPEC section 5: a call, the state after a
// breakpoint or continue jump, the first frame after one without locals)
// it has no ".." key. An object closed without ".." shows every local, so
// it holds each name every frame at its line holds (sureNames).
func (r *programRules) wholeAllowed(cur, json string) bool {
	if r == nil {
		return true
	}
	whole := r.wholeFrame(cur)
	var keys []string
	elided := false
	ok := objectKeys(json, func(key string, _ int, closed bool) bool {
		if strings.HasPrefix(key, "..") {
			elided = true
			return !whole
		}
		if closed {
			keys = append(keys, key)
		}
		return true
	})
	if !ok || elided || !objectClosed(json) {
		return ok
	}
	for _, name := range r.sureNames(cur) {
		if !slices.Contains(keys, name) {
			return false
		}
	}
	return true
}

// wholeFrame reports whether the frame text cur shows every local: a call,
// any frame where the prompt says so (wholeAnswer), or an inverse line
// frame that has lost a name of the frame it steps back from (nameGone).
func (r *programRules) wholeFrame(cur string) bool {
	return r.whole || strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep) || r.nameGone(cur)
}

// nameGone reports whether the inverse line frame text cur (its line
// written) is one step back in the frame of the prompt's last line frame
// and one of that frame's names cannot be bound at its line (heldAt): a
// frame that lost a name shows every local, as format.Builder writes it
// (".." stands for names unchanged, and cannot say that one is gone). Why:
// stepping back from `doctest.testmod()` to `import doctest` the model
// wrote three module names and "..", where the frame shows all but doctest.
func (r *programRules) nameGone(cur string) bool {
	if len(r.backFrom) == 0 || !strings.HasPrefix(cur, format.TokInvLineSep) && !strings.HasPrefix(cur, format.TokInvLineCallSep) {
		return false
	}
	src, ok := headSrc(cur)
	if !ok {
		return false
	}
	held := r.scopes.heldAt(src, false)
	return held != nil && slices.ContainsFunc(r.backFrom, func(n string) bool { return !held.contains(n) })
}

// sureNames are the names every frame the frame text cur may show holds:
// pysource's SureLocals of each line cur's line may be (a forward line
// frame's: every line linesFor leaves it), intersected, or a call's
// parameters (CallLocals); nil where one line has none or the text does
// not place it. A forward line frame after a return holds the caller's
// names too (callerNames).
func (r *programRules) sureNames(cur string) []string {
	if strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep) {
		if src, ok := headSrc(cur); ok {
			return r.scopes.callLocals(src)
		}
		return nil
	}
	sure := commonNames(func(yield func([]string) bool) {
		for _, l := range r.lineFrameLines(cur) {
			if !yield(r.scopes.sureLocals(l)) {
				return
			}
		}
	})
	if strings.HasPrefix(cur, format.TokLineSep) && len(r.callerNames) > 0 {
		sure = slices.Clone(sure)
		for _, name := range r.callerNames {
			if !slices.Contains(sure, name) {
				sure = append(sure, name)
			}
		}
	}
	return sure
}

// objectClosed reports whether a LOCALS object's text has its closing
// brace.
func objectClosed(json string) bool { return lastOutside(json) == '}' }

// lastOutside is the last byte of a LOCALS object's text outside its
// strings, spaces skipped; 0 while a string is open.
func lastOutside(json string) byte {
	in, esc := false, false
	var last byte
	for j := 0; j < len(json); j++ {
		switch c := json[j]; {
		case !in:
			if c == '"' {
				in = true
			} else if c != ' ' {
				last = c
			}
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in, last = false, '"'
		}
	}
	if in {
		return 0
	}
	return last
}

// lineFrameLines are the lines a line frame's text cur may show: an
// inverse one's own (it writes its line first), a forward one's every line
// linesFor leaves it (it writes its LOCALS first); nil for other frames.
func (r *programRules) lineFrameLines(cur string) sortedSet {
	switch {
	case strings.HasPrefix(cur, format.TokLineSep):
		return r.linesFor(cur)
	case strings.HasPrefix(cur, format.TokInvLineSep) || strings.HasPrefix(cur, format.TokInvLineCallSep):
		if src, ok := headSrc(cur); ok {
			return sortedSet{src}
		}
	}
	return nil
}

// headSrc is the source line of the frame text cur where it writes its
// line before its LOCALS (a call's, an inverse frame's) and has written
// both its line and <|arg_sep|>.
func headSrc(cur string) (string, bool) {
	i, j := strings.Index(cur, format.TokSrcSep), strings.Index(cur, format.TokArgSep)
	if i < 0 || j < i {
		return "", false
	}
	return cur[i+len(format.TokSrcSep) : j], true
}

// moduleFrame reports whether the frame text cur is the module's (see
// fixedAllowed).
func (r *programRules) moduleFrame(cur string) bool {
	if r.stepsInModule && strings.HasPrefix(cur, format.TokLineSep) {
		return true
	}
	lines := r.lineFrameLines(cur)
	if len(lines) == 0 {
		return false
	}
	for _, l := range lines {
		if !r.scopes.moduleOnly(l) {
			return false
		}
	}
	return true
}

// valueFor is the text the frame text cur must show after <|arg_sep|>: a
// return's value (returnValues), a forward line frame's LOCALS
// (assignedLocals: after a literal assignment) or a loop header's seen
// backwards (loopLocals); "" for no rule.
func (r *programRules) valueFor(cur string) string {
	if r == nil {
		return ""
	}
	if r.locals != "" && strings.HasPrefix(cur, format.TokLineSep+format.TokArgSep) {
		return r.locals
	}
	for head, v := range r.values {
		if strings.HasPrefix(cur, head) {
			return v
		}
	}
	return ""
}

// programRules are the strings a frame may take from its program.
type programRules struct {
	lines sortedSet // the lines an event can be on: not blank, not only a comment, not NeverRuns
	calls sortedSet // lines and "" (a script's module call shows no line)
	names sortedSet // every function's names, "..", ".0" to ".9"; nil: any name (programNames)
	// per frame kind token: the lines of the running function a step's
	// answer of that kind may show (stepScopes; nil: no rule)
	scope map[string]sortedSet
	// per frame head: the value it must show (returnValues, loopLocals)
	values map[string]string
	// the LOCALS of a forward line frame (assignedLocals; "": no rule)
	locals string
	scopes *scopeRules
	memo   map[string]sortedSet         // namesFor and linesFor, per frame head
	fixed  map[string]string            // the module's functions, classes and instances no statement rebinds: their reprs (fixedAllowed)
	order  map[string]pysource.BindSpan // where the module's names are bound, for their order (orderAllowed)
	// the module's names only `import` binds, to their modules (fixedAllowed)
	modules map[string]string
	// the reprs of modules on the program's interpreter (SampleOptions.ModuleReprs)
	exactModules map[string]string
	whole        bool // every answer shows every local (wholeAllowed)
	// a step from the module's frame: a line frame it answers is the
	// module's (stepsInModule)
	stepsInModule bool
	// a breakpoint from the module's frame: its stop in a function is the
	// first run of its line in a new frame (freshBreak)
	freshBreak bool
	// the names the last frame holds when the step asked goes back from a
	// line frame into its own frame (backNames)
	backFrom []string
	// the names a forward line frame must show, which the step asked
	// binds anew (newNames)
	bound []string
	// the names a forward line frame after a return holds: the caller's
	// (callerNames)
	callerNames []string
}

// linesFor is the set a source line of the frame text cur may come from:
// the running function's lines where stepScopes restricts cur's kind, else
// any executable line; a forward line frame, whose LOCALS come before its
// line, keeps only the lines of a function that has every name it wrote.
func (r *programRules) linesFor(cur string) sortedSet {
	for tok, l := range r.scope {
		if strings.HasPrefix(cur, tok) {
			return r.fitting(l, cur)
		}
	}
	if strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep) {
		return r.calls
	}
	return r.fitting(r.lines, cur)
}

// fitting keeps, for a forward line frame cur (its LOCALS come before its
// line), the lines whose function has every key it wrote (a line that may
// run in the module keeps any); other frames keep all lines.
func (r *programRules) fitting(lines sortedSet, cur string) sortedSet {
	if !strings.HasPrefix(cur, format.TokLineSep) {
		return lines
	}
	keys := closedKeys(cur)
	memo := "lines\x00" + strings.Join(keys, "\x00")
	if m, ok := r.memo[memo]; ok {
		return m
	}
	var fit sortedSet
	for _, l := range lines {
		if names := r.scopes.namesOf(l, false); names == nil || allContained(names, keys) {
			fit = append(fit, l)
		}
	}
	r.memo[memo] = fit
	return fit
}

// closedKeys lists the LOCALS keys a frame text has closed.
func closedKeys(cur string) []string {
	i := strings.Index(cur, format.TokArgSep)
	if i < 0 {
		return nil
	}
	json := cur[i+len(format.TokArgSep):]
	if j := strings.Index(json, format.TokSrcSep); j >= 0 {
		json = json[:j]
	}
	var keys []string
	objectKeys(json, func(key string, _ int, closed bool) bool {
		if closed {
			keys = append(keys, key)
		}
		return true
	})
	return keys
}

// namesFor is the set the LOCALS keys of the frame text cur may come from:
// once the frame's line is known (call and inverse frames write it first),
// the names a frame may hold at that line (heldAt; a call's: the names of
// the function it opens); in a forward line frame, whose line comes last,
// those of the lines whose function has every name written so far
// (fitting, which reads the function's names, not the line's, so that a
// wrong key does not take the right line away); else (or where the module may be
// the frame) the program's (nil: any name, see nameAllowed); without ".."
// where the frame shows every local. Nil for no program.
func (r *programRules) namesFor(cur string) sortedSet {
	if r == nil {
		return nil
	}
	i, j := strings.Index(cur, format.TokSrcSep), strings.Index(cur, format.TokArgSep)
	var names sortedSet
	switch {
	case strings.HasPrefix(cur, format.TokLineSep) && i < 0:
		keys := closedKeys(cur)
		memo := "names\x00" + strings.Join(keys, "\x00")
		if m, ok := r.memo[memo]; ok {
			return m
		}
		names = sortedSet{} // no line left: no name (not nil, any name)
		for _, l := range r.linesFor(cur) {
			n := r.scopes.heldAt(l, r.freshBreak)
			if n == nil {
				names = nil
				break
			}
			names = append(names, n...)
		}
		if names == nil {
			names = r.names
		} else {
			names.sort()
		}
		names = r.unelided(cur, names)
		r.memo[memo] = names
		return names
	case i < 0 || j < i:
		return r.unelided(cur, r.names)
	}
	memo := "src\x00" + cur[:j]
	if m, ok := r.memo[memo]; ok {
		return m
	}
	call := strings.HasPrefix(cur, format.TokCallSep) || strings.HasPrefix(cur, format.TokInvCallSep)
	src := cur[i+len(format.TokSrcSep) : j]
	if call && src == "" {
		names = sortedSet{} // a script's module call: nothing is bound yet (the tracer hides dunders)
	} else if call {
		if names = r.scopes.callNames(src); names == nil {
			names = r.scopes.namesOf(src, true)
		}
	} else {
		names = r.scopes.heldAt(src, r.freshBreak)
	}
	if names == nil {
		names = r.names
	}
	names = r.unelided(cur, names)
	r.memo[memo] = names
	return names
}

// unelided is names without the elision ".." where the frame text cur
// must show every local (wholeFrame), so that no key is begun that only
// ".." could finish; names itself otherwise, and nil (any name) stays.
func (r *programRules) unelided(cur string, names sortedSet) sortedSet {
	if names == nil || !names.contains("..") || !r.wholeFrame(cur) {
		return names
	}
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == ".." })
}

// backNames are the names of the prompt's last frame, merged over the
// frames it elides, where the step asked from it is inv_step_into or
// inv_step_over and it is a line frame: an inverse line frame answering
// it is one step back in the same frame. Nil otherwise.
func backNames(prompt string) []string {
	f, step, err := lastFrame(prompt)
	if err != nil || step.Action != debugger.InvStepInto && step.Action != debugger.InvStepOver {
		return nil
	}
	if f.Kind != format.Line && f.Kind != format.InvLine {
		return nil
	}
	locals, ok := format.LastLocals(promptFrames(prompt))
	if !ok {
		return nil
	}
	names := make([]string, len(locals))
	for i, v := range locals {
		names[i] = v.Name
	}
	return names
}

func allContained(set sortedSet, xs []string) bool {
	for _, x := range xs {
		if !set.contains(x) {
			return false
		}
	}
	return true
}

// promptRules reads the program from a prompt's header
// (format.HeaderSource), with what compiled says of its compiled code
// where set; nil when the prompt has no header.
func promptRules(compiled func(src string) *pysource.Compiled, prompt string) *programRules {
	src, err := format.HeaderSource(prompt)
	if err != nil {
		return nil
	}
	var r programRules
	var code *pysource.Compiled
	if compiled != nil {
		code = compiled(src)
	}
	r.scopes = programScopes(code, src)
	script := r.scopes.runsAsScript(prompt)
	for j, l := range r.scopes.lines {
		if executable(l) && !r.scopes.ix.NeverRuns(j+1, script) {
			r.lines = append(r.lines, l)
		}
	}
	r.scope = r.scopes.stepScopes(prompt, script)
	r.stepsInModule = r.scopes.stepsInModule(prompt)
	r.freshBreak = r.scopes.freshBreak(prompt)
	r.values = r.scopes.returnValues(prompt)
	if v := r.scopes.loopLocals(prompt); v != nil {
		if r.values == nil {
			r.values = map[string]string{}
		}
		maps.Copy(r.values, v)
	}
	r.locals = r.scopes.assignedLocals(prompt)
	r.bound = r.scopes.newNames(prompt)
	r.callerNames = r.scopes.callerNames(prompt)
	r.memo = map[string]sortedSet{}
	r.names = r.scopes.programNames()
	r.fixed = r.scopes.ix.FixedReprs()
	r.order = r.scopes.ix.ModuleBindOrder()
	r.modules = r.scopes.ix.ImportedModules()
	r.whole = wholeAnswer(prompt)
	r.backFrom = backNames(prompt)
	r.lines.sort()
	r.calls = append(sortedSet{""}, r.lines...)
	if r.locals == "" {
		r.stepAhead(prompt)
	}
	r.holdEnds()
	if script {
		r.scriptEnds(prompt)
	}
	return &r
}

// scriptEnds keeps a script's exit frames to where its trace has them.
// Forward, exit_normal only: as EndLines decides for its module's return,
// ndb predicts that a script runs to its end (ndb gen and the evaluation
// drop scripts that end in an uncaught exception or past the event limit,
// so the model never saw either exit after a script's return, yet wrote
// exit_error there). Backward, inv_exit_entry only from the module's call:
// a script's trace opens with that call, which every step back and every
// inv_step_call from a later state reaches first (the model answered
// inv_step_call from a function's call with inv_exit_entry where doctest,
// which ndb does not trace, had called it).
func (r *programRules) scriptEnds(prompt string) {
	scope := maps.Clone(r.scope)
	if scope == nil {
		scope = map[string]sortedSet{}
	}
	scope[format.TokExitError], scope[format.TokExitNever] = sortedSet{}, sortedSet{}
	if f, step, err := lastFrame(prompt); err == nil && step.Action.Inverse() && !((f.Kind == format.Call || f.Kind == format.InvCall) && f.Src == "") {
		scope[format.TokInvExitEntry] = sortedSet{}
	}
	r.scope = scope
}

// stepAhead applies scopeRules' stepAhead: the step's line frame shows
// its LOCALS, on one of its lines; where the step surely goes into a
// body, no frame ends first.
func (r *programRules) stepAhead(prompt string) {
	locals, lines, into, ok := r.scopes.stepAhead(prompt)
	if !ok {
		return
	}
	r.locals = locals
	scope := maps.Clone(r.scope)
	if scope == nil {
		scope = map[string]sortedSet{}
	}
	allowed, ruled := scope[format.TokLineSep]
	if !ruled {
		allowed = r.lines
	}
	scope[format.TokLineSep] = slices.DeleteFunc(slices.Clone(allowed), func(l string) bool { return !lines.contains(l) })
	if into {
		scope[format.TokReturnSep], scope[format.TokExceptionSep] = sortedSet{}, sortedSet{}
	}
	r.scope = scope
}

// endKinds are the frame kinds that show where a frame ends or an
// exception passes.
var endKinds = []string{format.TokReturnSep, format.TokExceptionSep, format.TokInvReturnSep, format.TokInvExceptionSep}

// holdEnds keeps a return or exception frame off the lines whose every
// copy in the program is Quiet (pysource: a statement that can neither
// raise nor end its frame there, such as a def that evaluates nothing or
// NAME = LITERAL in the middle of a body).
func (r *programRules) holdEnds() {
	quiet := r.scopes.everyLine(r.scopes.ix.Quiet)
	if !slices.ContainsFunc(r.lines, func(l string) bool { return quiet[l] }) {
		return
	}
	scope := maps.Clone(r.scope)
	if scope == nil {
		scope = map[string]sortedSet{}
	}
	for _, tok := range endKinds {
		lines, ruled := scope[tok]
		if !ruled {
			lines = r.lines
		}
		scope[tok] = slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return quiet[l] })
	}
	r.scope = scope
}

// localNames is the set of LOCALS keys words allow: those that are not
// Python keywords, and ".." (the elision) and ".0" to ".9" (a
// comprehension's implicit argument).
func localNames(words []string) sortedSet {
	names := sortedSet{"..", ".0", ".1", ".2", ".3", ".4", ".5", ".6", ".7", ".8", ".9"}
	for _, w := range words {
		if !pysource.IsKeyword(w) {
			names = append(names, w)
		}
	}
	names.sort()
	return names
}

// keysAllowed checks the keys of a LOCALS object that the text added to
// old (making new) wrote or extended: names (any string when r is nil, any
// name when names is nil: nameAllowed), none twice (an open key must still
// be able to become a name not used yet). A LOCALS object is flat, string
// to string, so its even-numbered strings are the keys; a VALUE (a string,
// not an object) has none. A name needs no JSON escape, so a key with one
// is never allowed.
func (r *programRules) keysAllowed(names sortedSet, old, new string) bool {
	var seen []string
	ok := objectKeys(new, func(key string, end int, closed bool) bool {
		switch {
		case !closed:
			return r == nil || names == nil && (anyNames.hasPrefix(key) || nameAllowed(nil, key+"_")) || names.hasPrefixBesides(key, seen)
		case end < len(old):
			seen = append(seen, key)
			return true
		case slices.Contains(seen, key):
			return false
		}
		seen = append(seen, key)
		return r == nil || nameAllowed(names, key)
	})
	// a comma asks for one more key: none where every name is written (the
	// frame would end in a dead end, closed with a made-up key)
	if ok && r != nil && names != nil && lastOutside(new) == ',' {
		return names.hasPrefixBesides("", seen)
	}
	return ok
}

// nameAllowed reports whether key may be a LOCALS key where namesFor
// answered names: one of them, or where names is nil (a program that may
// bind names its text does not show) any Python name that is no keyword,
// or "..", ".0" to ".9".
func nameAllowed(names sortedSet, key string) bool {
	if names != nil {
		return names.contains(key)
	}
	// A keyword is never a key of LOCALS: a small model otherwise fills a
	// frame with "def", "in" and "if" once it runs out of real names.
	return anyNames.contains(key) || pysource.IsVariableName(key)
}

// anyNames are the keys besides names every frame may have.
var anyNames = localNames(nil)

// objectKeys calls fn with each key of a LOCALS object's text (a flat
// object, string to string, so its even-numbered strings are the keys),
// the offset of the key's closing quote and whether the key is closed yet;
// it stops and returns false when fn does. Text that is not an object has
// no keys.
func objectKeys(json string, fn func(key string, end int, closed bool) bool) bool {
	return objectStrings(json, func(i int, s string, end int, closed bool) bool {
		return i%2 != 0 || fn(s, end, closed)
	})
}

// objectStrings calls fn with each string of a LOCALS object's text, keys
// (even i) and values (odd i) in turn, as objectKeys does with the keys.
func objectStrings(json string, fn func(i int, s string, end int, closed bool) bool) bool {
	if !strings.HasPrefix(json, "{") {
		return true
	}
	in, esc, n, start := false, false, -1, 0
	for j := 0; j < len(json); j++ {
		switch c := json[j]; {
		case !in:
			if c == '"' {
				in, n, start = true, n+1, j+1
			}
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			in = false
			if !fn(n, json[start:j], j, true) {
				return false
			}
		}
	}
	if in {
		return fn(n, json[start:], len(json), false)
	}
	return true
}

// completeOpen finishes a source line or LOCALS key that a frame cut by its
// token budget left open with the shortest allowed string it starts, so
// that the frame closed after it still keeps programAllowed's rules.
func (r *programRules) completeOpen(text string) string {
	if r == nil {
		return text
	}
	if lastSpecial(text) == format.TokSrcSep {
		src := text[strings.LastIndex(text, format.TokSrcSep)+len(format.TokSrcSep):]
		return text + strings.TrimPrefix(r.linesFor(text).shortestWithPrefix(src), src)
	}
	i := strings.LastIndex(text, format.TokArgSep)
	if i < 0 || lastSpecial(text) != format.TokArgSep {
		return text
	}
	json := text[i+len(format.TokArgSep):]
	objectKeys(json, func(key string, _ int, closed bool) bool {
		if !closed {
			name := r.namesFor(text).shortestWhere(key, func(name string) bool {
				return r.wholeAllowed(text, json+strings.TrimPrefix(name, key)+`"`)
			})
			text += strings.TrimPrefix(name, key)
		}
		return true
	})
	return text
}

// fillSource gives a closed frame whose source line the closers left
// empty (it was cut before the line) the shortest line the rules allow
// there.
func (r *programRules) fillSource(frame string) string {
	if r == nil {
		return frame
	}
	k := strings.Index(frame, format.TokSrcSep+format.TokActionSep)
	if k < 0 {
		k = strings.Index(frame, format.TokSrcSep+format.TokArgSep)
	}
	if k < 0 {
		return frame
	}
	at := k + len(format.TokSrcSep)
	return frame[:at] + r.linesFor(frame[:at]).shortestWithPrefix("") + frame[at:]
}

// sortedSet is a sorted list of distinct strings.
type sortedSet []string

func (s *sortedSet) sort() {
	slices.Sort(*s)
	*s = slices.Compact(*s)
}

// hasPrefixBesides reports whether a member other than those of used
// starts with x.
func (s sortedSet) hasPrefixBesides(x string, used []string) bool {
	i, _ := slices.BinarySearch(s, x)
	for ; i < len(s) && strings.HasPrefix(s[i], x); i++ {
		if !slices.Contains(used, s[i]) {
			return true
		}
	}
	return false
}

// shortestWithPrefix is the shortest member starting with x ("" if none).
func (s sortedSet) shortestWithPrefix(x string) string {
	return s.shortestWhere(x, func(string) bool { return true })
}

// shortestWhere is the shortest member starting with x that ok accepts
// ("" if none).
func (s sortedSet) shortestWhere(x string, ok func(string) bool) string {
	best := ""
	i, _ := slices.BinarySearch(s, x)
	for ; i < len(s) && strings.HasPrefix(s[i], x); i++ {
		if (best == "" || len(s[i]) < len(best)) && ok(s[i]) {
			best = s[i]
		}
	}
	return best
}

func (s sortedSet) contains(x string) bool {
	_, ok := slices.BinarySearch(s, x)
	return ok
}

// hasPrefix reports whether some member starts with x: the first member
// not below x in sorted order is the one, if any is.
func (s sortedSet) hasPrefix(x string) bool {
	i, _ := slices.BinarySearch(s, x)
	return i < len(s) && strings.HasPrefix(s[i], x)
}

// wholeAnswer reports whether the format shows every local of the answer
// to the prompt's last action, whatever its kind: after a breakpoint or
// continue jump, after a frame without locals, and one step back from a
// call, which lands in another frame (format.Builder diffs only within one).
func wholeAnswer(prompt string) bool {
	f, step, err := lastFrame(prompt)
	if step.Action == debugger.Breakpoint || step.Action == debugger.Continue {
		return true
	}
	back := step.Action == debugger.InvStepInto || step.Action == debugger.InvStepOver
	return err == nil && (!f.Kind.HasLocals() || back && f.Kind == format.InvCall)
}
