package pysource

import (
	"strings"
	"testing"
)

func TestItemBefore(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		h         int
		cur       string
		prev      string
		unbound   bool
		ok        bool
	}{
		{"range", "for i in range(n):\n    print(i)\n", 1, "3", "2", false, true},
		{"range first", "for i in range(n):\n    print(i)\n", 1, "0", "", true, true},
		{"range start step", "for i in range(10, 0, -2):\n    print(i)\n", 1, "6", "8", false, true},
		{"range start step first", "for i in range(10, 0, -2):\n    print(i)\n", 1, "10", "", true, true},
		{"range off its steps", "for i in range(10, 0, -2):\n    print(i)\n", 1, "7", "", false, false},
		{"range before its start", "for i in range(1, n):\n    print(i)\n", 1, "0", "", false, false},
		{"range bound elsewhere", "range = list\nfor i in range(3):\n    print(i)\n", 2, "1", "", false, false},
		{"range start not literal", "for i in range(a, b):\n    print(i)\n", 1, "3", "", false, false},
		{"list", "for w in ['a', 'bb', 'ccc']:\n    print(w)\n", 1, "'bb'", "'a'", false, true},
		{"list first", "for w in ['a', 'bb', 'ccc']:\n    print(w)\n", 1, "'a'", "", true, true},
		{"list over lines", "for w in ['a',\n          'bb']:\n    print(w)\n", 1, "'bb'", "'a'", false, true},
		{"tuple", "for x in (1, -2, 3.5):\n    print(x)\n", 1, "3.5", "-2", false, true},
		{"no tuple", "for x in (3):\n    print(x)\n", 1, "3", "", false, false},
		{"not an item", "for x in [1, 2]:\n    print(x)\n", 1, "5", "", false, false},
		{"repeated, same before", "for x in [1, 2, 1, 2]:\n    print(x)\n", 1, "2", "1", false, true},
		{"repeated, different before", "for x in [1, 2, 3, 2]:\n    print(x)\n", 1, "2", "", false, false},
		{"not a literal", "for x in [a, 2]:\n    print(x)\n", 1, "2", "", false, false},
		{"body binds it", "for i in range(5):\n    i = i * 2\n", 1, "3", "", false, false},
		{"body deletes it", "for i in range(5):\n    del i\n", 1, "3", "", false, false},
		{"tuple target", "for i, j in [(1, 2)]:\n    print(i)\n", 1, "1", "", false, false},
		{"one-line body", "for i in range(5): print(i)\n", 1, "3", "", false, false},
		{"first, in a loop", "while True:\n    for i in range(3):\n        print(i)\n", 2, "0", "", false, false},
		{"first, in a loop, later", "while True:\n    for i in range(3):\n        print(i)\n", 2, "2", "1", false, true},
		{"first, bound before", "i = 9\nfor i in range(3):\n    print(i)\n", 2, "0", "", false, false},
		{"first, in a function", "def f(n):\n    for i in range(n):\n        print(i)\n", 2, "0", "", true, true},
		{"first, a parameter", "def f(i):\n    for i in range(3):\n        print(i)\n", 2, "0", "", false, false},
		{"first, a function in a loop", "for k in range(2):\n    def f():\n        for i in range(3):\n            print(i)\n", 3, "0", "", true, true},
		{"first, a global elsewhere", "def g():\n    global i\n    i = 1\nfor i in range(3):\n    print(i)\n", 4, "0", "", false, false},
		{"global target", "def f():\n    global i\n    for i in range(3):\n        print(i)\n", 3, "1", "", false, false},
		{"locals()", "for i in range(3):\n    locals()\n", 1, "1", "", false, false},
		{"not a for", "x = 1\n", 1, "1", "", false, false},
		{"a list's repr", "for x in xs:\n    print(x)\n", 1, "(1, 2)", "'a, b'", false, true},
		{"a list's repr, first", "for x in xs:\n    print(x)\n", 1, "3", "", false, false}, // 3 is first and last
		{"a list's repr, second", "for x in xs:\n    print(x)\n", 1, "'a, b'", "3", false, true},
		{"a str's repr", "for c in s:\n    print(c)\n", 1, "'c'", "'b'", false, true},
		{"a str's repr, second", "for c in s:\n    print(c)\n", 1, "'b'", "'a'", false, true},
		{"a str's repr, repeated", "for c in s:\n    print(c)\n", 1, "'a'", "", false, false},
		{"a one-item tuple", "for x in t:\n    print(x)\n", 1, "7", "", true, true},
		{"a cut repr", "for x in cut:\n    print(x)\n", 1, "2", "", false, false},
		{"a dict", "for x in d:\n    print(x)\n", 1, "1", "", false, false},
		{"the body names it", "for x in xs:\n    xs.append(x)\n", 1, "'a, b'", "", false, false},
		{"not a local", "for x in ys:\n    print(x)\n", 1, "1", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string]string{"xs": "[3, 'a, b', (1, 2), 3]", "s": "'abca'", "cut": "[1, 2, 3...", "d": "{1: 2}", "t": "(7,)"}
			prev, unbound, ok := New(tc.src).ItemBefore(tc.h, tc.cur, func(name string) (string, bool) {
				v, ok := values[name]
				return v, ok
			})
			if prev != tc.prev || unbound != tc.unbound || ok != tc.ok {
				t.Errorf("ItemBefore(%d, %s) = %q, %v, %v; want %q, %v, %v", tc.h, tc.cur, prev, unbound, ok, tc.prev, tc.unbound, tc.ok)
			}
		})
	}
}

func TestForBody(t *testing.T) {
	src := "for i in range(3):\n    a = i\n\n    b = a\nelse:\n    c = 1\nfor j in x: pass\nx = 1\n"
	ix := New(src)
	if first, last, ok := ix.ForBody(1); first != 2 || last != 4 || !ok {
		t.Errorf("ForBody(1) = %d, %d, %v; want 2, 4, true", first, last, ok)
	}
	for _, h := range []int{2, 7, 8} {
		if _, _, ok := ix.ForBody(h); ok {
			t.Errorf("ForBody(%d) ok", h)
		}
	}
}

// FuzzReprItems: reading a repr never panics, and the items of a whole
// list's repr joined again are that repr.
func FuzzReprItems(f *testing.F) {
	for _, s := range []string{"[1, 2]", "[]", "(1,)", "()", "'abc'", "[[1, ']'], (2, \"a\\\"b\")]", "[1, 2...", "{1: 2}", "[']", "[)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, r string) {
		items, whole := reprItems(r)
		if whole && len(r) > 0 && r[0] == '[' {
			if got := "[" + strings.Join(items, ", ") + "]"; got != r {
				t.Errorf("%q: items %q join to %q", r, items, got)
			}
		}
	})
}
