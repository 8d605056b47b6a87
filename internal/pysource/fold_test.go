package pysource

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// condLocals are the frame's locals the condition tests read, by repr.
var condLocals = map[string]string{
	"n": "3", "m": "-7", "z": "0", "s": "'abc'", "e": "''", "w": `"it's"`, "xs": "[1, 'a', None]",
	"t": "(2,)", "d": "{'a': 1, 3: 'x'}", "flag": "True", "nil": "None", "big": "100000000000000000000", "f": "1.5",
	"ns": "[3, -1, 4, True, -1]", "none": "[]", "ts": "(5, 2)", "ws": "['a', 'b c']",
}

func condHolds(src string) (truth, ok bool) {
	return New("if "+src+":\n    pass\n").CondHolds(1, func(name string) (string, bool) {
		if name == "objs" {
			return "[<X object at 0x0>]", true
		}
		v, ok := condLocals[name]
		return v, ok
	})
}

func TestCondHolds(t *testing.T) {
	for _, tc := range []struct {
		cond      string
		truth, ok bool
	}{
		{"n > 2", true, true},
		{"n % 2 == 0", false, true},
		{"m // 2 == -4 and m % 2 == 1", true, true},
		{"0 < n <= 3 < 4", true, true},
		{"n < 3 and q", false, true}, // q is no local, but Python does not read it
		{"n <= 3 and q", false, false},
		{"f > 1 and f < n", true, true},
		{"f == 1.5 and 3 == 3.0", true, true},
		{"s in 'xabcx'", true, true},
		{"'b' in s and 'q' not in s", true, true},
		{"nil is None or n > nil", true, true},
		{"nil is not None and n > nil", false, true},
		{"n > nil", false, false}, // TypeError
		{"not e", true, true},
		{"len(xs) == 3 and None in xs", true, true},
		{"3 in d and 'x' not in d", true, true},
		{"len(t) == 1 and t", true, true},
		{"flag == 1", true, true},
		{"n / 2 > 1", false, false}, // a float
		{"big > 0", false, false},   // past int64
		{"f + 1 > 1", false, false}, // float arithmetic: no rule
		{"n // z", false, false},    // ZeroDivisionError
		{"s.startswith('a') and not s.endswith('a') and s.find('c') == 2 and s.count('b') == 1", true, true},
		{"s.split('b') == ['a', 'c'] or 1", false, false}, // a list display: unread
		{"len(s.split('b')) == 2 and ' '.join(ws) == 'a b c' and '-'.join(s) == 'a-b-c'", true, true},
		{"len('a  b'.split()) == 2 and len('a  b'.split(' ')) == 3", true, true},
		{"s.split('')", false, false},  // ValueError
		{"'-'.join(xs)", false, false}, // TypeError
		{"s.replace('a', 'b')", false, false},
		{"xs[0] == 1", true, true},
		{"xs[-1] is None and s[1] == 'b' and s[-3] == 'a'", true, true},
		{"xs[3]", false, false}, // IndexError
		{"d['a'] == 1", false, false},
		{"sum(ns) == 6 and sum(ts) == 7 and sum(none) == 0", true, true},
		{"min(ns) == -1 and max(ns) == 4 and max(ts) == 5", true, true},
		{"max(none)", false, false}, // ValueError
		{"sum(xs)", false, false},   // TypeError
		{"abs(m) == 7 and abs(flag) == 1", true, true},
		{"max(n, m) == 3 and min(n, m, z) == -7", true, true},
		{"len(s, n)", false, false}, // TypeError
		{"max(n, s)", false, false}, // TypeError
		{"ord(s[0]) == 97 and chr(n + 62) == 'A' and len(chr(39)) == 1", true, true},
		{"chr(92)", false, false}, // a backslash: unread
		{"str(n) + s == '3abc' and str(nil) == 'None' and int(' -12 ') == -12 and int(flag) == 1", true, true},
		{"int('1_000')", false, false},
		{"int(s)", false, false}, // ValueError
		{"objs", false, false},
		{"q > 1", false, false},
		{"(n := 4) > 1", false, false},
		{"n is 3", false, false},
		{"f'{n}' == '3'", false, false},
		{"w == \"it's\"", false, false}, // a literal with a quote: unread
		{"w", true, true},
	} {
		truth, ok := condHolds(tc.cond)
		if truth != tc.truth || ok != tc.ok {
			t.Errorf("CondHolds(%s) = %v, %v; want %v, %v", tc.cond, truth, ok, tc.truth, tc.ok)
		}
	}
	// not a condition's header, one over two lines, or a false one whose
	// way out may leave an except clause's body (which deletes e)
	ix := New("x = 1\nif x:\n    pass\nwhile x: pass\nif (x or\n        x):\n    pass\ntry:\n    pass\nexcept E as e:\n    while not x:\n        pass\n")
	for _, h := range []int{1, 3, 4, 5, 11} {
		if _, ok := ix.CondHolds(h, func(string) (string, bool) { return "1", true }); ok {
			t.Errorf("CondHolds(%d) known", h)
		}
	}
	if first, last, ok := New("while n:\n    a = 1\n\n    b = 2\nelse:\n    c = 3\n").CondBody(1); first != 2 || last != 4 || !ok {
		t.Errorf("CondBody(1) = %d, %d, %v; want 2, 4, true", first, last, ok)
	}
}

// TestCondHoldsAgreesWithPython draws 20,000 conditions at random and checks
// every truth CondHolds knows against CPython's (a condition it knows must
// not raise either).
func TestCondHoldsAgreesWithPython(t *testing.T) {
	if _, err := os.Stat(python311); err != nil {
		t.Skipf("no %s to compare with (%v)", python311, err)
	}
	rng := rand.New(rand.NewSource(1))
	names := []string{"n", "m", "z", "s", "e", "w", "xs", "t", "d", "flag", "nil", "big", "f", "q", "ns", "none", "ts", "ws"}
	literals := []string{"0", "1", "2", "3", "-3", "12", "'a'", "'abc'", "''", "'b c'", "True", "False", "None", "1.5", "0.0", "2.0", "1e3"}
	var atom, expr func(depth int) string
	methods := []string{".upper()", ".lower()", ".strip()", ".lstrip()", ".rstrip()", ".isdigit()", ".isalpha()", ".isalnum()", ".isspace()", ".isupper()", ".islower()", ".title()",
		".split()", ".split(' ')", ".split('a')", ".count('a')", ".find('b')", ".startswith('a')", ".endswith(s)", ".join(ws)", ".join(s)", ".join(xs)"}
	literals = append(literals, "' a1 '", "'A b'", "'42'")
	atom = func(depth int) string {
		if rng.Intn(6) == 0 {
			recv := append([]string{"s", "e", "w", "n"}, literals...)
			return recv[rng.Intn(len(recv))] + methods[rng.Intn(len(methods))]
		}
		switch k := rng.Intn(10); {
		case k < 4:
			return names[rng.Intn(len(names))]
		case k < 8 || depth > 2:
			return literals[rng.Intn(len(literals))]
		case k < 9 && rng.Intn(2) == 0:
			if rng.Intn(3) == 0 {
				return []string{"min", "max"}[rng.Intn(2)] + "(" + atom(depth+1) + ", " + atom(depth+1) + ")"
			}
			fns := []string{"len", "sum", "min", "max", "abs", "ord", "chr", "str", "int", "sorted", "list", "tuple"}
			return fns[rng.Intn(len(fns))] + "(" + atom(depth+1) + ")"
		case k < 9 && rng.Intn(2) == 0:
			return atom(depth+1) + "[" + atom(depth+1) + "]"
		case k < 9:
			switch rng.Intn(4) {
			case 0:
				return "[" + atom(depth+1) + ", " + atom(depth+1) + "]"
			case 1:
				return "(" + atom(depth+1) + ", " + atom(depth+1) + ")"
			case 2:
				return "(" + atom(depth+1) + ",)"
			}
			return "(" + atom(depth+1) + " if " + atom(depth+1) + " else " + atom(depth+1) + ")"
		}
		return "(" + expr(depth+1) + ")"
	}
	arith := func(depth int) string {
		a := atom(depth)
		for rng.Intn(3) == 0 {
			a += " " + []string{"+", "-", "*", "//", "%", "/", "&"}[rng.Intn(7)] + " " + atom(depth)
		}
		if rng.Intn(6) == 0 {
			a = "-" + a
		}
		return a
	}
	expr = func(depth int) string {
		c := arith(depth)
		for rng.Intn(2) == 0 {
			c += " " + []string{"<", "<=", ">", ">=", "==", "!=", "in", "not in", "is", "is not"}[rng.Intn(10)] + " " + arith(depth)
		}
		if rng.Intn(4) == 0 {
			c = "not " + c
		}
		if rng.Intn(3) == 0 && depth < 3 {
			c += " " + []string{"and", "or"}[rng.Intn(2)] + " " + expr(depth+1)
		}
		return c
	}
	var conds []string
	for range 20000 {
		conds = append(conds, expr(0))
	}
	req, _ := json.Marshal(map[string]any{"locals": condLocals, "conds": conds})
	cmd := exec.Command(python311, "-W", "ignore", "testdata/condeval.py")
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("condeval.py: %v\n%s", err, stderr.String())
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(conds) {
		t.Fatalf("condeval.py: %d answers for %d conditions (%v)", len(want), len(conds), err)
	}
	known := 0
	for i, c := range conds {
		truth, ok := condHolds(c)
		if !ok {
			continue
		}
		known++
		if want[i] != map[bool]string{true: "True", false: "False"}[truth] {
			t.Errorf("CondHolds(%s) = %v; CPython: %s", c, truth, want[i])
		}
	}
	t.Logf("%d of %d random conditions known, each as CPython evaluates it", known, len(conds))
	if known < len(conds)/8 {
		t.Errorf("only %d of %d conditions known", known, len(conds))
	}
}

// FuzzCondHolds: reading any condition, in a header or alone (ParseExpr),
// never panics.
func FuzzCondHolds(f *testing.F) {
	for _, s := range []string{"n > 2", "not (s in 'abc') or len(xs)", "0 < n <= 3", "d and -m // 2", "x is not None", "((("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		condHolds(cond)
		if x, ok := ParseExpr(cond); ok {
			x.Truth(func(name string) (string, bool) { v, ok := condLocals[name]; return v, ok })
		}
	})
}

func TestAssignsValue(t *testing.T) {
	values := map[string]string{"n": "3", "s": "'ab'", "w": `"it's"`, "xs": "[1, 2]", "obj": "<X object at 0x0>", "nil": "None", "f": "1.5"}
	for _, tc := range []struct {
		src, name, repr string
		ok              bool
	}{
		{"x = n * 2 + 1", "x", "7", true},
		{"x = (n + 4) // 2", "x", "3", true},
		{"n += 1", "n", "4", true},
		{"n -= len(xs)", "n", "1", true},
		{"s += 'c'", "s", "'abc'", true},
		{"w = w + 's'", "w", `"it'ss"`, true},
		{"x = obj", "x", "<X object at 0x0>", true},
		{"x = xs", "x", "[1, 2]", true},
		{"x = n > 2", "x", "True", true},
		{"x = not s", "x", "False", true},
		{"x = nil", "x", "None", true},
		{"x = s * 2", "", "", false},
		{"x = f + 1", "", "", false},
		{"xs += [3]", "", "", false}, // a list grows in place
		{"f += 1", "", "", false},
		{"x = n // 0", "", "", false},
		{"x = q", "", "", false},
		{"x = y = n", "", "", false},
		{"x.a = n", "", "", false},
		{"x = s.upper()", "x", "'AB'", true},
		{"x = s.upper().isupper()", "x", "True", true},
		{"x = s.title()", "", "", false},
		{"total = sum(xs)", "total", "3", true},
		{"x = max(xs) - min(xs)", "x", "1", true},
		{"x = xs[-1] + abs(n - 5)", "x", "4", true},
		{"x = s[0]", "x", "'a'", true},
		{"x = chr(ord(s[1]) + 5) + str(n)", "x", "'g3'", true},
		{"x = chr(39)", "x", `"'"`, true},
		{"words = s.split('b')", "words", "['a', '']", true},
		{"x = ' '.join(s.split('b'))", "x", "'a '", true},
		{"x = xs[1:]", "", "", false}, // a slice: unread
		{"pair = (n, s)", "pair", "(3, 'ab')", true},
		{"x = [n, nil, (n,)]", "x", "[3, None, (3,)]", true},
		{"x = n if s else q", "x", "3", true},               // q is not read
		{"x = sorted(xs + [0]) if n else 1", "", "", false}, // a list + list: unread
		{"x = sorted('ba') + [] if 0 else sorted('cab')", "x", "['a', 'b', 'c']", true},
		{"x = tuple(xs)", "x", "(1, 2)", true},
		{"x = [c for c in s]", "", "", false},
		{"x = xs[2]", "", "", false}, // IndexError
		{"x = min([])", "", "", false},
		{"__x = n", "", "", false},
		{"try:\n    pass\nexcept E as e:\n    x = n", "", "", false},
		{"x = 'a' + 'b' * 0", "", "", false},
		{"x = s + 'c' * 50 + 'd' * 0", "", "", false},
	} {
		name, repr, ok := New(tc.src+"\n").AssignsValue(strings.Count(tc.src, "\n")+1, func(n string) (string, bool) {
			v, ok := values[n]
			return v, ok
		})
		if name != tc.name || repr != tc.repr || ok != tc.ok {
			t.Errorf("AssignsValue(%s) = %q, %q, %v; want %q, %q, %v", tc.src, name, repr, ok, tc.name, tc.repr, tc.ok)
		}
	}
	for _, tc := range []struct {
		src string
		n   int
	}{{"def f():\n    global n\n    n = 1 + 1\n", 3}, {"def f(n):\n    x = n + 1\n    locals()\n", 2}} {
		if _, _, ok := New(tc.src).AssignsValue(tc.n, func(string) (string, bool) { return "1", true }); ok {
			t.Errorf("AssignsValue(%d) known in %q", tc.n, tc.src)
		}
	}
}

func TestAppendsValue(t *testing.T) {
	locals := map[string]string{"out": "['b']", "none": "[]", "pair": "[[1, 'x'], 2]", "ch": "'a'", "n": "3", "obj": "<X object at 0x0>", "grid": "[[1], [2]]", "row": "[2]", "cut": "[1, 2...", "bad": "<repr raised AttributeError>"}
	each := func(yield func(string, string) bool) {
		for k, v := range locals {
			if !yield(k, v) {
				return
			}
		}
	}
	for _, tc := range []struct {
		src, name, repr string
		ok              bool
	}{
		{"out.append(ch.upper())", "out", "['b', 'A']", true},
		{"none.append(n * 2)", "none", "[6]", true},
		{"out.append(obj)", "out", "['b', <X object at 0x0>]", true},
		{"out.append(out)", "", "", false},
		{"out.append(bad)", "", "", false},
		{"row.append(1)", "", "", false}, // grid may hold it
		{"cut.append(1)", "", "", false},
		{"out.append(q)", "", "", false},
		{"out.append(ch, n)", "", "", false},
		{"ch.append(1)", "", "", false},
		{"out.append(ch * 80)", "", "", false},
		{"out.extend(ch)", "", "", false},
		{"out.append(ch); n = 1", "", "", false},
		{"grid.reverse()", "grid", "[[2], [1]]", true}, // its lists stay as they are
		{"row.reverse()", "", "", false},               // grid may hold it
		{"out.reverse()", "out", "['b']", true},
		{"none.reverse()", "none", "[]", true},
		{"ch.reverse()", "", "", false},
		{"pair.reverse()", "pair", "[2, [1, 'x']]", true},
		{"out.reverse(1)", "", "", false},
	} {
		name, repr, ok := New(tc.src+"\n").AppendsValue(1, each)
		if name != tc.name || repr != tc.repr || ok != tc.ok {
			t.Errorf("AppendsValue(%s) = %q, %q, %v; want %q, %q, %v", tc.src, name, repr, ok, tc.name, tc.repr, tc.ok)
		}
	}
}
