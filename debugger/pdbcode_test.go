package debugger

import "testing"

func TestCallsThroughCode(t *testing.T) {
	for _, c := range []struct {
		src, fn string
		want    bool
	}{
		{`    a = eval("twice(1)", ns)`, "twice", true},
		{`    exec("b = double(5)", ns)`, "double", true},
		{`    doctest.run_docstring_examples(double, ns, name="doctests")`, "double", true},
		{`doctest.testmod()`, "f", true},
		{`testmod(verbose=False)`, "f", true},
		{`x = f(eval("3"))`, "f", false},        // f is called by the line itself
		{`x = f(3)  # exec(g())`, "f", false},   // a comment is no call
		{`print("exec(f())")`, "f", false},      // nor is a string
		{`x = myexec(f)`, "f", false},           // another name
		{`s = 'it\'s exec(' + g()`, "g", false}, // an escaped quote
		{`y = sorted(xs, key=f)`, "f", false},
	} {
		if got := callsThroughCode(c.src, c.fn); got != c.want {
			t.Errorf("callsThroughCode(%q, %q) = %v, want %v", c.src, c.fn, got, c.want)
		}
	}
}
