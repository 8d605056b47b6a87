package pysource

import (
	"strings"
	"testing"
)

// TestCallArgs: the argument list of a line's first plain call of a name,
// as written; strings, comments, methods and f-string fields skipped.
func TestCallArgs(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"assert f(1, 2) == 3", "(1, 2)"},
		{"assert set(f((1, 2), 'a)')) == set()", "((1, 2), 'a)')"},
		{"assert g(1) == 2 and f(2) == 3", "(2)"},
		{`assert "f(9)" != f("x")`, `("x")`},
		{"assert g(1) == 2  # f(2)", ""},
		{"assert x.f(1) == f(2)", "(2)"},
		{`assert f"{f(1)}" == f(3)`, "(3)"},
		{"assert f (1, [2,\n  3]) == 4", "(1, [2,\n  3])"},
		{"assert ff(1) == 2", ""},
		{"assert f(1 == 2", ""},
		{"assert f(1] == 2", ""},
		{"assert f('", ""},
	} {
		got, ok := New(tc.src).CallArgs(1, "f")
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%q: %q %v, want %q", tc.src, got, ok, tc.want)
		}
	}
}

// TestCallChain: a statement that is one call chain, and its head.
func TestCallChain(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"f(1)", "f"}, {"C(3).m(4)", "C"}, {"g(x)[0](y)", "g"}, {"f (1)", "f"}, {"f(')', [1, (2)])", "f"},
		{"f(1,\n  2)", "f"},
		{"f", ""}, {"f(1).x", ""}, {"f(1)[0]", ""}, {"f(1) == 2", ""}, {"x = f(1)", ""}, {"f(1); g(2)", ""},
		{"[f(i) for i in x]", ""}, {"None(1)", ""}, {"await f(1)", ""}, {"f(1]", ""}, {"f(1", ""}, {"x.if(1)", ""},
		{"'s'.join(x)", ""}, {"1(2)", ""},
	} {
		head, ok := New(tc.src).CallChain(1)
		if ok && head != tc.want || ok != (tc.want != "") {
			t.Errorf("%q: %q %v, want %q", tc.src, head, ok, tc.want)
		}
	}
}

// TestComment: where a line's comment starts; a # in a string is none.
func TestComment(t *testing.T) {
	src := strings.Join([]string{
		"x = 1  # one",   // 1
		"s = '# no' # c", // 2
		"t = '''",        // 3
		"# in a string",  // 4
		"'''",            // 5
		"# whole line",   // 6
		`u = "a\"#"`,     // 7
	}, "\n")
	ix := New(src)
	for n, want := range []int{7, 11, -1, -1, -1, 0, -1} {
		if got := ix.Comment(n + 1); got != want {
			t.Errorf("line %d %q: comment at %d, want %d", n+1, ix.Line(n+1), got, want)
		}
	}
	if ix.Comment(0) != -1 || ix.Comment(8) != -1 {
		t.Error("a line out of range has no comment")
	}
}

// TestUnbound: the names a program (an expression) needs from outside.
func TestUnbound(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"f(x, key=1)", "f x"},
		{"f(*[k for k in range(2)])", "f range"},
		{"f(acc := 2, acc)", "f"},
		{"f(lambda y: y + z, 1)", "f z"},
		{"Node(3).next.value(4)", "Node"},
		{"f(f'{a!r:>{w}}', 'b')", "a f w"},
		{"f([k for k in x], k)", "f k x"}, // a comprehension's target is its own
		{"def g(a):\n    return a + b\nclass C:\n    n = 1\n    def m(self): return n + super().m()\ng(1)\n", "b n super"},
		{"import os\nos.getcwd()\n", ""},
	} {
		if got := strings.Join(New(tc.src).Unbound(), " "); got != tc.want {
			t.Errorf("%q: unbound %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestIsMainGuard: `if __name__ == "__main__":` as a statement, not in a
// string or comment, not another test.
func TestIsMainGuard(t *testing.T) {
	src := strings.Join([]string{
		`if __name__ == "__main__":`,          // 1
		`    pass`,                            // 2
		`if __name__ == '__main__': main()`,   // 3
		`if ("__main__" == __name__):`,        // 4
		`    pass`,                            // 5
		`if __name__ != "__main__":`,          // 6
		`    pass`,                            // 7
		`DOC = """`,                           // 8
		`if __name__ == "__main__":`,          // 9
		`"""`,                                 // 10
		`# if __name__ == "__main__":`,        // 11
		`if __name__ == "__main__" and x:`,    // 12
		`    pass`,                            // 13
		`while __name__ == "__main__": break`, // 14
		`if __name__ == "__main__.x": pass`,   // 15
	}, "\n")
	ix := New(src)
	for n := 1; n <= len(ix.Lines); n++ {
		if got, want := ix.IsMainGuard(n), n == 1 || n == 3 || n == 4; got != want {
			t.Errorf("line %d %q: main guard %v, want %v", n, ix.Line(n), got, want)
		}
	}
}
