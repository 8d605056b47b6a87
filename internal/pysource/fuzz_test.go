package pysource

import (
	"slices"
	"strings"
	"testing"
)

// FuzzIndex: any text indexes without a panic, every line number the
// index gives is a line of the text, and the names a frame surely holds
// at a line are among those it may hold.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{
		"def f(x):\n    return x\n",
		"@d\nclass C(B, m=1):\n    def m(self): return [i for i in self]\n",
		"s = '''\ndef g():\n'''\nt = f\"{s!r:>{n}}\"\n",
		"x = (1,\n  2) \\\n + 3\n",
		"lambda: (yield)\n",
		"def f(\n",
		"'unterminated\n\"\"\"also\n",
		"match x:\n    case [a, *b] if a: pass\n",
		"\tdef f():\n\t\treturn {k: v for k, v in x}\n",
		"f'{'\n)]}\n",
		"class\n",
		"def f(x=lambda: [\n",
		"assert f(1, [2,\n 'a)'], f'{f(3)}')  # f(4)\n",
		"if (__name__ == '__main__'): f(x)\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		ix := New(src)
		n := len(ix.Lines)
		_ = ix.Unbound()
		_, _, _, _ = ix.ImportedModules(), ix.FixedReprs(), ix.FixedInstances(), ix.FromImported()
		_ = ix.ModuleBindOrder()
		_ = ix.MaySuspend()
		for l := 0; l <= n+1; l++ {
			_, _, _, _, _ = ix.Silent(l), ix.Quiet(l), ix.CallsProgram(l), ix.Suspends(l), ix.NeverRuns(l, true)
			_ = ix.ReturnedName(l)
			if name := ix.FirstCall(l); name != "" && ix.Lookup(name) == nil {
				t.Errorf("line %d: FirstCall %q names no def", l, name)
			}
			if lines, ok := ix.ReturnsTo(l); ok && slices.ContainsFunc(lines, func(m int) bool { return m < 1 || m > n }) {
				t.Errorf("line %d: ReturnsTo %v out of the program's %d lines", l, lines, n)
			}
			for m := range ix.ReturnValues(l) {
				if m < 1 || m > n {
					t.Fatalf("line %d: a return on line %d out of 1..%d in %q", l, m, n, src)
				}
			}
		}
		for _, s := range append([]*Scope{ix.Module}, ix.Scopes...) {
			_ = ix.CalledByModule(s)
			for _, l := range ix.EntryLines(s) {
				if l < 1 || l > n {
					t.Fatalf("%s: entry line %d out of 1..%d in %q", s.Qualname, l, n, src)
				}
			}
		}
		in := func(what string, l int) {
			if l < 1 || l > max(n, 1) {
				t.Fatalf("%s line %d out of 1..%d in %q", what, l, n, src)
			}
		}
		for _, s := range ix.Scopes {
			for _, l := range []int{s.Line, s.First, s.Body, s.End} {
				in(s.Qualname, l)
			}
			if s.First > s.Line || s.End < s.Line {
				t.Fatalf("%s: first %d line %d end %d in %q", s.Qualname, s.First, s.Line, s.End, src)
			}
			_ = s.Locals()
			if ix.Silent(s.Line) || ix.Silent(s.First) {
				t.Fatalf("%s: its header line %d or first line %d is silent in %q", s.Qualname, s.Line, s.First, src)
			}
			for _, r := range ix.Returns(s) {
				in(s.Qualname+" return", r)
			}
		}
		for l := 0; l <= n+1; l++ {
			for _, s := range ix.RunsOn(l) {
				in("runs "+s.Name, l)
			}
			if first, last, ok := ix.Statement(l); ok {
				in("statement", first)
				in("statement", last)
			}
			ix.Opens(l)
			ix.Header(l)
			ix.Owner(l)
			ix.NamesOn(l)
			ix.Binds(l)
			ix.StatementKeyword(l)
			if c := ix.CallLine(l, "f"); c != 0 {
				in("call", c)
			}
			if args, ok := ix.CallArgs(l, "f"); ok && (!strings.HasPrefix(args, "(") || !strings.HasSuffix(args, ")")) {
				t.Fatalf("line %d: call args %q in %q", l, args, src)
			}
			ix.CallChain(l)
			ix.IsMainGuard(l)
			// what a frame surely holds it may hold
			if may, ok := ix.PossibleLocals(l); ok {
				for _, name := range ix.SureLocals(l) {
					if !slices.Contains(may, name) {
						t.Fatalf("line %d: sure %q is not among the possible %q in %q", l, name, may, src)
					}
				}
			} else if sure := ix.SureLocals(l); sure != nil {
				t.Fatalf("line %d: sure names %q where no frame is known in %q", l, sure, src)
			}
			if c := ix.Comment(l); c >= 0 && ix.Line(l)[c] != '#' {
				t.Fatalf("line %d: comment at %d in %q", l, c, src)
			}
		}
	})
}
