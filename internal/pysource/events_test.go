package pysource

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSilent: the lines CPython 3.11 places no instruction on (checked
// against its traces in model/infer's TestSilentHoldsOnRealTraces).
func TestSilent(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		silent    []int
	}{
		{"docstrings", "\"\"\"Module doc,\nsecond line.\"\"\"\ndef f():\n    \"\"\"Doc\n    more\n    \"\"\"\n    return 1\nclass C:\n    '''Class doc\n    more'''\n", []int{2, 4, 5, 6, 10}},
		{"a docstring-only function", "def f():\n    'doc'\n", []int{2}},
		{"an f-string is code, also as a docstring", "def f(a):\n    f\"\"\"x\n{a}\n\"\"\"\n", nil},
		{"multi-line call and dict", "x = {\n    'a': [1,\n          2],\n}\nprint(\n    x,\n)\n", []int{4, 7}},
		{"a string's closing line", "u = \"\"\"a\nb\n\"\"\".upper()\nv = (\"\"\"a\nb\"\"\",\n     u,\n)\n", []int{2, 5, 7}},
		{"implicit concatenation", "t = ('abc'\n     'def')\nw = (f'{t}'\n     'x')\n", []int{2}},
		{"clauses without code", "def f(a):\n    global g\n    if a:\n        pass\n    else:\n        pass\n    try:\n        pass\n    finally:\n        pass\n    def h():\n        nonlocal a\n        a = 1\n", []int{2, 5, 9, 12}},
		{"clauses with code on their line", "if x:\n    pass\nelse: y = 1\nglobal g; g = 1\n", nil},
		{"blank and comment lines", "x = 1\n\n# c\ny = 2\n", []int{2, 3}},
	} {
		ix := New(tc.src)
		var got []int
		for n := 1; n <= len(ix.Lines); n++ {
			if ix.Silent(n) {
				got = append(got, n)
			}
		}
		if !slices.Equal(got, tc.silent) {
			t.Errorf("%s: silent lines %v, want %v", tc.name, got, tc.silent)
		}
	}
	if ix := New("x = 1\n"); ix.Silent(0) || ix.Silent(2) {
		t.Error("a line out of range is not silent: it is no line")
	}
}

// TestQuiet: the lines no return or exception event can be on (checked
// against CPython 3.11's traces in model/infer's TestSilentHoldsOnRealTraces).
func TestQuiet(t *testing.T) {
	src := strings.Join([]string{
		"import os",              // 1: an import may raise
		"LIMIT = 10",             // 2: quiet
		"NAME = f'{LIMIT}'",      // 3: an f-string is code
		"def plain(a, *b, **c):", // 4: quiet
		"    x = -1",             // 5: quiet
		"    y = -'a'",           // 6: a minus before a string raises TypeError
		"    pass",               // 7: quiet
		"    return x",           // 7: returns
		"def default(a=LIMIT):",  // 8: evaluates a default
		"    pass",               // 9: the frame's last statement: it returns there
		"class Plain:",           // 10: a class statement runs its body
		"    k = 1",              // 11: quiet: a plain namespace
		"    def m(self):",       // 12: quiet
		"        return 1",       // 13
		"    j = 2",              // 14: the body's last statement
		"class Named(dict):",     // 15
		"    k = 1",              // 16: a metaclass may refuse it
		"    j = 2",              // 17
		"@staticmethod",          // 18
		"def decorated():",       // 19
		"    return 0",           // 20
		"f = lambda: 0",          // 21: a lambda's frame returns there
		"try:",                   // 22: quiet
		"    pass",               // 23: quiet (its try goes on)
		"except OSError:",        // 24
		"    pass",               // 25: quiet: the module goes on after it
		"print(LIMIT)",           // 26
	}, "\n") + "\n"
	ix := New(src)
	var got []int
	for n := 1; n <= len(ix.Lines); n++ {
		if ix.Quiet(n) {
			got = append(got, n)
		}
	}
	if want := []int{2, 4, 5, 7, 12, 13, 23, 24, 26}; !slices.Equal(got, want) {
		t.Errorf("quiet lines %v, want %v", got, want)
	}
}

// TestCertainCall: the lines whose statement surely calls the program's
// code whenever it runs on (checked against CPython 3.11's traces in
// model/infer's TestSilentHoldsOnRealTraces).
func TestCertainCall(t *testing.T) {
	src := strings.Join([]string{
		"def solve(x):",                  // 1
		"    return x * 2",               // 2
		"def gen():",                     // 3
		"    yield 1",                    // 4
		"def shadow(solve):",             // 5
		"    return solve(1)",            // 6: a parameter, not the function
		"print(solve(3))",                // 7: yes
		"y = solve(1) + solve(2)",        // 8: yes
		"z = solve(1) if y else 0",       // 9: may skip it
		"w = y and solve(2)",             // 10: may skip it
		"g = gen()",                      // 11: a generator runs nothing yet
		"if solve(0):",                   // 12: its header calls it
		"    pass",                       // 13
		"v = [solve(i) for i in (1, 2)]", // 14: a comprehension is a call of its own, but may be empty
		"class K:",                       // 15: its line is also the body's own first line
		"    pass",                       // 16
		"k = (",                          // 17: more than one line
		"    solve(4))",                  // 18
		"solve.cache = 1",                // 19
		"0 < solve(1) < y",               // 20: a chained comparison may stop early
		"assert y, solve(1)",             // 21: the message only on failure
		"f\"{solve(5)}\"",                // 22: an f-string's field is code
	}, "\n") + "\n"
	ix := New(src)
	got := linesCalling(ix, 1, CertainCall)
	if want := []int{7, 8, 12, 22}; !slices.Equal(got, want) {
		t.Errorf("certain calls on lines %v, want %v", got, want)
	}
	// a fixed instance's methods
	src = strings.Join([]string{
		"class Base:",             // 1
		"    def size(self):",     // 2
		"        return 0",        // 3
		"    def swap(self):",     // 4
		"        return 1",        // 5
		"class Tree(Base):",       // 6
		"    def query(self, a):", // 7
		"        return a",        // 8
		"    @property",           // 9
		"    def top(self):",      // 10
		"        return 1",        // 11
		"    def walk(self):",     // 12
		"        yield 1",         // 13
		"    swap = None",         // 14
		"t = Tree()",              // 15
		"print(t.query(1))",       // 16: yes
		"print(t.size())",         // 17: yes, the base's
		"t.top",                   // 18: a property: no call by name
		"list(t.walk())",          // 19: a generator runs nothing yet
		"t.swap()",                // 20: a class attribute shadows the base's def
		"u = Tree()",              // 21
		"u = 3",                   // 22: u is no fixed instance
		"print(u.query(1))",       // 23
	}, "\n") + "\n"
	ix = New(src)
	got = linesCalling(ix, 15, CertainCall)
	if want := []int{16, 17}; !slices.Equal(got, want) {
		t.Errorf("certain method calls on lines %v, want %v", got, want)
	}
	if New(src+"t.query = print\n").CallsProgram(16) == CertainCall {
		t.Error("a method stored over on the instance: still a certain call")
	}
}

// linesCalling lists the lines from line from on whose CallsProgram is c.
func linesCalling(ix *Index, from int, c Calling) []int {
	var out []int
	for n := from; n <= len(ix.Lines); n++ {
		if ix.CallsProgram(n) == c {
			out = append(out, n)
		}
	}
	return out
}

// TestNoCall: the lines that never call the program's code, in programs
// whose code runs only where the text calls it by name; a plain def's
// header in any program.
func TestNoCall(t *testing.T) {
	closed := strings.Join([]string{
		"import math",                   // 1: an import: left out
		"from math import sqrt",         // 2
		"class Point:",                  // 3
		"    def __init__(self, x):",    // 4
		"        self.x = x",            // 5: yes
		"def area(r):",                  // 6
		"    return math.pi * r * r",    // 7: yes: a library's constant
		"p = Point(2)",                  // 8: a call of the program
		"a = sqrt(area(p.x))",           // 9: a call of the program
		"print(p.x, sqrt(4), len([1]))", // 10: yes
		"total = [v for v in (1, 2)]",   // 11: a comprehension is code of the program
		"if a > 1:",                     // 12: yes
		"    print(a)",                  // 13: yes
	}, "\n") + "\n"
	ix := New(closed)
	got := linesCalling(ix, 1, NoCall)
	if want := []int{5, 6, 7, 10, 12, 13}; !slices.Equal(got, want) { // 6: a plain def
		t.Errorf("lines calling nothing %v, want %v", got, want)
	}
	// code that may run unasked: none is sure but a plain def's header
	for name, src := range map[string]string{
		"a dunder method":   "class P:\n    def __repr__(self):\n        return 'P'\nprint(P)\n",
		"a passed function": "def key(v):\n    return -v\nprint(sorted([1, 2], key=key))\n",
		"a generator":       "def g():\n    yield 1\nx = g()\nprint(list(x))\n",
		"a genexpr":         "x = (v for v in (1, 2))\nprint(list(x))\n",
		"a base class":      "import logging\nclass H(logging.Handler):\n    def emit(self, r):\n        pass\nprint(1)\n",
		"doctest":           "import doctest\ndef f():\n    '''>>> f()'''\ndoctest.testmod()\n",
	} {
		ix := New(src)
		for n := 1; n <= len(ix.Lines); n++ {
			if ix.CallsProgram(n) == NoCall && !strings.HasPrefix(ix.Line(n), "def ") {
				t.Errorf("%s: line %d (%q) said to call nothing", name, n, ix.Line(n))
			}
		}
	}
	// a def's header calls nothing in any program, unless it evaluates something
	defs := strings.Join([]string{
		"import doctest",                // 1
		"def plain(a, *b, **c):",        // 2: yes
		"    def inner(x):",             // 3: yes
		"        return x",              // 4
		"    return inner",              // 5
		"def default(a=plain(1)):",      // 6: a default
		"    pass",                      // 7
		"def annotated(a: int) -> int:", // 8: annotations
		"    return a",                  // 9
		"@plain",                        // 10
		"def decorated(a):",             // 11: a decorator
		"    return a",                  // 12
		"class C:",                      // 13
		"    def m(self):",              // 14: a class body's namespace
		"        return 1",              // 15
		"def one(x): return plain(x)",   // 16: its body on the line
		"def wide(a,",                   // 17: over two lines
		"         b):",                  // 18
		"    return a",                  // 19
	}, "\n") + "\n"
	ix = New(defs)
	got = linesCalling(ix, 1, NoCall)
	if want := []int{2, 3}; !slices.Equal(got, want) {
		t.Errorf("plain defs %v, want %v", got, want)
	}
}

// TestSuspends: the lines where a frame may suspend and resume: a
// generator's and a coroutine's own code, a generator expression's line.
func TestSuspends(t *testing.T) {
	src := strings.Join([]string{
		"def gen(n):",                // 1
		"    for i in range(n):",     // 2: yes
		"        yield i",            // 3: yes
		"def plain(n):",              // 4
		"    def inner():",           // 5
		"        yield n",            // 6: yes (inner's)
		"    return list(inner())",   // 7: plain's own code
		"async def co():",            // 8
		"    return 1",               // 9: yes
		"s = sum(v for v in (1, 2))", // 10: yes: the genexpr
		"t = [v for v in (1, 2)]",    // 11: a list comprehension runs to its end
		"print(s, t)",                // 12
	}, "\n") + "\n"
	ix := New(src)
	var got []int
	for n := 0; n <= len(ix.Lines)+1; n++ {
		if ix.Suspends(n) {
			got = append(got, n)
		}
	}
	if want := []int{2, 3, 6, 9, 10}; !slices.Equal(got, want) {
		t.Errorf("suspending lines %v, want %v", got, want)
	}
}

// TestDead: in a program whose code runs only where its text calls it by
// name, run as a script, the lines of functions no reached code calls
// never run; in any other program no line is said to be dead.
func TestDead(t *testing.T) {
	src := strings.Join([]string{
		"def used(n):",                 // 1: the def runs
		"    return helper(n) + 1",     // 2
		"def helper(n):",               // 3
		"    return n * 2",             // 4
		"def unused(n):",               // 5
		"    return only_from_dead(n)", // 6: dead
		"def only_from_dead(n):",       // 7
		"    return n",                 // 8: dead (only dead code calls it)
		"class Box:",                   // 9
		"    def __init__(self, v):",   // 10
		"        self.v = v",           // 11: a class's __init__ runs where the class is made
		"    def get(self):",           // 12
		"        return self.v",        // 13
		"    def never(self):",         // 14
		"        return 0",             // 15: dead
		"def outer():",                 // 16
		"    def inner():",             // 17: dead (outer never runs)
		"        return 1",             // 18: dead
		"    return inner()",           // 19: dead
		"print(used(2), Box(3).get())", // 20
	}, "\n") + "\n"
	ix := New(src)
	var got []int
	for n := 0; n <= len(ix.Lines)+1; n++ {
		if ix.Dead(n) {
			got = append(got, n)
		}
	}
	if want := []int{6, 8, 15, 17, 18, 19}; !slices.Equal(got, want) {
		t.Errorf("dead lines %v, want %v", got, want)
	}
	if !ix.NeverRuns(6, true) || ix.NeverRuns(6, false) || ix.NeverRuns(5, true) || ix.NeverRuns(2, true) {
		t.Error("NeverRuns is Silent, or Dead in a script")
	}
	// code may run unasked: nothing is dead
	for name, src := range map[string]string{
		"passed on": "def key(v):\n    return -v\ndef unused():\n    return 1\nprint(sorted([2, 1], key=key))\n",
		"doctest":   "def f():\n    '''>>> f()'''\n    return 1\nimport doctest\ndoctest.testmod()\n",
		"getattr":   "def f():\n    return 1\nprint(getattr(__import__('sys'), 'version'))\n",
		"a base":    "import threading\nclass T(threading.Thread):\n    def run(self):\n        pass\nT().start()\n",
		"decorated": "def deco(f):\n    f()\n    return f\n@deco\ndef g():\n    return 1\n",
		"a dunder":  "class P:\n    def __repr__(self):\n        return 'P'\nprint(P())\n",
		"a lambda":  "def f():\n    return 1\ng = lambda: f()\n",
		"star":      "from os import *\ndef f():\n    return 1\n",
	} {
		ix := New(src)
		for n := 1; n <= len(ix.Lines); n++ {
			if ix.Dead(n) {
				t.Errorf("%s: line %d (%q) said to be dead", name, n, ix.Line(n))
			}
		}
	}
}

// TestReturnedName: the `return NAME` and `yield NAME` lines whose line
// event the frame's return of NAME follows.
func TestReturnedName(t *testing.T) {
	src := strings.Join([]string{
		"def f(a):",               // 1
		"    r = None",            // 2
		"    return r",            // 3: yes
		"def g(a):",               // 4
		"    try:",                // 5
		"        return a",        // 6: a finally runs on the way out
		"    finally:",            // 7
		"        a = 0",           // 8
		"def h(a):",               // 9
		"    yield a",             // 10: yes, a generator's yield
		"    return a",            // 11: a generator's
		"def k(a):",               // 12
		"    with open(a) as fh:", // 13
		"        return fh",       // 14: the with's exit runs on the way out
		"def m(a):",               // 15
		"    return a",            // 16: yes
		"x = 1",                   // 17
		"print(f(x), m(x))",       // 18
		"def w(d):",               // 19
		"    for k in d.items():", // 20
		"        return k",        // 21: returning closes the loop's iterator (a generator's runs)
		"    for j in range(3):",  // 22
		"        return j",        // 23: yes
		"def gen(n):",             // 24
		"    while n:",            // 25
		"        yield n",         // 26: yes, in a loop
		"        n -= 1",          // 27
		"async def agen(n):",      // 28
		"    yield n",             // 29: an async generator yields a wrapper
		"def hg(a):",              // 30
		"    x = yield a",         // 31: not the whole statement
	}, "\n") + "\n"
	ix := New(src)
	var names []int
	for n := 1; n <= len(ix.Lines); n++ {
		if ix.ReturnedName(n) != "" {
			names = append(names, n)
		}
	}
	if want := []int{3, 10, 16, 23, 26}; !slices.Equal(names, want) {
		t.Errorf("return NAME lines %v, want %v", names, want)
	}
}

// TestReturnValues: where a frame may return after a line event, and the
// value its text fixes there ("" where it does not; checked against real
// traces in model/infer's TestSilentHoldsOnRealTraces).
func TestReturnValues(t *testing.T) {
	safeDiv := "def safe_div(a, b):\n    try:\n        result = a / b\n    except ZeroDivisionError:\n        result = None\n    return result\n"
	for _, tc := range []struct {
		name, src string
		line      int
		want      map[int]string // nil: no reading
	}{
		{"a literal before return NAME", "def f():\n    r = -2\n    return r\n", 2, map[int]string{2: "None", 3: "-2"}},
		{"an empty list", "def f():\n    d = []\n    return d\n", 2, map[int]string{2: "None", 3: "[]"}},
		{"the return itself: its NAME is the frame's", "def f():\n    r = 1\n    return r\n", 3, map[int]string{3: ""}},
		{"an except's handler binds the literal", safeDiv, 4, map[int]string{4: "None", 5: "None", 6: "None"}},
		{"the try body may bind another value", safeDiv, 3, map[int]string{3: "None", 4: "None", 5: "None", 6: ""}},
		{"return LITERAL and a bare return", "def f(a):\n    if a:\n        return 'x'\n    return\n", 2, map[int]string{2: "None", 3: "'x'", 4: "None"}},
		{"two literals disagree", "def f(a):\n    if a:\n        r = 1\n    else:\n        r = 2\n    return r\n", 2, map[int]string{2: "None", 3: "None", 5: "None", 6: ""}},
		{"two paths, one literal", "def f(a):\n    if a:\n        r = 1\n    else:\n        r = 1\n    return r\n", 2, map[int]string{2: "None", 3: "None", 5: "None", 6: "1"}},
		{"a loop may come back with another value", "def f(a):\n    for x in a:\n        r = 1\n        r = x\n    return 0\n", 3, map[int]string{2: "None", 3: "None", 4: "None", 5: "0"}},
		{"the body's end returns None", "def f(a):\n    print(a)\n    a.append(1)\n", 2, map[int]string{2: "None", 3: "None"}},
		{"a one-line if's return", "def f(a):\n    if a: return a\n    return 1\n", 2, map[int]string{2: "", 3: "1"}},
		{"a finally on the way out", "def f(a):\n    try:\n        return 1\n    finally:\n        print(a)\n", 3, nil},
		{"a finally carries the try's return", "def f(a):\n    try:\n        return a\n    finally:\n        pass\n", 5, nil},
		{"a generator", "def f(a):\n    yield a\n    return 1\n", 2, nil},
		{"the module", "x = 1\ny = 2\n", 1, nil},
		{"a comprehension runs on the line", "def f(a):\n    b = [x for x in a]\n    return 1\n", 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := New(tc.src).ReturnValues(tc.line)
			if (got == nil) != (tc.want == nil) || !maps.Equal(got, tc.want) {
				t.Errorf("ReturnValues(%d) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
}

// TestCalledByModule: the defs whose every call comes from the module's
// own frame, in a program whose code runs only where called by name.
func TestCalledByModule(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      map[string]bool
	}{
		{"module calls", "def f(a):\n    return g(a)\ndef g(b):\n    return b\nif __name__ == '__main__':\n    print(f(1), f(2))\n", map[string]bool{"f": true, "g": false}},
		{"a comprehension calls", "def f(a):\n    return a\nxs = [f(x) for x in range(3)]\n", map[string]bool{"f": false}},
		{"passed on", "def f(a):\n    return a\nprint(list(map(f, [1])))\n", map[string]bool{"f": false}},
		{"a class body calls", "def f(a):\n    return a\nclass C:\n    x = f(1)\n", map[string]bool{"f": false}},
		{"decorated", "import functools\n@functools.cache\ndef f(a):\n    return a\nf(1)\n", map[string]bool{"f": false}},
		{"an attribute of the same name", "def f(a):\n    return a\nclass C:\n    def f(self):\n        return 1\nprint(f(1), C().f())\n", map[string]bool{"f": false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(tc.src)
			for _, s := range ix.Scopes {
				if want, ok := tc.want[s.Name]; ok && s.Parent == ix.Module && ix.CalledByModule(s) != want {
					t.Errorf("CalledByModule(%s) = %v, want %v", s.Name, !want, want)
				}
			}
		})
	}
}

// TestFirstCall: the module function whose call comes first after a line
// event, where the text fixes it.
func TestFirstCall(t *testing.T) {
	defs := "def f(x):\n    return x\ndef g(x, y=0):\n    return x\nclass C:\n    def m(self):\n        return f(1)\n"
	for _, tc := range []struct{ stmt, want string }{
		{"out = f(g(1))", "g"},
		{"print(f(2), g(3))", "f"},
		{"a = b = g(f(-1), y=[1, 'x'])", "f"},
		{"d = {}\nd[0] = f(1)", "f"},
		{"n = 1\nn += f(n)", "f"},
		{"return_ = (f(1), 2)", "f"},
		{"if f(1):\n    pass", "f"},
		{"print(len('ab'), f(1))", ""},      // len runs first: a builtin that may call back
		{"x = [1]\nprint(x[0], f(1))", ""},  // a subscript first
		{"c = C()\nprint(c.m(), f(1))", ""}, // a method first
		{"print(1 + 2, f(1))", ""},          // an operator first
		{"print(*[1], f(1))", ""},           // unpacking
		{"print(f'{f(1)}')", ""},            // an f-string field
		{"print(f(1) if 1 else g(1))", ""},  // certainCall: may skip
		{"x: int = f(1)", ""},               // an annotation
		{"print(C())", ""},                  // a class, not a function
	} {
		src := defs + tc.stmt + "\n"
		ix := New(src)
		n := len(ix.Lines)
		if strings.HasPrefix(tc.stmt, "if ") {
			n--
		}
		if got := ix.FirstCall(n); got != tc.want {
			t.Errorf("%q: first call %q, want %q", tc.stmt, got, tc.want)
		}
	}
	inner := "def f(x):\n    return x\ndef h():\n    f = len\n    return f(1)\nprint(h())\n"
	if got := New(inner).FirstCall(5); got != "" {
		t.Errorf("a local f: first call %q, want none", got)
	}
}

// TestReturnsTo: the lines a caller may go on at after a function's return:
// those of every scope that runs a call of it, a comprehension's too.
func TestReturnsTo(t *testing.T) {
	src := strings.Join([]string{
		"def f(x):",                           // 1
		"    return x",                        // 2
		"def g(n):",                           // 3
		"    return [f(i) for i in range(n)]", // 4: g's and the comprehension's
		"def h():",                            // 5
		"    yield 1",                         // 6
		"def unused():",                       // 7
		"    return 0",                        // 8
		"def m(y):",                           // 9
		"    return y + 1",                    // 10
		"print(g(2), m(1))",                   // 11
		"print(list(h()))",                    // 12
	}, "\n") + "\n"
	ix := New(src)
	for _, tc := range []struct {
		line int
		want []int // nil: no rule
	}{
		{2, []int{4}},                      // f: called in g's comprehension, on g's line
		{10, []int{1, 3, 5, 7, 9, 11, 12}}, // m: called by the module (whose def lines run in it)
		{4, nil},                           // g's or the comprehension's return
		{6, nil},                           // a generator: resumed by whoever holds it
		{8, nil},                           // no call in the text: called from outside
		{11, nil},                          // the module
	} {
		got, ok := ix.ReturnsTo(tc.line)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("line %d: ReturnsTo %v (%v), want %v", tc.line, got, ok, tc.want)
		}
	}
	if _, ok := New(src + "import doctest\n").ReturnsTo(2); ok {
		t.Error("doctest may call f from a docstring: no rule")
	}
}

// TestSureAfterReturn: the names the caller's frame holds after a return,
// from the statements that call the function.
func TestSureAfterReturn(t *testing.T) {
	src := strings.Join([]string{
		"import os",                           // 1
		"class Box:",                          // 2
		"    pass",                            // 3
		"def f(x):",                           // 4
		"    return x",                        // 5
		"def g(n):",                           // 6
		"    k = f(n)",                        // 7
		"    return [f(i) for i in range(k)]", // 8: in a comprehension too
		"def h(a):",                           // 9
		"    return a",                        // 10
		"def main(b):",                        // 11
		"    c = 1",                           // 12
		"    if b:",                           // 13
		"        d = 2",                       // 14
		"    return h(c)",                     // 15
		"e = 3",                               // 16
		"print(g(2), main(0), h(e))",          // 17
		"del e",                               // 18
		"def p(q):",                           // 19
		"    return q",                        // 20
		"def r(s):",                           // 21
		"    t = 1",                           // 22
		"    if s:",                           // 23
		"        u = p(t)",                    // 24
		"    return p(s)",                     // 25
		"r(1)",                                // 26
	}, "\n") + "\n"
	ix := New(src)
	for _, tc := range []struct {
		line int
		want []string
	}{
		{5, nil},  // f: one call in a comprehension
		{10, nil}, // h: called by main and the module, which share no name
		{15, []string{"Box", "f", "g", "h", "main", "os"}}, // main: by the module; e may be deleted
		{8, nil},                 // g's or the comprehension's return
		{20, []string{"s", "t"}}, // p: twice by r, past an if (u is not sure)
	} {
		if got := ix.SureAfterReturn(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("line %d: SureAfterReturn %v, want %v", tc.line, got, tc.want)
		}
	}
}
