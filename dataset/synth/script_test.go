package synth

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestScriptGolden pins the script stream of a few seeds, like TestGolden:
// change it on purpose only (go test -run TestScriptGolden -update).
func TestScriptGolden(t *testing.T) {
	for _, seed := range []int64{1, 2, 77} {
		var b strings.Builder
		for i := range 6 {
			p := GenerateScript(seed, i)
			b.WriteString("### " + p.Path + "\n" + p.Source)
		}
		path := fmt.Sprintf("testdata/golden_scripts_seed%d.txt", seed)
		if *update {
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if got := b.String(); got != string(want) {
			t.Errorf("script stream for seed %d changed; if on purpose, rerun with -update.\ngot:\n%s", seed, got)
		}
	}
}

// TestScriptShape: deterministic, paths, sizes, distinct texts, static rates.
func TestScriptShape(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 500
	}
	seen := map[string]bool{}
	var lines int
	count := map[string]int{}
	for i := 0; i < n; i++ {
		p := GenerateScript(4, i)
		if q := GenerateScript(4, i); q != p {
			t.Fatalf("script %d not deterministic", i)
		}
		if p.Path != fmt.Sprintf("synthscript/4/%d", i) || p.Call != "" {
			t.Fatalf("script %d: path %q call %q", i, p.Path, p.Call)
		}
		f := InspectScript(4, i)
		if f.Lines != strings.Count(p.Source, "\n") || f.Lines < minScriptLines || f.Lines > maxScriptLines {
			t.Errorf("script %d: %d lines (features say %d)", i, strings.Count(p.Source, "\n"), f.Lines)
		}
		lines += f.Lines
		seen[p.Source] = true
		for name, on := range map[string]bool{"class": f.Class, "generator": f.Generator, "try": f.Try, "finally": f.Finally,
			"print": f.Print, "fstring": f.FString, "main": f.MainGuard, "typed": f.TypedFunc, "chain": f.Chain,
			"loop": f.ModuleLoop, "recursive": f.Recursive, "text": f.Text, "uncaught": f.Uncaught,
			"dunder": f.Dunder, "inherit": f.Inherit, "classmethod": f.ClassMethod, "with": f.With, "customexc": f.CustomExc,
			"closure": f.Closure, "lambda": f.Lambda, "comprehension": f.Comprehension, "memo": f.Memo, "while": f.While,
			"unpack": f.Unpack, "global": f.Global, "strmethods": f.StrMethods, "varargs": f.VarArgs} {
			if on {
				count[name]++
			}
		}
	}
	t.Logf("%d scripts: %d distinct, mean %.1f lines; %v", n, len(seen), float64(lines)/float64(n), count)
	if len(seen) < n*99/100 {
		t.Errorf("only %d of %d scripts distinct", len(seen), n)
	}
	if u := float64(count["uncaught"]) / float64(n); u < 0.01 || u > 0.06 {
		t.Errorf("uncaught share %.3f, want about 0.03", u)
	}
	// every newer part shows up in a fair share of scripts
	for _, name := range []string{"dunder", "inherit", "classmethod", "with", "customexc", "closure", "lambda",
		"comprehension", "memo", "while", "unpack", "global", "strmethods", "varargs"} {
		if count[name] < n/200 {
			t.Errorf("%s in %d of %d scripts, want at least 0.5%%", name, count[name], n)
		}
	}
	if GenerateScript(1, 0).Source == GenerateScript(2, 0).Source {
		t.Error("seeds 1 and 2 give the same script 0")
	}
}
