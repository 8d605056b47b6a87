package tracer

import (
	"context"
	"os/exec"
	"reflect"
	"strings"

	"ndb/internal/pysource"
	"testing"
)

// TestCompile compiles small programs in the sandbox and checks the lines
// their code is on against what CPython 3.11 places (a constant list
// folded onto its first line, a docstring and a closing bracket with no
// code, a function's first line for its call event) and where each line's
// event goes next (a call's arguments on a line of their own, then the
// call's line again; a loop's header after its body); a source that does
// not compile gives nil, and the others still come back.
func TestCompile(t *testing.T) {
	tr, err := New(Options{})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	tr.Close()
	sources := []string{
		"x = [\n    1,\n    2,\n    3,\n]\nfor i in x:\n    print(i,\n          i)\n",
		"def f(a,\n      b):\n    \"\"\"doc\n    more\"\"\"\n    return (a +\n            b)\n",
		"def broken(:\n",
		"class C:\n    k = (\n        1,\n    )\n",
		"x = " + strings.Repeat("-", 200000) + "1\n", // too deep for the compiler
	}
	got, err := Compile(context.Background(), "", sources)
	if err != nil {
		t.Fatal(err)
	}
	want := []*pysource.Compiled{
		{Lines: []int{1, 6, 7, 8}, Next: map[int][]int{1: {6}, 6: {7}, 7: {6, 8}, 8: {7}}},
		{Lines: []int{1, 5, 6}, Next: map[int][]int{1: {}, 5: {6}, 6: {5}}},
		nil,
		{Lines: []int{1, 2}, Next: map[int][]int{1: {2}, 2: {}}}, // the class body's frame goes on from its first line
		nil,
	}
	exe, err := ResolvePython("")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := exec.Command(exe, "-c", "import sys; print(sys.version_info[:2])").Output(); strings.TrimSpace(string(v)) != "(3, 11)" {
		for _, w := range want {
			if w != nil {
				w.Next = nil // the flow is read for 3.11 alone
			}
		}
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("source %d: Compile = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// BenchmarkCompile is one sandboxed compile of a 60-line program, what the
// model engine pays once per program text.
func BenchmarkCompile(b *testing.B) {
	src := strings.Repeat("def f(x):\n    return [x,\n            x * 2]\n", 20)
	for b.Loop() {
		if _, err := Compile(context.Background(), "", []string{src}); err != nil {
			b.Fatal(err)
		}
	}
}
