package engine

import (
	"context"
	"slices"
	"testing"

	"ndb/tracer"
)

// TestLocateKnowsEveryStatesFunction: for every state of real traces, the
// code names the source index gives its event and line (functions) hold
// the state's function. The programs have what the regular expressions
// before the index got wrong: a class body's line event on its first line
// (a decorator's for a decorated class), a decorated function's call on
// its decorator's line, line events on a statement's continuation lines, a
// comprehension that starts on a continuation line, lambdas, a one-line
// def, a resumed generator, and "def" in strings and comments.
func TestLocateKnowsEveryStatesFunction(t *testing.T) {
	programs := []tracer.Program{
		{Source: `import functools
def deco(c): return c
DOC = """
def fake(x):
    return x
"""
@deco
class K:  # def k():
    x = 1
    def m(self, v): return [i * v
        for i in range(self.x + 1)]
class J: y = 2
@deco
def f(a,
      b):
    def gen(n):
        for i in range(n):
            yield i
    out = [v for v in gen(2)]
    key = lambda v: -v
    return sorted(out + K().m(a), key=key) + [
        b]
print(f(1, 2), J.y, DOC.count("def"))
`},
		{Source: "class Oops(Exception):\n    pass\n\ndef risky(x):\n    if x > 2:\n        raise Oops(x)\n    return x\n\ntry:\n    risky(5)\nexcept Oops:\n    pass\nrisky(1)\n"},
	}
	re := NewReal(Options{Workers: 1})
	defer re.Close()
	for _, p := range programs {
		tr, err := re.Trace(context.Background(), Program{Source: p.Source})
		if err != nil {
			t.Fatal(err)
		}
		ix := newSourceIndex(p.Source, nil)
		for _, s := range tr.States {
			if s.Lineno < 1 || s.Function == "" {
				continue // the module's call before its first line
			}
			if fns := ix.functions(s.Event, s.Lineno); !slices.Contains(fns, s.Function) {
				t.Errorf("%s of %s at line %d %q: the index says %v", s.Event, s.Function, s.Lineno, ix.line(s.Lineno), fns)
			}
		}
	}
}

// TestCodeNameOfALineNotInTheProgram: a call event whose line the program
// does not have is named by the line's own text.
func TestCodeNameOfALineNotInTheProgram(t *testing.T) {
	for src, want := range map[string]string{"    def helper(x, y):": "helper", "async def co():": "co", "class C(B):": "C",
		"    xs = [i for i in y]": "<listcomp>", "key=lambda v: v": "<lambda>", "    return x": "<unknown>", "s = 'def f(): pass'": "<unknown>"} {
		if got := codeNameOf(src); got != want {
			t.Errorf("codeNameOf(%q) = %q, want %q", src, got, want)
		}
	}
}
