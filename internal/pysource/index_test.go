package pysource

import (
	"slices"
	"strings"
	"testing"
)

// names lists the code names of scopes ("-" for none).
func names(ss []*Scope) string {
	if len(ss) == 0 {
		return "-"
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return strings.Join(out, " ")
}

// TestLineQueries: which code objects run on each line, which one a call
// event there enters, and the statement each line is part of.
func TestLineQueries(t *testing.T) {
	src := strings.Join([]string{
		"import functools",                  // 1
		"def deco(f):  # (",                 // 2
		"    @functools.wraps(f)",           // 3
		"    def inner(*a):",                // 4
		"        s = '''text",               // 5
		"def not_a_def():",                  // 6
		"'''",                               // 7
		"        return f(*a,",              // 8
		"  1)",                              // 9
		"    return inner",                  // 10
		"@deco",                             // 11
		"class K:",                          // 12
		"    x = [i for i in (1, 2)]",       // 13
		"    def m(self): return self.x \\", // 14
		"        + [3]",                     // 15
		"y = K().m()  # def z():",           // 16
		"",                                  // 17
		"# def comment():",                  // 18
		"z = sorted(y, key=lambda v: -v)",   // 19
		"w = [lambda: 1 for _ in (2,)]",     // 20
	}, "\n")
	ix := New(src)
	runs := []string{"<module>", "<module>", "deco", "deco", "inner", "inner", "inner", "inner", "inner", "deco",
		"<module> K", "<module>", "K <listcomp>", "K m", "K m", "<module>", "-", "-", "<module> <lambda>"}
	opens := map[int]string{2: "deco", 3: "inner", 11: "K", 13: "<listcomp>", 14: "m", 19: "<lambda>"}
	runs = append(runs, "<module> <listcomp> <lambda>")
	opens[20] = "<listcomp> <lambda>"
	stmts := map[int][2]int{5: {5, 7}, 6: {5, 7}, 9: {8, 9}, 15: {14, 15}, 16: {16, 16}}
	for n := 1; n <= len(runs); n++ {
		if got := names(ix.RunsOn(n)); got != runs[n-1] {
			t.Errorf("line %d %q runs %s, want %s", n, ix.Line(n), got, runs[n-1])
		}
		want := opens[n]
		if want == "" {
			want = "-"
		}
		if got := names(ix.Opens(n)); got != want {
			t.Errorf("line %d opens %v, want %q", n, got, want)
		}
		if w, ok := stmts[n]; ok {
			if first, last, _ := ix.Statement(n); first != w[0] || last != w[1] {
				t.Errorf("line %d: statement %d-%d, want %d-%d", n, first, last, w[0], w[1])
			}
		}
	}
	if ix.StatementStarts(6) || ix.StatementStarts(9) || !ix.StatementStarts(8) || ix.StatementStarts(17) {
		t.Error("statement starts: lines in a string or a continuation start none")
	}
	inner := ix.Lookup("deco.<locals>.inner")
	if inner == nil || inner.First != 3 || inner.Line != 4 || inner.Body != 5 || inner.End != 9 || !slices.Equal(inner.Params, []string{"a"}) {
		t.Errorf("inner: %+v", inner)
	}
	if m := ix.Lookup("K.m"); m == nil || m.Body != 14 || m.End != 15 || m.Qualname != "K.m" {
		t.Errorf("K.m: %+v", m)
	}
	if k := ix.Lookup("K"); k == nil || k.First != 11 || k.Line != 12 || k.End != 15 {
		t.Errorf("K: %+v", k)
	}
	if ix.Lookup("not_a_def") != nil || ix.Lookup("z") != nil || ix.Lookup("comment") != nil {
		t.Error("a def in a string or a comment is no def")
	}
	if h := ix.Header(3); h == nil || h.Name != "inner" {
		t.Errorf("line 3 is inner's header, got %v", h)
	}
	if !ix.CallsOn(8, "f") || ix.CallsOn(16, "m") || !ix.CallsOn(16, "K") {
		t.Error("CallsOn: f( is a call, .m( a method")
	}
	if ix.CallLine(8, "f") != 8 || ix.CallLine(9, "f") != 8 || ix.CallLine(5, "f") != 0 || ix.CallsOn(4, "inner") || ix.CallsOn(12, "K") {
		t.Error("CallLine: the call's own line; a def or class header's name is no call")
	}
	if got := ix.Calls(ix.Lookup("deco")); len(got) != 0 {
		t.Errorf("deco calls %v (functools.wraps is a method)", got)
	}
	if got := ix.Calls(ix.Module); !slices.Equal(got, []string{"K", "sorted"}) {
		t.Errorf("the module calls %v", got)
	}
}

// TestFrameNames: what each frame's f_locals may hold, as 3.11 has it
// (testdata/astindex.py checks the same against symtable on files).
func TestFrameNames(t *testing.T) {
	src := strings.Join([]string{
		"import os, a.b as c",
		"from m import (p, q as r)",
		"def outer(x, *args, k=1, **kw):",
		"    y = [i for i in x if (w := i)]",
		"    def mid():",
		"        def leaf():",
		"            return x + z",
		"        return leaf",
		"    with open('f') as fh, g() as (u, v):",
		"        pass",
		"    for a, b[0] in x: pass",
		"    try: pass",
		"    except E as err: pass",
		"    global G",
		"    G = 1",
		"    z = f(key=1)",
		"    obj.attr = 2",
		"    return mid",
		"class C:",
		"    n = 1",
		"    def m(self):",
		"        __tmp = super()",
		"        return n",
		"class D:",
		"    def m(self):",
		"        class E:",
		"            def n(self): return super()",
		"        return E",
	}, "\n")
	ix := New(src)
	for _, tc := range []struct{ scope, want string }{
		{"outer", "a err fh k kw mid u v w x y z args"},
		{"outer.<locals>.mid", "leaf x z"},
		{"outer.<locals>.mid.<locals>.leaf", "x z"},
		{"C", "m n"},
		{"C.m", "_C__tmp __class__ self"},
		{"D.m", "E self"}, // E's methods' super() is E's __class__, not m's
	} {
		s := ix.Lookup(tc.scope)
		want := strings.Fields(tc.want)
		slices.Sort(want)
		if s == nil || !slices.Equal(s.Locals(), want) {
			t.Errorf("%s: locals %v, want %v", tc.scope, s.Locals(), want)
		}
	}
	var comp *Scope
	for _, s := range ix.Scopes {
		if s.Name == "<listcomp>" {
			comp = s
		}
	}
	if got := comp.Locals(); !slices.Equal(got, []string{".0", "i", "w"}) {
		t.Errorf("listcomp locals %v, want .0 i w", got)
	}
	if got := ix.Module.Locals(); !slices.Equal(got, []string{"C", "D", "G", "c", "os", "outer", "p", "r"}) {
		t.Errorf("module names %v", got)
	}
	if !New("from m import *\nx = 1\n").Module.Open() || !New("def f():\n    exec('y = 1')\n").Lookup("f").Open() {
		t.Error("a star import or exec leaves the names open")
	}
}

// TestReturnedCall: `return NAME(...)` whose whole value is that call.
func TestReturnedCall(t *testing.T) {
	for _, tc := range []struct{ stmt, want string }{
		{"return g(x)", "g"}, {"return g(')')", "g"}, {"return g(x)  # (", "g"}, {"return g(f(x), [1, (2)])", "g"},
		{"return g(\"(\")", "g"}, {"return g(x,\n    y)", "g"}, {"return g(x)(y)", ""}, {"return g(x) + g(y)", ""},
		{"return g(x", ""}, {"return x.g(1)", ""}, {"x = g(1)", ""}, {"return (g(1))", ""},
	} {
		if got := New("def f(x):\n    " + tc.stmt + "\n").ReturnedCall(2); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.stmt, got, tc.want)
		}
	}
}

// TestReturns: the return statements a function runs, by their keyword's
// line, outside strings and comments and not a nested def's.
func TestReturns(t *testing.T) {
	src := strings.Join([]string{
		"def f(x):", // 1
		"    '''",
		"    return 0",
		"    '''",
		"    if x: return 1  # return 9", // 5
		"    def g(): return 2",
		"    y = x; return (",
		"        y)",
		"    return", // 9
		"class C:",
		"    def m(self): return 3",
	}, "\n")
	ix := New(src)
	for _, tc := range []struct {
		name string
		want []int
	}{{"f", []int{5, 7, 9}}, {"f.<locals>.g", []int{6}}, {"C.m", []int{11}}, {"C", nil}} {
		if got := ix.Returns(ix.Lookup(tc.name)); !slices.Equal(got, tc.want) {
			t.Errorf("%s returns on %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNamesAndBindsOfALine: the names a line's code holds, and the names
// its statement binds.
func TestNamesAndBindsOfALine(t *testing.T) {
	src := strings.Join([]string{
		"import os.path, re as regex",    // 1
		"from m import (a,",              // 2
		"    b as c)",                    // 3
		"x, (y, *z) = f(key=1)  # w = 2", // 4
		"obj.attr = s['k'] = 'v = 3'",    // 5
		"n: int = 1",                     // 6
		"for i in range(3): q = i",       // 7
		"with open('f') as fh: pass",     // 8
		"if (m := 3) == x: pass",         // 9
		"total == 1",                     // 10
		"@deco",                          // 11
		"class K(Base): pass",            // 12
		"g = [v for v in x if (u := v)]", // 13
		"print(f'{x!r} and {self.y}')",   // 14
		"def h(p=dflt): return p",        // 15
	}, "\n")
	ix := New(src)
	for _, tc := range []struct {
		line         int
		names, binds string
	}{
		{1, "os path re regex", "os regex"},
		{2, "m a", "a c"}, {3, "b c", ""},
		{4, "x y z f key", "x y z"},
		{5, "obj attr s", ""},
		{6, "n int", "n"},
		{7, "i range q", "i q"},
		{8, "open fh", "fh"},
		{9, "m x", "m"},
		{10, "total", ""},
		{11, "deco", ""},
		{12, "K Base", "K"},
		{13, "g v x u", "g u"},
		{14, "print x self y", ""},
		{15, "h p dflt", "h"},
	} {
		if got := strings.Join(ix.NamesOn(tc.line), " "); got != tc.names {
			t.Errorf("line %d %q: names %q, want %q", tc.line, ix.Line(tc.line), got, tc.names)
		}
		if got := strings.Join(ix.Binds(tc.line), " "); got != tc.binds {
			t.Errorf("line %d %q: binds %q, want %q", tc.line, ix.Line(tc.line), got, tc.binds)
		}
	}
	if len(ix.Scopes) != 3 { // K, the listcomp, h
		t.Errorf("Binds added scopes to the index: %d", len(ix.Scopes))
	}
}

// TestStatementKeyword: the keyword a statement opens with, read from its
// tokens (a line inside a string starts none).
func TestStatementKeyword(t *testing.T) {
	src := strings.Join([]string{
		"import os",          // 1
		"from . import (a,",  // 2
		"  b)",               // 3
		"'''",                // 4
		"import sys",         // 5
		"'''",                // 6
		"@deco",              // 7
		"@deco2(1)",          // 8
		"async def f():",     // 9
		"    return 1",       // 10
		"match = 1",          // 11
		"match match:",       // 12
		"    case [x]: pass", // 13
		"x = 1",              // 14
		"not x",              // 15
		"class C: pass",      // 16
		"if x: import re",    // 17
	}, "\n")
	want := []string{"import", "from", "", "", "", "", "def", "def", "def", "return", "", "match", "case", "", "", "class", "if"}
	ix := New(src)
	for n, w := range want {
		if got := ix.StatementKeyword(n + 1); got != w {
			t.Errorf("line %d %q: %q, want %q", n+1, ix.Line(n+1), got, w)
		}
	}
}

func TestVariableNames(t *testing.T) {
	for s, want := range map[string]bool{
		"x": true, "_a1": true, "été": true, "None": false, "def": false, "yield": false,
		"match": true, "1a": false, "a-b": false, "": false,
	} {
		if got := IsVariableName(s); got != want {
			t.Errorf("IsVariableName(%q) = %v, want %v", s, got, want)
		}
	}
	if !IsKeyword("nonlocal") || IsKeyword("match") {
		t.Error("IsKeyword: hard keywords only")
	}
}
