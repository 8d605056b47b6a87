package pysource

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestNextLines: where a line event may go next in its frame, over small
// programs whose 3.11 traces were read line by line (the comments give the
// trace's order where it surprises: a decorator fires again as it is
// applied, a with's header again at its exit, `global` and the `else:` and
// `finally:` lines never, a loop's body end and a continue only to its
// header, `while True:` too). A statement on one line does not come back
// to itself (empty: the frame returns next); one that spans lines, loops
// on its own line or holds a comprehension may. TestNextLinesHoldOnRealTraces (model/infer)
// checks the same against the tracer on real files.
func TestNextLines(t *testing.T) {
	cases := []struct {
		name string
		src  []string
		want map[int][]int
	}{{
		name: "decorators, loops, try, with, class",
		src: []string{
			`"""doc"""`, // 1
			"def dec(f):",
			"    return f",
			"@dec", // 4: fires, then 5, then 4 again (the call), 5, then 23
			"def g(x):",
			"    global y", // 6: no event
			"    pass",
			"    while True:",
			"        x += 1",
			"        if x > 2:", // 10
			"            break",
			"    try:",
			"        x = 1",
			"    finally:",
			"        x = 2", // 15
			"    with open('/dev/null') as fh:",
			"        x = 3", // 17: then 16 again (the exit)
			"    for i in range(2):",
			"        x = i",
			"    else:", // 20
			"        x = 5",
			"    return x",
			"class A:", // 23: the module's line and the class body's first
			"    z = 1",
			"y: int", // 25
			"g(0)",
		},
		want: map[int][]int{1: {2}, 2: {4, 5}, 3: {}, 4: {4, 5, 23}, 5: {4, 5, 23}, 6: {7}, 7: {8},
			8: {9, 12, 13}, 9: {10}, 10: {8, 11}, 11: {12, 13}, 12: {13}, 13: {15},
			16: {16, 17, 18}, 17: {16, 18}, 18: {19, 21, 22}, 19: {18}, 21: {22}, 22: {},
			23: {24, 25}, 24: {}, 25: {26}, 26: {}},
	}, {
		name: "continue, break, elif, handlers, else, finally, match",
		src: []string{
			"def f(xs):",
			"    total = 0",
			"    for x in xs:",
			"        if x < 0:",
			"            continue", // 5
			"        elif x == 0:",
			"            break",
			"        else:",
			"            total += x",
			"    try:", // 10
			"        total = 1 / total",
			"    except ZeroDivisionError:",
			"        total = -1",
			"    except TypeError:",
			"        pass", // 15
			"    else:",
			"        total += 1",
			"    finally:",
			"        xs = None",
			"    match total:", // 20
			"        case 1:",
			"            total = 2",
			"        case _:",
			"            pass",
			"    return total", // 25
		},
		want: map[int][]int{3: {4, 10, 11}, 4: {5, 6}, 5: {3}, 6: {7, 9}, 7: {10, 11}, 9: {3},
			11: {17}, 12: {13, 14, 19}, 13: {19}, 14: {15, 19}, 17: {19}, 19: {20},
			20: {21, 23, 25}, 21: {22, 23, 25}, 22: {25}, 25: {}},
	}, {
		name: "one-line bodies, continuation lines, a jump after a semicolon",
		src: []string{
			"def f(n):",
			"    while n: n -= 1",
			"    x = (n +",
			"         1)",
			"    for i in range(3):", // 5
			"        x += i; break",
			"    if x: return x",
			"    return -x",
		},
		want: map[int][]int{2: {2, 3, 4}, 3: {3, 4, 5}, 4: {3, 4, 5}, 6: {7}, 7: {7, 8}},
	}, {
		name: "a with crossed by return and by an exception",
		src: []string{
			"def f(p):",
			"    try:",
			"        with open(p) as fh:",
			"            return fh.read()",
			"    except OSError:", // 5
			"        return None",
		},
		want: map[int][]int{3: {3, 4, 5}, 4: {3}}, // a with goes back to itself at its exit (after a body that fires nothing)
	}, {
		name: "an annotation without a value in a function, a bare raise",
		src: []string{
			"def f(x):",
			"    z = x",
			"    y: int", // 3: no event
			"    try:",
			"        y = 1 / z", // 5
			"    except ZeroDivisionError:",
			"        raise", // 7: no exception event (a re-raise): on to the finally
			"    finally:",
			"        x = None",
			"    return y", // 10
			"w: int",       // 11: fires in the module (it sets __annotations__)
			"f(1)",
		},
		want: map[int][]int{2: {3, 4, 5}, 4: {5}, 5: {9}, 6: {7, 9}, 7: {6, 9}, 9: {10}, 11: {12}},
	}, {
		name: "lone constants fire, a function's docstring does not",
		src: []string{
			"import sys",
			`"""`, // 2: a string, not the module's docstring: a NOP with its line
			"a note",
			`"""`,
			"def f():", // 5
			`    """doc"""`,
			"    ...",
			"    return 1",
			"...",
			"f()", // 10
		},
		want: map[int][]int{1: {2}, 2: {2, 5}, 5: {9}, 7: {8}, 9: {10}}, // a statement may fire on its lines, not a string's inside (Silent)
	}, {
		name: "no rule where the chain cannot be read",
		src:  []string{"x = 1", "else:", "    y = 2"},
		want: map[int][]int{1: nil, 3: nil},
	}}
	for _, c := range cases {
		ix := New(strings.Join(c.src, "\n"))
		for n, want := range c.want {
			if got := ix.NextLines(n); !slices.Equal(got, want) {
				t.Errorf("%s: NextLines(%d) (%q) = %v, want %v", c.name, n, ix.Line(n), got, want)
			}
		}
		for _, n := range []int{0, len(c.src) + 1} {
			if got := ix.NextLines(n); got != nil {
				t.Errorf("%s: NextLines(%d) out of range = %v", c.name, n, got)
			}
		}
	}
}

func FuzzNextLines(f *testing.F) {
	for _, s := range []string{"def f(x):\n    for i in x:\n        if i: break\n    else:\n        return 1\n",
		"try:\n    x = 1\nexcept* E:\n    pass\nfinally:\n    y = 2\n", "match x:\n    case 1:\n        pass\n", "@d\nclass C:\n    '''d'''\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ix := New(src)
		for n := 0; n <= len(ix.Lines)+1; n++ {
			for _, m := range ix.NextLines(n) {
				if m < 1 || m > len(ix.Lines) {
					t.Fatalf("NextLines(%d) names line %d of %d", n, m, len(ix.Lines))
				}
			}
		}
	})
}

// TestFixedFunctions: a module frame's value of a top-level def's name is
// that function unless the text may rebind it.
func TestFixedFunctions(t *testing.T) {
	src := strings.Join([]string{
		"import functools",
		"def kept(x): return x", // called, passed on, read
		"def passed(): pass",    // passed as an argument with a comma after it: may be a target
		"@functools.cache",
		"def decorated(): pass", // a decorator's value
		"def rebound(): pass",
		"rebound = 3",
		"def twice(): pass",
		"def twice(): pass",
		"if True:",
		"    def later(): pass",
		"def later(): pass", // also bound in the if above
		"class C:",
		"    def kept(self): pass", // a method's name is the class's
		"def deleted(): pass",
		"del (deleted)",
		"print(kept(1), kept.__name__, id(kept), passed, 2)",
	}, "\n")
	got := New(src).FixedFunctions()
	if want := []string{"kept"}; !slices.Equal(got, want) {
		t.Errorf("FixedFunctions = %v, want %v", got, want)
	}
	if got := New("from m import *\ndef f(): pass\n").FixedFunctions(); got != nil {
		t.Errorf("a star import may rebind anything: %v", got)
	}
}

func TestFixedClasses(t *testing.T) {
	src := strings.Join([]string{
		"import enum, dataclasses",
		"class Plain:",
		"    pass",
		"class Err(Exception): pass",  // a builtin base: type's repr
		"class Sub(Err, Plain): pass", // the program's fixed classes
		"class Color(enum.Enum):",     // EnumMeta's repr
		"    RED = 1",
		"class Meta(type): pass",               // type is not among the bases read (left out, not wrong)
		"class WithMeta(metaclass=Meta): pass", // a keyword
		"class OfMeta(Meta): pass",             // a base that is not fixed
		"@dataclasses.dataclass",
		"class Decorated: pass",
		"class Rebound: pass",
		"Rebound = None",
		"class Caught(Exception): pass",
		"try:",
		"    raise Caught()",
		"except Caught as Caught:", // except ... as unbinds it
		"    pass",
		"class Shadow(list): pass",
		"list = tuple", // the builtin is shadowed
		"def f():",
		"    global Globaled",
		"    Globaled = 1",
		"class Globaled: pass",
		"class Empty(): pass",
		"print(Plain(), Err('e'), Sub, Color.RED, WithMeta, OfMeta, Decorated, Rebound, Shadow, Globaled, Empty)",
	}, "\n")
	got := New(src).FixedClasses()
	if want := []string{"Empty", "Err", "Plain", "Sub"}; !slices.Equal(got, want) {
		t.Errorf("FixedClasses = %v, want %v", got, want)
	}
	if got := New("from m import *\nclass C: pass\n").FixedClasses(); got != nil {
		t.Errorf("a star import may rebind anything: %v", got)
	}
}

func TestFixedInstances(t *testing.T) {
	src := strings.Join([]string{
		"class P:",
		"    pass",
		"class Q(P): pass",
		"class E(Exception): pass", // fixed, but Exception has its own repr
		"p = P()",
		"q = Q(1, [2])",
		"q = Q()", // the same class again
		"e = E('x')",
		"m = P() if p else None", // not a lone call
		"n = P().x",
		"s = P()",
		"s = Q()", // another class
		"for u in [P()]:",
		"    pass",
		"print(p, q, e, m, n, s, u)",
	}, "\n")
	got := New(src).FixedInstances()
	if want := map[string]string{"p": "P", "q": "Q"}; !maps.Equal(got, want) {
		t.Errorf("FixedInstances = %v, want %v", got, want)
	}
	if got := New("class P:\n    def __repr__(self): return 'p'\np = P()\n").FixedInstances(); got != nil {
		t.Errorf("a program that names __repr__ may show any repr: %v", got)
	}
}

func TestSelfRepr(t *testing.T) {
	base := strings.Join([]string{
		"class Account:",
		"    def __init__(self, owner):",
		"        self.owner = owner",
		"    def deposit(me, n):",
		"        me.n = n",
		"    def renamed(self):",
		"        self = None",
		"    def read_off(self):",
		"        return 1",
		"    @staticmethod",
		"    def helper(x):",
		"        return x",
		"    def __init_subclass__(cls):",
		"        pass",
		"class Funds(Exception):",
		"    def why(self):",
		"        return 1",
		"def outer():",
		"    class Inner:",
		"        def m(self):",
		"            return 2",
		"a = Account('ada')",
		"Account.read_off(a)",
	}, "\n")
	cases := []struct {
		name, src string
		want      map[string]string // method -> its first parameter's name, where SelfRepr holds
	}{
		{"plain", base, map[string]string{"__init__": "self", "deposit": "me"}},
		{"subclassed", base + "\nclass Savings(Account): pass", nil},
		{"repr named", base + "\nprint(a.__repr__())", nil},
		{"decorated class", "import dataclasses\n@dataclasses.dataclass\n" + base, nil},
	}
	for _, c := range cases {
		ix := New(c.src)
		got := map[string]string{}
		for _, sc := range ix.Scopes {
			if param, repr, ok := ix.SelfRepr(sc); ok {
				if want := "<__main__." + sc.Parent.Name + " object at 0x0>"; repr != want {
					t.Errorf("%s: %s shows %s, want %s", c.name, sc.Qualname, repr, want)
				}
				got[sc.Name] = param
			}
		}
		if len(got) != len(c.want) || !maps.Equal(got, c.want) && len(c.want) > 0 {
			t.Errorf("%s: SelfRepr holds for %v, want %v", c.name, got, c.want)
		}
	}
}

// TestArgReprs: a module function every call of which the text shows
// keeps, in each parameter its body never rebinds, one of the literals its
// calls pass (or its default); any other use of its name, a call with
// *args, a non-literal argument or a way to reach it the text does not show
// leaves the parameter free.
func TestArgReprs(t *testing.T) {
	cases := []struct {
		name, src string
		want      map[string]map[string][]string // function -> parameter -> reprs
	}{
		{"one call", "def find(items, target):\n    return target\ndata = [1]\nprint(find(data, 7))\n",
			map[string]map[string][]string{"find": {"target": {"7"}}}},
		{"calls and a default", "def f(a, b=-2, c='x'):\n    return a\nf(1)\nf(3, c='y')\nf(1, 0.5)\n",
			map[string]map[string][]string{"f": {"a": {"1", "3"}, "b": {"-2", "0.5"}, "c": {"'x'", "'y'"}}}},
		{"a keyword", "def f(a, b):\n    return a\nf(b=None, a=True)\n", map[string]map[string][]string{"f": {"a": {"True"}, "b": {"None"}}}},
		{"a variable passed", "def f(a, b):\n    return a\nx = 1\nf(x, 2)\nf(1, 2)\n", map[string]map[string][]string{"f": {"b": {"2"}}}},
		{"rebound", "def f(a, b):\n    a += 1\n    return a\nf(1, 2)\n", map[string]map[string][]string{"f": {"b": {"2"}}}},
		{"recursion passes another value", "def f(n):\n    return 1 if n < 1 else f(n - 1)\nf(3)\n", nil},
		{"passed as a value", "def f(a):\n    return a\nf(1)\nprint(list(map(f, [2])))\n", nil},
		{"star arguments", "def f(a):\n    return a\nf(1)\nf(*[2])\n", nil},
		{"star parameters", "def f(a, *rest):\n    return a\nf(1)\n", nil},
		{"decorated", "import functools\n@functools.cache\ndef f(a):\n    return a\nf(1)\n", nil},
		{"in an f-string", "def f(a):\n    return a\nf(1)\nprint(f'{f(2)}')\n", map[string]map[string][]string{"f": {"a": {"1", "2"}}}},
		{"named in an f-string", "def f(a):\n    return a\nf(1)\nprint(f'{f}')\n", nil},
		{"getattr", "import sys\ndef f(a):\n    return a\nf(1)\ngetattr(sys.modules[__name__], 'f')(2)\n", nil},
		{"a method's self, the class body's method", "class C:\n    def m(self, k):\n        return k\nC().m(1)\n",
			map[string]map[string][]string{"m": {"self": {"<__main__.C object at 0x0>"}}, "C": {"m": {"<function C.m at 0x0>"}}}},
		{"a call that raises", "def f(a):\n    return a\nf(1)\ntry:\n    f(1, 2)\nexcept TypeError:\n    pass\n", map[string]map[string][]string{"f": {"a": {"1"}}}},
	}
	for _, c := range cases {
		ix := New(c.src)
		got := map[string]map[string][]string{}
		for _, sc := range ix.Scopes {
			if r := ix.ArgReprs(sc); r != nil {
				got[sc.Name] = r
			}
		}
		if len(got) != len(c.want) || !maps.EqualFunc(got, c.want, func(a, b map[string][]string) bool { return maps.EqualFunc(a, b, slices.Equal) }) {
			t.Errorf("%s: ArgReprs gives %v, want %v", c.name, got, c.want)
		}
	}
}

// TestNoEscape: a function every call of which comes from the module or
// from another such function, outside any try or with body, sends every
// exception on to the module's frame; a call a handler, a context
// manager, a lambda or a generator may wrap, or a way to end the run
// normally by an exception, leaves it out.
func TestNoEscape(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // the functions NoEscape holds for
	}{
		{"main and its helper", "def helper(x):\n    return x\ndef main():\n    print(helper(1))\nif True:\n    main()\n", []string{"helper", "main"}},
		{"recursion", "def f(n):\n    return 1 if n < 1 else f(n - 1)\nf(3)\n", []string{"f"}},
		{"in a list comprehension", "def f(n):\n    return n\nxs = [f(i) for i in range(3)]\n", []string{"f"}},
		{"in a try", "def f(n):\n    return n\ndef g():\n    return f(1)\ntry:\n    g()\nexcept ValueError:\n    pass\n", nil},
		{"in a handler, in a try inside", "def f(n):\n    return n\ndef g():\n    try:\n        f(1)\n    finally:\n        pass\ntry:\n    pass\nexcept ValueError:\n    g()\n", []string{"g"}},
		{"in a with", "import contextlib\ndef f(n):\n    return n\nwith contextlib.nullcontext():\n    f(1)\n", nil},
		{"in a lambda", "def f(n):\n    return n\ng = lambda: f(1)\ng()\n", nil},
		{"in a generator expression", "def f(n):\n    return n\nprint(sum(f(i) for i in range(3)))\n", nil},
		{"a generator", "def f(n):\n    yield n\nlist(f(1))\n", nil},
		{"from a method", "def f(n):\n    return n\nclass C:\n    def m(self):\n        return f(1)\nC().m()\n", nil},
		{"passed as a value", "def f(n):\n    return n\nprint(list(map(f, [1])))\n", nil},
		{"sys.exit", "import sys\ndef f(n):\n    sys.exit(n)\nf(0)\n", nil},
		{"doctests", "def f(n):\n    \"\"\"\n    >>> f(1)\n    1\n    \"\"\"\n    return n\nf(2)\nimport doctest\ndoctest.testmod()\n", nil},
	}
	for _, c := range cases {
		ix := New(c.src)
		var got []string
		for _, sc := range ix.Scopes {
			if ix.NoEscape(sc) {
				got = append(got, sc.Name)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: NoEscape holds for %v, want %v", c.name, got, c.want)
		}
	}
}

// TestClassFixedReprs: a class body's undecorated def, its name's only
// binding there, shows its function; a decorated, rebound or nested
// class's method, or a class with a metaclass, has no rule.
func TestClassFixedReprs(t *testing.T) {
	cases := []struct {
		name, src string
		want      map[string]string // for class C
	}{
		{"plain", "class C:\n    def first(self):\n        return 1\n    def __private(self):\n        pass\n    def __init__(self):\n        pass\n",
			map[string]string{"first": "<function C.first at 0x0>", "_C__private": "<function C.__private at 0x0>"}},
		{"decorated and rebound", "class C:\n    @property\n    def size(self):\n        return 0\n    def m(self):\n        pass\n    m = staticmethod(m)\n    def k(self):\n        pass\n",
			map[string]string{"k": "<function C.k at 0x0>"}},
		{"a metaclass", "import abc\nclass C(metaclass=abc.ABCMeta):\n    def m(self):\n        pass\n", nil},
	}
	for _, c := range cases {
		ix := New(c.src)
		var got map[string]string
		for _, sc := range ix.Scopes {
			if sc.Name == "C" && sc.Kind == Class {
				got = ix.ClassFixedReprs(sc)
			}
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: ClassFixedReprs gives %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPassedAndAhead(t *testing.T) {
	src := `import contextlib
x = 1
y = f(
    x)
for i in range(2):
    x += i
with contextlib.suppress(KeyError):
    z = 2
@staticmethod
def g():
    return 1
w = [v for v in range(3)]
if x:
    u = 3
else:
    u = 4
print(u)
`
	ix := New(src)
	for _, tc := range []struct {
		l, m          int
		passed, ahead bool
	}{
		{2, 3, true, false},    // x = 1 is behind y = f(
		{2, 1, false, true},    // and ahead of the import
		{2, 2, true, false},    // a statement on one line fires once, first
		{3, 3, false, false},   // one on two lines may fire again
		{3, 4, false, false},   // the frame is still in y's statement
		{3, 5, true, false},    // past it
		{4, 5, true, false},    // its continuation line too
		{6, 13, false, false},  // a loop's body may run again...
		{5, 13, false, false},  // ...and its header
		{13, 6, false, true},   // m in a loop is fine for an l past it
		{7, 13, false, false},  // a with header fires again at its exit
		{8, 13, true, false},   // its body does not
		{8, 7, false, false},   // m on a with header may be its exit: l may have run
		{10, 13, false, false}, // a decorated def
		{11, 13, false, false}, // a def's body
		{12, 13, false, false}, // a comprehension's frame fires on its line
		{14, 17, true, false},  // an if's branch
		{16, 13, false, true},
		{17, 14, false, true},
		{17, 0, false, false}, // no frame position
	} {
		if got := ix.Passed(tc.l, tc.m); got != tc.passed {
			t.Errorf("Passed(%d, %d) = %v, want %v", tc.l, tc.m, got, tc.passed)
		}
		if got := ix.Ahead(tc.l, tc.m); got != tc.ahead {
			t.Errorf("Ahead(%d, %d) = %v, want %v", tc.l, tc.m, got, tc.ahead)
		}
	}
}

// TestEntryLines: where a fresh frame fires its first line event.
func TestEntryLines(t *testing.T) {
	src := strings.Join([]string{
		"from __future__ import annotations", // 1: the module's first statement
		"def f(x):",                          // 2
		"    \"\"\"Doc.\"\"\"",               // 3: no code
		"    global g",                       // 4: no code
		"    g = x",                          // 5: f's first line event
		"def only_doc():",                    // 6: fires here
		"    'doc'",                          // 7
		"@staticmethod",                      // 8: co_firstlineno of h
		"def h():",                           // 9
		"    return 1",                       // 10
		"class K:",                           // 11: a class body's first line
		"    x = 1",                          // 12
		"def one(): return 1",                // 13: its body is on its line: no rule
		"sq = [v * v for v in (1, 2)]",       // 14
	}, "\n") + "\n"
	ix := New(src)
	want := map[string][]int{"<module>": {1}, "f": {5}, "only_doc": {6}, "h": {10}, "K": {11}, "one": nil, "<listcomp>": nil}
	for _, s := range append([]*Scope{ix.Module}, ix.Scopes...) {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		if got := ix.EntryLines(s); !slices.Equal(got, w) {
			t.Errorf("%s: EntryLines %v, want %v", s.Name, got, w)
		}
	}
}

// TestReturnLinesOneLineTry: an exception in a try's body on its own
// line goes to its except clauses (pytudes' lispy.py: `try: return
// int(token)`).
func TestReturnLinesOneLineTry(t *testing.T) {
	ix := New("def atom(t):\n    try: return int(t)\n    except ValueError:\n        return t\n")
	if got := ix.ReturnLines(2); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("ReturnLines(2) = %v, want [2 3 4]", got)
	}
}

// TestEndLines: where a frame may return when no exception leaves it.
func TestEndLines(t *testing.T) {
	src := strings.Join([]string{
		"import sys",                   // 1
		"def f(x):",                    // 2
		"    if x:",                    // 3
		"        return 1",             // 4
		"    try:",                     // 5
		"        y = 2",                // 6
		"    finally:",                 // 7
		"        y = 3",                // 8: a return on its way out runs it
		"    if y > 5:",                // 9: the frame ends here when the test fails
		"        raise ValueError(y)",  // 10: its own raise
		"def g():",                     // 11
		"    yield 1",                  // 12
		"class C:",                     // 13
		"    k = 1",                    // 14: the class body's end
		"for i in range(2):",           // 15: the loop done, the module's end
		"    print(f(i))",              // 16
		"with open('/dev/null') as h:", // 17
		"    pass",                     // 18
	}, "\n") + "\n"
	ix := New(src)
	cases := []struct {
		n    int
		want []int
	}{
		{1, []int{17}}, // the module: only after its with's exit
		{3, []int{4, 8, 9, 10}},
		{6, []int{8, 9, 10}},
		{9, []int{9, 10}},
		{12, nil}, // a generator's frame: no rule
		{14, []int{14}},
		{16, []int{17}},
	}
	for _, tc := range cases {
		if got := ix.EndLines(tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("EndLines(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

// TestNewCompiled: the compiler's reading (what tracer.Compile answers for
// this text on CPython 3.11) makes a folded constant's lines silent and
// keeps NextLines to the bytecode's flow: a call's argument line, then the
// call's own line again, then the loop.
func TestNewCompiled(t *testing.T) {
	src := "x = [\n    1,\n    2,\n    3,\n]\nfor i in x:\n    print(i,\n          i)\n"
	c := &Compiled{Lines: []int{1, 6, 7, 8}, Next: map[int][]int{1: {6}, 6: {7}, 7: {6, 8}, 8: {7}}}
	text, ix := New(src), NewCompiled(src, c)
	for n, want := range map[int]bool{1: false, 2: true, 3: true, 5: true, 6: false, 8: false} {
		if got := ix.Silent(n); got != want {
			t.Errorf("Silent(%d) = %v, want %v", n, got, want)
		}
	}
	if text.Silent(2) {
		t.Errorf("the text alone calls a folded constant's line silent")
	}
	for n, want := range map[int][]int{1: {6}, 6: {7}, 7: {6, 8}, 8: {7}} {
		if got := ix.NextLines(n); !slices.Equal(got, want) {
			t.Errorf("NextLines(%d) = %v, want %v (text alone: %v)", n, got, want, text.NextLines(n))
		}
	}
	if got := ix.EndLines(3); got == nil || len(got) > 0 {
		t.Errorf("EndLines(3) on a line no event fires on = %#v, want empty, not nil (no rule)", got)
	}
	if New(src).NextLines(8) == nil || slices.Equal(text.NextLines(8), ix.NextLines(8)) {
		t.Errorf("the compiled flow should narrow line 8's next lines: text %v", text.NextLines(8))
	}
}
