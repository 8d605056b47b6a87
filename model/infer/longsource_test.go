package infer

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ndb/format"
)

// longProgram is a script of n helper functions (each a few lines, each
// calling the next), a class, module constants and a main that calls the
// first helper.
func longProgram(n int) string {
	var b strings.Builder
	b.WriteString("# a long script\nimport math\nfrom functools import reduce\n\nLIMIT = 10\nSCALE = 3\n\n")
	for i := range n {
		fmt.Fprintf(&b, "def helper%d(x):\n    \"\"\"Helper %d.\"\"\"\n    y = x + %d\n", i, i, i)
		if i+1 < n {
			fmt.Fprintf(&b, "    if y > LIMIT:\n        return helper%d(y - LIMIT)\n", i+1)
		}
		b.WriteString("    return y * SCALE\n\n")
	}
	b.WriteString("class Box:\n    def __init__(self, v):\n        self.v = v\n\n    def get(self):\n        return self.v\n\n")
	b.WriteString("def main():\n    box = Box(helper0(4))\n    print(box.get())\n\n")
	b.WriteString("if __name__ == \"__main__\":\n    main()\n")
	return b.String()
}

var markerRE = regexp.MustCompile(`^\s*# \.\.\. (\d+) lines? \.\.\.$`)

// expand checks that short is src with runs of lines replaced by markers
// whose counts are right: kept lines in order and unchanged, every missing
// line accounted for. It returns the kept lines' indices.
func expand(t *testing.T, src, short string) []int {
	t.Helper()
	orig := strings.Split(src, "\n")
	var kept []int
	j := 0
	for _, l := range strings.Split(short, "\n") {
		if m := markerRE.FindStringSubmatch(l); m != nil && (j >= len(orig) || orig[j] != l) {
			n, _ := strconv.Atoi(m[1])
			if n < 1 {
				t.Fatalf("marker %q stands for no line", l)
			}
			j += n
			continue
		}
		if j >= len(orig) || orig[j] != l {
			t.Fatalf("line %q is not line %d of the program (%q)", l, j+1, orig[min(j, len(orig)-1)])
		}
		kept = append(kept, j)
		j++
	}
	if j != len(orig) {
		t.Fatalf("the cut program accounts for %d lines of %d", j, len(orig))
	}
	return kept
}

// TestElideSourceKeepsWhatTheFrameNeeds: a long script, a frame deep in
// helper5 called from main: the cut program keeps helper5 whole with the
// constants and the call chain's lines, marks every other run of lines,
// and fits its budget.
func TestElideSourceKeepsWhatTheFrameNeeds(t *testing.T) {
	p := randomPredictor(t, 2048)
	src := longProgram(40)
	tail := format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{}` + format.TokSrcSep + "    box = Box(helper0(4))" + format.TokActionSep + format.TokStepInto +
		format.TokFrameSep + format.TokCallSep + format.TokSrcSep + "def helper5(x):" + format.TokArgSep + `{"x": "7"}` + format.TokActionSep + format.TokStepInto +
		format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{"y": "12"}` + format.TokSrcSep + "    y = x + 5" + format.TokActionSep + format.TokStepOver + format.TokFrameSep
	full := len(p.tok.Encode(src))
	for _, budget := range []int{full / 8, full / 4, full / 2} {
		short, ok := p.elideSource(src, tail, budget)
		if !ok {
			t.Fatalf("budget %d: nothing fits", budget)
		}
		if n := len(p.tok.Encode(short)); n > budget+budget/20 {
			t.Errorf("budget %d: the cut program has %d tokens", budget, n)
		}
		kept := expand(t, src, short)
		has := func(l string) bool {
			lines := strings.Split(src, "\n")
			for _, k := range kept {
				if lines[k] == l {
					return true
				}
			}
			return false
		}
		for _, l := range []string{"def helper5(x):", "    y = x + 5", "    if y > LIMIT:", "        return helper6(y - LIMIT)", "    return y * SCALE"} {
			if !has(l) {
				t.Errorf("budget %d: the running function's line %q was cut:\n%s", budget, l, short)
			}
		}
		if budget >= full/4 {
			for _, l := range []string{"LIMIT = 10", "SCALE = 3", "def main():", "    box = Box(helper0(4))"} {
				if !has(l) {
					t.Errorf("budget %d: %q (used by the frames) was cut:\n%s", budget, l, short)
				}
			}
		}
		if !strings.Contains(short, "# ... ") {
			t.Errorf("budget %d: nothing was marked as cut:\n%s", budget, short)
		}
	}
}

// TestElideSourceModuleLevel: a frame at module level keeps the lines
// around it and the statement it is nested in.
func TestElideSourceModuleLevel(t *testing.T) {
	p := randomPredictor(t, 2048)
	src := longProgram(40)
	tail := format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{}` + format.TokSrcSep + "    main()" + format.TokActionSep + format.TokStepOver + format.TokFrameSep
	short, ok := p.elideSource(src, tail, 80)
	if !ok {
		t.Fatal("nothing fits")
	}
	expand(t, src, short)
	if !strings.Contains(short, "if __name__ == \"__main__\":\n    main()") {
		t.Fatalf("the module's current line lost its if:\n%s", short)
	}
}

// TestFitPromptElidesALongProgram: a prompt whose program alone is longer
// than the context keeps its start tokens, a marked program and its last
// frames; the old policy left-truncated it (losing the program's start
// and the <|begin_of_text|>).
func TestFitPromptElidesALongProgram(t *testing.T) {
	p := randomPredictor(t, 512)
	src := longProgram(60)
	prompt := format.TokBeginOfText + format.TokTraceContextStart + src +
		format.TokFrameSep + format.TokCallSep + format.TokSrcSep + "def helper30(x):" + format.TokArgSep + `{"x": "7"}` + format.TokActionSep + format.TokStepInto + format.TokFrameSep
	if n := len(p.tok.Encode(src)); n < 1000 {
		t.Fatalf("test setup: a program of %d tokens is not long", n)
	}
	ids, budget, err := p.fitPrompt(prompt, 64)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) > 512-64 || budget != 64 {
		t.Fatalf("fitted prompt of %d tokens, budget %d", len(ids), budget)
	}
	got := p.tok.Decode(ids)
	head := format.TokBeginOfText + format.TokTraceContextStart
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, prompt[strings.Index(prompt, format.TokFrameSep):]) {
		t.Fatalf("fitted prompt lost its start or its frame:\n%s", got)
	}
	short, err := format.HeaderSource(got)
	if err != nil {
		t.Fatal(err)
	}
	expand(t, src, short)
	if !strings.Contains(short, "def helper30(x):\n    \"\"\"Helper 30.\"\"\"\n    y = x + 30\n") {
		t.Fatalf("the running function was cut:\n%s", short)
	}
	// The program rules still read the whole program: a frame may show a
	// line the cut program does not.
	out, err := p.NextFrame(context.Background(), prompt, SampleOptions{MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := format.ParseFrame(out); err != nil {
		t.Fatalf("frame %q: %v", out, err)
	}
}

// FuzzElideSource: any program text and budget give a cut program that
// accounts for every line, or no cut at all; never a panic.
func FuzzElideSource(f *testing.F) {
	f.Add(longProgram(5), "    y = x + 2", 40)
	f.Add("def f(:\n  '''\n x = (\n", "x", 3)
	f.Add("@d\nclass A:\n    def g(self): return [\n 1]\n", "    def g(self): return [", 10)
	p := randomPredictor(f, 64)
	f.Fuzz(func(t *testing.T, src, line string, budget int) {
		if strings.Contains(src, "<|") || strings.Contains(line, "<|") || len(src) > 4000 || budget > 4000 {
			return
		}
		tail := format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{}` + format.TokSrcSep + line + format.TokActionSep + format.TokStepInto + format.TokFrameSep
		short, ok := p.elideSource(src, tail, budget)
		if ok {
			expand(t, src, short)
		}
	})
}

// TestElideSourceKeepsAWholeHeader: a header over several lines stays
// whole when its function runs.
func TestElideSourceKeepsAWholeHeader(t *testing.T) {
	p := randomPredictor(t, 2048)
	src := longProgram(30) + "\ndef wide(\n    a,\n    b,\n):\n    c = a + b\n    return c\n"
	tail := format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{"a": "1", "b": "2"}` + format.TokSrcSep + "    c = a + b" + format.TokActionSep + format.TokStepInto + format.TokFrameSep
	short, ok := p.elideSource(src, tail, len(p.tok.Encode(src))/10)
	if !ok {
		t.Fatal("nothing fits")
	}
	expand(t, src, short)
	if !strings.Contains(short, "def wide(\n    a,\n    b,\n):\n    c = a + b\n    return c") {
		t.Fatalf("the running function's header was cut:\n%s", short)
	}
}

// TestSourceViewDefinitionsFromTheIndex: the lines that define each name
// are the program's bindings as its index reads them: a comparison, an
// attribute and a line inside a string bind nothing.
func TestSourceViewDefinitionsFromTheIndex(t *testing.T) {
	src := strings.Join([]string{
		"import os",                  // 0
		"LIMIT = 10",                 // 1
		"LIMIT == 3",                 // 2
		"cfg.size = 4",               // 3
		"DOC = '''",                  // 4
		"import sys",                 // 5
		"'''",                        // 6
		"for item in range(2): pass", // 7
		"@deco",                      // 8
		"def size(): pass",           // 9
		"class Box(",                 // 10
		"        Base):",             // 11
		"    def get(self):",         // 12
		"        return 1",           // 13
	}, "\n")
	v := randomPredictor(t, 2048).sourceView(src)
	want := map[string][]int{"os": {0}, "LIMIT": {1}, "DOC": {4}, "item": {7}, "size": {9}, "Box": {10}, "get": {12}}
	if fmt.Sprint(v.names) != fmt.Sprint(want) {
		t.Errorf("definitions %v, want %v", v.names, want)
	}
	if got := fmt.Sprint(v.headerChain(v.innermost(13))); got != "[12 10 11]" {
		t.Errorf("header chain of get's line: %s, want [12 10 11]", got)
	}
}

// TestElideSourceOutlineIsCode: the outline keeps the program's imports,
// not a line of a string that reads like one.
func TestElideSourceOutlineIsCode(t *testing.T) {
	p := randomPredictor(t, 2048)
	src := "USAGE = '''\nimport sys\nfrom os import path\n'''\n" + longProgram(40)
	tail := format.TokFrameSep + format.TokLineSep + format.TokArgSep + `{"y": "12"}` + format.TokSrcSep + "    y = x + 30" + format.TokActionSep + format.TokStepOver + format.TokFrameSep
	short, ok := p.elideSource(src, tail, len(p.tok.Encode(src))/8)
	if !ok {
		t.Fatal("nothing fits")
	}
	expand(t, src, short)
	if !strings.Contains(short, "\nimport math\nfrom functools import reduce\n") {
		t.Errorf("the imports were cut:\n%s", short)
	}
	if strings.Contains(short, "import sys") && !strings.Contains(short, "USAGE = '''\nimport sys") {
		t.Errorf("a string's line kept as an import:\n%s", short)
	}
}
