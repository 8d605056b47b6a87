package pysource

import (
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSureAndPossibleLocals: the names a frame surely holds (SureLocals) and may hold
// (PossibleLocals) at each line of small programs; a line not listed has
// no rule. TestFrameNamesHoldOnRealTraces (model/infer) checks both
// against the tracer on real files.
func TestSureAndPossibleLocals(t *testing.T) {
	type names struct{ sure, may []string }
	cases := []struct {
		name string
		src  []string
		want map[int]names
	}{{
		name: "module: statements before the line, loops, with",
		src: []string{
			"import os.path",             // 1
			"from math import sqrt as r", // 2
			"X = Y = 1",                  // 3
			"if X:",                      // 4: an if binds nothing surely
			"    Z = 2",                  // 5
			"for i in range(2):",         // 6
			"    X += i",                 // 7
			"def f(a):",                  // 8: the module's def statement (its body fires elsewhere)
			"    return a",               // 9
			"__all__ = ['f']",            // 10: a dunder: the tracer hides it
			"T: int",                     // 11: binds nothing surely
			"U: int = 2",                 // 12
			"with open('/dev/null') as fh:",
			"    pass",  // 14: in the with: only what came before it is sure
			"print(fh)", // 15
		},
		want: map[int]names{
			1:  {nil, nil},
			2:  {[]string{"os"}, []string{"os"}},
			3:  {[]string{"os", "r"}, []string{"os", "r"}},
			4:  {[]string{"X", "Y", "os", "r"}, []string{"X", "Y", "os", "r"}}, // its body has not run yet
			5:  {[]string{"X", "Y", "os", "r"}, []string{"X", "Y", "os", "r"}},
			6:  {[]string{"X", "Y", "os", "r"}, []string{"X", "Y", "Z", "i", "os", "r"}},
			7:  {[]string{"X", "Y", "i", "os", "r"}, []string{"X", "Y", "Z", "i", "os", "r"}}, // the loop's body holds i
			8:  {[]string{"X", "Y", "i", "os", "r"}, []string{"X", "Y", "Z", "i", "os", "r"}}, // and range(2) ran it
			9:  {[]string{"a"}, []string{"a"}},
			10: {[]string{"X", "Y", "f", "i", "os", "r"}, []string{"X", "Y", "Z", "f", "i", "os", "r"}},
			11: {[]string{"X", "Y", "f", "i", "os", "r"}, []string{"X", "Y", "Z", "f", "i", "os", "r"}},
			12: {[]string{"X", "Y", "f", "i", "os", "r"}, []string{"T", "X", "Y", "Z", "f", "i", "os", "r"}},
			13: {[]string{"U", "X", "Y", "f", "i", "os", "r"}, []string{"T", "U", "X", "Y", "Z", "f", "fh", "i", "os", "r"}}, // range(2) runs
			14: {[]string{"U", "X", "Y", "f", "fh", "i", "os", "r"}, []string{"T", "U", "X", "Y", "Z", "f", "fh", "i", "os", "r"}},
			15: {[]string{"U", "X", "Y", "f", "fh", "i", "os", "r"}, []string{"T", "U", "X", "Y", "Z", "f", "fh", "i", "os", "r"}},
		},
	}, {
		name: "an except's name: only in its handler, which deletes it",
		src: []string{
			"for v in (1, 0):",                   // 1
			"    try:",                           // 2
			"        r = 1 / v",                  // 3
			"    except ZeroDivisionError as e:", // 4: not bound yet
			"        msg = str(e)",               // 5
			"    except KeyError as k: print(k)", // 6: a one-line handler
			"print(v)",                           // 7: deleted
		},
		want: map[int]names{ // the loop comes back to its header: nothing is sure there; its body holds v
			1: {nil, []string{"msg", "r", "v"}},
			2: {[]string{"v"}, []string{"msg", "r", "v"}},
			3: {[]string{"v"}, []string{"msg", "r", "v"}},
			4: {[]string{"v"}, []string{"msg", "r", "v"}},
			5: {[]string{"e", "v"}, []string{"e", "msg", "r", "v"}}, // the handler holds e
			6: {[]string{"v"}, []string{"msg", "r", "v"}},
			7: {[]string{"v"}, []string{"msg", "r", "v"}}, // a loop over a literal with items ran
		},
	}, {
		name: "a handler comes before the try body's last binding",
		src: []string{
			"def safe_div(a, b):",               // 1
			"    try:",                          // 2
			"        q = a // b",                // 3
			"        result = a / b",            // 4
			"    except ZeroDivisionError:",     // 5: result never bound here
			"        result = None",             // 6
			"    try:",                          // 7
			"        x, self.y = 1, 2",          // 8: x is stored before self.y may raise
			"    except AttributeError:",        // 9
			"        pass",                      // 10
			"    for i in range(2):",            // 11
			"        try:",                      // 12
			"            z = 1 / i",             // 13
			"        except ZeroDivisionError:", // 14: a loop: z of an earlier round
			"            pass",                  // 15
			"    return result",                 // 16
		},
		want: func() map[int]names {
			ab, abi, loop := []string{"a", "b"}, []string{"a", "b", "i"}, []string{"a", "b", "i", "q", "result", "x", "z"}
			return map[int]names{
				1: {nil, nil}, 2: {ab, ab}, 3: {ab, ab}, 4: {[]string{"a", "b", "q"}, []string{"a", "b", "q"}},
				5: {ab, []string{"a", "b", "q"}}, 6: {ab, []string{"a", "b", "q"}},
				7: {ab, []string{"a", "b", "q", "result"}}, 8: {ab, []string{"a", "b", "q", "result"}},
				9: {ab, []string{"a", "b", "q", "result", "x"}}, 10: {ab, []string{"a", "b", "q", "result", "x"}},
				11: {ab, loop}, 12: {abi, loop}, 13: {abi, loop}, 14: {abi, loop}, 15: {abi, loop}, 16: {abi, loop},
			}
		}(),
	}, {
		name: "function: parameters, its body's first level, := anywhere",
		src: []string{
			"def f(a, *args, b=2, **kw):", // 1
			"    global G",                // 2
			"    G = a",                   // 3
			"    c = a + b",               // 4
			"    for i in args:",          // 5
			"        d = i",               // 6
			"    e = [c for c in args]",   // 7: a comprehension runs here too
			"    g = e",                   // 8
			"    if (h := 1):",            // 9
			"        pass",                // 10
			"    del c",                   // 11
			"    return g",                // 12
		},
		want: map[int]names{
			1:  {nil, []string{"G"}}, // the module's def statement: G, that f may bind any time
			2:  {[]string{"a", "args", "b", "kw"}, []string{"a", "args", "b", "h", "kw"}},
			3:  {[]string{"a", "args", "b", "kw"}, []string{"a", "args", "b", "h", "kw"}},
			4:  {[]string{"a", "args", "b", "kw"}, []string{"a", "args", "b", "h", "kw"}},
			5:  {[]string{"a", "args", "b", "kw"}, []string{"a", "args", "b", "c", "d", "h", "i", "kw"}},
			6:  {[]string{"a", "args", "b", "i", "kw"}, []string{"a", "args", "b", "c", "d", "h", "i", "kw"}}, // in the loop's body
			7:  {nil, []string{".0", "a", "args", "b", "c", "d", "h", "i", "kw"}},                             // f's frame, or the comprehension's (.0, c)
			8:  {[]string{"a", "args", "b", "e", "kw"}, []string{"a", "args", "b", "c", "d", "e", "h", "i", "kw"}},
			9:  {[]string{"a", "args", "b", "e", "g", "kw"}, []string{"a", "args", "b", "c", "d", "e", "g", "h", "i", "kw"}},
			10: {[]string{"a", "args", "b", "e", "g", "kw"}, []string{"a", "args", "b", "c", "d", "e", "g", "h", "i", "kw"}},
			11: {[]string{"a", "args", "b", "e", "g", "kw"}, []string{"a", "args", "b", "c", "d", "e", "g", "h", "i", "kw"}},
			12: {[]string{"a", "args", "b", "e", "g", "kw"}, []string{"a", "args", "b", "c", "d", "e", "g", "h", "i", "kw"}},
		},
	}, {
		name: "names other code binds or drops: global, nonlocal, del, except ... as, :=",
		src: []string{
			"e = 1",                   // 1: k may be bound by f at any time
			"k = 2",                   // 2
			"m = n = (p := 3)",        // 3: a := makes the whole statement unsure
			"try:",                    // 4
			"    pass",                // 5
			"except ValueError as e:", // 6: Python deletes e after the handler
			"    pass",                // 7
			"def f():",                // 8
			"    global k",            // 9
			"    del k",               // 10
			"q = 4",                   // 11
			"class C:",                // 12: a header, as 8, 14 and 16
			"    w = 1",               // 13: a class body: no rule
			"def g():",                // 14
			"    x = 1",               // 15: h may set x at any time
			"    def h():",            // 16
			"        nonlocal x",      // 17
			"        x = 2",           // 18
			"    return x",            // 19
			"print(q)",                // 20
		},
		want: map[int]names{
			1:  {nil, []string{"k", "p"}},
			2:  {nil, []string{"e", "k", "p"}},
			3:  {nil, []string{"e", "k", "p"}},
			4:  {nil, []string{"e", "k", "m", "n", "p"}},
			5:  {nil, []string{"e", "k", "m", "n", "p"}},
			6:  {nil, []string{"e", "k", "m", "n", "p"}},
			7:  {[]string{"e"}, []string{"e", "k", "m", "n", "p"}}, // the handler's own name, until it ends
			8:  {nil, []string{"e", "k", "m", "n", "p"}},
			9:  {nil, nil},
			10: {nil, nil},
			11: {[]string{"f"}, []string{"e", "f", "k", "m", "n", "p"}},
			12: {nil, []string{"e", "f", "k", "m", "n", "p", "q"}},
			14: {[]string{"C", "f", "q"}, []string{"C", "e", "f", "k", "m", "n", "p", "q"}},
			15: {nil, []string{"x"}},
			16: {[]string{"x"}, []string{"x"}},
			17: {nil, []string{"x"}},
			18: {nil, []string{"x"}},
			19: {[]string{"h", "x"}, []string{"h", "x"}},
			20: {[]string{"C", "f", "g", "q"}, []string{"C", "e", "f", "g", "k", "m", "n", "p", "q"}},
		},
	}, {
		name: "classes with bases (a metaclass writes their bodies only), decorators, one-line defs",
		src: []string{
			"class E(Exception):",            // 1: E's body may hold names its text does not show
			"    pass",                       // 2
			"class A:",                       // 3
			"    pass",                       // 4
			"@staticmethod",                  // 5: d's first line: a docstring-only body fires here
			"def d(x):",                      // 6
			"    'only a docstring'",         // 7
			"def one(y): return y",           // 8: a one-line body: no rule
			"a = A()",                        // 9
			"print(a, d(1), one(2), E('e'))", // 10
		},
		want: map[int]names{
			3:  {nil, []string{"E"}},           // the module, or A's body holding nothing yet
			5:  {nil, []string{"A", "E", "x"}}, // the module, or d's frame holding x
			6:  {[]string{"A", "E"}, []string{"A", "E"}},
			7:  {[]string{"x"}, []string{"x"}},
			9:  {[]string{"A", "E", "d", "one"}, []string{"A", "E", "d", "one"}},
			10: {[]string{"A", "E", "a", "d", "one"}, []string{"A", "E", "a", "d", "one"}},
		},
	}, {
		name: "a module that writes its names through globals(): no rule there",
		src:  []string{"x = 1", "globals()['y'] = 2", "def f(a):", "    return a", "print(f(x))"},
		want: map[int]names{4: {[]string{"a"}, []string{"a"}}},
	}}
	for _, tc := range cases {
		ix := New(strings.Join(tc.src, "\n") + "\n")
		for n := 1; n <= len(tc.src); n++ {
			want, ruled := tc.want[n]
			sure := ix.SureLocals(n)
			may, ok := ix.PossibleLocals(n)
			if ok != ruled || !slices.Equal(sure, want.sure) || !slices.Equal(may, want.may) {
				t.Errorf("%s: line %d (%q): SureLocals %q, PossibleLocals %q (%v); want %q, %q (%v)",
					tc.name, n, tc.src[n-1], sure, may, ok, want.sure, want.may, ruled)
			}
		}
	}
}

// TestFirstLocals: at the first line event a frame fires on a loop's
// header, nothing its statement and body bind may be there; later rounds
// may hold more (PossibleLocals), and elsewhere an earlier round of an
// outer loop may have run any statement of it.
func TestFirstLocals(t *testing.T) {
	src := strings.Join([]string{
		"def search(items, target):",       // 1
		"    lo, hi = 0, len(items) - 1",   // 2
		"    while lo <= hi:",              // 3: first: no mid
		"        mid = (lo + hi) // 2",     // 4
		"        if items[mid] == target:", // 5
		"            return mid",           // 6
		"        lo = mid + 1",             // 7
		"    for k in (1, 2):",             // 8
		"        late = k",                 // 9
		"    return (lo,",                  // 10
		"            late)",                // 11: its statement began on 10
		"print(search([1, 3], 3))",         // 12
	}, "\n") + "\n"
	ix := New(src)
	for _, tc := range []struct {
		n           int
		first, anew []string
	}{
		{3, []string{"hi", "items", "lo", "target"}, []string{"hi", "items", "lo", "mid", "target"}},
		{4, []string{"hi", "items", "lo", "mid", "target"}, []string{"hi", "items", "lo", "mid", "target"}}, // a round may skip it: no rule
		{8, []string{"hi", "items", "lo", "mid", "target"}, []string{"hi", "items", "k", "late", "lo", "mid", "target"}},
		{9, []string{"hi", "items", "k", "late", "lo", "mid", "target"}, []string{"hi", "items", "k", "late", "lo", "mid", "target"}},
		{10, []string{"hi", "items", "k", "late", "lo", "mid", "target"}, []string{"hi", "items", "k", "late", "lo", "mid", "target"}},
	} {
		first, ok1 := ix.FirstLocals(tc.n)
		may, ok2 := ix.PossibleLocals(tc.n)
		if !ok1 || !ok2 || !slices.Equal(first, tc.first) || !slices.Equal(may, tc.anew) {
			t.Errorf("line %d: FirstLocals %q (%v), PossibleLocals %q (%v); want %q, %q", tc.n, first, ok1, may, ok2, tc.first, tc.anew)
		}
	}
}

// TestImportedModules: names only `import` binds, each to one module; any
// other binding, a global declaration, del or := anywhere drops the name.
func TestImportedModules(t *testing.T) {
	src := strings.Join([]string{
		"import os.path, json as j",
		"import xml.etree.ElementTree as ET",
		"import re",
		"import re",
		"import sys; x = 1", // a semicolon: not read
		"try:",
		"    import csv",
		"except ImportError:",
		"    csv = None", // rebound
		"import math",
		"def f():",
		"    global math", // may be rebound
		"    import glob", // a local of f
		"import time",
		"del time",
		"import abc",
		"import abc.x as abc",
		"class C:",
		"    import heapq", // a class attribute
	}, "\n") + "\n"
	got := New(src).ImportedModules()
	want := map[string]string{"os": "os", "j": "json", "ET": "xml.etree.ElementTree", "re": "re"}
	if !maps.Equal(got, want) {
		t.Errorf("ImportedModules = %v, want %v", got, want)
	}
	if got := New("from m import *\nimport os\n").ImportedModules(); got != nil {
		t.Errorf("a star import: ImportedModules = %v, want none", got)
	}
}

func TestFromImported(t *testing.T) {
	src := strings.Join([]string{
		"from math import log10, pi as PI",
		"from collections import (",
		"    defaultdict,",
		"    deque,",
		")",
		"from typing import List; import os", // a second statement: not read
		"from . import sibling",              // relative
		"from os.path import join",
		"from itertools import chain",
		"chain = None", // rebound
		"from random import randint as r",
		"from random import choice as r", // another value
		"from __future__ import annotations",
		"from mylib import thing", // not in the table: no repr
		"def f():",
		"    from heapq import heappush", // a local of f
	}, "\n") + "\n"
	ix := New(src)
	got := ix.FromImported()
	want := map[string]string{"log10": "math.log10", "PI": "math.pi", "defaultdict": "collections.defaultdict",
		"deque": "collections.deque", "join": "os.path.join", "annotations": "__future__.annotations", "thing": "mylib.thing"}
	if !maps.Equal(got, want) {
		t.Errorf("FromImported = %v, want %v", got, want)
	}
	reprs := ix.FixedReprs()
	for name, r := range map[string]string{"log10": "<built-in function log10>", "PI": "3.141592653589793",
		"defaultdict": "<class 'collections.defaultdict'>", "deque": "<class 'collections.deque'>",
		"join": "<function join at 0x0>", "annotations": "_Feature((3, 7, 0, 'beta', 1), None, 16777216)"} {
		if reprs[name] != r {
			t.Errorf("FixedReprs[%s] = %q, want %q", name, reprs[name], r)
		}
	}
	for _, name := range []string{"thing", "chain", "r", "List", "heappush", "sibling"} {
		if r, ok := reprs[name]; ok {
			t.Errorf("FixedReprs[%s] = %q, want none", name, r)
		}
	}
	if got := New("from m import *\nfrom math import pi\n").FromImported(); got != nil {
		t.Errorf("a star import: FromImported = %v, want none", got)
	}
}

// TestStdlibTableMatchesPython checks the embedded table against the
// Python 3.11 on this machine: every name it has there shows that repr.
func TestStdlibTableMatchesPython(t *testing.T) {
	python := ""
	for _, p := range []string{"/usr/bin/python3.11", "python3.11"} {
		if path, err := exec.LookPath(p); err == nil {
			python = path
			break
		}
	}
	if python == "" {
		t.Skip("no Python 3.11 here")
	}
	out, err := exec.Command(python, filepath.Join("stdlib", "reprs.py")).Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, repr, _ := strings.Cut(line, "\t")
		if got, ok := StdlibRepr(name); ok {
			n++
			if got != repr {
				t.Errorf("%s: table %q, Python %q", name, got, repr)
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d names of the table checked", n)
	}
}

// TestClassReprs: decorated and standard-library-derived classes show the
// repr Python 3.11 gives them (checked against it where it is here), and
// a class the text may make otherwise shows none.
func TestClassReprs(t *testing.T) {
	src := strings.Join([]string{
		"import enum, dataclasses",
		"import functools as ft",
		"from enum import Enum, IntEnum, Flag, unique",
		"from dataclasses import dataclass",
		"from typing import NamedTuple, Protocol",
		"from abc import ABC, ABCMeta",
		"class Plain: pass",
		"class Color(Enum):",
		"    RED = 1",
		"class Num(IntEnum):",
		"    ONE = 1",
		"class Status(enum.Enum):",
		"    OK = 0",
		"class Base(str, Enum): pass",
		"class Derived(Base):",
		"    A = 'a'",
		"@unique",
		"class Unique(Enum):",
		"    X = 1",
		"@dataclass",
		"class Point:",
		"    x: int = 0",
		"@dataclasses.dataclass(frozen=True)",
		"class Frozen:",
		"    y: int = 0",
		"@ft.total_ordering",
		"class Ordered(Point):",
		"    def __lt__(self, other): return False",
		"class Pair(NamedTuple):",
		"    a: int",
		"class Shape(Protocol): pass",
		"class Abstract(ABC): pass",
		"class Bits(Flag):", // <flag 'Bits'> in 3.11, <enum 'Bits'> before
		"    B = 1",
		"class Meta(metaclass=ABCMeta): pass",
		"def deco(c): return c",
		"@deco",
		"class Wrapped: pass",
		"class Twice: pass",
		"Twice = 1",
	}, "\n") + "\n"
	want := map[string]string{"Plain": "<class '__main__.Plain'>", "Color": "<enum 'Color'>", "Num": "<enum 'Num'>",
		"Status": "<enum 'Status'>", "Base": "<enum 'Base'>", "Derived": "<enum 'Derived'>", "Unique": "<enum 'Unique'>",
		"Point": "<class '__main__.Point'>", "Frozen": "<class '__main__.Frozen'>", "Ordered": "<class '__main__.Ordered'>",
		"Pair": "<class '__main__.Pair'>", "Shape": "<class '__main__.Shape'>", "Abstract": "<class '__main__.Abstract'>"}
	reprs := New(src).FixedReprs()
	for name, r := range want {
		if reprs[name] != r {
			t.Errorf("FixedReprs[%s] = %q, want %q", name, reprs[name], r)
		}
	}
	for _, name := range []string{"Bits", "Meta", "Wrapped", "Twice"} {
		if r, ok := reprs[name]; ok {
			t.Errorf("FixedReprs[%s] = %q, want none", name, r)
		}
	}
	if r, ok := New("from enum import Enum\nclass C(Enum):\n    __qualname__ = 'D'\n").FixedReprs()["C"]; ok {
		t.Errorf("a class that sets __qualname__: FixedReprs[C] = %q, want none", r)
	}
	python, err := exec.LookPath("python3.11")
	if err != nil {
		return
	}
	check := src + "for name in '" + strings.Join(slices.Sorted(maps.Keys(want)), " ") + "'.split():\n    print(name, repr(globals()[name]), sep='\\t')\n"
	out, err := exec.Command(python, "-c", check).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, repr, _ := strings.Cut(line, "\t")
		if want[name] != repr {
			t.Errorf("%s: want %q, Python 3.11 writes %q", name, want[name], repr)
		}
	}
}

func TestLiteralConstants(t *testing.T) {
	src := strings.Join([]string{
		"A = 5",
		"B = -12",
		"C = 'default.out'",
		`D = "it"`,
		"E = True",
		"F = None",
		"G = 1_000",   // repr drops the underscore
		"H = 'a\\tb'", // an escape
		`I = "it's"`,  // a quote
		"J = 2",
		"J += 1",   // bound twice
		"K = [1]",  // a list: mutable
		"L = 0x10", // repr in decimal
		"M = 3.5",  // a float
		"N = 7",
		"def f():",
		"    global N", // may rebind
		"    N = 8",
		"O = 1; P = 2", // one logical line, two statements: not read
		"class Q:",
		"    R = 1", // a class attribute
	}, "\n") + "\n"
	reprs := New(src).FixedReprs()
	want := map[string]string{"A": "5", "B": "-12", "C": "'default.out'", "D": "'it'", "E": "True", "F": "None",
		"G": "1000", "L": "16", "M": "3.5"}
	for name, r := range want {
		if reprs[name] != r {
			t.Errorf("FixedReprs[%s] = %q, want %q", name, reprs[name], r)
		}
	}
	for _, name := range []string{"H", "I", "J", "K", "N", "O", "P", "R"} {
		if r, ok := reprs[name]; ok {
			t.Errorf("FixedReprs[%s] = %q, want none", name, r)
		}
	}
}

// TestModuleBindOrder: where a module name's binding statements lie, for
// the names whose first binding the text places; loops, `global`, `del`
// and a star import leave names out.
func TestModuleBindOrder(t *testing.T) {
	src := "import sys\ndef main():\n    global g\n    g = 1\nx = 1\nif sys.argv:\n    y = 2\nelse:\n    x = 3\nfor i in range(2):\n    z = i\ndel y\nmain()\n"
	got := New(src).ModuleBindOrder()
	want := map[string]BindSpan{"sys": {0, 0}, "main": {1, 1}, "x": {4, 8}}
	if !maps.Equal(got, want) {
		t.Errorf("ModuleBindOrder %v, want %v", got, want)
	}
	if !want["main"].Before(want["x"]) || want["x"].Before(want["main"]) {
		t.Error("main is bound before x")
	}
	if New("from os import *\nx = 1\n").ModuleBindOrder() != nil {
		t.Error("a star import may bind any name first")
	}
}

// TestNumberRepr: a number literal's repr as CPython 3.11 writes it
// (the table is Python's own: repr(ast.literal_eval(text)), and negated).
func TestNumberRepr(t *testing.T) {
	for _, tc := range []struct{ text, repr, neg string }{
		{"0", "0", "0"}, {"00", "0", "0"}, {"7", "7", "-7"}, {"1_000_000", "1000000", "-1000000"},
		{"0x1F", "31", "-31"}, {"0o17", "15", "-15"}, {"0b101", "5", "-5"},
		{"0.05", "0.05", "-0.05"}, {"1e-25", "1e-25", "-1e-25"}, {"0.0000000000000000000000001", "1e-25", "-1e-25"},
		{"1.", "1.0", "-1.0"}, {".5", "0.5", "-0.5"}, {"1e16", "1e+16", "-1e+16"},
		{"1e15", "1000000000000000.0", "-1000000000000000.0"}, {"123.0", "123.0", "-123.0"}, {"1E5", "100000.0", "-100000.0"},
		{"1_0.5", "10.5", "-10.5"}, {"3.14159", "3.14159", "-3.14159"},
		{"12345678901234567.0", "1.2345678901234568e+16", "-1.2345678901234568e+16"}, {"1e999", "inf", "-inf"},
		{"0.1", "0.1", "-0.1"}, {"2.5e-5", "2.5e-05", "-2.5e-05"}, {"100.0e-2", "1.0", "-1.0"}, {"0.0", "0.0", "-0.0"},
		{"1e-4", "0.0001", "-0.0001"}, {"1e-3", "0.001", "-0.001"}, {"9007199254740993.0", "9007199254740992.0", "-9007199254740992.0"},
		{"1.7976931348623157e308", "1.7976931348623157e+308", "-1.7976931348623157e+308"}, {"5e-324", "5e-324", "-5e-324"},
		{"017", "", ""}, {"1j", "", ""}, {"1__0", "", ""}, {"1_", "", ""}, {"0x", "", ""},
	} {
		for neg, want := range map[bool]string{false: tc.repr, true: tc.neg} {
			got, ok := numberRepr(tc.text, neg)
			if ok != (want != "") || got != want {
				t.Errorf("numberRepr(%q, %v) = %q, %v; want %q", tc.text, neg, got, ok, want)
			}
		}
	}
}

// TestFrameObjectsOpenEveryScope: code that holds a frame object
// (sys._getframe, inspect.currentframe) may write any frame's locals, so
// no scope's names are known (a real-world recipe wrote "variant$28" into
// its caller's frame).
func TestFrameObjectsOpenEveryScope(t *testing.T) {
	src := "import sys\ndef mark(v):\n    sys._getframe(1).f_locals['seen'] = v\n    return v\ndef test():\n    x = mark(1)\n    return x\ntest()\n"
	ix := New(src)
	for n := 1; n <= len(ix.Lines); n++ {
		if may, ok := ix.PossibleLocals(n); ok {
			t.Errorf("line %d: PossibleLocals %v, want none", n, may)
		}
	}
	if _, ok := New("def test():\n    x = 1\n    return x\ntest()\n").PossibleLocals(2); !ok {
		t.Errorf("without a frame object, line 2 has no PossibleLocals")
	}
}

// TestSureLocalsNested: in a nested suite, the statements before the line
// in each suite that holds it ran (a for's target and a with's are bound in
// their bodies, a handler's name in its handler); other branches of an if,
// try or match, and earlier statements' bodies, may not have run; a for
// over a literal with items or range() of literals that counts one ran.
func TestSureLocalsNested(t *testing.T) {
	src := strings.Join([]string{
		"def f(c):", // 1
		"    if c:", // 2
		"        a = 1",
		"    elif c > 1:", // 4
		"        b = 2",
		"    else:", // 6
		"        d = 3",
		"        e = 4", // 8: d ran before it, a and b did not
		"    for x in []:",
		"        pass", // 10: x bound in the body
		"    for y in 'ab':",
		"        g = y",
		"    for z in range(0):",
		"        pass",
		"    for w in range(1, 3):",
		"        pass",
		"    h = 1", // 17: y and w bound, x and z not, g not (a body)
		"    for u in [v for v in c]:",
		"        pass",
		"    for u2 in (*c,):",
		"        pass",
		"    for u3 in (c):",
		"        pass",
		"    for u4 in (c, *c):",
		"        pass",
		"    o = 1", // 26: only u4 (one item that is not starred)
		"    match c:",
		"        case 1:",
		"            m = 1",
		"        case _:",
		"            n = 2", // 31: m's case did not run
		"    try:",
		"        p = 1",
		"    except ValueError as err:",
		"        try:",
		"            q = 1",
		"        except KeyError as err:",
		"            pass",
		"        r = err", // 39: the inner handler deleted err
		"    while c:",
		"        s = 1",
		"        t = s", // 42: s ran in this round
		"    return h",
	}, "\n") + "\n"
	ix := New(src)
	for _, tc := range []struct {
		line int
		want []string
	}{
		{3, []string{"c"}},
		{5, []string{"c"}},
		{8, []string{"c", "d"}},
		{10, []string{"c", "x"}},
		{12, []string{"c", "y"}},
		{17, []string{"c", "w", "y"}},
		{26, []string{"c", "h", "u4", "w", "y"}},
		{31, []string{"c", "h", "o", "u4", "w", "y"}}, // m's case did not run
		{33, []string{"c", "h", "o", "u4", "w", "y"}},
		{36, []string{"c", "h", "o", "u4", "w", "y"}}, // err: two handlers bind and delete it
		{39, []string{"c", "h", "o", "u4", "w", "y"}}, // q: in a try body that may not have run
		{42, []string{"c", "h", "o", "s", "u4", "w", "y"}},
	} {
		if got := ix.SureLocals(tc.line); !slices.Equal(got, tc.want) {
			t.Errorf("line %d (%q): SureLocals %q, want %q", tc.line, ix.Line(tc.line), got, tc.want)
		}
	}
}

// TestLoopValues: after a loop over a literal or range() of literals that
// ran to its end, its target holds the last item; not where a break may
// end it early, another statement binds the name, or the loop is in a
// branch that may not have run.
func TestLoopValues(t *testing.T) {
	src := strings.Join([]string{
		"for k in (3, 5):", // 1
		"    pass",
		"for i in range(4):", // 3
		"    if i > 5:",
		"        break",
		"for j in range(2, 6):", // 6
		"    pass",
		"for s in ['a', 'b', -2]:", // 8
		"    pass",
		"if k:", // 10
		"    for z in [1, 2]:",
		"        pass",
		"for w in [1, 2]:", // 13
		"    w = 0",
		"print(k, j, s)", // 15
		"def f():",
		"    for q in range(1, 3):",
		"        pass",
		"    def g():",
		"        nonlocal q",
		"        q = 9",
		"    for r in [7]:",
		"        pass",
		"    return r", // 24
	}, "\n") + "\n"
	ix := New(src)
	for _, tc := range []struct {
		line int
		want map[string]string
	}{
		{2, nil}, // inside the loop
		{15, map[string]string{"k": "5", "j": "5", "s": "-2"}}, // not i (a break), z (in an if), w (bound twice)
		{24, map[string]string{"r": "7"}},                      // not q (g may rebind it)
	} {
		if got := ix.LoopValues(tc.line); !maps.Equal(got, tc.want) {
			t.Errorf("line %d: LoopValues %v, want %v", tc.line, got, tc.want)
		}
	}
}
