package synth

import (
	"fmt"
	"regexp"
	"strings"

	"ndb/tracer"
)

// GenerateScript returns script number i of the stream seeded by seed: a
// whole module (no entry call) with module-level statements, functions that
// call each other, classes, generators, try/except, prints and f-strings,
// often ending in `if __name__ == "__main__": main()` (issue 18). Path is
// "synthscript/<seed>/<i>". A pure function of (seed, i), like Generate.
func GenerateScript(seed int64, i int) tracer.Program {
	s := buildScript(seed, i)
	return tracer.Program{Path: fmt.Sprintf("synthscript/%d/%d", seed, i), Source: s.source}
}

// ScriptFeatures records which constructs a generated script contains.
type ScriptFeatures struct {
	Class, Property, Generator, Try, Finally, Print, FString bool
	MainGuard, TypedFunc, Chain, ModuleLoop, Raise           bool
	Recursive, Text                                          bool
	// the newer parts (script_more.go)
	Dunder, Inherit, ClassMethod, With, CustomExc               bool
	Closure, Lambda, Comprehension, Memo, While, Unpack, Global bool
	StrMethods, VarArgs                                         bool
	Uncaught                                                    bool // ends in a statement meant to raise
	Lines                                                       int
}

// InspectScript returns the static features of script (seed, i).
func InspectScript(seed int64, i int) ScriptFeatures { return buildScript(seed, i).feat }

// Script sizes: a script is redrawn (from the same stream, so still a pure
// function of (seed, i)) until its line count falls in [minScriptLines, maxScriptLines].
const (
	minScriptLines = 8
	maxScriptLines = 40
	pUncaught      = 0.03 // scripts ending in a statement that raises
)

type script struct {
	source string
	feat   ScriptFeatures
}

// sgen writes one script. It reuses gen's random stream helpers (chance,
// pick, oneOf) and, for typed functions, the whole function grammar.
type sgen struct {
	*gen
	seed  int64
	idx   int
	defs  []string // module-level definitions, in order
	body  []string // the script's statements, relative indentation
	used  map[string]bool
	feat  ScriptFeatures
	ints  []string // names of module-level int constants
	words []string // names of list[str] constants
	nums  []string // names of list[int] constants
	dicts []string // names of dict[str,int] constants
	tail  []string // statements after the body (uncaught raise)
}

func buildScript(seed int64, i int) script {
	r := newRand(seed, i, 7)
	var last script
	for try := 0; try < 12; try++ {
		g := &gen{r: r, kn: DefaultKnobs, strLits: map[string]bool{}, intLits: map[int]bool{}}
		s := &sgen{gen: g, seed: seed, idx: i, used: map[string]bool{"main": true, "f": true}}
		for _, n := range append(append([]string{}, helperNames...), recNames...) {
			s.used[n] = true // the typed grammar's function names
		}
		last = s.build(try)
		if last.feat.Lines >= minScriptLines && last.feat.Lines <= maxScriptLines {
			return last
		}
	}
	return last
}

// name draws an unused name from pool (suffixing a digit when all are used).
func (s *sgen) name(pool ...string) string {
	start := s.r.IntN(len(pool))
	for j := range pool {
		n := pool[(start+j)%len(pool)]
		if !s.used[n] {
			s.used[n] = true
			return n
		}
	}
	for d := 2; ; d++ {
		n := fmt.Sprintf("%s%d", pool[start], d)
		if !s.used[n] {
			s.used[n] = true
			return n
		}
	}
}

func (s *sgen) def(lines ...string) { s.defs = append(s.defs, strings.Join(lines, "\n")) }
func (s *sgen) say(lines ...string) { s.body = append(s.body, lines...) }

// Value pools: realistic words and names.
var (
	scriptWords = []string{"apple", "pear", "kiwi", "plum", "fig", "mango", "ann", "bob", "cy", "dana", "eve", "finn",
		"red", "blue", "green", "oslo", "lima", "rome", "kyiv", "alpha", "beta", "gamma", "delta", "tea", "milk", "bread",
		"north", "south", "admin", "guest", "root", "x1", "item", "Zoe", "Max"}
	intConstNames  = []string{"LIMIT", "MAX_ITEMS", "THRESHOLD", "START", "STEP", "BASE", "ROUNDS", "TARGET", "max_count", "threshold", "limit", "size"}
	wordConstNames = []string{"NAMES", "WORDS", "FRUITS", "CITIES", "COLORS", "TAGS", "USERS", "names", "words", "items", "labels", "keys"}
	numConstNames  = []string{"SCORES", "PRICES", "VALUES", "READINGS", "AGES", "WEIGHTS", "numbers", "data", "scores", "values", "temps", "samples"}
	dictConstNames = []string{"STOCK", "INVENTORY", "POINTS", "LIMITS", "CONFIG", "stock", "inventory", "ages", "prices", "counts", "totals"}
)

func (s *sgen) word() string { return oneOf(s.gen, scriptWords...) }

func (s *sgen) wordList(lo, hi int) string {
	n := lo + s.r.IntN(hi-lo+1)
	seen := map[string]bool{}
	var ws []string
	for len(ws) < n {
		w := s.word()
		if !seen[w] {
			seen[w] = true
			ws = append(ws, pyStr(w))
		}
	}
	return "[" + strings.Join(ws, ", ") + "]"
}

func (s *sgen) intList(lo, hi, min, max int) string {
	n := lo + s.r.IntN(hi-lo+1)
	xs := make([]string, n)
	for j := range xs {
		xs[j] = fmt.Sprint(min + s.r.IntN(max-min+1))
	}
	return "[" + strings.Join(xs, ", ") + "]"
}

func (s *sgen) dictLit(lo, hi int) string {
	n := lo + s.r.IntN(hi-lo+1)
	seen := map[string]bool{}
	var kv []string
	for len(kv) < n {
		w := s.word()
		if !seen[w] {
			seen[w] = true
			kv = append(kv, fmt.Sprintf("%s: %d", pyStr(w), s.r.IntN(12)))
		}
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// Accessors that define a constant on demand.
func (s *sgen) anInt() string {
	if len(s.ints) == 0 || s.chance(0.2) {
		n := s.name(intConstNames...)
		s.def(fmt.Sprintf("%s = %d", n, 2+s.r.IntN(6)))
		s.ints = append(s.ints, n)
		return n
	}
	return oneOf(s.gen, s.ints...)
}

func (s *sgen) aWordList() string {
	if len(s.words) == 0 || s.chance(0.2) {
		n := s.name(wordConstNames...)
		s.def(fmt.Sprintf("%s = %s", n, s.wordList(2, 5)))
		s.words = append(s.words, n)
		return n
	}
	return oneOf(s.gen, s.words...)
}

func (s *sgen) aNumList() string {
	if len(s.nums) == 0 || s.chance(0.2) {
		n := s.name(numConstNames...)
		s.def(fmt.Sprintf("%s = %s", n, s.intList(2, 6, -3, 20)))
		s.nums = append(s.nums, n)
		return n
	}
	return oneOf(s.gen, s.nums...)
}

func (s *sgen) aDict() string {
	if len(s.dicts) == 0 || s.chance(0.2) {
		n := s.name(dictConstNames...)
		s.def(fmt.Sprintf("%s = %s", n, s.dictLit(2, 4)))
		s.dicts = append(s.dicts, n)
		return n
	}
	return oneOf(s.gen, s.dicts...)
}

// printf writes a print call, often with an f-string.
func (s *sgen) printf(label string, exprs ...string) string {
	s.feat.Print = true
	if s.chance(0.6) {
		s.feat.FString = true
		var parts []string
		for _, e := range exprs {
			parts = append(parts, "{"+e+"}")
		}
		return fmt.Sprintf("print(f%s)", pyStr(label+": "+strings.Join(parts, ", ")))
	}
	return fmt.Sprintf("print(%s, %s)", pyStr(label), strings.Join(exprs, ", "))
}

// build draws the components, then lays the script out.
func (s *sgen) build(try int) script {
	small := s.chance(0.3)
	n := 3 + s.r.IntN(3)
	if small {
		n = 1 + s.r.IntN(3)
	}
	if try > 4 { // redraws: bias toward the size bounds
		n = 1 + s.r.IntN(3)
	}
	comps := []func(){s.compClass, s.compGenerator, s.compChain, s.compTyped, s.compTry, s.compModuleLoop, s.compDict, s.compRecursive, s.compText,
		s.compClosure, s.compLambda, s.compComprehension, s.compMemo, s.compWhile, s.compUnpack, s.compStrings, s.compGlobal, s.compArgs}
	weights := []float64{3.6, 2.2, 2.8, 2.2, 2, 1.6, 0.7, 0.7, 0.8,
		0.9, 0.8, 0.8, 0.6, 0.8, 0.8, 0.9, 0.6, 0.8}
	done := map[int]bool{}
	for k := 0; k < n; k++ {
		c := s.pick(weights...)
		if done[c] {
			continue
		}
		done[c] = true
		comps[c]()
	}
	if len(s.body) == 0 {
		s.compModuleLoop()
	}
	if s.chance(pUncaught) {
		s.uncaught()
	}
	guard := s.pick(0.6, 0.1, 0.3) // def main() + guard, statements under the guard, plain module
	var b strings.Builder
	for _, d := range s.defs {
		if strings.HasPrefix(d, "def ") || strings.HasPrefix(d, "class ") || strings.HasPrefix(d, "@") {
			if b.Len() > 0 && s.chance(0.5) {
				b.WriteString("\n")
			}
		}
		b.WriteString(d + "\n")
	}
	body := append(s.body, s.tail...)
	switch guard {
	case 0:
		s.feat.MainGuard = true
		b.WriteString("def main():\n")
		for _, l := range body {
			b.WriteString("    " + l + "\n")
		}
		b.WriteString("\n" + oneOf(s.gen, `if __name__ == "__main__":`, `if __name__ == '__main__':`) + "\n    main()\n")
	case 1:
		s.feat.MainGuard = true
		b.WriteString(`if __name__ == "__main__":` + "\n")
		for _, l := range body {
			b.WriteString("    " + l + "\n")
		}
	default:
		for _, l := range body {
			b.WriteString(l + "\n")
		}
	}
	src := b.String()
	s.feat.Lines = strings.Count(src, "\n")
	return script{source: src, feat: s.feat}
}

// ---- components

// class templates: a definition and its uses.
func (s *sgen) compClass() {
	s.feat.Class = true
	k := s.r.IntN(5 + nMoreClasses)
	if k >= 5 {
		s.classMore(k - 5)
		return
	}
	switch k {
	case 0: // an account with a withdraw that raises
		cls := s.name("Account", "Wallet", "BankAccount", "Budget")
		owner, bal := oneOf(s.gen, "owner", "name", "holder"), oneOf(s.gen, "balance", "amount", "funds")
		dep, wd := oneOf(s.gen, "deposit", "add", "put"), oneOf(s.gen, "withdraw", "take", "spend")
		s.def(fmt.Sprintf("class %s:", cls),
			fmt.Sprintf("    def __init__(self, %s, %s=0):", owner, bal),
			fmt.Sprintf("        self.%s = %s", owner, owner),
			fmt.Sprintf("        self.%s = %s", bal, bal),
			fmt.Sprintf("    def %s(self, value):", dep),
			fmt.Sprintf("        self.%s += value", bal),
			fmt.Sprintf("        return self.%s", bal),
			fmt.Sprintf("    def %s(self, value):", wd),
			fmt.Sprintf("        if value > self.%s:", bal),
			fmt.Sprintf("            raise ValueError(f\"insufficient funds for {self.%s}\")", owner),
			fmt.Sprintf("        self.%s -= value", bal),
			"    @property",
			"    def is_empty(self):",
			fmt.Sprintf("        return self.%s == 0", bal))
		s.feat.Property, s.feat.Raise, s.feat.FString = true, true, true
		v := s.name("acct", "account", "wallet", "a", "mine")
		s.say(fmt.Sprintf("%s = %s(%s, %d)", v, cls, pyStr(s.word()), s.r.IntN(15)))
		s.say(fmt.Sprintf("%s.%s(%d)", v, dep, 1+s.r.IntN(9)))
		s.feat.Try = true
		e := s.name("err", "e", "exc", "error")
		s.say("try:", fmt.Sprintf("    %s.%s(%d)", v, wd, 3+s.r.IntN(20)), fmt.Sprintf("except ValueError as %s:", e), "    "+s.printf("failed", e))
		if s.chance(0.5) {
			s.feat.Finally = true
			s.say("finally:", "    "+s.printf("balance", v+"."+bal))
		}
		s.say(s.printf("empty", v+".is_empty"))
	case 1: // a stack whose pop raises IndexError
		cls := s.name("Stack", "History", "UndoStack", "Pile")
		items := oneOf(s.gen, "items", "_items", "data", "entries")
		push, pop := oneOf(s.gen, "push", "add"), oneOf(s.gen, "pop", "take")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self):",
			fmt.Sprintf("        self.%s = []", items),
			fmt.Sprintf("    def %s(self, item):", push),
			fmt.Sprintf("        self.%s.append(item)", items),
			fmt.Sprintf("    def %s(self):", pop),
			fmt.Sprintf("        if not self.%s:", items),
			fmt.Sprintf("            raise IndexError(%s)", pyStr("empty "+strings.ToLower(cls))),
			fmt.Sprintf("        return self.%s.pop()", items),
			"    @property",
			"    def size(self):",
			fmt.Sprintf("        return len(self.%s)", items))
		s.feat.Property, s.feat.Raise = true, true
		v := s.name("stack", "history", "st", "pile")
		src := s.aWordList()
		x := s.name("item", "word", "entry", "w")
		s.say(fmt.Sprintf("%s = %s()", v, cls), fmt.Sprintf("for %s in %s:", x, src), fmt.Sprintf("    %s.%s(%s)", v, push, x))
		k := 1 + s.r.IntN(6)
		s.feat.Try = true
		s.say("try:", fmt.Sprintf("    for _ in range(%d):", k), fmt.Sprintf("        %s = %s.%s()", x, v, pop),
			"except IndexError:", "    "+s.printf("nothing left", v+".size"))
		if s.chance(0.4) {
			s.say("else:", "    "+s.printf("last", x))
		}
	case 2: // a point with __repr__ and a property
		cls := s.name("Point", "Vector", "Position", "Cell")
		d, prop := oneOf(s.gen, "move", "shift", "translate"), oneOf(s.gen, "norm", "distance", "manhattan")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, x, y):",
			"        self.x = x",
			"        self.y = y",
			fmt.Sprintf("    def %s(self, dx, dy):", d),
			"        self.x += dx",
			"        self.y += dy",
			"        return self",
			"    @property",
			fmt.Sprintf("    def %s(self):", prop),
			"        return abs(self.x) + abs(self.y)",
			"    def __repr__(self):",
			fmt.Sprintf("        return f\"%s({self.x}, {self.y})\"", cls))
		s.feat.Property, s.feat.FString = true, true
		v := s.name("p", "pos", "point", "here")
		s.say(fmt.Sprintf("%s = %s(%d, %d)", v, cls, s.r.IntN(10)-3, s.r.IntN(10)-3))
		steps := s.name("moves", "steps", "deltas")
		dx, dy := s.name("dx"), s.name("dy")
		var pairs []string
		for range 2 + s.r.IntN(3) {
			pairs = append(pairs, fmt.Sprintf("(%d, %d)", s.r.IntN(7)-3, s.r.IntN(7)-3))
		}
		s.say(fmt.Sprintf("%s = [%s]", steps, strings.Join(pairs, ", ")),
			fmt.Sprintf("for %s, %s in %s:", dx, dy, steps),
			fmt.Sprintf("    %s.%s(%s, %s)", v, d, dx, dy))
		if s.chance(0.5) {
			s.say(fmt.Sprintf("    if %s.%s > %d:", v, prop, 3+s.r.IntN(5)), "        break")
		}
		s.say(s.printf("at", v, v+"."+prop))
	case 3: // a player with scores and an average property
		cls := s.name("Player", "Student", "Team", "Runner")
		sc := oneOf(s.gen, "scores", "points", "results")
		add := oneOf(s.gen, "add_score", "record", "add")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, name):",
			"        self.name = name",
			fmt.Sprintf("        self.%s = []", sc),
			fmt.Sprintf("    def %s(self, value):", add),
			fmt.Sprintf("        self.%s.append(value)", sc),
			"    @property",
			"    def average(self):",
			fmt.Sprintf("        if not self.%s:", sc),
			"            return 0",
			fmt.Sprintf("        return sum(self.%s) // len(self.%s)", sc, sc))
		s.feat.Property = true
		ps := s.name("players", "team", "roster", "people")
		names := s.aWordList()
		nums := s.aNumList()
		p, n := s.name("p", "player", "member"), s.name("name", "who", "nm")
		x := s.name("x", "score", "pts", "value")
		s.say(fmt.Sprintf("%s = [%s(%s) for %s in %s]", ps, cls, n, n, names),
			fmt.Sprintf("for %s in %s:", p, ps),
			fmt.Sprintf("    for %s in %s:", x, nums),
			fmt.Sprintf("        if %s %% %d != 0:", x, 2+s.r.IntN(2)),
			fmt.Sprintf("            %s.%s(%s)", p, add, x),
			"    "+s.printf("player", p+".name", p+".average"))
	default: // an inventory (dict inside) whose remove raises KeyError
		cls := s.name("Inventory", "Pantry", "Warehouse", "Cart")
		s.def(fmt.Sprintf("class %s:", cls),
			"    def __init__(self, stock=None):",
			"        self.stock = dict(stock or {})",
			"    def add(self, item, qty=1):",
			"        self.stock[item] = self.stock.get(item, 0) + qty",
			"    def remove(self, item):",
			"        if item not in self.stock:",
			"            raise KeyError(item)",
			"        return self.stock.pop(item)",
			"    @property",
			"    def total(self):",
			"        return sum(self.stock.values())")
		s.feat.Property, s.feat.Raise, s.feat.Try = true, true, true
		v := s.name("inv", "pantry", "cart", "store")
		d := s.aDict()
		s.say(fmt.Sprintf("%s = %s(%s)", v, cls, d), fmt.Sprintf("%s.add(%s, %d)", v, pyStr(s.word()), 1+s.r.IntN(5)))
		e := s.name("err", "e", "missing")
		s.say("try:", fmt.Sprintf("    %s.remove(%s)", v, pyStr(s.word())), fmt.Sprintf("except KeyError as %s:", e), "    "+s.printf("no such item", e))
		s.say(s.printf("total", v+".total"))
	}
}

// compGenerator writes a generator function and consumes it.
func (s *sgen) compGenerator() {
	s.feat.Generator = true
	var call string
	switch s.r.IntN(4) {
	case 0:
		f := s.name("countdown", "count_down", "ticks", "descending")
		s.def(fmt.Sprintf("def %s(n):", f), "    while n > 0:", "        yield n", fmt.Sprintf("        n -= %d", 1+s.r.IntN(2)))
		call = fmt.Sprintf("%s(%s)", f, oneOf(s.gen, s.anInt(), fmt.Sprint(2+s.r.IntN(5))))
	case 1:
		f := s.name("evens", "big_ones", "selected", "matching")
		x := oneOf(s.gen, "x", "value", "n", "item")
		s.def(fmt.Sprintf("def %s(values, %s=%d):", f, "cutoff", s.r.IntN(8)), fmt.Sprintf("    for %s in values:", x),
			fmt.Sprintf("        if %s", oneOf(s.gen, x+" % 2 == 0 and "+x+" > cutoff:", x+" > cutoff:", "abs("+x+") >= cutoff:")),
			fmt.Sprintf("            yield %s", oneOf(s.gen, x, x+" * 2", x+" - cutoff")))
		call = fmt.Sprintf("%s(%s)", f, s.aNumList())
	case 2:
		f := s.name("running_total", "cumulative", "prefix_sums", "accumulate_values")
		s.def(fmt.Sprintf("def %s(values):", f), "    total = 0", "    for v in values:", "        total += v", "        yield total")
		call = fmt.Sprintf("%s(%s)", f, s.aNumList())
	default:
		f := s.name("labelled", "numbered", "tagged", "enumerate_words")
		s.def(fmt.Sprintf("def %s(words, start=1):", f), "    for i, w in enumerate(words, start):",
			fmt.Sprintf("        yield %s", oneOf(s.gen, `f"{i}. {w}"`, `f"{w.upper()}#{i}"`, `(i, w.title())`)))
		call = fmt.Sprintf("%s(%s)", f, s.aWordList())
		s.feat.FString = true
	}
	switch s.r.IntN(3) {
	case 0:
		x := s.name("v", "item", "entry", "x")
		s.say(fmt.Sprintf("for %s in %s:", x, call), "    "+s.printf("got", x))
	case 1:
		v := s.name("results", "out", "collected", "seq")
		s.say(fmt.Sprintf("%s = list(%s)", v, call), s.printf("count", "len("+v+")", v))
	default:
		it := s.name("it", "gen", "stream")
		a, b := s.name("first"), s.name("second", "nxt")
		s.say(fmt.Sprintf("%s = %s", it, call), fmt.Sprintf("%s = next(%s, None)", a, it), fmt.Sprintf("%s = next(%s, None)", b, it))
		s.say(s.printf("first two", a, b))
	}
}

// compChain writes two or three functions that call each other.
func (s *sgen) compChain() {
	s.feat.Chain = true
	if s.chance(0.5) { // strings
		leaf := s.name("normalize", "clean_word", "canonical", "tidy")
		s.def(fmt.Sprintf("def %s(word):", leaf), fmt.Sprintf("    return %s", oneOf(s.gen, "word.strip().lower()", "word.lower().replace('-', '')", "word.strip().title()", "word[::-1].lower()")))
		mid := s.name("summarize", "index_words", "group_words", "tally")
		s.def(fmt.Sprintf("def %s(words):", mid), "    result = {}", "    for w in words:", fmt.Sprintf("        key = %s(w)", leaf),
			fmt.Sprintf("        result[key] = %s", oneOf(s.gen, "result.get(key, 0) + 1", "len(w)", "result.get(key, 0) + len(w)")), "    return result")
		v := s.name("summary", "index", "table", "stats")
		s.say(fmt.Sprintf("%s = %s(%s)", v, mid, s.aWordList()))
		if s.chance(0.6) {
			top := s.name("report", "show", "describe")
			s.def(fmt.Sprintf("def %s(table):", top), "    lines = []", "    for key, count in sorted(table.items()):",
				fmt.Sprintf("        lines.append(%s)", oneOf(s.gen, `f"{key}={count}"`, `key + ":" + str(count)`)), fmt.Sprintf("    return %s.join(lines)", pyStr(oneOf(s.gen, ", ", "; ", " | "))))
			s.feat.FString = true
			s.say(fmt.Sprintf("print(%s(%s))", top, v))
			s.feat.Print = true
		} else {
			s.say(s.printf("summary", v))
		}
		return
	}
	leaf := s.name("clamp", "bounded", "limit_to", "cap")
	s.def(fmt.Sprintf("def %s(value, low, high):", leaf), "    return max(low, min(value, high))")
	pred := s.name("is_valid", "keep", "accept", "is_good")
	s.def(fmt.Sprintf("def %s(n):", pred), fmt.Sprintf("    return %s", oneOf(s.gen, "n % 2 == 0", "n > 0", "n % 3 != 0 and n >= 0", "0 <= n <= 10")))
	mid := s.name("total_of", "score_all", "combined", "weighted_sum")
	lim := s.anInt()
	s.def(fmt.Sprintf("def %s(values):", mid), "    total = 0", "    for v in values:", fmt.Sprintf("        if %s(v):", pred),
		fmt.Sprintf("            total += %s(v, 0, %s)", leaf, lim), "    return total")
	v := s.name("total", "result", "score", "answer")
	s.say(fmt.Sprintf("%s = %s(%s)", v, mid, s.aNumList()))
	if s.chance(0.5) {
		s.say(fmt.Sprintf("if %s > %s:", v, lim), "    "+s.printf("above", v), "else:", "    "+s.printf("below", v))
	} else {
		s.say(s.printf("total", v))
	}
}

var fCall = regexp.MustCompile(`(^|[^.\w])f\(`)

// compTyped embeds a function from the typed grammar (Knobs.program),
// renamed, and calls it on generated inputs inside try/except.
func (s *sgen) compTyped() {
	s.feat.TypedFunc = true
	// a stream of its own, disjoint from synth.Generate's indices
	sub := int(newRand(s.seed, s.idx, 9).Uint64() >> 2)
	p := DefaultKnobs.program(s.seed^0x5c819f, sub)
	fname := s.name("compute", "process_data", "transform_value", "analyze", "evaluate", "solve_case", "apply_rules", "run_case")
	src := fCall.ReplaceAllString(strings.TrimRight(p.source, "\n"), "${1}"+fname+"(")
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "def ") {
			n := strings.SplitN(line[4:], "(", 2)[0]
			s.used[n] = true
		}
	}
	s.def(src)
	calls := p.calls(s.seed^0x5c819f, sub, 1+s.r.IntN(2))
	v := s.name("out", "result", "res", "value", "answer")
	e := s.name("err", "e", "exc")
	for _, c := range calls {
		c = fname + c[1:]
		s.feat.Try = true
		s.say("try:", fmt.Sprintf("    %s = %s", v, c), "    "+s.printf("result", v))
		s.say(fmt.Sprintf("except %s as %s:", oneOf(s.gen, "(ValueError, IndexError, KeyError)", "Exception"), e), "    "+s.printf("error", oneOf(s.gen, e, "type("+e+").__name__")))
	}
}

// compTry: a function that raises, called on several values.
func (s *sgen) compTry() {
	s.feat.Try, s.feat.Raise = true, true
	f := s.name("parse_number", "to_int", "read_value", "parse_entry")
	s.def(fmt.Sprintf("def %s(text):", f), "    if not text:", fmt.Sprintf("        raise ValueError(%s)", pyStr(oneOf(s.gen, "empty input", "nothing to parse", "blank"))),
		"    return int(text)")
	vals := []string{}
	for range 2 + s.r.IntN(3) {
		switch s.r.IntN(3) {
		case 0:
			vals = append(vals, pyStr(fmt.Sprint(s.r.IntN(100)-20)))
		case 1:
			vals = append(vals, pyStr(oneOf(s.gen, "", "abc", "1.5", "x7", " 4 ")))
		default:
			vals = append(vals, pyStr(fmt.Sprint(s.r.IntN(10))))
		}
	}
	raw := s.name("raw", "inputs", "entries", "texts")
	good, bad := s.name("parsed", "numbers", "good"), s.name("failures", "bad", "errors")
	x := s.name("t", "text", "entry", "s")
	fin := s.chance(0.35)
	c := ""
	if fin {
		c = s.name("attempts", "tried", "seen_count")
		s.say(fmt.Sprintf("%s = 0", c))
	}
	s.say(fmt.Sprintf("%s = [%s]", raw, strings.Join(vals, ", ")), fmt.Sprintf("%s = []", good), fmt.Sprintf("%s = 0", bad),
		fmt.Sprintf("for %s in %s:", x, raw), "    try:", fmt.Sprintf("        %s.append(%s(%s))", good, f, x),
		"    except ValueError as err:", fmt.Sprintf("        %s += 1", bad))
	if s.chance(0.3) {
		s.say("        " + s.printf("skip", x, "err"))
	}
	if fin {
		s.feat.Finally = true
		s.say("    finally:", fmt.Sprintf("        %s += 1", c))
	}
	s.say(s.printf("parsed", good, bad))
}

// compModuleLoop: a loop with an if over a constant, at the top level.
func (s *sgen) compModuleLoop() {
	s.feat.ModuleLoop = true
	switch s.r.IntN(3) {
	case 0:
		ws := s.aWordList()
		short, x := s.name("short", "small", "brief"), s.name("name", "w", "word", "label")
		n := 3 + s.r.IntN(3)
		s.say(fmt.Sprintf("%s = []", short), fmt.Sprintf("for %s in %s:", x, ws), fmt.Sprintf("    if len(%s) > %d:", x, n),
			"        "+s.printf("long", x), "    else:", fmt.Sprintf("        %s.append(%s.upper())", short, x))
		s.say(s.printf("short", short))
	case 1:
		lim := s.anInt()
		n, c := s.name("n", "remaining", "level"), s.name("steps", "rounds", "count")
		s.say(fmt.Sprintf("%s = %s * %d", n, lim, 2+s.r.IntN(8)), fmt.Sprintf("%s = 0", c), fmt.Sprintf("while %s > 1:", n),
			fmt.Sprintf("    %s = %s // 2 if %s %% 2 == 0 else %s - 1", n, n, n, n), fmt.Sprintf("    %s += 1", c))
		s.say(s.printf("steps", c))
	default:
		nums := s.aNumList()
		best, seen, x := s.name("best", "largest", "top"), s.name("seen", "uniq", "distinct"), s.name("x", "value", "reading")
		s.say(fmt.Sprintf("%s = None", best), fmt.Sprintf("%s = set()", seen), fmt.Sprintf("for %s in %s:", x, nums),
			fmt.Sprintf("    if %s in %s:", x, seen), "        continue", fmt.Sprintf("    %s.add(%s)", seen, x),
			fmt.Sprintf("    if %s is None or %s > %s:", best, x, best), fmt.Sprintf("        %s = %s", best, x))
		s.say(s.printf("best", best, "len("+seen+")"))
	}
}

// compDict: counting and lookups in a dict.
func (s *sgen) compDict() {
	d := s.aDict()
	k := s.name("key", "item", "name", "k")
	if s.chance(0.5) {
		low := s.name("low", "restock", "short_items")
		s.say(fmt.Sprintf("%s = [%s for %s, qty in %s.items() if qty < %d]", low, k, k, d, 2+s.r.IntN(6)))
		s.say(s.printf("low", low))
	} else {
		w := pyStr(s.word())
		s.say(fmt.Sprintf("%s[%s] = %s.get(%s, 0) + %d", d, w, d, w, 1+s.r.IntN(4)),
			fmt.Sprintf("for %s in sorted(%s):", k, d), "    "+s.printf("entry", k, d+"["+k+"]"))
	}
}

// uncaught appends a statement that raises and is not caught.
func (s *sgen) uncaught() {
	s.feat.Uncaught = true
	switch s.r.IntN(4) {
	case 0:
		s.tail = append(s.tail, fmt.Sprintf("print(%s[%s])", s.aDict(), pyStr("missing_"+s.word())))
	case 1:
		s.tail = append(s.tail, fmt.Sprintf("value = int(%s)", pyStr(s.word())))
	case 2:
		xs := s.aNumList() // xs[len(xs)]: the same list twice
		s.tail = append(s.tail, fmt.Sprintf("print(%s[len(%s)])", xs, xs))
	default:
		s.tail = append(s.tail, fmt.Sprintf("raise RuntimeError(%s)", pyStr(oneOf(s.gen, "unexpected state", "not implemented", "invalid configuration"))))
	}
}

// compRecursive: a small recursive function on a bounded int.
func (s *sgen) compRecursive() {
	s.feat.Recursive = true
	var f string
	k := s.name("k", "i", "n", "num")
	switch s.r.IntN(4) {
	case 0:
		f = s.name("factorial", "fact", "product_to")
		s.def(fmt.Sprintf("def %s(n):", f), "    if n <= 1:", "        return 1", fmt.Sprintf("    return n * %s(n - 1)", f))
	case 1:
		f = s.name("fib", "fibonacci", "rabbits")
		s.def(fmt.Sprintf("def %s(n):", f), "    if n < 2:", "        return n", fmt.Sprintf("    return %s(n - 1) + %s(n - 2)", f, f))
	case 2:
		f = s.name("digit_sum", "sum_digits", "digits_total")
		s.def(fmt.Sprintf("def %s(n):", f), "    if n < 10:", "        return n", fmt.Sprintf("    return n %% 10 + %s(n // 10)", f))
	default:
		f = s.name("triangle", "stairs", "sum_to")
		s.def(fmt.Sprintf("def %s(n):", f), "    if n == 0:", "        return 0", fmt.Sprintf("    return n + %s(n - 1)", f))
	}
	bound := 2 + s.r.IntN(4) // fib(5) is 15 calls: traces stay small
	if strings.Contains(f, "digit") {
		bound = 10 + s.r.IntN(300)
	}
	switch s.r.IntN(3) {
	case 0:
		s.say(fmt.Sprintf("for %s in range(%d):", k, min(bound, 6)), "    "+s.printf(f, k, f+"("+k+")"))
	case 1:
		v := s.name("table", "results", "vals")
		s.say(fmt.Sprintf("%s = [%s(%s) for %s in range(%d)]", v, f, k, k, min(bound, 6)), s.printf(f, v))
	default:
		v := s.name("answer", "result", "value")
		s.say(fmt.Sprintf("%s = %s(%d)", v, f, bound))
		s.say(fmt.Sprintf("if %s %% 2 == 0:", v), "    "+s.printf("even", v), "else:", "    "+s.printf("odd", v))
	}
}

// compText: module-level text processing with comprehensions and f-strings.
func (s *sgen) compText() {
	s.feat.Text = true
	n := 3 + s.r.IntN(4)
	var ws []string
	for range n {
		ws = append(ws, s.word())
	}
	sent := s.name("sentence", "text", "line", "message", "title")
	parts := s.name("parts", "tokens", "words")
	s.say(fmt.Sprintf("%s = %s", sent, pyStr(strings.Join(ws, oneOf(s.gen, " ", " ", ", ")))))
	s.say(fmt.Sprintf("%s = %s.split()", parts, sent))
	if strings.Contains(s.body[len(s.body)-2], ", ") {
		s.body[len(s.body)-1] = fmt.Sprintf("%s = [p.strip() for p in %s.split(',')]", parts, sent)
	}
	w := s.name("w", "word", "tok")
	for _, c := range s.r.Perm(4)[:2+s.r.IntN(2)] {
		switch c {
		case 0:
			v := s.name("lengths", "sizes", "by_word")
			s.say(fmt.Sprintf("%s = {%s: len(%s) for %s in %s}", v, w, w, w, parts), s.printf("lengths", v))
		case 1:
			v := s.name("longest", "widest", "biggest")
			s.say(fmt.Sprintf("%s = max(%s, key=len)", v, parts), s.printf("longest", v))
		case 2:
			v := s.name("caps", "shout", "pretty")
			s.say(fmt.Sprintf("%s = %s.join(%s.capitalize() for %s in %s)", v, pyStr(oneOf(s.gen, " ", "-", "")), w, w, parts), s.printf("joined", v))
		default:
			v := s.name("vowels", "n_vowels", "vowel_count")
			s.say(fmt.Sprintf("%s = 0", v), fmt.Sprintf("for ch in %s:", sent), "    if ch in 'aeiou':", fmt.Sprintf("        %s += 1", v))
			s.say(fmt.Sprintf("if %s > len(%s) // 3:", v, sent), "    "+s.printf("many vowels", v))
		}
	}
}
