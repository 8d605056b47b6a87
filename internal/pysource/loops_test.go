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
		{"a dict's first key", "for x in d:\n    print(x)\n", 1, "1", "", true, true},
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

func TestItemAfter(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		h, prev   int               // the header's line, the line of the frame's event before it (0: unknown)
		round     int               // LoopPlace.Round
		values    map[string]string // the header's locals
		next      string
		into, ok  bool
	}{
		{"range first", "def f(n):\n    for i in range(n):\n        print(i)\n", 2, 0, 0, map[string]string{"n": "3"}, "0", true, true},
		{"range next", "def f(n):\n    for i in range(n):\n        print(i)\n", 2, 0, 0, map[string]string{"n": "3", "i": "1"}, "2", true, true},
		{"range done", "def f(n):\n    for i in range(n):\n        print(i)\n", 2, 0, 0, map[string]string{"n": "3", "i": "2"}, "", false, true},
		{"range empty", "def f(n):\n    for i in range(n):\n        print(i)\n", 2, 0, 0, map[string]string{"n": "0"}, "", false, true},
		{"range start stop step", "for i in range(10, lo, -3):\n    print(i)\n", 1, 0, 0, map[string]string{"lo": "2", "i": "7"}, "4", true, true},
		{"range step past its stop", "for i in range(10, lo, -3):\n    print(i)\n", 1, 0, 0, map[string]string{"lo": "2", "i": "4"}, "", false, true},
		{"range off its steps", "for i in range(10, lo, -3):\n    print(i)\n", 1, 0, 0, map[string]string{"lo": "2", "i": "5"}, "", false, false},
		{"range len", "def f(xs):\n    for i in range(len(xs)):\n        print(i)\n", 2, 0, 0, map[string]string{"xs": "['a', 'b']", "i": "0"}, "1", true, true},
		{"range len of a cut repr", "def f(xs):\n    for i in range(len(xs)):\n        print(i)\n", 2, 0, 0, map[string]string{"xs": "['a', 'b'...", "i": "0"}, "", false, false},
		{"range stop the body changes", "def f(n):\n    for i in range(n):\n        n -= 1\n", 2, 0, 0, map[string]string{"n": "3", "i": "0"}, "", false, false},
		{"range start the body reads", "def f(lo, hi):\n    for i in range(lo, hi):\n        print(i - lo)\n", 2, 0, 0, map[string]string{"lo": "-2", "hi": "1", "i": "-1"}, "0", true, true},
		{"range stop unknown", "def f():\n    for i in range(n):\n        print(i)\n", 2, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"range stop declared global", "def g():\n    global n\n    n = 1\nfor i in range(n):\n    g()\n", 4, 0, 0, map[string]string{"n": "3", "i": "0"}, "", false, false},
		{"list next", "for w in ['a', 'bb']:\n    print(w)\n", 1, 0, 0, map[string]string{"w": "'a'"}, "'bb'", true, true},
		{"list first", "for w in ['a', 'bb']:\n    print(w)\n", 1, 0, 0, map[string]string{}, "'a'", true, true},
		{"list done", "for w in ['a', 'bb']:\n    print(w)\n", 1, 0, 0, map[string]string{"w": "'bb'"}, "", false, true},
		{"repeated, same after", "for x in [1, 2, 1, 2]:\n    print(x)\n", 1, 0, 0, map[string]string{"x": "1"}, "2", true, true},
		{"repeated, different after", "for x in [1, 2, 1, 3]:\n    print(x)\n", 1, 0, 0, map[string]string{"x": "1"}, "", false, false},
		{"repeated, last", "for x in [1, 2, 1]:\n    print(x)\n", 1, 0, 0, map[string]string{"x": "1"}, "", false, false},
		{"a str", "def f(s):\n    for c in s:\n        print(c)\n", 2, 0, 0, map[string]string{"s": "'abc'", "c": "'b'"}, "'c'", true, true},
		{"a str's split", "def f(s):\n    for w in s.split():\n        print(w)\n", 2, 0, 0, map[string]string{"s": "'the  cat sat'", "w": "'cat'"}, "'sat'", true, true},
		{"a str's split, first", "def f(s):\n    for w in s.split():\n        print(w)\n", 2, 0, 0, map[string]string{"s": "' the cat'"}, "'the'", true, true},
		{"a list's split", "def f(s):\n    for w in s.split():\n        print(w)\n", 2, 0, 0, map[string]string{"s": "['a b']"}, "", false, false},
		{"split with an argument", "def f(s):\n    for w in s.split(','):\n        print(w)\n", 2, 0, 0, map[string]string{"s": "'a,b'"}, "", false, false},
		{"bound, in a loop", "while True:\n    for i in range(3):\n        print(i)\n", 2, 0, 0, map[string]string{"i": "1"}, "", false, false},
		{"unbound, in a loop", "def f():\n  while True:\n    for i in range(3):\n        print(i)\n", 3, 0, 0, map[string]string{}, "0", true, true},
		{"bound before the loop", "def f():\n    i = 0\n    for i in range(3):\n        print(i)\n", 3, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"a parameter", "def f(i):\n    for i in range(3):\n        print(i)\n", 2, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"body binds the target", "for i in range(5):\n    i = 2\n", 1, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"body mentions the list", "def f(xs):\n    for x in xs:\n        xs.append(x)\n", 2, 0, 0, map[string]string{"xs": "[1, 2]", "x": "1"}, "", false, false},
		{"a module that exec's", "exec('')\nfor i in range(3):\n    print(i)\n", 2, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"range rebound", "range = list\nfor i in range(3):\n    print(i)\n", 2, 0, 0, map[string]string{"i": "0"}, "", false, false},
		{"a dict's keys", "def f(d):\n    for k in d:\n        print(k)\n", 2, 0, 0, map[string]string{"d": "{'a': [1, 2], 'b': 3}", "k": "'a'"}, "'b'", true, true},
		{"a tuple of targets over literals", "for i, j in [(1, 2)]:\n    print(i)\n", 1, 0, 0, map[string]string{}, "", false, false},
		{"a list of tuples", "def f(ps):\n    for a, b in ps:\n        print(a)\n", 2, 0, 0, map[string]string{"ps": "[(1, 'x'), (2, 'y')]", "a": "1", "b": "'x'"}, "2 'y'", true, true},
		{"a list of tuples, half bound", "def f(ps):\n    for a, b in ps:\n        print(a)\n", 2, 0, 0, map[string]string{"ps": "[(1, 'x'), (2, 'y')]", "a": "1"}, "", false, false},
		{"a list of pairs for three", "def f(ps):\n    for a, b, c in ps:\n        print(a)\n", 2, 0, 0, map[string]string{"ps": "[(1, 'x'), (2, 'y')]"}, "", false, false},
		{"enumerate", "def f(xs):\n    for (i, x) in enumerate(xs, start=1):\n        print(i)\n", 2, 0, 0, map[string]string{"xs": "'ab'", "i": "1", "x": "'a'"}, "2 'b'", true, true},
		{"enumerate, first", "def f(xs):\n    for i, x in enumerate(xs):\n        print(i)\n", 2, 0, 0, map[string]string{"xs": "'ab'"}, "0 'a'", true, true},
		{"enumerate, done", "def f(xs):\n    for i, x in enumerate(xs):\n        print(i)\n", 2, 0, 0, map[string]string{"xs": "'ab'", "i": "1", "x": "'b'"}, "", false, true},
		{"items", "def f(d):\n    for k, v in d.items():\n        print(k)\n", 2, 0, 0, map[string]string{"d": "{'a': [1, 2], 'b': 3}", "k": "'a'", "v": "[1, 2]"}, "'b' 3", true, true},
		{"zip", "def f(xs, ys):\n    for x, y in zip(xs, ys):\n        print(x)\n", 2, 0, 0, map[string]string{"xs": "[1, 2, 3]", "ys": "'ab'", "x": "1", "y": "'a'"}, "2 'b'", true, true},
		{"zip, the shorter done", "def f(xs, ys):\n    for x, y in zip(xs, ys):\n        print(x)\n", 2, 0, 0, map[string]string{"xs": "[1, 2, 3]", "ys": "'ab'", "x": "2", "y": "'b'"}, "", false, true},
		{"zip rebound", "zip = 1\ndef f(xs, ys):\n    for x, y in zip(xs, ys):\n        print(x)\n", 3, 0, 0, map[string]string{"xs": "[1, 2, 3]", "ys": "'ab'"}, "", false, false},
		{"a repeated target", "def f(ps):\n    for a, a in ps:\n        print(a)\n", 2, 0, 0, map[string]string{"ps": "[(1, 'x')]"}, "", false, false},
		{"an inner loop goes on", "for k in range(2):\n    for i in range(n):\n        print(i)\n", 2, 3, 0, map[string]string{"n": "3", "k": "0", "i": "1"}, "2", true, true},
		{"an inner loop starts again", "for k in range(2):\n    for i in range(n):\n        print(i)\n", 2, 1, 0, map[string]string{"n": "3", "k": "1", "i": "2"}, "0", true, true},
		{"an inner loop goes on, unbound", "for k in range(2):\n    for i in range(n):\n        print(i)\n", 2, 3, 0, map[string]string{"n": "3", "k": "0"}, "", false, false},
		{"from its own line", "for k in range(2):\n    for i in range(n):\n        print(i)\n", 2, 2, 0, map[string]string{"n": "3", "k": "0", "i": "1"}, "", false, false},
		{"a repeated item's round", "def f(s):\n    for c in s:\n        print(c)\n", 2, 3, 3, map[string]string{"s": "'banana'", "c": "'a'"}, "'n'", true, true},
		{"a repeated item's last round", "def f(s):\n    for c in s:\n        print(c)\n", 2, 3, 7, map[string]string{"s": "'banana'", "c": "'a'"}, "", false, true},
		{"a round the item contradicts", "def f(s):\n    for c in s:\n        print(c)\n", 2, 3, 3, map[string]string{"s": "'banana'", "c": "'n'"}, "", false, false},
		{"a round past the end", "def f(s):\n    for c in s:\n        print(c)\n", 2, 3, 8, map[string]string{"s": "'banana'", "c": "'a'"}, "", false, false},
		{"done in an except clause", "try:\n    pass\nexcept E as e:\n    for c in 'ab':\n        print(c)\n", 4, 5, 0, map[string]string{"c": "'b'"}, "", false, false},
		{"going on in an except clause", "try:\n    pass\nexcept E as e:\n    for c in 'ab':\n        print(c)\n", 4, 5, 0, map[string]string{"c": "'a'"}, "'b'", true, true},
		{"the first round", "def f(s):\n    for c in s:\n        print(c)\n", 2, 1, 1, map[string]string{"s": "'banana'"}, "'b'", true, true},
		{"objects' reprs", "def f(stack):\n    for frame in stack:\n        print(frame)\n", 2, 0, 0,
			map[string]string{"stack": "[<FrameSummary file <program>, line 90 in g>, <FrameSummary file <program>, line 57 in h>]"}, "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, into, ok := New(tc.src).ItemAfter(tc.h, LoopPlace{Prev: tc.prev, Round: tc.round}, func(name string) (string, bool) {
				v, ok := tc.values[name]
				return v, ok
			})
			next := strings.Join(items, " ")
			if next != tc.next || into != tc.into || ok != tc.ok {
				t.Errorf("ItemAfter(%d) = %q, %v, %v; want %q, %v, %v", tc.h, next, into, ok, tc.next, tc.into, tc.ok)
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
