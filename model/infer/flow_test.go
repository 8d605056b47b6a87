package infer

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/format"
	"ndb/internal/paths"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// realTracePrograms is a tracer and the programs the rules are checked
// against on real traces: the hand-written eval scripts, a few constructs
// they lack and, where the shared data is present, every 40th realworld
// and TheAlgorithms file ($NDB_RULE_EVERY sets another stride).
func realTracePrograms(t *testing.T) (*tracer.Tracer, []tracer.Program) {
	t.Helper()
	tr, err := tracer.New(tracer.Options{Limits: tracer.Limits{Timeout: 5 * time.Second, MaxEvents: 20000}})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	programs := []tracer.Program{
		{Path: "match", Source: "def f(v):\n    match v:\n        case [x, *_] if x > 0:\n            return x\n        case {'k': y}:\n            return y\n        case _:\n            pass\n    return None\nprint([f(v) for v in ([1, 2], [-1], {'k': 3}, 4)])\n"},
		{Path: "except*", Source: "try:\n    raise ExceptionGroup('g', [ValueError(1), TypeError(2)])\nexcept* ValueError:\n    a = 1\nexcept* TypeError:\n    b = 2\nfinally:\n    c = 3\n"},
		{Path: "with", Source: "import contextlib\n@contextlib.contextmanager\ndef cm():\n    yield 1\ndef f(n):\n    for i in range(n):\n        try:\n            with cm() as v:\n                if i == 1:\n                    continue\n                if i == 2:\n                    raise KeyError(i)\n                if i == 3:\n                    break\n        except KeyError:\n            pass\n        finally:\n            n -= 1\n    with cm():\n        return n\nf(5)\n"},
		{Path: "gen", Source: "def g(n):\n    while True:\n        if n <= 0:\n            return\n        yield n\n        n -= 1\nclass C(dict):\n    '''doc'''\n    x = [v for v in g(3)]\nprint(sum(g(4)), C.x)\n"},
		{Path: "silent", Source: "\"\"\"Module doc,\non two lines.\"\"\"\ng = 0\nSTATES = {\n    'A': ['Alaska', 'Alabama'],\n    'K': ['Kansas',\n          'Kentucky'],\n}\ndef f(a, b=(1,\n            2)):\n    \"\"\"Doc\n    more doc\n    \"\"\"\n    global g\n    g += 1\n    if a:\n        x = 1\n    else:\n        x = 2\n    try:\n        if a > 1:\n            raise ValueError(a)\n        y = 1\n    except ValueError:\n        y = 2\n    else:\n        y = 3\n    finally:\n        y += 4\n    for i in range(3):\n        if i == a:\n            break\n    else:\n        z = 1\n    while a > 5:\n        a -= 1\n    else:\n        z = 2\n    def inner():\n        nonlocal x\n        x = 5\n    inner()\n    s = f\"\"\"a\n{a}\nb\"\"\"\n    t = (\"abc\"\n         \"def\")\n    u = \"\"\"abc\ndef\n\"\"\".upper()\n    v = (\"\"\"abc\ndef\"\"\",\n         x,\n    )\n    return (\n        x,\n        y,\n    )\ndef h():\n    try:\n        return f(\n            2,\n        )\n    finally:\n        pass\nclass C:\n    \"\"\"Class doc\n    on two lines.\"\"\"\n    k = (\n        1,\n    )\nprint(f(0), f(1), h(), C.k, STATES['K'][\n    1\n])\n"},
		{Path: "dead", Source: "def used(n):\n    return helper(n) + 1\ndef helper(n):\n    return n * 2\ndef unused(n):\n    return only_from_unused(n)\ndef only_from_unused(n):\n    return n\nclass Box:\n    def __init__(self, v):\n        self.v = v\n    def get(self):\n        return self.v\n    def never(self):\n        return 0\nprint(used(2), Box(3).get())\n"},
		{Path: "headers", Source: "import enum, functools\nclass E(Exception):\n    pass\nclass B(E):\n    \"\"\"doc\"\"\"\nclass Color(enum.Enum):\n    RED = 1\n@functools.lru_cache\ndef d(x):\n    'only a docstring'\ndef g(y, z=2):\n    'doc'\nclass K:\n    'doc only'\ndef outer(a):\n    def inner(b):\n        'doc'\n    inner(a)\n    return a\ne = E(1)\nprint(d(2), g(3), B(), K(), Color.RED, outer(4))\n"},
	}
	add := func(dir string, every int) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
		for i, name := range files {
			if i%every != 0 {
				continue
			}
			if src, err := os.ReadFile(name); err == nil {
				programs = append(programs, tracer.Program{Path: name, Source: string(src)})
			}
		}
	}
	add(filepath.Join("..", "..", "eval", "scripts"), 1)
	if data, err := paths.DataDir(""); err == nil {
		every := 40
		if n, err := strconv.Atoi(os.Getenv("NDB_RULE_EVERY")); err == nil && n > 0 {
			every = n
		}
		add(filepath.Join(data, "realworld"), every)
		add(filepath.Join(data, "thealgorithms"), every)
	}
	return tr, programs
}

// compileAll is what tracer.Compile says of each program (in one run).
func compileAll(t *testing.T, programs []tracer.Program) []*pysource.Compiled {
	t.Helper()
	sources := make([]string, len(programs))
	for i, p := range programs {
		sources[i] = p.Source
	}
	compiled, err := tracer.Compile(context.Background(), "", sources)
	if err != nil {
		t.Fatal(err)
	}
	return compiled
}

// TestNextLinesHoldOnRealTraces runs programs under the tracer and checks
// that every line event that follows a line event of the same frame, with
// no event of that frame between, is on a line pysource's NextLines gives,
// read from the text alone and with what the interpreter's compiler says
// (tracer.Compile, pysource.NewCompiled): the rule of the model engine
// (withFlow) never refuses a true frame; and that no event at all is on a
// line the compiled reading calls Silent, which finds silent lines the
// text's alone does not (continuation lines of folded constants) and
// leaves out next lines the text allows. The programs: the hand-written
// eval scripts, a few constructs they lack, and, where the shared data is
// present, every 40th realworld and TheAlgorithms file (a run of 622 such
// files, every 5th and 4th, found 0 of 767,065 transitions outside
// NextLines).
func TestNextLinesHoldOnRealTraces(t *testing.T) {
	tr, programs := realTracePrograms(t)
	defer tr.Close()
	compiled := compileAll(t, programs)
	transitions, ruled, events, silent, fewer := 0, 0, 0, 0, 0
	for i, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		text, ix := pysource.New(prog.Source), pysource.NewCompiled(prog.Source, compiled[i])
		for n := 1; n <= len(ix.Lines); n++ {
			if ix.Silent(n) && !text.Silent(n) {
				silent++
			}
			fewer += len(text.NextLines(n)) - len(ix.NextLines(n))
		}
		last := map[int]int{} // per frame: the line of its last event if that was a line event
		for _, s := range trace.States {
			events++
			if ix.Silent(s.Lineno) {
				t.Errorf("%s: a %s event on line %d (%q), which the compiled code calls silent", prog.Path, s.Event, s.Lineno, ix.Line(s.Lineno))
			}
			if s.Event != tracer.EventLine {
				last[s.Frame] = 0
				continue
			}
			if from := last[s.Frame]; from > 0 {
				transitions++
				for _, x := range []*pysource.Index{text, ix} {
					if next := x.NextLines(from); next != nil {
						ruled++
						if !slices.Contains(next, s.Lineno) {
							t.Errorf("%s: line %d (%q) went to %d (%q), not in NextLines %v (compiled: %v)", prog.Path, from, ix.Line(from), s.Lineno, ix.Line(s.Lineno), next, x == ix)
						}
					}
				}
			}
			last[s.Frame] = s.Lineno
		}
	}
	t.Logf("%d programs, %d events, %d transitions, %d checks under a rule; the compiled reading: %d lines more silent, %d next lines fewer", len(programs), events, transitions, ruled, silent, fewer)
	if ruled < 2000 || ruled < transitions*18/10 || silent == 0 || fewer == 0 {
		t.Fatalf("too little checked: %d of %d transitions under a rule, %d more silent lines, %d fewer next lines", ruled, transitions, silent, fewer)
	}
}

// TestPassedAndAheadHoldOnRealTraces checks pysource's Passed and Ahead
// (the model engine's continue to a breakpoint the run has left behind or
// not reached yet) on real traces: at every event of the module's frame on
// line m, no line event fires later on a line l that Passed(l, m) gives,
// and none fired before on one that Ahead(l, m) gives.
func TestPassedAndAheadHoldOnRealTraces(t *testing.T) {
	tr, programs := realTracePrograms(t)
	defer tr.Close()
	passed, ahead := 0, 0
	for _, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		ix := pysource.New(prog.Source)
		firstAt, lastAt := map[int]int{}, map[int]int{} // per line: the index of its first and last line event
		for i, s := range trace.States {
			if s.Event != tracer.EventLine {
				continue
			}
			if _, ok := firstAt[s.Lineno]; !ok {
				firstAt[s.Lineno] = i
			}
			lastAt[s.Lineno] = i
		}
		for i, s := range trace.States {
			if s.Function != "<module>" || s.Depth != 0 {
				continue
			}
			for l := 1; l <= len(ix.Lines); l++ {
				if ix.Passed(l, s.Lineno) {
					passed++
					if last, ok := lastAt[l]; ok && last > i {
						t.Errorf("%s: Passed(%d, %d) at event %d, but line %d (%q) fires at event %d", prog.Path, l, s.Lineno, i, l, ix.Line(l), last)
					}
				}
				if ix.Ahead(l, s.Lineno) {
					ahead++
					if first, ok := firstAt[l]; ok && first < i {
						t.Errorf("%s: Ahead(%d, %d) at event %d, but line %d (%q) fired at event %d", prog.Path, l, s.Lineno, i, l, ix.Line(l), first)
					}
				}
			}
		}
	}
	t.Logf("%d programs: %d claims of Passed, %d of Ahead", len(programs), passed, ahead)
	if passed < 1000 || ahead < 1000 {
		t.Fatalf("too few claims checked: %d passed, %d ahead", passed, ahead)
	}
}

// TestSilentHoldsOnRealTraces: no event of any kind (line, call, return,
// exception) of a traced program is on a line pysource calls Silent or Dead, so a
// breakpoint there can never stop (functionLines, Neural.dropUnreachable),
// no return or exception event on a line it calls Quiet, a call (or an
// exception) right after every line event on a line it calls CertainCall,
// no call right after one on a line it calls NoCall, a fresh call's
// first line event on one of its scope's EntryLines, and after a line
// event on `return NAME` (ReturnedName) the frame's return of NAME's value,
// after any line event the frame's next return on one of its ReturnLines
// and on a line ReturnValues gives, with the value it gives there, where it
// gives one.
func TestSilentHoldsOnRealTraces(t *testing.T) {
	tr, programs := realTracePrograms(t)
	defer tr.Close()
	silent, dead, quiet, calls, noCalls, entries, returned, fixed, returnLines, byModule, assigned, loops, ahead, selves, args, afterCall, endsRight, escapeFree, caught, sureBound, callerKept, firstCalls, afterReturns, backs, caughtBack, callerNamed, events := 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
	for _, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		ix := pysource.New(prog.Source)
		scopes := programScopes(nil, prog.Source)
		if st := trace.States; len(st) > 0 && st[0].Event == tracer.EventCall && st[0].Function == "<module>" {
			// a script: no step back but from the module's call reaches the entry (scriptEnds)
			tree := debugger.NewTree(trace)
			for i := 1; i < len(st); i += max(1, len(st)/50) {
				for _, a := range debugger.InverseActions {
					for _, p := range []debugger.Pos{{Index: i}, {Index: i, LineCall: true}} {
						backs++
						if tree.Apply(p, debugger.Command{Action: a}) == debugger.EntryExit {
							t.Errorf("%s: %s from state %d (%+v) reaches the entry", prog.Path, a, i, p)
						}
					}
				}
			}
		}
		// per line or call event: the index of its frame's next return event
		returnAt, next := map[int]int{}, map[int]int{}
		for i := len(trace.States) - 1; i >= 0; i-- {
			switch s := trace.States[i]; s.Event {
			case tracer.EventReturn:
				next[s.Frame] = i
			case tracer.EventLine, tracer.EventCall:
				if r, ok := next[s.Frame]; ok {
					returnAt[i] = r
				}
			}
		}
		for l := 1; l <= len(ix.Lines); l++ {
			if ix.Silent(l) && executable(ix.Line(l)) {
				silent++
			}
			if ix.Dead(l) && executable(ix.Line(l)) {
				dead++
			}
		}
		for l := 1; l <= len(ix.Lines); l++ {
			if ix.Quiet(l) {
				quiet++
			}
		}
		lastOfFrame := map[int]int{} // a frame's last event so far
		rounds := map[[2]int]int{}   // per frame and for header: its events in the loop's run so far (0: unknown)
		for i, s := range trace.States {
			if s.Event == tracer.EventCall && i+1 < len(trace.States) {
				for _, sc := range append([]*pysource.Scope{ix.Module}, ix.Scopes...) {
					fresh := sc.Kind == pysource.Module && s.Function == "<module>" && s.Lineno == 0 || sc.First == s.Lineno && sc.Name == s.Function
					if entry := ix.EntryLines(sc); fresh && entry != nil {
						entries++
						if next := trace.States[i+1]; next.Event != tracer.EventLine || !slices.Contains(entry, next.Lineno) {
							t.Errorf("%s: the call of %s on line %d goes on to a %s event on line %d, not to EntryLines %v", prog.Path, s.Function, s.Lineno, next.Event, next.Lineno, entry)
						}
					}
				}
			}
			if name := ix.ReturnedName(s.Lineno); s.Event == tracer.EventLine && name != "" && i+1 < len(trace.States) {
				if v := slices.IndexFunc(s.Locals, func(v tracer.Var) bool { return v.Name == name }); v >= 0 {
					returned++
					if next := trace.States[i+1]; next.Event != tracer.EventReturn || next.Lineno != s.Lineno || next.Arg != s.Locals[v].Value {
						t.Errorf("%s: line %d (%q), where %s = %s, is followed by a %s event on line %d with %q, not its return", prog.Path, s.Lineno, ix.Line(s.Lineno), name, s.Locals[v].Value, next.Event, next.Lineno, next.Arg)
					}
				}
			}
			if opens := ix.Opens(s.Lineno); s.Event == tracer.EventCall && len(opens) == 1 && ix.CalledByModule(opens[0]) {
				byModule++
				if s.Depth != 1 {
					t.Errorf("%s: %s, which CalledByModule says only the module calls, is called at depth %d", prog.Path, s.Function, s.Depth)
				}
			}
			if lines := ix.CallReturnLines(s.Lineno); s.Event == tracer.EventCall && lines != nil {
				if r, ok := returnAt[i]; ok {
					returnLines++
					if ret := trace.States[r]; !slices.Contains(lines, ret.Lineno) {
						t.Errorf("%s: after the call of %s on line %d the frame returns on line %d, not on CallReturnLines %v", prog.Path, s.Function, s.Lineno, ret.Lineno, lines)
					}
				}
			}
			if lines := ix.EscapeFreeEndLines(s.Lineno, s.Event == tracer.EventCall); (s.Event == tracer.EventLine || s.Event == tracer.EventCall) && lines != nil && trace.Exit.Kind == tracer.ExitNormal {
				if r, ok := returnAt[i]; ok {
					escapeFree++
					if ret := trace.States[r]; !slices.Contains(lines, ret.Lineno) {
						t.Errorf("%s: after the %s event on line %d (%q) the frame of %s, which NoEscape says no exception leaves, returns on line %d, not on EscapeFreeEndLines %v", prog.Path, s.Event, s.Lineno, ix.Line(s.Lineno), s.Function, ret.Lineno, lines)
					}
				}
			}
			if binds := scopes.sureBindsAt(s.Lineno, len(s.Locals) > 0); s.Event == tracer.EventLine && binds != nil && ix.Owner(s.Lineno).Name == s.Function {
				if next := nextOfFrame(trace.States, i); next >= 0 && trace.States[next].Event == tracer.EventLine {
					for _, name := range binds {
						sureBound++
						if _, ok := trace.States[next].Locals.Get(name); !ok {
							t.Errorf("%s: after line %d (%q) the next line event of %s (line %d) lacks %s of SureBinds %v", prog.Path, s.Lineno, s.Src, s.Function, trace.States[next].Lineno, name, binds)
						}
					}
				}
			}
			if s.Event == tracer.EventReturn && i+1 < len(trace.States) && trace.States[i+1].Event == tracer.EventLine {
				// back in the caller: what it held on the line that called, and what that line binds
				c := i - 1
				for c >= 0 && !(trace.States[c].Frame == s.Frame && trace.States[c].Event == tracer.EventCall) {
					c--
				}
				if c > 0 {
					at, next := trace.States[c-1], trace.States[i+1]
					if binds := scopes.sureBindsAt(at.Lineno, len(at.Locals) > 0); at.Event == tracer.EventLine && at.Frame == next.Frame && binds != nil && ix.Owner(at.Lineno).Name == at.Function {
						for _, v := range at.Locals {
							if !ix.MayUnbind(v.Name) {
								binds = append(binds, v.Name)
							}
						}
						for _, name := range binds {
							callerKept++
							if _, ok := next.Locals.Get(name); !ok {
								t.Errorf("%s: after %s returned to line %d (%q), the caller's next line event (line %d) lacks %s", prog.Path, s.Function, at.Lineno, at.Src, next.Lineno, name)
							}
						}
					}
				}
			}
			if s.Event == tracer.EventReturn && trace.Exit.Kind == tracer.ExitNormal && scopes.caught(s.Src) {
				// backwards (withLineFlow): the frame's state before its return
				for j := i - 1; j >= 0; j-- {
					if p := trace.States[j]; p.Frame == s.Frame {
						caughtBack++
						if ends, ok := scopes.endsAfter(s.Src); p.Event == tracer.EventException && (p.Src != s.Src || !scopes.forHeader(s.Src) || ok && len(ends) == 0) {
							t.Errorf("%s: the return on line %d (%q) of %s, which caught says no exception leaves, comes right after its exception event on line %d", prog.Path, s.Lineno, s.Src, s.Function, p.Lineno)
						}
						break
					}
				}
			}
			if s.Event == tracer.EventException && trace.Exit.Kind == tracer.ExitNormal && scopes.caught(s.Src) {
				if next := nextOfFrame(trace.States, i); next >= 0 {
					caught++
					if ends, ok := scopes.endsAfter(s.Src); trace.States[next].Event == tracer.EventReturn && (!scopes.forHeader(s.Src) || !ok || !ends.contains(s.Src)) {
						t.Errorf("%s: the exception event on line %d (%q) of %s, which caught says its frame catches, is followed by its frame's return, on no line it may end on", prog.Path, s.Lineno, s.Src, s.Function)
					}
				}
			}
			if lines := ix.ReturnLines(s.Lineno); s.Event == tracer.EventLine && lines != nil {
				if r, ok := returnAt[i]; ok {
					returnLines++
					if ret := trace.States[r]; !slices.Contains(lines, ret.Lineno) {
						t.Errorf("%s: after line %d (%q) the frame of %s returns on line %d, not on ReturnLines %v", prog.Path, s.Lineno, ix.Line(s.Lineno), s.Function, ret.Lineno, lines)
					}
				}
			}
			if values := ix.ReturnValues(s.Lineno); s.Event == tracer.EventLine && values != nil {
				if r, ok := returnAt[i]; ok {
					ret := trace.States[r]
					want, reached := values[ret.Lineno]
					if !reached || want != "" && ret.Arg != want {
						t.Errorf("%s: after line %d (%q) the frame returns %s on line %d, where ReturnValues gives %v", prog.Path, s.Lineno, ix.Line(s.Lineno), ret.Arg, ret.Lineno, values)
					}
					if want != "" {
						fixed++
					}
				}
			}
			name, repr, ok := ix.AssignsLiteral(s.Lineno)
			if !ok {
				name, repr, ok = ix.AssignsValue(s.Lineno, s.Locals.Get)
			}
			if !ok {
				name, repr, ok = ix.AppendsValue(s.Lineno, s.Locals.All())
			}
			if s.Event == tracer.EventLine && ok && i+1 < len(trace.States) {
				assigned++
				next := trace.States[i+1]
				want := slices.Clone(s.Locals)
				if k := slices.IndexFunc(want, func(v tracer.Var) bool { return v.Name == name }); k >= 0 {
					want[k].Value = repr
				} else {
					want = append(want, tracer.Var{Name: name, Value: repr})
				}
				got := slices.Clone(next.Locals)
				byName := func(a, b tracer.Var) int { return strings.Compare(a.Name, b.Name) }
				slices.SortFunc(want, byName)
				slices.SortFunc(got, byName)
				if next.Event != tracer.EventLine && next.Event != tracer.EventReturn || next.Frame != s.Frame || !slices.Equal(got, want) {
					t.Errorf("%s: line %d (%q) goes on to a %s event on line %d with %v, not its frame's next line or return with %s = %s and the rest as it was", prog.Path, s.Lineno, ix.Line(s.Lineno), next.Event, next.Lineno, next.Locals, name, repr)
				}
			}
			if j, ok := lastOfFrame[s.Frame]; ok && s.Event == tracer.EventLine && trace.States[j].Event == tracer.EventLine {
				if h := trace.States[j]; h.Lineno != s.Lineno && ix.ForTarget(h.Lineno) != "" {
					loops += checkLoopBack(t, prog.Path, ix, h, s)
				}
			}
			if s.Event == tracer.EventLine && i+1 < len(trace.States) {
				at := pysource.LoopPlace{} // the line of the frame's event before, if a line event, and the header's round
				if j, ok := lastOfFrame[s.Frame]; ok && trace.States[j].Event == tracer.EventLine {
					at.Prev = trace.States[j].Lineno
				}
				if first, end, loop := ix.ForBody(s.Lineno); loop {
					key := [2]int{s.Frame, s.Lineno}
					switch {
					case at.Prev == 0:
						rounds[key] = 0
					case at.Prev < first || at.Prev > end:
						rounds[key] = 1
					case rounds[key] > 0:
						rounds[key]++
					}
					at.Round = rounds[key]
				}
				ahead += checkStepAhead(t, prog.Path, ix, s, at, trace.States[i+1])
				if at.Prev != 0 {
					ahead += checkStepAhead(t, prog.Path, ix, s, pysource.LoopPlace{Prev: at.Prev}, trace.States[i+1])
					ahead += checkStepAhead(t, prog.Path, ix, s, pysource.LoopPlace{}, trace.States[i+1])
				}
			}
			lastOfFrame[s.Frame] = i
			if s.Event == tracer.EventLine && ix.CallsProgram(s.Lineno) == pysource.NoCall {
				noCalls++
				if i+1 < len(trace.States) && trace.States[i+1].Event == tracer.EventCall {
					t.Errorf("%s: line %d (%q), which NoCall says calls nothing of the program, is followed by a call of %s", prog.Path, s.Lineno, ix.Line(s.Lineno), trace.States[i+1].Function)
				}
			}
			if s.Event == tracer.EventLine && ix.CallsProgram(s.Lineno) == pysource.CertainCall {
				calls++
				if i+1 < len(trace.States) {
					if next := trace.States[i+1]; next.Event != tracer.EventCall && next.Event != tracer.EventException {
						t.Errorf("%s: line %d (%q), which CertainCall says calls the program, is followed by a %s event on line %d", prog.Path, s.Lineno, ix.Line(s.Lineno), next.Event, next.Lineno)
					}
				}
				if name := ix.FirstCall(s.Lineno); name != "" && i+1 < len(trace.States) && trace.States[i+1].Event == tracer.EventCall {
					firstCalls++
					if next, sc := trace.States[i+1], ix.Lookup(name); next.Function != name || sc == nil || next.Lineno != sc.First {
						t.Errorf("%s: line %d (%q), whose first call FirstCall says is %s, is followed by the call of %s on line %d", prog.Path, s.Lineno, ix.Line(s.Lineno), name, next.Function, next.Lineno)
					}
				}
			}
			if s.Event == tracer.EventReturn && i+1 < len(trace.States) && trace.States[i+1].Event != tracer.EventCall {
				if lines, ok := ix.ReturnsTo(s.Lineno); ok {
					afterReturns++
					if next := trace.States[i+1]; !slices.Contains(lines, next.Lineno) {
						t.Errorf("%s: the return of %s on line %d is followed by a %s event of %s on line %d, not on ReturnsTo's lines %v", prog.Path, s.Function, s.Lineno, next.Event, next.Function, next.Lineno, lines)
					}
				}
			}
			if names := ix.SureAfterReturn(s.Lineno); s.Event == tracer.EventReturn && names != nil {
				// where a step forward stops next: the first event of a
				// shallower frame (the caller's), past calls from its line
				for _, next := range trace.States[i+1:] {
					if next.Depth >= s.Depth {
						continue
					}
					if next.Event == tracer.EventLine {
						callerNamed++
						for _, name := range names {
							if !slices.ContainsFunc(next.Locals, func(v tracer.Var) bool { return v.Name == name }) {
								t.Errorf("%s: the line event on line %d after the return of %s on line %d lacks %q of SureAfterReturn %v", prog.Path, next.Lineno, s.Function, s.Lineno, name, names)
							}
						}
					}
					break
				}
			}
			if next := i + 1; s.Event == tracer.EventLine && next < len(trace.States) && trace.States[next].Event == tracer.EventReturn && trace.States[next].Frame == s.Frame {
				if ends, ok := scopes.endsAfter(s.Src); ok {
					endsRight++
					if ret := trace.States[next]; ret.Lineno != s.Lineno || !ends.contains(s.Src) {
						t.Errorf("%s: the line event on line %d (%q) is followed by its frame's return on line %d, where endsAfter gives %q", prog.Path, s.Lineno, s.Src, ret.Lineno, ends)
					}
				}
			}
			if s.Event == tracer.EventLine && i > 0 && trace.States[i-1].Event == tracer.EventCall && trace.States[i-1].Frame == s.Frame {
				afterCall++
				if scopes.lineBefore(s.Src) {
					t.Errorf("%s: the line event on line %d (%q) follows its frame's call, where lineBefore says a line comes first", prog.Path, s.Lineno, s.Src)
				}
			}
			if s.Event == tracer.EventLine || s.Event == tracer.EventCall {
				for _, sc := range append(ix.RunsOn(s.Lineno), ix.Opens(s.Lineno)...) {
					if sc.Name != s.Function {
						continue
					}
					for param, reprs := range ix.ArgReprs(sc) {
						if _, _, self := ix.SelfRepr(sc); self {
							selves++
						} else {
							args++
						}
						if v, has := s.Locals.Get(param); !has && sc.Kind != pysource.Class || has && !slices.Contains(reprs, v) {
							t.Errorf("%s: the %s event of %s on line %d shows %s = %q, where ArgReprs gives %q", prog.Path, s.Event, s.Function, s.Lineno, param, v, reprs)
						}
					}
				}
			}
			switch {
			case s.Lineno > 0 && ix.Silent(s.Lineno):
				t.Errorf("%s: a %s event of %s is on line %d (%q), which Silent says runs nothing", prog.Path, s.Event, s.Function, s.Lineno, ix.Line(s.Lineno))
			case s.Lineno > 0 && ix.Dead(s.Lineno):
				t.Errorf("%s: a %s event of %s is on line %d (%q), which Dead says no run reaches", prog.Path, s.Event, s.Function, s.Lineno, ix.Line(s.Lineno))
			case (s.Event == tracer.EventReturn || s.Event == tracer.EventException) && ix.Quiet(s.Lineno):
				t.Errorf("%s: a %s event of %s is on line %d (%q), which Quiet says cannot raise or return", prog.Path, s.Event, s.Function, s.Lineno, ix.Line(s.Lineno))
			}
			events++
		}
	}
	t.Logf("%d programs, %d events: %d lines that are not blank or a comment are silent, %d dead, %d quiet; %d line events of a certain call, %d of none; %d calls to a known first line; %d returns of a name; %d returns whose value the text fixes; %d returns on ReturnLines; %d calls of defs only the module calls; %d assignments of a literal or a value the locals fix and appends; %d loop headers' locals known from the next line's; %d steps from a loop's or branch's header known ahead; %d method frames' self; %d literal arguments; %d first lines after a call; %d returns right after a line; %d returns of frames no exception leaves; %d exceptions caught; %d names a line surely binds; %d names a caller keeps; %d first calls of a line; %d steps after a return; %d steps back in scripts; %d returns of frames no exception leaves, backwards; %d caller lines after a return",
		len(programs), events, silent, dead, quiet, calls, noCalls, entries, returned, fixed, returnLines, byModule, assigned, loops, ahead, selves, args, afterCall, endsRight, escapeFree, caught, sureBound, callerKept, firstCalls, afterReturns, backs, caughtBack, callerNamed)
	if callerNamed < 50 || selves < 50 || args < 50 || escapeFree < 50 || caught < 5 || sureBound < 50 || callerKept < 50 || firstCalls < 20 || afterReturns < 50 || backs < 50 || caughtBack < 50 || afterCall < 50 || endsRight < 50 || silent < 50 || dead < 4 || quiet < 50 || calls < 50 || noCalls < 50 || entries < 50 || returned < 50 || fixed < 50 || returnLines < 50 || byModule < 20 || assigned < 50 {
		t.Fatalf("too few silent or quiet lines checked: %d, %d", silent, quiet)
	}
}

// nextOfFrame is the index of the next state after i in i's frame, -1 if
// none.
func nextOfFrame(states []tracer.State, i int) int {
	for j := i + 1; j < len(states); j++ {
		if states[j].Frame == states[i].Frame {
			return j
		}
	}
	return -1
}

// TestModuleNamesInBindingOrder: a module frame lists its names in the
// order they were first bound; a key the module surely binds before one
// already written is refused, also while it is open, where its name can
// only become such a key. Names bound in a loop stay free.
func TestModuleNamesInBindingOrder(t *testing.T) {
	src := "import sys\ndef main():\n    pass\ndef helper():\n    pass\nfor i in range(2):\n    late = i\nmain()\n"
	last := `<|inv_line_sep|><|src_sep|>main()<|arg_sep|>{"..": ".."}<|action_sep|>`
	back := stepPrompt(src, last, format.TokInvStepOver)
	jump := stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>import sys<|action_sep|>`, format.TokBreakpoint+"main()")
	order := func(r *programRules, cur, json string) bool { return r.orderAllowed(cur, json, r.namesFor(cur)) }
	checkJSONRule(t, order, []jsonRuleCase{
		{back, `<|inv_line_sep|><|src_sep|>    late = i<|arg_sep|>{"sys": "<module 'sys' (built-in)>", "main": "<function main at 0x0>", "helper"`, true},
		{back, `<|inv_line_sep|><|src_sep|>    late = i<|arg_sep|>{"sys": "<module 'sys' (built-in)>", "helper": "<function helper at 0x0>", "main"`, false},
		{back, `<|inv_line_sep|><|src_sep|>    late = i<|arg_sep|>{"helper": "<function helper at 0x0>", "ma`, false}, // only main
		{back, `<|inv_line_sep|><|src_sep|>    late = i<|arg_sep|>{"helper": "<function helper at 0x0>", "i": "1", "late"`, true},
		{back, `<|inv_line_sep|><|src_sep|>    late = i<|arg_sep|>{"late": "0", "i"`, true}, // bound in a loop: free
		// a function's frame is not the module's
		{stepPrompt(src, `<|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), `<|line_sep|><|arg_sep|>{"helper": "1", "main"`, true},
		// a frame that shows every local (after a breakpoint) writes the names
		// it must hold in their turn: sys before main, or it could not close
		{jump, `<|line_sep|><|arg_sep|>{"main"`, false},
		{jump, `<|line_sep|><|arg_sep|>{"sys": "<module 'sys' (built-in)>", "main"`, true},
		{jump, `<|line_sep|><|arg_sep|>{"sys": "<module 'sys' (built-in)>", "i": "1", "main"`, true}, // a loop's names are free
	})
}

// TestFixedFunctionValues: in a module frame, a top-level function no
// statement rebinds shows as itself; elsewhere, or for a name the text may
// rebind, the value stays free.
func TestFixedFunctionValues(t *testing.T) {
	src := "def shift(c):\n    return c\n\ndef caesar(s):\n    return ''.join(shift(c) for c in s)\n\nhelper = caesar\nprint(caesar('ab'))\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	checkJSONRule(t, (*programRules).fixedAllowed, []jsonRuleCase{
		// forward: after n at the module's first def, the line frame is the module's
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function shift at 0x0>"`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function sh`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def shift(c):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"shift": "<function cache at 0x0>"`, false},
		// caesar is rebound by nothing but passed to helper = caesar: free
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def caesar(s):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"caesar": "3"`, true},
		// backward: the line is written first
		{step(`<|inv_line_sep|><|src_sep|>print(caesar('ab'))<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), `<|inv_line_sep|><|src_sep|>helper = caesar<|arg_sep|>{"shift": "1"`, false},
		// in a function's frame the value is free
		{step(`<|call_sep|><|src_sep|>def shift(c):<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), `<|line_sep|><|arg_sep|>{"shift": "1"`, true},
	})
}

// TestStepBackToTheCall: a step back from a line reaches its frame's call
// only from the frame's first line, or a generator's line (a resumption
// is a call event); never from a line that made a call.
func TestStepBackToTheCall(t *testing.T) {
	src := "\"\"\"Doc\nstring.\"\"\"\nimport sys\n\ndef gen(n):\n    yield n\n    yield n + 1\n\ndef f(x):\n    y = x\n    return y\n\nprint(f(1), list(gen(2)))\n"
	for _, c := range []struct {
		frame, action string
		noCall        bool
	}{
		{`<|inv_line_sep|><|src_sep|>import sys<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto, true}, // the docstring's line comes first
		{`<|inv_line_sep|><|src_sep|>import sys<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver, true},
		{`<|inv_line_sep|><|src_sep|>    return y<|arg_sep|>{"x": "1", "y": "1"}<|action_sep|>`, format.TokInvStepInto, true},
		{`<|inv_line_sep|><|src_sep|>    y = x<|arg_sep|>{"x": "1"}<|action_sep|>`, format.TokInvStepInto, false},       // f's first line
		{`<|inv_line_sep|><|src_sep|>    yield n + 1<|arg_sep|>{"n": "2"}<|action_sep|>`, format.TokInvStepInto, false}, // resumed
		{`<|inv_line_call_sep|><|src_sep|>print(f(1), list(gen(2)))<|arg_sep|>{"..": ".."}<|action_sep|>`, format.TokInvStepOver, true},
		{`<|inv_line_sep|><|src_sep|>    return y<|arg_sep|>{"x": "1", "y": "1"}<|action_sep|>`, format.TokInvStepCall, false}, // the call it asks for
	} {
		r := promptRules(nil, stepPrompt(src, c.frame, c.action))
		calls, ruled := r.scope[format.TokInvCallSep]
		if noCall := ruled && len(calls) == 0; noCall != c.noCall {
			t.Errorf("%s %s: the call refused %v, want %v (%q)", c.frame, c.action, noCall, c.noCall, calls)
		}
	}
}

// TestArgValues: a method's frame shows its first parameter as its
// class's instance, and a function's frame a parameter every call passes a
// literal as one of those literals (pysource's ArgReprs), on a call, a line
// frame whose lines are all the function's, and an inverse frame;
// elsewhere the value is free.
func TestArgValues(t *testing.T) {
	src := "class Account:\n    def withdraw(self, n):\n        self.n = n\n        return n\n\nclass Funds(Exception):\n    def why(self):\n        return 1\n\na = Account()\na.withdraw(2)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	obj := `"<__main__.Account object at 0x0>"`
	call := `<|call_sep|><|src_sep|>    def withdraw(self, n):<|arg_sep|>{"self": ` + obj + `, "n": "2"}<|action_sep|>`
	checkJSONRule(t, (*programRules).argsAllowed, []jsonRuleCase{
		{step(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>a.withdraw(2)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>    def withdraw(self, n):<|arg_sep|>{"self": ` + obj, true},
		{step(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>a.withdraw(2)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>    def withdraw(self, n):<|arg_sep|>{"self": "<__main__.Acc`, true},
		{step(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>a.withdraw(2)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>    def withdraw(self, n):<|arg_sep|>{"self": "<__main__.Funds object at 0x0>"`, false},
		// the step from the call stays in withdraw: its line frame's self is fixed
		{step(call, format.TokStepInto), `<|line_sep|><|arg_sep|>{"self": "<__main__.Funds`, false},
		{step(call, format.TokStepInto), `<|line_sep|><|arg_sep|>{"n": "2", "self": ` + obj, true},
		{step(`<|inv_line_sep|><|src_sep|>        return n<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>        self.n = n<|arg_sep|>{"self": "1"`, false},
		// Funds derives from Exception (its own repr): free
		{step(`<|inv_line_sep|><|src_sep|>        return 1<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), `<|inv_call_sep|><|src_sep|>    def why(self):<|arg_sep|>{"self": "Funds()"`, true},
		// the module's frame: free
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>a = Account()<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"self": "1"`, true},
	})
	src = "def find(items, target):\n    lo = 0\n    return lo\n\ndata = [1, 7]\nfind(data, 7)\nfind(data, 1)\n"
	step = func(frame, action string) string { return stepPrompt(src, frame, action) }
	checkJSONRule(t, (*programRules).argsAllowed, []jsonRuleCase{
		{step(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>find(data, 7)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>def find(items, target):<|arg_sep|>{"items": "[1, 7]", "target": "7"}`, true},
		{step(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>find(data, 7)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>def find(items, target):<|arg_sep|>{"items": "[1, 7]", "target": "0"`, false},
		// either call's literal, on a forward line frame of find and an inverse one
		{step(`<|call_sep|><|src_sep|>def find(items, target):<|arg_sep|>{"items": "[1, 7]", "target": "1"}<|action_sep|>`, format.TokStepInto), `<|line_sep|><|arg_sep|>{"items": "[1, 7]", "target": "1"`, true},
		{step(`<|call_sep|><|src_sep|>def find(items, target):<|arg_sep|>{"items": "[1, 7]", "target": "1"}<|action_sep|>`, format.TokStepInto), `<|line_sep|><|arg_sep|>{"items": "[1, 7]", "target": "2"`, false},
		{step(`<|inv_line_sep|><|src_sep|>    return lo<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    lo = 0<|arg_sep|>{"items": "[1, 7]", "target": "7"}`, true},
		{step(`<|inv_line_sep|><|src_sep|>    return lo<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    lo = 0<|arg_sep|>{"items": "[1, 7]", "target": "17"}`, false},
		// items is passed a variable: free; the module's frame: free
		{step(`<|inv_line_sep|><|src_sep|>    return lo<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    lo = 0<|arg_sep|>{"items": "[2]"`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>data = [1, 7]<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"target": "3"`, true},
	})
}

// TestOneFrameKeys: a line that runs a comprehension or a lambda fires
// the events of two frames; once a frame's keys show which one it is, its
// other keys are that frame's names.
func TestOneFrameKeys(t *testing.T) {
	src := "cache = {}\nvalues = [cache.get(i) for i in range(3)]\nkey = sorted(values, key=lambda s: -s)\nprint(values)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	back := `<|inv_line_sep|><|src_sep|>print(values)<|arg_sep|>{"..": ".."}<|action_sep|>`
	// the last key of answer, written after what comes before it
	lastKey := func(r *programRules, answer, json string) bool {
		at := strings.LastIndex(answer, `", "`) + 3
		cur := answer[:at]
		return r.keysAllowed(r.oneFrame(cur, r.namesFor(cur)), cur[strings.LastIndex(cur, format.TokArgSep)+len(format.TokArgSep):], json)
	}
	checkJSONRule(t, lastKey, []jsonRuleCase{
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>key = sorted(values, key=lambda s: -s)<|arg_sep|>{"cache": "{}", "values": "[None, None, None]"`, true},
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>key = sorted(values, key=lambda s: -s)<|arg_sep|>{"cache": "{}", "s": "1"`, false},
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>key = sorted(values, key=lambda s: -s)<|arg_sep|>{"s": "1", "cache": "{}"`, false},
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>values = [cache.get(i) for i in range(3)]<|arg_sep|>{"cache": "{}", "i": "2"`, false},
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>values = [cache.get(i) for i in range(3)]<|arg_sep|>{".0": "<range_iterator object at 0x0>", "i": "2"`, true},
		{step(back, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>values = [cache.get(i) for i in range(3)]<|arg_sep|>{"i": "2", "..": ".."`, true},
	})
}

// TestNewNames: a step from a line whose statement binds a name the
// frame lacks answers a line frame that shows it (before "..", before the
// object closes); a name the frame had may stay elided, and a class's line
// the class body may also be on, with nothing bound yet, has no rule. A
// step from a return the prompt followed from its caller's line answers the
// caller's names.
func TestNewNames(t *testing.T) {
	src := "import os\ndef f(items):\n    node = items[0]\n    while node:\n        node = None\n    return node\nclass A:\n    x = 1\nprint(f([1]), A.x)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	call := `<|call_sep|><|src_sep|>def f(items):<|arg_sep|>{"items": "[1]"}<|action_sep|><|step_into|><|frame_sep|>`
	first := call + `<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>    node = items[0]<|action_sep|>`
	again := call + `<|line_sep|><|arg_sep|>{"node": "1", "..": ".."}<|src_sep|>        node = None<|action_sep|>`
	module := `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>`
	checkJSONRule(t, (*programRules).boundAllowed, []jsonRuleCase{
		{step(first, format.TokStepOver), `<|line_sep|><|arg_sep|>{"..": ".."}`, false},
		{step(first, format.TokStepInto), `<|line_sep|><|arg_sep|>{"items": "[1]"}`, false},
		{step(first, format.TokStepOver), `<|line_sep|><|arg_sep|>{"node": "1", "..": ".."}`, true},
		{step(first, format.TokStepOver), `<|line_sep|><|arg_sep|>{"items": "[2]", "no`, true},
		{step(again, format.TokStepOver), `<|line_sep|><|arg_sep|>{"..": ".."}`, true},
		{step(module+`<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "f": "<function f at 0x0>"}<|src_sep|>class A:<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"..": ".."}`, false},
		{step(module+`<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "f": "<function f at 0x0>"}<|src_sep|>class A:<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"A": "<class '__main__.A'>", "..": ".."}`, true},
		{step(module+`<|line_sep|><|arg_sep|>{}<|src_sep|>class A:<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{}`, true},
	})
	// from f's return, back in the module (shown whole): every name it had
	mod := `{"os": "<module 'os' (frozen)>", "f": "<function f at 0x0>", "A": "<class '__main__.A'>"}`
	returned := module + `<|line_sep|><|arg_sep|>` + mod + `<|src_sep|>print(f([1]), A.x)<|action_sep|><|step_into|><|frame_sep|>` +
		`<|call_sep|><|src_sep|>def f(items):<|arg_sep|>{"items": "[1]"}<|action_sep|><|step_return|><|frame_sep|>` +
		`<|return_sep|><|src_sep|>    return node<|arg_sep|>"None"<|action_sep|>`
	checkJSONRule(t, (*programRules).boundAllowed, []jsonRuleCase{
		{step(returned, format.TokStepOver), `<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "f": "<function f at 0x0>"}`, false},
		{step(returned, format.TokStepOver), `<|line_sep|><|arg_sep|>` + mod, true},
		// the call reached by a breakpoint: the stack is not followed
		{step(strings.Replace(returned, "<|step_into|><|frame_sep|><|call_sep|>", "<|breakpoint|>def f(items):<|frame_sep|><|call_sep|>", 1), format.TokStepOver),
			`<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "f": "<function f at 0x0>"}`, true},
	})
}

// TestClassValues: a class body's frame shows a method its body defines
// once as that function, on an inverse frame and on a forward line frame
// whose lines are all the body's; the module's frame is free.
func TestClassValues(t *testing.T) {
	src := "class Queue:\n    def first(self):\n        return 1\n    def last(self):\n        return 2\n    size = 0\nq = Queue()\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	fn := `"<function Queue.first at 0x0>"`
	checkJSONRule(t, (*programRules).argsAllowed, []jsonRuleCase{
		{step(`<|line_sep|><|arg_sep|>{"first": `+fn+`}<|src_sep|>    def last(self):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"first": ` + fn + `, "last": "<function Queue.last at 0x0>"}`, true},
		{step(`<|line_sep|><|arg_sep|>{"first": `+fn+`}<|src_sep|>    def last(self):<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"first": "<__main__.Queue object at 0x0>"`, false},
		{step(`<|inv_line_sep|><|src_sep|>    size = 0<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), `<|inv_line_sep|><|src_sep|>    def last(self):<|arg_sep|>{"first": "<function first at 0x0>"}`, false},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>q = Queue()<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"first": "1"`, true},
	})
}

// TestStdlibValues: a name only `from M import X` binds shows, in a module
// frame, the standard library's X as the tracer writes it; a step from a
// module line answers in the module's frame even where a class body shares
// the line it lands on.
func TestStdlibValues(t *testing.T) {
	src := "from weakref import ref\nfrom math import pi\nclass E(object):\n    pass\nprint(E, ref, pi)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	from1 := `<|line_sep|><|arg_sep|>{}<|src_sep|>from weakref import ref<|action_sep|>`
	from2 := `<|line_sep|><|arg_sep|>{"ref": "<class 'weakref.ReferenceType'>"}<|src_sep|>from math import pi<|action_sep|>`
	checkJSONRule(t, (*programRules).fixedAllowed, []jsonRuleCase{
		{step(from1, format.TokStepInto), `<|line_sep|><|arg_sep|>{"ref": "<class 'weakref.ReferenceType'>"`, true},
		{step(from1, format.TokStepInto), `<|line_sep|><|arg_sep|>{"ref": "<module 're' from '/x/re.py'>"`, false},
		// to the class line, which the class body's frame shares
		{step(from2, format.TokStepOver), `<|line_sep|><|arg_sep|>{"ref": "<class 'weakref.ReferenceType'>", "pi": "3.141592653589793"`, true},
		{step(from2, format.TokStepOver), `<|line_sep|><|arg_sep|>{"ref": "<class 'weakref.ReferenceType'>", "pi": "3.14"`, false},
		// a breakpoint may land in another frame: free
		{step(from2, format.TokBreakpoint+"    pass"), `<|line_sep|><|arg_sep|>{"ref": "1"`, true},
	})
}

// TestModuleRepr: a module frame's name that only imports bind shows its
// module as the tracer writes it; a repr cut by the limit keeps its head.
func TestModuleRepr(t *testing.T) {
	for _, tc := range []struct {
		mod, s string
		closed bool
		ok     bool
	}{
		{"os", `<module 'os' (frozen)>`, true, true},
		{"sys", `<module 'sys' (built-in)>`, true, true},
		{"json", `<module 'json' from '/usr/lib/python3.11/json/__init__.py'>`, true, true},
		{"glob", `<module 'glob' from '/usr/lib/python3.11/glob.py'>`, true, true},
		{"math", `<module 'math' from '/x/lib-dynload/math.cpython-311-x86_64-linux-gnu.so'>`, true, true},
		{"xml.etree.ElementTree", `<module 'xml.etree.ElementTree' from '/usr/lib/python3.11/xml/etree/ElementTree.py'>`, true, true},
		{"glob", `<module 'glob' from '/usr/lib/python3.11/globalance.py'>`, true, true}, // the file is free
		{"unittest", `<module 'unit' from '/x/math.so'>`, true, false},
		{"marshal", `<function marshal at 0x0>`, true, false},
		{"marshal", `<mod`, false, true},
		{"marshal", `<module 'marshal' (bu`, false, true},
		{"marshal", `<module 'marshal' fr`, false, true},
		{"marshal", `<module 'marshal' (bu`, true, false},
		{"json", `<module 'json' from '/a/very/long/path...`, true, true},
		{"json", `<module 'json' from '/x/json/__init__.py'>b...`, true, false},
		{"json", `<module 'json' from '/x/json/__init__.py'>b`, false, false},
		{"json", `<module 'json' from ''>`, true, false},
		{"glob", `<module 'glob' from '/x/glob.py'`, false, true},
		{"glob", `<module 'glob' from '/x/glob.py'>`, false, true},
	} {
		if got := moduleReprAllowed(tc.mod, tc.s, tc.closed); got != tc.ok {
			t.Errorf("module %s: %q (closed %v) allowed = %v, want %v", tc.mod, tc.s, tc.closed, got, tc.ok)
		}
	}
}

// TestLiteralConstantValues: a module constant one `NAME = LITERAL` binds
// shows that literal in the module's frames, but not in a comprehension's
// frame on a module line, whose own x is another name.
func TestLiteralConstantValues(t *testing.T) {
	src := "x = 5\nflat = [x for x in range(3)]\nprint(x, flat)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	last := `<|inv_line_sep|><|src_sep|>print(x, flat)<|arg_sep|>{"x": "5", "flat": "[0, 1, 2]"}<|action_sep|>`
	checkJSONRule(t, (*programRules).fixedAllowed, []jsonRuleCase{
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>x = 5<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"x": "5"`, true},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>x = 5<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"x": "6"`, false},
		{step(last, format.TokInvStepOver), `<|inv_line_sep|><|src_sep|>print(x, flat)<|arg_sep|>{"x": "4"`, false},
		// the comprehension's frame shares the line: its x is free
		{step(last, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>flat = [x for x in range(3)]<|arg_sep|>{".0": "<range_iterator object at 0x0>", "x": "2"`, true},
	})
}

// TestExactModules: with the interpreter's reprs (SampleOptions.Modules)
// a module frame's imported module shows exactly its repr; without, its
// path is free.
func TestExactModules(t *testing.T) {
	src := "import glob\nimport os\nx = 1\n"
	prompt := stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>import glob<|action_sep|>`, format.TokStepOver)
	exact := map[string]string{"glob": "<module 'glob' from '/usr/lib/python3.11/glob.py'>", "os": "<module 'os' (frozen)>"}
	for _, tc := range []struct {
		json   string
		pinned bool // allowed with the reprs
		free   bool // allowed without
	}{
		{`{"glob": "<module 'glob' from '/usr/lib/python3.11/glob.py'>"`, true, true},
		{`{"glob": "<module 'glob' from '/usr/lib/python3.11/`, true, true},
		{`{"glob": "<module 'glob' from '/root/.pyenv/versions/3.11.7/lib/python3.11/glob.py'>"`, false, true},
		{`{"glob": "<module 'glob' (built-in)>"`, false, true},
		{`{"glob": "<module 'glob' from '/usr/lib/python3.11/glob.py'>", "os": "<module 'os' (frozen)>"`, true, true},
		{`{"glob": "<module 'glob' from '/usr/lib/python3.11/glob.py'>", "os": "<module 'os' from '/x/os.py'>"`, false, true},
	} {
		r := promptRules(nil, prompt)
		cur := "<|line_sep|><|arg_sep|>" + tc.json
		if got := r.fixedAllowed(cur, tc.json); got != tc.free {
			t.Errorf("without reprs: %s allowed = %v, want %v", tc.json, got, tc.free)
		}
		r.exactModules = exact
		if got := r.fixedAllowed(cur, tc.json); got != tc.pinned {
			t.Errorf("with reprs: %s allowed = %v, want %v", tc.json, got, tc.pinned)
		}
	}
}

// TestSampleRulesAskModuleReprs: decoding asks SampleOptions.ModuleReprs
// for the modules the program's names only import, once, and holds their
// values to the answer.
func TestSampleRulesAskModuleReprs(t *testing.T) {
	prompt := stepPrompt("import glob\nimport os.path as p\nimport sys\nsys = 1\n", `<|line_sep|><|arg_sep|>{}<|src_sep|>import glob<|action_sep|>`, format.TokStepOver)
	var asked [][]string
	opt := SampleOptions{ModuleReprs: func(mods []string) map[string]string {
		asked = append(asked, mods)
		return map[string]string{"glob": "<module 'glob' from '/g.py'>"}
	}}
	r := sampleRules(prompt, opt)
	if len(asked) != 1 || !slices.Equal(asked[0], []string{"glob", "os.path"}) { // sys is rebound
		t.Fatalf("asked %v, want once for [glob os.path]", asked)
	}
	if !r.fixedAllowed(`<|line_sep|><|arg_sep|>{"glob": "<module 'glob' from '/g.py'>"`, `{"glob": "<module 'glob' from '/g.py'>"`) ||
		r.fixedAllowed(`<|line_sep|><|arg_sep|>{"glob": "<module 'glob' from '/h.py'>"`, `{"glob": "<module 'glob' from '/h.py'>"`) {
		t.Error("glob's value is not held to the interpreter's repr")
	}
	if opt.FreeProgram = true; sampleRules(prompt, opt) != nil || len(asked) != 1 {
		t.Error("FreeProgram still has rules or asks")
	}
}

// stepPrompt is the prompt of program src with one frame and an action.
func stepPrompt(src, frame, action string) string {
	return format.TokBeginOfText + format.TokTraceContextStart + src + format.TokFrameSep + frame + action + format.TokFrameSep
}

// jsonRuleCase is a prompt, an answer's text so far and whether a rule on
// its LOCALS allows it.
type jsonRuleCase struct {
	prompt, answer string
	ok             bool
}

// checkJSONRule checks a rule on the LOCALS text of each case's answer.
func checkJSONRule(t *testing.T, rule func(r *programRules, cur, json string) bool, cases []jsonRuleCase) {
	t.Helper()
	for _, tc := range cases {
		json := tc.answer[strings.LastIndex(tc.answer, format.TokArgSep)+len(format.TokArgSep):]
		if got := rule(promptRules(nil, tc.prompt), tc.answer, json); got != tc.ok {
			t.Errorf("after %q: %q allowed = %v, want %v", tc.prompt[len(tc.prompt)-60:], tc.answer, got, tc.ok)
		}
	}
}

// TestWholeLocals: where the format shows every local (after a breakpoint
// jump, a call, after a frame without locals) LOCALS has no ".." key, and an
// object closed without one holds the names its line surely has: the
// module's imports and assignments before the line, a function's
// parameters.
func TestWholeLocals(t *testing.T) {
	src := "import os\nX = 1\ndef f(a, b):\n    c = a + b\n    return c\nif X:\n    Y = f(X, 2)\nprint(Y)\n"
	step := func(frame, action string) string { return stepPrompt(src, frame, action) }
	first := `<|line_sep|><|arg_sep|>{}<|src_sep|>import os<|action_sep|>`
	checkJSONRule(t, (*programRules).wholeAllowed, []jsonRuleCase{
		// b 8 + c: every local, os and X surely among them
		{step(first, format.TokBreakpoint+"print(Y)"), `<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "X": "1", "f": "<function f at 0x0>", "Y": "3"}`, true},
		{step(first, format.TokBreakpoint+"print(Y)"), `<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>", "..`, false},
		{step(first, format.TokBreakpoint+"print(Y)"), `<|line_sep|><|arg_sep|>{"f": "<function f at 0x0>", "Y": "3"}`, false},
		{step(first, format.TokBreakpoint+"print(Y)"), `<|line_sep|><|arg_sep|>{"f": "<function f at 0x0>", "Y": "3"`, true}, // not closed yet
		// a step within the module may elide what did not change
		{step(`<|line_sep|><|arg_sep|>{"os": "<module 'os' (frozen)>"}<|src_sep|>X = 1<|action_sep|>`, format.TokStepOver), `<|line_sep|><|arg_sep|>{"X": "1", "..": ".."}`, true},
		// a call shows every local
		{step(`<|line_sep|><|arg_sep|>{"Y": "0", "..": ".."}<|src_sep|>    Y = f(X, 2)<|action_sep|>`, format.TokStepInto), `<|call_sep|><|src_sep|>def f(a, b):<|arg_sep|>{"a": "1", "..": ".."}`, false},
		// backwards after a return (no locals): every local, a and b surely
		{step(`<|inv_return_sep|><|src_sep|>    return c<|arg_sep|>"3"<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    return c<|arg_sep|>{"a": "1", "b": "2", "c": "3"}`, true},
		{step(`<|inv_return_sep|><|src_sep|>    return c<|arg_sep|>"3"<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    return c<|arg_sep|>{"c": "3"}`, false},
		{step(`<|inv_return_sep|><|src_sep|>    return c<|arg_sep|>"3"<|action_sep|>`, format.TokInvStepInto), `<|inv_line_sep|><|src_sep|>    return c<|arg_sep|>{"c": "3", "..": ".."}`, false},
	})
}

// TestNoKeyLeft: a comma after the last name a frame may hold is refused,
// so the model closes the object instead of reaching a dead end (which
// the budget closed with an empty key and no source line).
func TestNoKeyLeft(t *testing.T) {
	src := "def running_max(xs):\n    return max(xs)\n\nreadings = [3, 1]\nprint(running_max(readings))\n"
	r := promptRules(nil, stepPrompt(src, `<|line_sep|><|arg_sep|>{}<|src_sep|>def running_max(xs):<|action_sep|>`, format.TokBreakpoint+"readings = [3, 1]"))
	head := format.TokLineSep + format.TokArgSep
	one := `{"running_max": "<function running_max at 0x0>"`
	for _, tc := range []struct {
		new string
		ok  bool
	}{
		{one + `}`, true},
		{one + `,`, false}, // readings is bound on the line itself, after its event
		{one + `, "readings`, false},
	} {
		if got := r.keysAllowed(r.namesFor(head+one), one, tc.new); got != tc.ok {
			t.Errorf("%q allowed = %v, want %v (names %q)", tc.new, got, tc.ok, r.namesFor(head+one))
		}
	}
}

// TestFlowUnread: a program whose flow the text does not give (a clause
// with no header before it) sets no flow rule either way.
func TestFlowUnread(t *testing.T) {
	s := programScopes(nil, "x = 1\nelse:\n    y = 2\nz = 3\n")
	for _, backward := range []bool{false, true} {
		if got := s.flowLines("z = 3", backward, false); got != nil {
			t.Errorf("backward %v: flow lines %q, want none", backward, got)
		}
	}
}

// TestFrameNamesHoldOnRealTraces runs the programs of realTracePrograms
// under the tracer and checks that every line event's locals hold every
// name pysource's SureLocals gives its line, and no name PossibleLocals
// does not give: the rules of the model engine built on them
// (wholeAllowed, heldAt) never refuse a true frame; and that a name only
// imports bind (ImportedModules) shows its module in module frames, a
// fixed function, class or instance its repr (FixedReprs).
func TestFrameNamesHoldOnRealTraces(t *testing.T) {
	tr, programs := realTracePrograms(t)
	defer tr.Close()
	programs = append(programs, tracer.Program{Path: "unbind", Source: "import os\nX = 1\ntry:\n    Y = 2\nexcept ValueError as X:\n    pass\n" +
		"def f(a, *args, b=2, **kw):\n    global G\n    G = a\n    c = a + b\n    for i in args:\n        d = i\n    e = c\n    del c\n    return e\n" +
		"Z = f(1, 2, 3)\ndel Z\nW: int\nV: int = 3\nprint(f(4), [q for q in 'ab'], V)\n" +
		"def outer():\n    n = 0\n    def inc():\n        nonlocal n\n        n += 1\n    inc()\n    m = n\n    if any((w := v) > 1 for v in (1, 2)):\n        m = w\n    return m\n" +
		"for k in range(3):\n    if k:\n        late = k\n    print(outer())\n"})
	events, sureRuled, sureNames, possRuled, possNames, modules, fixedValues, ordered, loopValues := 0, 0, 0, 0, 0, 0, 0, 0, 0
	firstRuled, firstNames, callNames, callPossible, grouped, classValues := 0, 0, 0, 0, 0, 0
	for _, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		ix := pysource.New(prog.Source)
		mods := ix.ImportedModules()
		fixed := ix.FixedReprs()
		order := ix.ModuleBindOrder()
		type rule struct {
			sure, may []string
			groups    [][]string
			ok        bool
		}
		rules := map[int]rule{}
		firstSeen := map[[2]int]bool{} // frame, line
		for _, s := range trace.States {
			if may := ix.CallPossible(s.Lineno); s.Event == tracer.EventCall && may != nil {
				for _, v := range s.Locals {
					callPossible++
					if !slices.Contains(may, v.Name) {
						t.Errorf("%s: the call of %s on line %d holds %q, not in CallPossible %v", prog.Path, s.Function, s.Lineno, v.Name, may)
					}
				}
			}
			if s.Event == tracer.EventCall {
				for _, name := range ix.CallLocals(s.Lineno) {
					callNames++
					if !slices.ContainsFunc(s.Locals, func(v tracer.Var) bool { return v.Name == name }) {
						t.Errorf("%s: the call of %s on line %d lacks %q of CallLocals %v", prog.Path, s.Function, s.Lineno, name, ix.CallLocals(s.Lineno))
					}
				}
			}
			if s.Event != tracer.EventLine {
				continue
			}
			events++
			r, seen := rules[s.Lineno]
			if !seen {
				r.sure = ix.SureLocals(s.Lineno)
				r.may, r.ok = ix.PossibleLocals(s.Lineno)
				r.groups, _ = ix.PossibleLocalGroups(s.Lineno, false)
				rules[s.Lineno] = r
			}
			if len(r.sure) > 0 {
				sureRuled++
				sureNames += len(r.sure)
			}
			for _, name := range r.sure {
				if !slices.ContainsFunc(s.Locals, func(v tracer.Var) bool { return v.Name == name }) {
					t.Errorf("%s: line %d (%q) in %s lacks %q of SureLocals %v", prog.Path, s.Lineno, s.Src, s.Function, name, r.sure)
				}
			}
			for name, want := range ix.LoopValues(s.Lineno) {
				loopValues++
				if v, has := s.Locals.Get(name); !has || v != want {
					t.Errorf("%s: line %d (%q): %s = %q (held: %v), not LoopValues' %s", prog.Path, s.Lineno, s.Src, name, v, has, want)
				}
			}
			for _, v := range s.Locals {
				if want, ok := fixed[v.Name]; ok && s.Function == "<module>" {
					fixedValues++
					if v.Value != want {
						t.Errorf("%s: line %d: %s = %s, not the fixed %s", prog.Path, s.Lineno, v.Name, v.Value, want)
					}
				}
				if mod, ok := mods[v.Name]; ok && s.Function == "<module>" {
					modules++
					var value strings.Builder // the value as the frame's JSON writes it
					enc := json.NewEncoder(&value)
					enc.SetEscapeHTML(false)
					enc.Encode(v.Value)
					if text := strings.TrimSpace(value.String()); !moduleReprAllowed(mod, text[1:len(text)-1], true) {
						t.Errorf("%s: line %d: %s = %s is no repr of module %s", prog.Path, s.Lineno, v.Name, v.Value, mod)
					}
				}
			}
			if runs := ix.RunsOn(s.Lineno); len(runs) == 1 && runs[0].Name == s.Function {
				for _, v := range s.Locals {
					if want, ok := ix.ClassFixedReprs(runs[0])[v.Name]; ok {
						classValues++
						if v.Value != want {
							t.Errorf("%s: line %d of class %s: %s = %s, not ClassFixedReprs' %s", prog.Path, s.Lineno, s.Function, v.Name, v.Value, want)
						}
					}
				}
			}
			if s.Function == "<module>" && s.Depth == 0 {
				var seen []tracer.Var
				for _, v := range s.Locals {
					at, ok := order[v.Name]
					if !ok {
						continue
					}
					ordered++
					for _, w := range seen {
						if at.Before(order[w.Name]) {
							t.Errorf("%s: line %d: %s comes after %s, which ModuleBindOrder binds later", prog.Path, s.Lineno, v.Name, w.Name)
						}
					}
					seen = append(seen, v)
				}
			}
			if !r.ok {
				continue
			}
			possRuled++
			possNames += len(r.may)
			if len(r.groups) > 1 {
				grouped++
				if !slices.ContainsFunc(r.groups, func(g []string) bool {
					return !slices.ContainsFunc(s.Locals, func(v tracer.Var) bool { return !slices.Contains(g, v.Name) })
				}) {
					t.Errorf("%s: line %d (%q) in %s holds %v, no one group of PossibleLocalGroups %q", prog.Path, s.Lineno, s.Src, s.Function, s.Locals, r.groups)
				}
			}
			for _, v := range s.Locals {
				if !slices.Contains(r.may, v.Name) {
					t.Errorf("%s: line %d (%q) in %s holds %q, not in PossibleLocals %v", prog.Path, s.Lineno, s.Src, s.Function, v.Name, r.may)
				}
			}
			if key := [2]int{s.Frame, s.Lineno}; !firstSeen[key] && s.Frame != 0 {
				firstSeen[key] = true
				first, _ := ix.FirstLocals(s.Lineno)
				firstRuled++
				firstNames += len(r.may) - len(first)
				for _, v := range s.Locals {
					if !slices.Contains(first, v.Name) {
						t.Errorf("%s: the first event of a frame of %s on line %d (%q) holds %q, not in FirstLocals %v", prog.Path, s.Function, s.Lineno, s.Src, v.Name, first)
					}
				}
			}
		}
	}
	t.Logf("%d first line events of a frame on their line checked against FirstLocals (%d names fewer than PossibleLocals); %d parameters of calls (CallLocals); %d names of calls (CallPossible); %d line events on lines of more than one frame held to one (PossibleLocalGroups); %d class bodies' methods (ClassFixedReprs)", firstRuled, firstNames, callNames, callPossible, grouped, classValues)
	t.Logf("%d programs, %d line events: %d with sure names (%d names), %d with possible names (%d names); %d imported modules' values, %d fixed functions', classes' and instances'; %d module names in a fixed order; %d values after a loop",
		len(programs), events, sureRuled, sureNames, possRuled, possNames, modules, fixedValues, ordered, loopValues)
	if loopValues < 10 {
		t.Fatalf("only %d values after a loop checked", loopValues)
	}
	if sureRuled < events/2 || possRuled < events/2 || callNames < 1000 || callPossible < 1000 || grouped < 100 || classValues < 20 {
		t.Fatalf("only %d and %d of %d line events checked", sureRuled, possRuled, events)
	}
}

// TestFreshBreakNames: a breakpoint asked from the module's frame stops at
// the first run of its line in a new frame, where only what the text binds
// before the line may be there (FirstLocals); asked from inside the
// function (the frame may be one that has looped), later rounds' names may
// be there too.
func TestFreshBreakNames(t *testing.T) {
	src := "def search(items, target):\n    lo, hi = 0, len(items) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n" +
		"        if items[mid] == target:\n            return mid\n        lo = mid + 1\n    return -1\n" +
		"def gen(n):\n    while n:\n        k = n\n        yield k\n        n -= 1\n" +
		"data = [1, 3, 5]\nprint(search(data, 5), list(gen(2)))\n"
	fromModule := `<|line_sep|><|arg_sep|>{}<|src_sep|>data = [1, 3, 5]<|action_sep|>`
	fromInside := `<|line_sep|><|arg_sep|>{"items": "[1, 3, 5]", "target": "5", "lo": "0", "hi": "2"}<|src_sep|>        lo = mid + 1<|action_sep|>`
	for _, tc := range []struct {
		frame, bp string
		mid       bool // the answer may hold the name bound later in the loop
		name      string
	}{
		{fromModule, "    while lo <= hi:", false, "mid"},
		{fromInside, "    while lo <= hi:", true, "mid"},
		{fromModule, "        if items[mid] == target:", true, "mid"},
		{fromModule, "    while n:", true, "k"}, // a generator's frame may be one on hold
	} {
		r := promptRules(nil, stepPrompt(src, tc.frame, format.TokBreakpoint+tc.bp))
		names := r.namesFor(format.TokLineSep + format.TokArgSep + "{")
		if names == nil || names.contains(tc.name) != tc.mid {
			t.Errorf("breakpoint %q after %q: names %q, want %q among them: %v", tc.bp, tc.frame[:40], names, tc.name, tc.mid)
		}
	}
}

// TestReturnedNameValue: after a stop on `return NAME`, the return frame
// shows NAME's value as the frame's locals (merged over elided frames)
// hold it; no rule where the prompt does not show NAME, or where a finally
// block runs on the way out.
func TestReturnedNameValue(t *testing.T) {
	src := "def safe_div(a, b):\n    try:\n        result = a / b\n    except ZeroDivisionError:\n        result = None\n    return result\n" +
		"def g(x):\n    try:\n        y = x\n        return y\n    finally:\n        x = 0\n" +
		"print(safe_div(1, 0), g(2))\n"
	head := `<|return_sep|><|src_sep|>    return result<|arg_sep|>`
	full := `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>        result = None<|action_sep|><|step_over|><|frame_sep|>`
	for _, tc := range []struct {
		name, frames, action, head, want string
	}{
		{"merged", full + `<|line_sep|><|arg_sep|>{"result": "None", "..": ".."}<|src_sep|>    return result<|action_sep|>`, format.TokStepReturn, head, `"None"`},
		{"step_into too", full + `<|line_sep|><|arg_sep|>{"result": "None", "..": ".."}<|src_sep|>    return result<|action_sep|>`, format.TokStepInto, head, `"None"`},
		{"not shown", `<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>    return result<|action_sep|>`, format.TokStepReturn, head, ""},
		{"from another line", full, format.TokStepReturn, head, ""},
		{"a literal before it", `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>        result = None<|action_sep|>`, format.TokStepReturn, head, `"None"`},
		{"an except clause before it", `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>    except ZeroDivisionError:<|action_sep|>`, format.TokStepReturn, head, `"None"`},
		{"an except clause, unmatched", `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>    except ZeroDivisionError:<|action_sep|>`, format.TokStepReturn,
			`<|return_sep|><|src_sep|>    except ZeroDivisionError:<|arg_sep|>`, `"None"`},
		{"the try body may bind another value", `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>        result = a / b<|action_sep|>`, format.TokStepReturn, head, ""},
		{"a literal before it, one step", `<|line_sep|><|arg_sep|>{"a": "1", "b": "0"}<|src_sep|>        result = None<|action_sep|>`, format.TokStepOver, head, ""},
		{"a finally on the way", `<|line_sep|><|arg_sep|>{"x": "2", "y": "2"}<|src_sep|>        return y<|action_sep|>`, format.TokStepReturn,
			`<|return_sep|><|src_sep|>        return y<|arg_sep|>`, ""},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		if got := r.valueFor(tc.head); got != tc.want {
			t.Errorf("%s: value %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestYieldedNameValue: after a stop on a generator's `yield NAME`, its
// return frame (the yield's) shows NAME's value, by any forward step.
func TestYieldedNameValue(t *testing.T) {
	src := "def evens(limit):\n    n = 0\n    while n < limit:\n        if n % 2 == 0:\n            yield n\n        n += 1\n\n" +
		"total = 0\nfor v in evens(7):\n    total += v\n"
	at := `<|line_sep|><|arg_sep|>{"limit": "7", "n": "4"}<|src_sep|>            yield n<|action_sep|>`
	head := `<|return_sep|><|src_sep|>            yield n<|arg_sep|>`
	for _, tc := range []struct {
		name, frames, action, want string
	}{
		{"step_into", at, format.TokStepInto, `"4"`},
		{"step_over", at, format.TokStepOver, `"4"`},
		{"step_return", at, format.TokStepReturn, `"4"`},
		{"not shown", `<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>            yield n<|action_sep|>`, format.TokStepInto, ""},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		if got := r.valueFor(head); got != tc.want {
			t.Errorf("%s: value %q, want %q", tc.name, got, tc.want)
		}
	}
}

// checkLoopBack checks, where line event s follows its frame's line event
// h on a for loop's header, what the loop rule (loopLocals) says h's
// locals were: in the body, the target's item before (ItemBefore) or no
// target, the rest as s has them; after the loop, s's locals. It returns
// 1 where the rule says something.
func checkLoopBack(t *testing.T, path string, ix *pysource.Index, h, s tracer.State) int {
	t.Helper()
	first, last, ok := ix.ForBody(h.Lineno)
	if !ok || ix.RunsThreads() {
		return 0
	}
	want := slices.Clone(s.Locals)
	if (s.Lineno < first || s.Lineno > last) && !ix.PlainIterable(h.Lineno, s.Locals.Get) {
		return 0 // finding no item may have run the program's code
	}
	if first <= s.Lineno && s.Lineno <= last {
		name := ix.ForTarget(h.Lineno)
		valueOf := func(n string) (string, bool) {
			k := slices.IndexFunc(s.Locals, func(v tracer.Var) bool { return v.Name == n })
			if k < 0 {
				return "", false
			}
			return s.Locals[k].Value, true
		}
		cur, found := valueOf(name)
		prev, unbound, known := ix.ItemBefore(h.Lineno, cur, valueOf)
		if !found || !known {
			return 0
		}
		k := slices.IndexFunc(want, func(v tracer.Var) bool { return v.Name == name })
		if unbound {
			want = slices.Delete(want, k, k+1)
		} else {
			want[k].Value = prev
		}
	}
	if !slices.Equal(h.Locals, want) {
		t.Errorf("%s: line %d (%q) goes on to line %d (%q) with %v: the rule says it had %v, it had %v", path, h.Lineno, ix.Line(h.Lineno), s.Lineno, ix.Line(s.Lineno), s.Locals, want, h.Locals)
	}
	return 1
}

// checkStepAhead checks, where line event s on a for loop's or a
// branch's header (at its place at in its loop's run) is followed by
// event next, what ItemAfter or CondHolds
// says of the step: next is its frame's line event in the body, with a
// loop's target bound to the next item and the rest as s has it, or (the
// loop done, the condition false) it is not in the body and s's locals
// are unchanged. It returns 1 where the rules say something.
func checkStepAhead(t *testing.T, path string, ix *pysource.Index, s tracer.State, at pysource.LoopPlace, next tracer.State) int {
	t.Helper()
	if ix.RunsThreads() {
		return 0
	}
	valueOf := s.Locals.Get
	var items []string
	var into, known bool
	first, end, loop := ix.ForBody(s.Lineno)
	if loop {
		items, into, known = ix.ItemAfter(s.Lineno, at, valueOf)
	} else if first, end, known = ix.CondBody(s.Lineno); known {
		into, known = ix.CondHolds(s.Lineno, valueOf)
	}
	if !known {
		return 0
	}
	inBody := next.Event == tracer.EventLine && first <= next.Lineno && next.Lineno <= end
	want := slices.Clone(s.Locals)
	if into && loop {
		for i, name := range ix.ForTargets(s.Lineno) {
			if k := slices.IndexFunc(want, func(v tracer.Var) bool { return v.Name == name }); k >= 0 {
				want[k].Value = items[i]
			} else {
				want = append(want, tracer.Var{Name: name, Value: items[i]})
			}
		}
	}
	byName := func(a, b tracer.Var) int { return strings.Compare(a.Name, b.Name) }
	got := slices.Clone(next.Locals)
	slices.SortFunc(want, byName)
	slices.SortFunc(got, byName)
	switch {
	case next.Frame != s.Frame:
		t.Errorf("%s: line %d (%q) with %v goes on to another frame's %s event on line %d", path, s.Lineno, ix.Line(s.Lineno), s.Locals, next.Event, next.Lineno)
	case into && !inBody:
		t.Errorf("%s: line %d (%q) with %v goes on to a %s event on line %d, not into its body (lines %d-%d) with %q", path, s.Lineno, ix.Line(s.Lineno), s.Locals, next.Event, next.Lineno, first, end, items)
	case !into && inBody:
		t.Errorf("%s: line %d (%q) with %v goes on into its body, where the rules say it does not", path, s.Lineno, ix.Line(s.Lineno), s.Locals)
	case next.Event == tracer.EventLine && !slices.Equal(got, want):
		t.Errorf("%s: line %d (%q) with %v goes on to line %d with %v, where the rules say %v", path, s.Lineno, ix.Line(s.Lineno), s.Locals, next.Lineno, next.Locals, want)
	}
	return 1
}

// TestLoopLocals: a step back from a for loop's body to its header shows
// the target's item before (none before the first, where the loop runs
// once per frame; no rule in a loop run again), a step back from the line
// after the loop shows the locals unchanged; both for the inv_line and the
// inv_line_call frame of the header, nothing for other lines or forward
// steps.
func TestLoopLocals(t *testing.T) {
	src := "grid = [[1, 2, 3], [4, 5, 6]]\nflipped = []\nfor c in range(3):\n    new_row = []\n    for r in range(2):\n" +
		"        new_row.append(grid[r][c])\n    flipped.append(new_row)\nprint(flipped)\n" +
		"for w in ['a', 'bb']:\n    print(w)\nnums = [3, 1, 4]\nfor n in nums:\n    print(n)\n" +
		"for q in range(len([k for k in [1, 2]])):\n    print(q)\nprint(q)\n" +
		"def gen():\n    yield 1\nfor g in gen():\n    print(g)\nprint(g)\n"
	outer := `<|inv_line_sep|><|src_sep|>for c in range(3):<|arg_sep|>`
	inner := `<|inv_line_sep|><|src_sep|>    for r in range(2):<|arg_sep|>`
	words := `<|inv_line_sep|><|src_sep|>for w in ['a', 'bb']:<|arg_sep|>`
	at := func(locals, line string) string {
		return `<|line_sep|><|arg_sep|>{"grid": "[[1, 2, 3], [4, 5, 6]]", "flipped": "[[1, 4]]", ` + locals + `}<|src_sep|>` + line + `<|action_sep|>`
	}
	for _, tc := range []struct {
		name, frames, action, head, want string
	}{
		{"into the body", at(`"c": "2", "new_row": "[2, 5]"`, "    new_row = []"), format.TokInvStepInto, outer, `{"c": "1", "..": ".."}`},
		{"inv_line_call too", at(`"c": "2", "new_row": "[2, 5]"`, "    new_row = []"), format.TokInvStepInto,
			`<|inv_line_call_sep|><|src_sep|>for c in range(3):<|arg_sep|>`, `{"c": "1", "..": ".."}`},
		{"inv_step_over too", at(`"c": "1", "new_row": "[1, 4]"`, "    new_row = []"), format.TokInvStepOver, outer, `{"c": "0", "..": ".."}`},
		{"an inner loop's later item", at(`"c": "0", "new_row": "[1]", "r": "1"`, "        new_row.append(grid[r][c])"), format.TokInvStepInto, inner, `{"r": "0", "..": ".."}`},
		{"an inner loop's first item: run again", at(`"c": "1", "new_row": "[]", "r": "0"`, "        new_row.append(grid[r][c])"), format.TokInvStepInto, inner, ""},
		{"not its body", at(`"c": "1", "new_row": "[]", "r": "0"`, "        new_row.append(grid[r][c])"), format.TokInvStepInto, outer, ""},
		{"after the loop", at(`"c": "2", "new_row": "[3, 6]", "r": "1"`, "print(flipped)"), format.TokInvStepInto, outer, `{"..": ".."}`},
		{"after the loop, not the inner one", at(`"c": "2", "new_row": "[3, 6]", "r": "1"`, "print(flipped)"), format.TokInvStepInto, inner, ""},
		{"a list's item", at(`"c": "2", "new_row": "[3, 6]", "r": "1", "w": "'bb'"`, "    print(w)"), format.TokInvStepInto, words, `{"w": "'a'", "..": ".."}`},
		{"a list's first item", at(`"c": "2", "new_row": "[3, 6]", "r": "1", "w": "'a'"`, "    print(w)"), format.TokInvStepInto, words,
			`{"grid": "[[1, 2, 3], [4, 5, 6]]", "flipped": "[[1, 4]]", "c": "2", "new_row": "[3, 6]", "r": "1"}`},
		{"a list a local holds", at(`"nums": "[3, 1, 4]", "n": "1"`, "    print(n)"), format.TokInvStepInto,
			`<|inv_line_sep|><|src_sep|>for n in nums:<|arg_sep|>`, `{"n": "3", "..": ".."}`},
		{"a comprehension's frame on the header's line", `<|line_sep|><|arg_sep|>{".0": "<list_iterator object at 0x0>", "k": "2"}<|src_sep|>for q in range(len([k for k in [1, 2]])):<|action_sep|>`,
			format.TokInvStepInto, `<|inv_line_sep|><|src_sep|>for q in range(len([k for k in [1, 2]])):<|arg_sep|>`, ""},
		{"forward", at(`"c": "2", "new_row": "[2, 5]"`, "    new_row = []"), format.TokStepOver, outer, ""},
		{"after a generator's loop: its frame ran", at(`"g": "1"`, "print(g)"), format.TokInvStepInto, `<|inv_line_sep|><|src_sep|>for g in gen():<|arg_sep|>`, ""},
		{"locals not in the prompt", `<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>    new_row = []<|action_sep|>`, format.TokInvStepInto, outer, ""},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		if got := r.valueFor(tc.head); got != tc.want {
			t.Errorf("%s: LOCALS %q, want %q", tc.name, got, tc.want)
		}
	}
	// another thread may change a value between the header and the body
	threads := "import threading\n" + src
	r := promptRules(nil, stepPrompt(threads, at(`"c": "2", "new_row": "[2, 5]"`, "    new_row = []"), format.TokInvStepInto))
	if got := r.valueFor(outer); got != "" {
		t.Errorf("with threads: LOCALS %q, want no rule", got)
	}
}

// TestStepAhead: a step from a for loop's header shows the target bound
// to the next item, on the body's first line and in no frame's end; once
// the loop is done, the locals unchanged on a line after the loop; no rule
// where the item or the loop's start is unknown. A step from a branch goes
// where its condition's truth says, with the locals unchanged.
func TestStepAhead(t *testing.T) {
	src := "def count(text):\n    counts = {}\n    for word in text.split():\n        counts[word] = 1\n    return counts\n" +
		"def again(n):\n    for k in range(2):\n        for i in range(n):\n            print(i)\n" +
		"for k in (3, 5):\n    print(count('a b'))\nelse:\n    print('done')\n" +
		"def sign(x):\n    if x > 0:\n        return 1\n    elif x == 0:\n        return 0\n    return -1\n"
	at := func(locals, line string) string {
		return `<|line_sep|><|arg_sep|>{` + locals + `}<|src_sep|>` + line + `<|action_sep|>`
	}
	header := "    for word in text.split():"
	for _, tc := range []struct {
		name, frames, action, locals string
		lines                        sortedSet
		into                         bool
	}{
		{"the first item", at(`"text": "'a b'", "counts": "{}"`, header), format.TokStepOver, `{"word": "'a'", "..": ".."}`, sortedSet{"        counts[word] = 1"}, true},
		{"step_into too", at(`"text": "'a b'", "counts": "{}"`, header), format.TokStepInto, `{"word": "'a'", "..": ".."}`, sortedSet{"        counts[word] = 1"}, true},
		{"the next item", at(`"text": "'a b'", "counts": "{'a': 1}", "word": "'a'"`, header), format.TokStepOver, `{"word": "'b'", "..": ".."}`, sortedSet{"        counts[word] = 1"}, true},
		{"done", at(`"text": "'a b'", "counts": "{'a': 1, 'b': 1}", "word": "'b'"`, header), format.TokStepOver, `{"..": ".."}`, sortedSet{"    return counts"}, false},
		{"a module loop's else", at(`"count": "<function count at 0x0>", "again": "<function again at 0x0>", "k": "5"`, "for k in (3, 5):"), format.TokStepOver, `{"..": ".."}`, sortedSet{"    print('done')", "def sign(x):"}, false}, // NextLines: a break would skip the else
		{"an inner loop's first item", at(`"n": "2", "k": "1"`, "        for i in range(n):"), format.TokStepOver, `{"i": "0", "..": ".."}`, sortedSet{"            print(i)"}, true},
		{"an inner loop's next item: it may start again", at(`"n": "2", "k": "1", "i": "0"`, "        for i in range(n):"), format.TokStepOver, "", nil, false},
		{"an inner loop's next item after its body", at(`"n": "2", "k": "1", "i": "0"`, "            print(i)") + format.TokStepOver + format.TokFrameSep +
			at(`"n": "2", "k": "1", "i": "0"`, "        for i in range(n):"), format.TokStepOver, `{"i": "1", "..": ".."}`, sortedSet{"            print(i)"}, true},
		{"an inner loop again after the outer header", at(`"n": "2", "k": "0", "i": "1"`, "    for k in range(2):") + format.TokStepOver + format.TokFrameSep +
			at(`"n": "2", "k": "1", "i": "1"`, "        for i in range(n):"), format.TokStepOver, `{"i": "0", "..": ".."}`, sortedSet{"            print(i)"}, true},
		{"not an item", at(`"text": "'a b'", "counts": "{}", "word": "'c'"`, header), format.TokStepOver, "", nil, false},
		{"locals not in the prompt", at(`"..": ".."`, header), format.TokStepOver, "", nil, false},
		{"step_return", at(`"text": "'a b'", "counts": "{}"`, header), format.TokStepReturn, "", nil, false},
		{"backwards", at(`"text": "'a b'", "counts": "{}"`, header), format.TokInvStepOver, "", nil, false},
		{"a true condition", at(`"x": "2"`, "    if x > 0:"), format.TokStepInto, `{"..": ".."}`, sortedSet{"        return 1"}, true},
		{"a false condition", at(`"x": "0"`, "    if x > 0:"), format.TokStepOver, `{"..": ".."}`, sortedSet{"    elif x == 0:"}, false},
		{"an elif", at(`"x": "0"`, "    elif x == 0:"), format.TokStepOver, `{"..": ".."}`, sortedSet{"        return 0"}, true},
		{"a condition that raises", at(`"x": "'a'"`, "    if x > 0:"), format.TokStepOver, "", nil, false},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		if r.locals != tc.locals {
			t.Errorf("%s: LOCALS %q, want %q", tc.name, r.locals, tc.locals)
		}
		if tc.locals == "" {
			continue
		}
		if got := r.scope[format.TokLineSep]; !slices.Equal(got, tc.lines) {
			t.Errorf("%s: lines %q, want %q", tc.name, got, tc.lines)
		}
		if ends, ruled := r.scope[format.TokReturnSep]; tc.into && !(ruled && len(ends) == 0) {
			t.Errorf("%s: return lines %q (ruled %v); the step goes into the body", tc.name, ends, ruled)
		}
	}
	// a repeated item: the round the prompt shows decides
	keep := "def keep(text):\n    out = []\n    for ch in text:\n        out.append(ch)\n    return out\n"
	var frames strings.Builder
	frames.WriteString(`<|call_sep|><|src_sep|>def keep(text):<|arg_sep|>{"text": "'aab'"}<|action_sep|><|step_into|><|frame_sep|>`)
	frames.WriteString(at(`"text": "'aab'"`, "    out = []") + format.TokStepInto + format.TokFrameSep)
	for _, out := range []string{"[]", "['a']"} {
		frames.WriteString(at(`"out": "`+out+`", "..": ".."`, "    for ch in text:") + format.TokStepInto + format.TokFrameSep)
		frames.WriteString(at(`"ch": "'a'", "..": ".."`, "        out.append(ch)") + format.TokStepInto + format.TokFrameSep)
	}
	third := at(`"out": "['a', 'a']", "..": ".."`, "    for ch in text:")
	if r := promptRules(nil, stepPrompt(keep, frames.String()+third, format.TokStepOver)); r.locals != `{"ch": "'b'", "..": ".."}` {
		t.Errorf("the third round of 'aab': LOCALS %q, want ch 'b'", r.locals)
	}
	if r := promptRules(nil, stepPrompt(keep, third, format.TokStepOver)); r.locals != "" {
		t.Errorf("a round the prompt does not show: LOCALS %q, want no rule", r.locals)
	}
	threads := "import threading\n" + src
	if r := promptRules(nil, stepPrompt(threads, at(`"text": "'a b'", "counts": "{}"`, header), format.TokStepOver)); r.locals != "" {
		t.Errorf("with threads: LOCALS %q, want no rule", r.locals)
	}
}

// TestAssignedLocals: after a step from `NAME = LITERAL`, or from an
// assignment whose value the locals fix, the line frame's LOCALS are the
// frame's with NAME bound to the value, written as the format writes a
// step within one frame.
func TestAssignedLocals(t *testing.T) {
	src := "x = 1\ny = None\nfor i in (1, 2):\n    y = None\n    z = -3\n    w = x * i - z\n    x += w\n    out.append(w // 2)\nprint(x, y)\ndef f():\n    global x\n    x = 2\nclass C:\n    __k = 1\n    j = 2\n"
	start := `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>`
	for _, tc := range []struct {
		name, frames, action, want string
	}{
		{"new name", start + `<|line_sep|><|arg_sep|>{"x": "1"}<|src_sep|>y = None<|action_sep|>`, format.TokStepOver, `{"y": "None", "..": ".."}`},
		{"step_into too", start + `<|line_sep|><|arg_sep|>{"x": "1"}<|src_sep|>y = None<|action_sep|>`, format.TokStepInto, `{"y": "None", "..": ".."}`},
		{"no change", start + `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2"}<|src_sep|>    y = None<|action_sep|>`, format.TokStepOver, `{"..": ".."}`},
		{"a negative int", start + `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2"}<|src_sep|>    z = -3<|action_sep|>`, format.TokStepOver, `{"z": "-3", "..": ".."}`},
		{"step_return", start + `<|line_sep|><|arg_sep|>{"x": "1"}<|src_sep|>y = None<|action_sep|>`, format.TokStepReturn, ""},
		{"locals not in the prompt", `<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>y = None<|action_sep|>`, format.TokStepOver, ""},
		{"a global", `<|line_sep|><|arg_sep|>{}<|src_sep|>    x = 2<|action_sep|>`, format.TokStepOver, ""},
		{"a mangled name", `<|line_sep|><|arg_sep|>{}<|src_sep|>    __k = 1<|action_sep|>`, format.TokStepOver, ""},
		{"a value the locals fix", `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2", "z": "-3"}<|src_sep|>    w = x * i - z<|action_sep|>`, format.TokStepOver, `{"w": "5", "..": ".."}`},
		{"an augmented assignment", `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2", "z": "-3", "w": "5"}<|src_sep|>    x += w<|action_sep|>`, format.TokStepInto, `{"x": "6", "..": ".."}`},
		{"an append", `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2", "z": "-3", "w": "5", "out": "[1]"}<|src_sep|>    out.append(w // 2)<|action_sep|>`, format.TokStepOver, `{"out": "[1, 2]", "..": ".."}`},
		{"a value the locals do not fix", `<|line_sep|><|arg_sep|>{"x": "1", "y": "None", "i": "2", "z": "-3"}<|src_sep|>    x += w<|action_sep|>`, format.TokStepInto, ""},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		if got := r.valueFor(format.TokLineSep + format.TokArgSep); got != tc.want {
			t.Errorf("%s: LOCALS %q, want %q", tc.name, got, tc.want)
		}
	}
	// a local holding the frame's namespace shows the new binding too
	aliased := "def f():\n    loc = locals()\n    n = 42\n    return loc\nprint(f())\n"
	r := promptRules(nil, stepPrompt(aliased, `<|line_sep|><|arg_sep|>{"loc": "{}"}<|src_sep|>    n = 42<|action_sep|>`, format.TokStepOver))
	if got := r.valueFor(format.TokLineSep + format.TokArgSep); got != "" {
		t.Errorf("locals() aliased: LOCALS %q, want no rule", got)
	}
}

// TestReturnLinesRule: after step_return from a line or call frame, the
// return frame is on a line the frame's code may reach from there
// (ReturnLines, CallReturnLines): from a function's line or call, its own
// lines from there on; from a script's module frame (a line or its call),
// only where the module ends when nothing raises (EndLines), never a line
// halfway down, a class body's or a function's.
func TestReturnLinesRule(t *testing.T) {
	src := "class Base:\n    x = 1\n    def m(self):\n        return self.x\n\ndef f(a):\n    b = a + 1\n    return b\n\nk = Base()\nprint(k.m(), f(1))\ny = 2\n"
	for _, tc := range []struct {
		name, frame string
		lines       map[string]bool
	}{
		{"from the module", `<|line_sep|><|arg_sep|>{}<|src_sep|>k = Base()<|action_sep|>`,
			map[string]bool{"y = 2": true, "k = Base()": false, "print(k.m(), f(1))": false, "    x = 1": false, "        return self.x": false, "class Base:": false}},
		{"from the module's call", `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|>`,
			map[string]bool{"y = 2": true, "class Base:": false, "print(k.m(), f(1))": false, "    return b": false}},
		{"from a function", `<|line_sep|><|arg_sep|>{"a": "1"}<|src_sep|>    b = a + 1<|action_sep|>`,
			map[string]bool{"    return b": true, "    b = a + 1": true, "y = 2": false, "def f(a):": false}},
		{"from a call", `<|call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "1"}<|action_sep|>`,
			map[string]bool{"    return b": true, "    b = a + 1": true, "y = 2": false, "print(k.m(), f(1))": false}},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frame, format.TokStepReturn))
		for line, ok := range tc.lines {
			if got := r.linesFor(format.TokReturnSep + format.TokSrcSep).contains(line); got != ok {
				t.Errorf("%s: a return on %q allowed = %v, want %v", tc.name, line, got, ok)
			}
		}
	}
}

// TestEscapeFreeReturns: in a script, after step_return from a line or
// the call of a function no exception can leave but into the module (and
// the run: pysource's NoEscape), the return is on one of its normal ends
// (EndLines), not a line that could only end it by raising, and a step from
// such a frame's exception event (or the module's) answers no return; a
// function called in a try, or any function of a program entered at a
// call, may still return where it raises.
func TestEscapeFreeReturns(t *testing.T) {
	src := "def main():\n    nums = [1, 2]\n    print(nums)\n    return len(nums)\n\ndef risky(x):\n    print(x)\n    return x\n\nmain()\ntry:\n    risky(1)\nexcept ValueError:\n    pass\n"
	script := `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>`
	for _, tc := range []struct {
		name, frame string
		lines       map[string]bool
	}{
		{"main's line", script + `<|line_sep|><|arg_sep|>{}<|src_sep|>    nums = [1, 2]<|action_sep|>`,
			map[string]bool{"    return len(nums)": true, "    print(nums)": false, "    nums = [1, 2]": false}},
		{"main's call", script + `<|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|>`,
			map[string]bool{"    return len(nums)": true, "    print(nums)": false}},
		{"risky, called in a try", script + `<|line_sep|><|arg_sep|>{"x": "1"}<|src_sep|>    print(x)<|action_sep|>`,
			map[string]bool{"    return x": true, "    print(x)": true}},
		{"main, entered at a call", `<|line_sep|><|arg_sep|>{}<|src_sep|>    nums = [1, 2]<|action_sep|>`,
			map[string]bool{"    return len(nums)": true, "    print(nums)": true}},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frame, format.TokStepReturn))
		for line, ok := range tc.lines {
			if got := r.linesFor(format.TokReturnSep + format.TokSrcSep).contains(line); got != ok {
				t.Errorf("%s: a return on %q allowed = %v, want %v", tc.name, line, got, ok)
			}
		}
	}
	// a step from an exception event that frame catches: a handler's line
	// comes next, never the frame's return
	for _, tc := range []struct {
		name, frame string
		refused     bool
	}{
		{"the module's, in a script", script + `<|exception_sep|><|src_sep|>    risky(1)<|arg_sep|>"ValueError()"<|action_sep|>`, true},
		{"main's, in a script", script + `<|exception_sep|><|src_sep|>    print(nums)<|arg_sep|>"ValueError()"<|action_sep|>`, true},
		{"risky's, called in a try", script + `<|exception_sep|><|src_sep|>    print(x)<|arg_sep|>"ValueError()"<|action_sep|>`, false},
		{"main's, entered at a call", `<|exception_sep|><|src_sep|>    print(nums)<|arg_sep|>"ValueError()"<|action_sep|>`, false},
	} {
		for _, action := range []string{format.TokStepInto, format.TokStepOver} {
			r := promptRules(nil, stepPrompt(src, tc.frame, action))
			returns, ruled := r.scope[format.TokReturnSep]
			if refused := ruled && len(returns) == 0; refused != tc.refused {
				t.Errorf("%s %s: the return refused %v, want %v", tc.name, action, refused, tc.refused)
			}
		}
	}
	// backwards: a step back from such a frame's return finds no exception
	// event of it, but on a for header where the loop's iterator ended it
	end := `<|inv_return_sep|><|src_sep|>    pass<|arg_sep|>"None"<|action_sep|><|inv_step_into|><|frame_sep|>`
	loop := "def gen():\n    yield 1\n\ndef walk():\n    for v in gen():\n        print(v)\n\nwalk()\n"
	for _, tc := range []struct {
		name, src, frame string
		want             []string // nil: not refused
	}{
		{"main's return", src, end + `<|inv_return_sep|><|src_sep|>    return len(nums)<|arg_sep|>"2"<|action_sep|>`, []string{}},
		{"the module's return", src, `<|inv_return_sep|><|src_sep|>    pass<|arg_sep|>"None"<|action_sep|>`, []string{}},
		{"risky's, called in a try", src, end + `<|inv_return_sep|><|src_sep|>    return x<|arg_sep|>"1"<|action_sep|>`, nil},
		{"a for loop's end", loop, `<|inv_return_sep|><|src_sep|>walk()<|arg_sep|>"None"<|action_sep|><|inv_step_into|><|frame_sep|><|inv_return_sep|><|src_sep|>    for v in gen():<|arg_sep|>"None"<|action_sep|>`, []string{"    for v in gen():"}},
	} {
		for _, action := range []string{format.TokInvStepInto, format.TokInvStepOver} {
			r := promptRules(nil, stepPrompt(tc.src, tc.frame, action))
			got, ruled := r.scope[format.TokInvExceptionSep]
			if tc.want == nil && ruled && len(got) == 0 || tc.want != nil && (!ruled || !slices.Equal(got, sortedSet(tc.want))) {
				t.Errorf("%s %s: exception frames %q (a rule: %v), want %q", tc.name, action, got, ruled, tc.want)
			}
		}
	}
}

// TestScriptEndsNormally: a script's exit frame is exit_normal (as its
// module's return is where it ends: EndLines); a program entered at a
// call (its exceptions are data) may end in any exit.
func TestScriptEndsNormally(t *testing.T) {
	src := "def f(a):\n    return 1 // a\n\nprint(f(1))\n"
	for _, tc := range []struct {
		name, frame, action string
		script              bool
	}{
		{"after the module's return", `<|return_sep|><|src_sep|>print(f(1))<|arg_sep|>"None"<|action_sep|>`, format.TokStepInto, true},
		{"a continue from the module", `<|line_sep|><|arg_sep|>{}<|src_sep|>def f(a):<|action_sep|>`, format.TokContinue, true},
		{"a call's frame alone", `<|call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "0"}<|action_sep|>`, format.TokContinue, false},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frame, tc.action))
		for _, tok := range []string{format.TokExitError, format.TokExitNever} {
			exits, ruled := r.scope[tok]
			if refused := ruled && len(exits) == 0; refused != tc.script {
				t.Errorf("%s: %s refused %v, want %v", tc.name, tok, refused, tc.script)
			}
		}
		if _, ruled := r.scope[format.TokExitNormal]; ruled {
			t.Errorf("%s: exit_normal ruled", tc.name)
		}
	}
}

// TestScriptEntryOnlyFromModuleCall: in a script, only a step back from
// the module's call answers inv_exit_entry; any other frame's step back
// (inv_step_call from a function's call included) reaches that call first.
func TestScriptEntryOnlyFromModuleCall(t *testing.T) {
	src := "def f(a):\n    return 1 // a\n\nprint(f(1))\n"
	end := `<|inv_return_sep|><|src_sep|>print(f(1))<|arg_sep|>"None"<|action_sep|><|inv_step_into|><|frame_sep|>`
	for _, tc := range []struct {
		name, frames, action string
		refused              bool
	}{
		{"inv_step_call from a function's call", end + `<|inv_call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "1"}<|action_sep|>`, format.TokInvStepCall, true},
		{"inv_step_into from a module line", end + `<|inv_line_sep|><|src_sep|>print(f(1))<|arg_sep|>{"f": "<function f at 0x0>"}<|action_sep|>`, format.TokInvStepInto, true},
		{"from the module's call", end + `<|inv_call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto, false},
		{"not a script", `<|inv_call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "1"}<|action_sep|>`, format.TokInvStepCall, false},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frames, tc.action))
		entries, ruled := r.scope[format.TokInvExitEntry]
		if refused := ruled && len(entries) == 0; refused != tc.refused {
			t.Errorf("%s: inv_exit_entry refused %v, want %v", tc.name, refused, tc.refused)
		}
	}
}

// TestBackStepLosesName: one step back in a frame to a line where one of
// its names cannot be bound yet, the inverse line frame shows every local
// (format.Builder cannot elide a name that is gone): no "..", and the
// names the frame must hold there; where every name may still be held, ".."
// stays allowed. One step back from a call lands in another frame, shown
// whole too.
func TestBackStepLosesName(t *testing.T) {
	src := "import math\nx = 1\nfor i in range(2):\n    y = i\nimport doctest\ndoctest.testmod()\ndef f(a):\n    return a\ny = f(2)\n"
	for _, tc := range []struct {
		name, frame, action, answer string
		whole                       bool
	}{
		{"the import is undone", `<|line_sep|><|arg_sep|>{"math": "<module 'math'>", "x": "1", "i": "1", "y": "1", "doctest": "<module 'doctest'>"}<|src_sep|>doctest.testmod()<|action_sep|>`,
			format.TokInvStepOver, `<|inv_line_sep|><|src_sep|>import doctest<|arg_sep|>`, true},
		{"inv_step_into alike", `<|line_sep|><|arg_sep|>{"math": "<module 'math'>", "x": "1"}<|src_sep|>for i in range(2):<|action_sep|>`,
			format.TokInvStepInto, `<|inv_line_sep|><|src_sep|>x = 1<|arg_sep|>`, true},
		{"a loop may hold it", `<|line_sep|><|arg_sep|>{"math": "<module 'math'>", "x": "1", "i": "0", "y": "0"}<|src_sep|>for i in range(2):<|action_sep|>`,
			format.TokInvStepOver, `<|inv_line_sep|><|src_sep|>    y = i<|arg_sep|>`, false},
		{"to the line that made a call", `<|line_sep|><|arg_sep|>{"math": "<module 'math'>", "x": "1", "i": "1", "y": "2", "doctest": "<module 'doctest'>", "f": "<function f at 0x0>"}<|src_sep|>y = f(2)<|action_sep|>`,
			format.TokInvStepOver, `<|inv_line_call_sep|><|src_sep|>doctest.testmod()<|arg_sep|>`, true},
		{"back from a call: another frame", `<|inv_call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "1"}<|action_sep|>`,
			format.TokInvStepInto, `<|inv_line_sep|><|src_sep|>y = f(2)<|arg_sep|>`, true},
		{"forward steps elide", `<|line_sep|><|arg_sep|>{"math": "<module 'math'>", "x": "1"}<|src_sep|>x = 1<|action_sep|>`,
			format.TokStepOver, `<|line_sep|><|arg_sep|>`, false},
	} {
		r := promptRules(nil, stepPrompt(src, tc.frame, tc.action))
		if got := r.wholeFrame(tc.answer); got != tc.whole {
			t.Errorf("%s: whole frame %v, want %v", tc.name, got, tc.whole)
		}
		if names := r.namesFor(tc.answer); tc.whole && names.contains("..") {
			t.Errorf("%s: names %q allow \"..\"", tc.name, names)
		}
	}
}

// TestCallFrameNames: a call frame may show only its def's parameters and
// free variables (CallPossible) and must show every parameter (CallLocals).
func TestCallFrameNames(t *testing.T) {
	src := "def outer(n):\n    k = 2\n    def f(a, b=1):\n        c = a + k\n        return c\n    return f(n)\nprint(outer(3))\n"
	r := promptRules(nil, stepPrompt(src, `<|line_sep|><|arg_sep|>{"n": "3", "k": "2", "f": "<function outer.<locals>.f at 0x0>"}<|src_sep|>    return f(n)<|action_sep|>`, format.TokStepInto))
	cur := `<|call_sep|><|src_sep|>    def f(a, b=1):<|arg_sep|>`
	names := r.namesFor(cur)
	for name, ok := range map[string]bool{"a": true, "b": true, "k": true, "c": false, "n": false, "..": false} {
		if names.contains(name) != ok {
			t.Errorf("call frame names %q: %q allowed = %v, want %v", names, name, !ok, ok)
		}
	}
	if got := r.sureNames(cur); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("call frame must hold %q, want [a b]", got)
	}
}

// TestBackToTheModuleCall: in a script, inv_step_call from the module's
// frame, or from the call of a def only the module's frame calls, goes
// back to the module's call: no line, no local. Not from a def another
// function calls.
func TestBackToTheModuleCall(t *testing.T) {
	src := "def f(a):\n    return g(a) + 1\ndef g(b):\n    return b * 2\nx = f(1)\nprint(x)\n"
	call := `<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>`
	for _, tc := range []struct {
		name, frame string
		module      bool
	}{
		{"from the module", `<|inv_line_sep|><|src_sep|>print(x)<|arg_sep|>{"f": "<function f at 0x0>", "g": "<function g at 0x0>", "x": "3"}<|action_sep|>`, true},
		{"from the call of f", `<|inv_call_sep|><|src_sep|>def f(a):<|arg_sep|>{"a": "1"}<|action_sep|>`, true},
		{"from the call of g, which f calls", `<|inv_call_sep|><|src_sep|>def g(b):<|arg_sep|>{"b": "1"}<|action_sep|>`, false},
	} {
		r := promptRules(nil, stepPrompt(src, call+tc.frame, format.TokInvStepCall))
		got := r.linesFor(format.TokInvCallSep+format.TokSrcSep).contains("") && !r.linesFor(format.TokInvCallSep+format.TokSrcSep).contains("def f(a):")
		if got != tc.module {
			t.Errorf("%s: inv_call lines %q, want only the module's call: %v", tc.name, r.linesFor(format.TokInvCallSep+format.TokSrcSep), tc.module)
		}
		if names := r.namesFor(format.TokInvCallSep + format.TokSrcSep + format.TokArgSep); tc.module && len(names) != 0 {
			t.Errorf("%s: the module's call may show %q", tc.name, names)
		}
	}
}

// TestEndLinesHoldOnRealTraces checks pysource's EndLines (where the model
// engine lets a script's module frame return after r) on real traces:
// every return no exception left by (the frame's event before it is no
// exception event) is on the EndLines of each line event the frame had
// since its call, and a script's module frame on ModuleEndLines.
func TestEndLinesHoldOnRealTraces(t *testing.T) {
	tr, programs := realTracePrograms(t)
	defer tr.Close()
	compiled := compileAll(t, programs)
	checked, module := 0, 0
	for i, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatalf("%s: %v", prog.Path, err)
		}
		ix := pysource.NewCompiled(prog.Source, compiled[i]) // as the model engine reads it
		ends := map[int][]int{}
		endLines := func(n int) []int {
			if e, ok := ends[n]; ok {
				return e
			}
			ends[n] = ix.EndLines(n)
			return ends[n]
		}
		lines := map[int][]int{}      // per frame: its line events since its call
		lastEvent := map[int]string{} // per frame: its last event
		for _, s := range trace.States {
			switch s.Event {
			case tracer.EventLine:
				lines[s.Frame] = append(lines[s.Frame], s.Lineno)
			case tracer.EventReturn:
				if lastEvent[s.Frame] != tracer.EventException {
					if e := ix.ModuleEndLines(); s.Function == "<module>" && s.Depth == 0 && e != nil {
						module++
						if !slices.Contains(e, s.Lineno) {
							t.Errorf("%s: the module returned on line %d (%q), not in ModuleEndLines %v", prog.Path, s.Lineno, ix.Line(s.Lineno), e)
						}
					}
					for _, n := range lines[s.Frame] {
						e := endLines(n)
						if e == nil {
							continue
						}
						checked++
						if s.Function == "<module>" {
							module++
						}
						if !slices.Contains(e, s.Lineno) {
							t.Errorf("%s: %s returned on line %d (%q), not in EndLines(%d) %v", prog.Path, s.Function, s.Lineno, ix.Line(s.Lineno), n, e)
						}
					}
				}
				delete(lines, s.Frame)
			}
			lastEvent[s.Frame] = s.Event
		}
	}
	t.Logf("%d programs: %d claims, %d of a module's frame", len(programs), checked, module)
	if checked < 1000 || module < 100 {
		t.Fatalf("too few claims checked: %d, %d of a module's frame", checked, module)
	}
}
