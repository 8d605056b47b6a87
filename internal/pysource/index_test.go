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
	}, "\n")
	ix := New(src)
	for _, tc := range []struct{ scope, want string }{
		{"outer", "a err fh k kw mid u v w x y z args"},
		{"outer.<locals>.mid", "leaf x z"},
		{"outer.<locals>.mid.<locals>.leaf", "x z"},
		{"C", "m n"},
		{"C.m", "_C__tmp __class__ self"},
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
	if got := ix.Module.Locals(); !slices.Equal(got, []string{"C", "G", "c", "os", "outer", "p", "r"}) {
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
