package infer

import (
	"bufio"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/dataset"
	"ndb/format"
	"ndb/internal/pysource"
	"ndb/model/train/synthtext"
	"ndb/tracer"
)

// TestProgramScopes checks the blocks read from a program's text.
func TestProgramScopes(t *testing.T) {
	src := strings.Join([]string{
		"import functools",                  // 0 module
		"def deco(f):  # (",                 // 1 module, opens 0
		"    @functools.wraps(f)",           // 2 block 0, decorator of 1
		"    def inner(*a):",                // 3 block 0, opens 1
		"        s = '''text",               // 4 block 1
		"def not_a_def():",                  // 5 inside the string: block 1
		"'''",                               // 6 block 1
		"        return f(*a,",              // 7 block 1
		"  1)",                              // 8 continuation: block 1
		"    return inner",                  // 9 block 0
		"class K:",                          // 10 module and block 2 (a class body starts on its header), opens 2
		"    x = [i for i in (1, 2)]",       // 11 block 2
		"    def m(self): return self.x \\", // 12 block 2 and its own 3 (one-line body)
		"        + [3]",                     // 13 continues line 12
		"y = K().m()  # def z():",           // 14 module
	}, "\n")
	s := programScopes(nil, src)
	want := [][]int{{-1}, {-1}, {0}, {0}, {1}, {1}, {1}, {1}, {1}, {0}, {-1, 2}, {2}, {2, 3}, {2, 3}, {-1}}
	for i := range want {
		if !slices.Equal(s.member[i], want[i]) {
			t.Errorf("line %d %q: scopes %v, want %v", i, s.lines[i], s.member[i], want[i])
		}
	}
	opens := map[int]int{1: 0, 2: 1, 3: 1, 10: 2, 12: 3}
	for i := range s.lines {
		w, ok := opens[i]
		if !ok {
			w = noBlock
		}
		if s.opens[i] != w {
			t.Errorf("line %d %q opens %d, want %d", i, s.lines[i], s.opens[i], w)
		}
	}

	block1 := []string{"        s = '''text", "        return f(*a,", "  1)", "'''", "def not_a_def():"}
	for _, tc := range []struct {
		block int
		name  string
		ok    bool
	}{{-1, "deco", true}, {-1, "K", true}, {-1, "y", true}, {-1, "functools", true}, {-1, "f", false}, {-1, "inner", false}, {-1, "x", false},
		{0, "f", true}, {0, "inner", true}, {1, "a", true}, {1, "s", true}, {1, "K", false}, {2, "x", true}, {2, "m", true}, {3, "self", true}, {3, "..", true}, {3, "def", false}} {
		if got := s.names[tc.block].contains(tc.name); got != tc.ok {
			t.Errorf("block %d has name %q: %v, want %v", tc.block, tc.name, got, tc.ok)
		}
	}
	if open := programScopes(nil, "from m import *\nx = 1\n"); open.names[-1] != nil || open.namesOf("x = 1", false) != nil {
		t.Error("a star import must leave the module's names open")
	}
	if g := programScopes(nil, "def f():\n    global counter\n    counter = 1\n"); !g.names[-1].contains("counter") {
		t.Error("a global statement binds a module name")
	}
	// whether the module's names are open is read from code, not words:
	// a star import without a space, exec with one, globals() in a
	// function leave them open; a comment or a string does not
	for _, tc := range []struct {
		src  string
		open bool
	}{
		{"from m import*\nx = 1\n", true},
		{"exec ('y = 1')\nx = 1\n", true},
		{"def f():\n    globals()['y'] = 1\nx = 1\n", true},
		{"import sys\nsys.modules[__name__].y = 1\nx = 1\n", true},
		{"x = 1  # no exec( or import * here\ns = 'globals()'\n", false},
	} {
		if got := programScopes(nil, tc.src).names[-1] == nil; got != tc.open {
			t.Errorf("%q: module names open = %v, want %v", tc.src, got, tc.open)
		}
	}

	step := func(frame, action string) string {
		return format.TokBeginOfText + format.TokTraceContextStart + src + format.TokFrameSep + frame + action + format.TokFrameSep
	}
	for _, tc := range []struct {
		prompt string
		want   []string // nil: no scope
	}{
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>        return f(*a,<|action_sep|>`, format.TokStepOver), block1},
		{step(`<|call_sep|><|src_sep|>    @functools.wraps(f)<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), block1},
		{step(`<|call_sep|><|src_sep|>    x = [i for i in (1, 2)]<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), nil}, // a comprehension's frame
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokBreakpoint+"y = K().m()  # def z():"), []string{"y = K().m()  # def z():"}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokBreakpoint+"    not a line"), nil},
		// a line inside a string runs nothing: no frame but the exit shows it
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokBreakpoint+"def not_a_def():"), []string{}},
		// module code that runs once, left behind by the module's frame: only the exit
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>y = K().m()  # def z():<|action_sep|>`, format.TokBreakpoint+"import functools"), []string{}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>import functools<|action_sep|>`, format.TokBreakpoint+"y = K().m()  # def z():"), []string{"y = K().m()  # def z():"}},
		// ... and from a call the module's frame made there (or later)
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>y = K().m()  # def z():<|action_sep|><|step_into|><|frame_sep|>`+
			`<|call_sep|><|src_sep|>    def m(self): return self.x \<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>`+
			`<|line_sep|><|arg_sep|>{}<|src_sep|>    def m(self): return self.x \<|action_sep|>`, format.TokBreakpoint+"import functools"), []string{}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>import functools<|action_sep|><|step_over|><|frame_sep|>`+
			`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokBreakpoint+"y = K().m()  # def z():"), []string{"y = K().m()  # def z():"}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>y = K().m()  # def z():<|action_sep|>`, format.TokBreakpoint+"        return f(*a,"), []string{"        return f(*a,"}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokContinue), nil},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokStepReturn),
			[]string{"    @functools.wraps(f)", "    def inner(*a):", "    return inner"}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>y = K().m()  # def z():<|action_sep|>`, format.TokStepInto),
			[]string{"import functools", "def deco(f):  # (", "class K:", "y = K().m()  # def z():"}},
		{step(`<|return_sep|><|src_sep|>    return inner<|arg_sep|>"1"<|action_sep|>`, format.TokStepOver), nil}, // back in the caller
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    not a line<|action_sep|>`, format.TokStepOver), nil},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokInvStepOver), nil}, // a forward frame, an inverse action
	} {
		got := s.functionLines(tc.prompt, s.runsAsScript(tc.prompt))
		want := sortedSet(slices.Clone(tc.want))
		want.sort()
		for _, tok := range []string{format.TokLineSep, format.TokReturnSep, format.TokExceptionSep} {
			if (got != nil) != (tc.want != nil) || got != nil && !slices.Equal(got[tok], want) {
				t.Errorf("prompt ending %q: %s scope %q, want %q", tc.prompt[len(src):], tok, got[tok], want)
			}
		}
	}

	// the module's own line, left behind by its line event: its return or
	// an exception may still come there, no line event; a def's line still
	// gets its function's call
	for _, tc := range []struct {
		frame, bp            string
		line, call, retOrExc bool
	}{
		{"y = K().m()  # def z():", "y = K().m()  # def z():", false, false, true},
		{"y = K().m()  # def z():", "def deco(f):  # (", false, true, true},
		{"def deco(f):  # (", "def deco(f):  # (", false, true, true},
		{"def deco(f):  # (", "import functools", false, false, false},
	} {
		prompt := step(`<|line_sep|><|arg_sep|>{}<|src_sep|>`+tc.frame+`<|action_sep|>`, format.TokBreakpoint+tc.bp)
		got := s.functionLines(prompt, s.runsAsScript(prompt))
		for tok, want := range map[string]bool{format.TokLineSep: tc.line, format.TokCallSep: tc.call, format.TokReturnSep: tc.retOrExc, format.TokExceptionSep: tc.retOrExc} {
			if lines, ruled := got[tok]; !ruled || (len(lines) > 0) != want {
				t.Errorf("at %q, breakpoint %q: %s may show it: %v (a rule: %v), want %v", tc.frame, tc.bp, tok, len(lines) > 0, ruled, want)
			}
		}
	}

	// backwards: lines of the running function, and its header for the call
	for _, tc := range []struct {
		prompt      string
		lines, call []string // nil: no rule
	}{
		{step(`<|inv_line_sep|><|src_sep|>        return f(*a,<|arg_sep|>{}<|action_sep|>`, format.TokInvStepCall),
			block1, append([]string{"    @functools.wraps(f)", "    def inner(*a):"}, block1...)},
		{step(`<|inv_return_sep|><|src_sep|>    return inner<|arg_sep|>"1"<|action_sep|>`, format.TokInvStepInto),
			[]string{"    @functools.wraps(f)", "    def inner(*a):", "    return inner"},
			[]string{"    @functools.wraps(f)", "    def inner(*a):", "    return inner", "def deco(f):  # ("}},
		{step(`<|inv_line_sep|><|src_sep|>y = K().m()  # def z():<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), nil, nil}, // the module
		{step(`<|inv_call_sep|><|src_sep|>    def inner(*a):<|arg_sep|>{}<|action_sep|>`, format.TokInvStepCall), nil, nil},
		{step(`<|inv_line_sep|><|src_sep|>    return inner<|arg_sep|>{}<|action_sep|>`, format.TokStepOver), nil, nil}, // an inverse frame, a forward action
	} {
		got := s.functionLines(tc.prompt, s.runsAsScript(tc.prompt))
		lines, call := sortedSet(slices.Clone(tc.lines)), sortedSet(slices.Clone(tc.call))
		lines.sort()
		call.sort()
		if (got != nil) != (tc.lines != nil) || got != nil && (!slices.Equal(got[format.TokInvLineSep], lines) ||
			!slices.Equal(got[format.TokInvLineCallSep], lines) || !slices.Equal(got[format.TokInvCallSep], call)) {
			t.Errorf("prompt ending %q: scopes %q, want lines %q, call %q", tc.prompt[len(src):], got, lines, call)
		}
		if got != nil && (got[format.TokInvReturnSep] != nil || got[format.TokInvExceptionSep] != nil) {
			t.Errorf("prompt ending %q: a callee's return or exception restricted", tc.prompt[len(src):])
		}
	}

	// the control flow narrows the line frames of step_into and step_over
	// from a line (forward) and of inv_step_into and inv_step_over from one
	// (backward); other kinds and actions keep the function's rule
	for _, tc := range []struct {
		prompt string
		tok    string
		want   []string // nil: no rule for tok
	}{
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>        s = '''text<|action_sep|>`, format.TokStepOver), format.TokLineSep,
			[]string{"        s = '''text", "        return f(*a,", "  1)"}}, // its own lines (not the string's inside), then the return
		// the frame does not end on that line: the return line comes first
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>        s = '''text<|action_sep|>`, format.TokStepOver), format.TokReturnSep, []string{}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>        return f(*a,<|action_sep|>`, format.TokStepOver), format.TokReturnSep, []string{"        return f(*a,"}},
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def deco(f):  # (<|action_sep|>`, format.TokStepInto), format.TokLineSep,
			[]string{"class K:"}}, // over the def's body
		{step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner<|action_sep|>`, format.TokStepOver), format.TokLineSep,
			[]string{}}, // no line can follow: the frame's return (or an exception) comes first
		{step(`<|inv_line_sep|><|src_sep|>y = K().m()  # def z():<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), format.TokInvLineSep,
			[]string{"class K:"}}, // the module backwards: only the flow's rule
		// not the module's first line: a step back never reaches its call
		{step(`<|inv_line_sep|><|src_sep|>y = K().m()  # def z():<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), format.TokInvCallSep, []string{}},
		{step(`<|inv_line_sep|><|src_sep|>import functools<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), format.TokInvCallSep, nil},
		{step(`<|inv_line_sep|><|src_sep|>    return inner<|arg_sep|>{}<|action_sep|>`, format.TokInvStepInto), format.TokInvLineCallSep,
			[]string{"    @functools.wraps(f)", "    def inner(*a):"}},
		// from the copy of a line that made a call, the line's own event comes next
		{step(`<|inv_line_call_sep|><|src_sep|>    return inner<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), format.TokInvLineSep,
			[]string{"    @functools.wraps(f)", "    def inner(*a):", "    return inner"}},
		// the module's first line backwards: only its call
		{step(`<|inv_line_sep|><|src_sep|>import functools<|arg_sep|>{}<|action_sep|>`, format.TokInvStepOver), format.TokInvLineSep, []string{}},
		{step(`<|call_sep|><|src_sep|>    def inner(*a):<|arg_sep|>{}<|action_sep|>`, format.TokStepInto), format.TokLineSep, block1}, // from a call: the function's rule
	} {
		want := sortedSet(slices.Clone(tc.want))
		want.sort()
		if got, ruled := s.stepScopes(tc.prompt, s.runsAsScript(tc.prompt))[tc.tok]; !slices.Equal(got, want) || ruled != (tc.want != nil) {
			t.Errorf("prompt ending %q: %s allows %q (a rule: %v), want %q", tc.prompt[len(src):], tc.tok, got, ruled, want)
		}
	}

	// the rule in decoding: a line event may only show the running function's lines
	r := promptRules(nil, step(`<|line_sep|><|arg_sep|>{}<|src_sep|>    @functools.wraps(f)<|action_sep|>`, format.TokStepOver))
	for _, tc := range []struct {
		frame string
		ok    bool
	}{
		{"<|line_sep|><|arg_sep|>{}<|src_sep|>    return inner", true},
		{"<|line_sep|><|arg_sep|>{}<|src_sep|>    def inner(*a):", true},
		{"<|line_sep|><|arg_sep|>{}<|src_sep|>y = K().m()  # def z():", false},
		{`<|return_sep|><|src_sep|>        return f(*a,`, false},
		{`<|call_sep|><|src_sep|>class K:`, true}, // a call event may enter any function
	} {
		if got := r.linesFor(tc.frame).contains(tc.frame[strings.LastIndex(tc.frame, format.TokSrcSep)+len(format.TokSrcSep):]); got != tc.ok {
			t.Errorf("frame %q allowed = %v, want %v", tc.frame, got, tc.ok)
		}
	}
	// and in decoding, stepping over a def at module level goes past its body
	r = promptRules(nil, step(`<|line_sep|><|arg_sep|>{}<|src_sep|>def deco(f):  # (<|action_sep|>`, format.TokStepOver))
	for line, ok := range map[string]bool{"class K:": true, "def deco(f):  # (": false, "    def inner(*a):": false, "y = K().m()  # def z():": false} {
		if got := r.linesFor("<|line_sep|><|arg_sep|>{}<|src_sep|>").contains(line); got != ok {
			t.Errorf("after n at the def: line %q allowed = %v, want %v", line, got, ok)
		}
	}
}

// TestReturnValues: after F's return with value V, a step's return at a
// line `return F(...)` shows V; nothing else is pinned.
func TestReturnValues(t *testing.T) {
	src := strings.Join([]string{
		"def g(x):",
		"    return [x] * 2",
		"def h(x):",
		"    return g(x)  # (",
		"def k(x):",
		"    return g(x) + g(x)",
		"def m(x):",
		"    return g(')' + x)",
		"def main():",
		"    return h(1)",
	}, "\n")
	s := programScopes(nil, src)
	step := func(frame, action string) string {
		return format.TokBeginOfText + format.TokTraceContextStart + src + format.TokFrameSep + frame + action + format.TokFrameSep
	}
	ret := func(line, v string) string {
		return format.TokReturnSep + format.TokSrcSep + line + format.TokArgSep + v + format.TokActionSep
	}
	head := func(line string) string { return format.TokReturnSep + format.TokSrcSep + line + format.TokArgSep }
	for _, tc := range []struct {
		prompt string
		want   map[string]string
	}{
		{step(ret("    return [x] * 2", `"[1, 1]"`), format.TokStepInto),
			map[string]string{head("    return g(x)  # ("): `"[1, 1]"`, head("    return g(')' + x)"): `"[1, 1]"`}},
		{step(ret("    return g(x)  # (", `"[1, 1]"`), format.TokStepOver), map[string]string{head("    return h(1)"): `"[1, 1]"`}},
		{step(ret("    return g(x)  # (", `"[1, 1]"`), format.TokStepReturn), map[string]string{head("    return h(1)"): `"[1, 1]"`}},
		{step(ret("    return h(1)", `"[1, 1]"`), format.TokStepInto), nil}, // main is called by no line
		{step(ret("    return [x] * 2", `"[1, 1]"`), format.TokBreakpoint+"    return h(1)"), nil},
		{step(ret("    return [x] * 2", `"[1, 1]"`), format.TokInvStepInto), nil},
		{step(format.TokLineSep+format.TokArgSep+"{}"+format.TokSrcSep+"    return [x] * 2"+format.TokActionSep, format.TokStepInto), nil},
		{step(ret("    not a line", `"1"`), format.TokStepInto), nil},
	} {
		got := s.returnValues(tc.prompt)
		if len(got) != len(tc.want) {
			t.Errorf("prompt ending %q: values %q, want %q", tc.prompt[len(src):], got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("prompt ending %q: values %q, want %q", tc.prompt[len(src):], got, tc.want)
			}
		}
	}
}

// ruleViolations walks the true next frame of every step of a
// trajectory's text through the program rules token by token (source
// lines, the running function's scope, LOCALS keys of the frame's
// function), counts the steps whose source line the running-function rule
// restricts, and lists the frames the rules refuse.
func ruleViolations(p *Predictor, compiled func(string) *pysource.Compiled, text string) (scoped, valued, whole int, bad []string) {
	for _, prompt := range synthtext.Prompts(text) {
		rest := text[len(prompt):]
		end := strings.Index(rest, format.TokActionSep)
		if end < 0 {
			continue
		}
		frame := rest[:end+len(format.TokActionSep)]
		f, err := format.ParseFrame(frame)
		r := promptRules(compiled, prompt)
		if err != nil || r == nil {
			continue
		}
		if r.scope[f.Kind.Token()] != nil {
			scoped++
		}
		if r.valueFor(frame) != "" {
			valued++
		}
		if k := strings.Index(frame, format.TokArgSep); k >= 0 && r.nameGone(frame[:k+len(format.TokArgSep)]) {
			whole++
		}
		cur := ""
		for _, id := range p.tok.Encode(frame) {
			if !p.programAllowed(cur, int(id), r) {
				bad = append(bad, prompt[max(0, len(prompt)-200):]+" => "+frame+" refused after "+cur)
				break
			}
			cur += p.texts[id]
		}
	}
	return scoped, valued, whole, bad
}

// compiler is what the model engine's SampleOptions.Compiled answers, for
// the tests: tracer.Compile once per program text (a test fails where the
// sandbox cannot compile).
func compiler(t *testing.T) func(string) *pysource.Compiled {
	known := map[string]*pysource.Compiled{}
	return func(src string) *pysource.Compiled {
		if c, ok := known[src]; ok {
			return c
		}
		got, err := tracer.Compile(context.Background(), "", []string{src})
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		known[src] = got[0]
		return got[0]
	}
}

// TestRulesHoldOnRealTraces: the true next frame of every step, forward
// and inverse, in trajectories sampled from real traces of programs with
// decorators, nested and one-line functions, classes, generators,
// comprehensions, lambdas, exceptions and multi-line statements, passes
// every program rule, with what the program's compiled code says.
func TestRulesHoldOnRealTraces(t *testing.T) {
	p := randomPredictor(t, 128)
	tr, err := tracer.New(tracer.Options{})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	defer tr.Close()
	programs := []tracer.Program{
		{Source: "import functools\ndef deco(f):\n    @functools.wraps(f)\n    def inner(*a):\n        return f(*a) + 1\n    return inner\n\n@deco\ndef g(x): return x * 2\n\ndef f(n):\n    total = 0\n    for i in range(n):\n        total += g(i)\n    return total\n", Call: "f(4)"},
		{Source: "class Box:\n    size = 2\n    def __init__(self, v):\n        self.v = v\n    def grow(self):\n        self.v = [x * self.size\n                  for x in self.v]\n        return self\n\ndef f(xs):\n    b = Box(xs).grow()\n    return b.v\n", Call: "f([1, 2, 3])"},
		{Source: "def gen(n):\n    for i in range(n):\n        yield i * i\n\ndef f(n):\n    out = []\n    for v in gen(n):\n        out.append(v)\n    return sum(out), max(out, key=lambda v: -v)\n", Call: "f(3)"},
		{Source: "def safe(d, k):\n    try:\n        return d[k]\n    except KeyError:\n        return None\n\ndef f(d):\n    s = '''a\ndef x():\n'''\n    return [safe(d, k) for k in 'ab'], \\\n        len(s)\n", Call: "f({'a': 1})"},
		{Source: "def outer(n):\n    def inner(m):\n        if m <= 0:\n            raise ValueError(m)\n        return m - 1\n    try:\n        return inner(inner(n))\n    except ValueError as e:\n        return str(e)\n", Call: "outer(1)"},
		{Source: "def g(x):\n    return [x] * 2\n\ndef h(x):\n    return g(x)\n\ndef last(xs):\n    if len(xs) == 1:\n        return xs[0]\n    return last(xs[1:])\n\ndef f(n):\n    return h(last([n, n + 1]))\n", Call: "f(3)"},
		{Source: "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n\nx = fact(4)\nys = [fact(i) for i in range(3)]\nprint(x, ys)\n"},
		{Source: "class K:\n    a = 1\n    def m(self, k):\n        b = self.a + k\n        return b\n\nk = K()\nprint(k.m(2), [k.m(i) for i in (1, 2)])\n"},
		// a star import binds names the text does not show (the module's
		// frame holds ascii_letters, Template, ...)
		{Source: "from string import *\nx = digits[:2]\nprint(x)\n"},
		{Source: "class C:\n    def __init__(self):\n        __v = 1\n        self.v = __v\n\nc = C()\n"},
		// an Enum's body starts holding _generate_next_value_ (its
		// metaclass prepares the namespace) on the class statement's line
		{Source: "from enum import Enum\nclass Color(Enum):\n    RED = 1\n    GREEN = 2\nfor c in Color:\n    print(c, Color(2))\n"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	steps, valued := 0, 0
	compiled := compiler(t)
	for _, prog := range programs {
		trace, err := tr.Trace(context.Background(), prog)
		if err != nil {
			t.Fatal(err)
		}
		cfg := dataset.DefaultSamplerConfig
		cfg.DeepEntryProb = 0.5
		for range 60 {
			s, err := dataset.SampleTrajectory(rng, trace, cfg)
			if err != nil {
				t.Fatal(err)
			}
			n, v, _, bad := ruleViolations(p, compiled, s.Text)
			if len(bad) > 0 {
				t.Fatalf("program %q: true frames refused:\n%s", prog.Source, strings.Join(bad, "\n"))
			}
			steps += n
			valued += v
		}
	}
	if steps < 300 || valued < 20 {
		t.Fatalf("only %d scoped steps and %d pinned return values checked", steps, valued)
	}
}

// TestRulesHoldOnShards runs the same check over `ndb gen` shards
// when NDB_SCOPE_SHARDS names them (a glob); docs/inference.md has the
// figures of a run on every source.
func TestRulesHoldOnShards(t *testing.T) {
	p := randomPredictor(t, 128)
	glob := os.Getenv("NDB_SCOPE_SHARDS")
	if glob == "" {
		t.Skip("NDB_SCOPE_SHARDS not set")
	}
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no shards match %q (%v)", glob, err)
	}
	trajectories, steps, valued, whole, violations := 0, 0, 0, 0, 0
	compiled := compiler(t)
	for _, name := range files {
		fh, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var row struct{ Text string }
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			trajectories++
			n, v, w, bad := ruleViolations(p, compiled, row.Text)
			steps, valued, whole = steps+n, valued+v, whole+w
			for _, b := range bad {
				violations++
				if violations <= 5 {
					t.Errorf("%s: %s", name, b)
				}
			}
		}
		fh.Close()
	}
	t.Logf("%d trajectories from %d shards: %d steps with a scoped line, %d with a pinned return value, %d inverse frames whole for a name gone, %d frames refused", trajectories, len(files), steps, valued, whole, violations)
}

// TestNamesOfAFrameFromTheIndex: a frame's names are what its function
// binds or passes down, read by the index: a function that only passes a
// variable to a nested one holds it too (3.11's f_locals shows free
// variables), a name bound later in the text is not held yet, and words of
// comments and strings and attribute names are no names. The line-by-line reading before the index refused mid's
// true LOCALS ({"leaf", "n"}) and allowed "hidden", "word" and "attr".
func TestNamesOfAFrameFromTheIndex(t *testing.T) {
	src := strings.Join([]string{
		"def outer(n):",
		"    def mid():",
		"        def leaf():",
		"            return n",
		"        return leaf()  # the hidden word",
		"    s = 'word'",
		"    return mid(), s.attr",
	}, "\n")
	s := programScopes(nil, src)
	mid := s.namesOf("        return leaf()  # the hidden word", false)
	for _, n := range []string{"leaf", "n"} {
		if !mid.contains(n) {
			t.Errorf("mid's frame may hold %q: names %q", n, mid)
		}
	}
	outer := s.namesOf("    s = 'word'", false)
	for _, n := range []string{"hidden", "word", "attr"} {
		if mid.contains(n) || outer.contains(n) {
			t.Errorf("%q is no name of the program", n)
		}
	}
	if !outer.contains("mid") || !outer.contains("s") || !outer.contains("n") {
		t.Errorf("outer's names %q", outer)
	}
	if held := s.heldAt("    s = 'word'", false); !held.contains("mid") || held.contains("s") || held.contains(".0") {
		t.Errorf("outer's names before s = 'word' %q", held)
	}
	if held := s.heldAt("    return mid(), s.attr", false); !held.contains("s") {
		t.Errorf("outer's names at its return %q", held)
	}
}

// TestNoLocalsLeaveNoneOut: a frame whose line no name can be bound at yet
// (a script's first statement, a function with no parameters at its first
// line) shows LOCALS {}: "..", which stands for unchanged locals left out,
// has nothing to stand for. The model stepped back to a script's first
// import with {"..": ".."}.
func TestNoLocalsLeaveNoneOut(t *testing.T) {
	src := "import io\nx = 1\ndef f():\n    y = 2\n    return y\nf()\n"
	s := programScopes(nil, src)
	for _, tc := range []struct {
		line string
		want sortedSet
	}{
		{"import io", sortedSet{}},
		{"x = 1", sortedSet{"..", "io"}},
		{"    y = 2", sortedSet{}},
		{"    return y", sortedSet{"..", "y"}},
	} {
		if got := s.heldAt(tc.line, false); got == nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: names %q, want %q", tc.line, got, tc.want)
		}
	}
	r := promptRules(nil, stepPrompt(src, `<|inv_line_sep|><|src_sep|>x = 1<|arg_sep|>{"io": "<module 'io' (frozen)>"}<|action_sep|>`, format.TokInvStepOver))
	frame := `<|inv_line_sep|><|src_sep|>import io<|arg_sep|>`
	for json, ok := range map[string]bool{`{}`: true, `{"`: false, `{".`: false} {
		if got := r.keysAllowed(r.namesFor(frame+json), "", json); got != ok {
			t.Errorf("after %q: %q allowed %v, want %v", frame, json, got, ok)
		}
	}
}

// TestProgramNamesFromTheIndex: the names any frame of a program may hold
// are its functions' names as the index reads them (a word of a comment or
// a string is none, a private name is mangled); a program that may bind
// names its text does not show allows any name. The word scan of the text
// refused the star import's names and C's mangled `_C__v`.
func TestProgramNamesFromTheIndex(t *testing.T) {
	header := format.TokBeginOfText + format.TokTraceContextStart
	r := promptRules(nil, header+"class C:\n    def m(self):\n        __v = 'word'  # secret\n        return __v\n"+format.TokFrameSep)
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"_C__v", true}, {"self", true}, {"m", true}, {"C", true}, {"..", true}, {"word", false}, {"secret", false}, {"zz", false}} {
		if got := nameAllowed(r.names, tc.name); got != tc.ok {
			t.Errorf("closed program: %q allowed = %v, want %v", tc.name, got, tc.ok)
		}
	}
	open := promptRules(nil, header+"from string import *\nx = digits\n"+format.TokFrameSep)
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"ascii_letters", true}, {"x", true}, {".0", true}, {"_", true}, {"def", false}, {"a b", false}, {"", false}, {"1x", false}, {`x\"`, false}} {
		if got := nameAllowed(open.names, tc.name); got != tc.ok {
			t.Errorf("open program: %q allowed = %v, want %v", tc.name, got, tc.ok)
		}
	}
	for _, tc := range []struct {
		old, new string
		ok       bool
	}{{`{"`, `{"asc`, true}, {`{"asc`, `{"ascii_letters"`, true}, {`{"`, `{"de`, true}, {`{"`, `{"def"`, false}, {`{"x": "1", "`, `{"x": "1", "x"`, false}, {`{"`, `{"a b`, false}, {`{"`, `{".`, true}} {
		if got := open.keysAllowed(open.namesFor(format.TokLineSep+format.TokArgSep+tc.old), tc.old, tc.new); got != tc.ok {
			t.Errorf("open program: keys %q -> %q allowed = %v, want %v", tc.old, tc.new, got, tc.ok)
		}
	}
}

// TestCertainCallSteps: step_into from a line that surely calls the
// program answers no line or return frame (its call comes next), and
// inv_step_into back to it finds its copy (inv_line_call), not its own
// line event; inv_step_over still lands on the line itself. A line that
// surely calls nothing of the program has no call after it and no copy.
func TestCertainCallSteps(t *testing.T) {
	src := "def solve(x):\n    return x * 2\nprint(solve(3))\ndone = True\n"
	s := programScopes(nil, src)
	step := func(frame, action string) map[string]sortedSet {
		prompt := stepPrompt(src, frame, action)
		return s.stepScopes(prompt, s.runsAsScript(prompt))
	}
	into := step(`<|line_sep|><|arg_sep|>{"solve": "<function solve at 0x0>"}<|src_sep|>print(solve(3))<|action_sep|>`, format.TokStepInto)
	for _, tok := range []string{format.TokLineSep, format.TokReturnSep} {
		if lines, ruled := into[tok]; !ruled || len(lines) > 0 {
			t.Errorf("after step_into at print(solve(3)), %s may show %q (a rule: %v)", tok, lines, ruled)
		}
	}
	over := step(`<|line_sep|><|arg_sep|>{"solve": "<function solve at 0x0>"}<|src_sep|>print(solve(3))<|action_sep|>`, format.TokStepOver)
	if !over[format.TokLineSep].contains("done = True") {
		t.Errorf("after step_over at print(solve(3)), a line frame may show %q", over[format.TokLineSep])
	}
	back := `<|inv_line_sep|><|src_sep|>done = True<|arg_sep|>{"..": ".."}<|action_sep|>`
	if got := step(back, format.TokInvStepInto); got[format.TokInvLineSep].contains("print(solve(3))") || !got[format.TokInvLineCallSep].contains("print(solve(3))") {
		t.Errorf("inv_step_into from done = True: inv_line %q, inv_line_call %q", got[format.TokInvLineSep], got[format.TokInvLineCallSep])
	}
	if got := step(back, format.TokInvStepOver); !got[format.TokInvLineSep].contains("print(solve(3))") {
		t.Errorf("inv_step_over from done = True: inv_line %q", got[format.TokInvLineSep])
	}
	src = "def solve(x):\n    return x * 2\ny = solve(3)\nprint(y)\ndone = True\n"
	s = programScopes(nil, src)
	if calls, ruled := step(`<|line_sep|><|arg_sep|>{"y": "6"}<|src_sep|>print(y)<|action_sep|>`, format.TokStepInto)[format.TokCallSep]; !ruled || len(calls) > 0 {
		t.Errorf("after step_into at print(y), a call frame may show %q (a rule: %v)", calls, ruled)
	}
	if got := step(back, format.TokInvStepInto); got[format.TokInvLineCallSep].contains("print(y)") || !got[format.TokInvLineSep].contains("print(y)") {
		t.Errorf("inv_step_into from done = True: inv_line %q, inv_line_call %q", got[format.TokInvLineSep], got[format.TokInvLineCallSep])
	}
}

// TestFirstCallStep: step_into from a line whose first call the text
// fixes (pysource's FirstCall) answers a call frame of that function only:
// the innermost call of `shout(reverse_words(line))` runs first.
func TestFirstCallStep(t *testing.T) {
	src := "def reverse_words(s):\n    return s[::-1]\ndef shout(s):\n    return s.upper()\nline = 'ab'\nout = shout(reverse_words(line))\nprint(shout(line.strip()))\n"
	s := programScopes(nil, src)
	for _, tc := range []struct {
		at   string
		want []string // nil: no rule
	}{
		{"out = shout(reverse_words(line))", []string{"def reverse_words(s):"}},
		{"print(shout(line.strip()))", nil}, // a method runs first
	} {
		prompt := stepPrompt(src, `<|line_sep|><|arg_sep|>{"line": "'ab'", "..": ".."}<|src_sep|>`+tc.at+`<|action_sep|>`, format.TokStepInto)
		got, ruled := s.stepScopes(prompt, s.runsAsScript(prompt))[format.TokCallSep]
		if ruled != (tc.want != nil) || tc.want != nil && !slices.Equal(got, sortedSet(tc.want)) {
			t.Errorf("step_into from %q: call frames %q (a rule: %v), want %q", tc.at, got, ruled, tc.want)
		}
	}
}

// TestStepAfterReturn: a step from a function's return answers a line,
// return or exception frame on a line of its callers only (pysource's
// ReturnsTo): here the module's, not main's own `return total`.
func TestStepAfterReturn(t *testing.T) {
	src := "def main():\n    total = 14\n    return total\n\nif __name__ == '__main__':\n    main()\n"
	s := programScopes(nil, src)
	for _, action := range []string{format.TokStepInto, format.TokStepOver, format.TokStepReturn} {
		prompt := stepPrompt(src, `<|return_sep|><|src_sep|>    return total<|arg_sep|>"14"<|action_sep|>`, action)
		got := s.stepScopes(prompt, s.runsAsScript(prompt))
		want := sortedSet{"    main()", "def main():", "if __name__ == '__main__':"}
		for _, tok := range []string{format.TokLineSep, format.TokReturnSep, format.TokExceptionSep} {
			if !slices.Equal(got[tok], want) {
				t.Errorf("%s from main's return: %s lines %q, want %q", action, tok, got[tok], want)
			}
		}
		if _, ruled := got[format.TokCallSep]; ruled {
			t.Errorf("%s from main's return: call frames ruled %q", action, got[format.TokCallSep])
		}
	}
}

// TestEntryAfterCall: step_into or step_over from a fresh call answers a
// line frame on its code's first line: a script's first statement, a
// function's first statement past its docstring; a lambda's call sets no
// rule.
func TestEntryAfterCall(t *testing.T) {
	src := "from __future__ import annotations\nimport math\ndef area(r):\n    \"\"\"Area.\"\"\"\n    return math.pi * r * r\nsq = (lambda v: v * v)(2)\nprint(area(2), sq)\n"
	s := programScopes(nil, src)
	for _, tc := range []struct {
		call, action string
		want         []string // nil: no rule
	}{
		{`<|call_sep|><|src_sep|><|arg_sep|>{}<|action_sep|>`, format.TokStepInto, []string{"from __future__ import annotations"}},
		{`<|call_sep|><|src_sep|>def area(r):<|arg_sep|>{"r": "2"}<|action_sep|>`, format.TokStepOver, []string{"    return math.pi * r * r"}},
		{`<|call_sep|><|src_sep|>sq = (lambda v: v * v)(2)<|arg_sep|>{"v": "2"}<|action_sep|>`, format.TokStepInto, nil},
	} {
		prompt := stepPrompt(src, tc.call, tc.action)
		got, ruled := s.stepScopes(prompt, s.runsAsScript(prompt))[format.TokLineSep]
		if ruled != (tc.want != nil) || tc.want != nil && !slices.Equal(got, sortedSet(tc.want)) {
			t.Errorf("after %s from %q: line frames %q (a rule: %v), want %q", tc.action, tc.call, got, ruled, tc.want)
		}
	}
}
