package pysource

import (
	"slices"
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
