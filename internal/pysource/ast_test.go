package pysource

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/internal/paths"
)

// astScope is one def, class, lambda or comprehension as
// testdata/astindex.py reads it from CPython's ast and symtable.
type astScope struct {
	Kind, Name, Qualname   string
	Line, First, Body, End int
	Params, Names          []string
}

type astFile struct {
	Path, Error string
	Scopes      []astScope
}

const python311 = "/usr/bin/python3.11"

// runAST runs testdata/astindex.py over files.
func runAST(t *testing.T, files []string) []astFile {
	t.Helper()
	if _, err := os.Stat(python311); err != nil {
		t.Skipf("no %s to compare with (%v)", python311, err)
	}
	cmd := exec.Command(python311, append([]string{"testdata/astindex.py"}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("astindex.py: %v\n%s", err, stderr.String())
	}
	var res []astFile
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var f astFile
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatal(err)
		}
		res = append(res, f)
	}
	return res
}

var kindNames = map[Kind]string{Function: "function", Class: "class", Lambda: "lambda", Comprehension: "comprehension"}

// describe is a scope as a line to compare: what both sides know.
func describe(kind, name, qual string, line, first, body, end int, params []string) string {
	return fmt.Sprintf("%s %s %s line %d first %d body %d end %d params %v", kind, name, qual, line, first, body, end, params)
}

// compareWithAST checks the index of every file against CPython's: the
// same defs, classes, lambdas and comprehensions with the same names and
// lines, and each function's frame names (Locals) as symtable's.
func compareWithAST(t *testing.T, files []string) (checked, scopes int) {
	for _, f := range runAST(t, files) {
		if f.Error != "" {
			continue // not Python 3.11 (a Python 2 recipe): nothing to compare
		}
		src, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		ix := New(string(src))
		var got, want []string
		gotNames := map[string][]string{}
		for _, s := range ix.Scopes {
			d := describe(kindNames[s.Kind], s.Name, s.Qualname, s.Line, s.First, s.Body, s.End, s.Params)
			got = append(got, d)
			if !s.Open() {
				gotNames[d] = s.Locals()
			}
		}
		var names []string
		for _, s := range f.Scopes {
			d := describe(s.Kind, s.Name, s.Qualname, s.Line, s.First, s.Body, s.End, s.Params)
			want = append(want, d)
			if g, ok := gotNames[d]; ok && s.Names != nil && !slices.Equal(g, s.Names) {
				names = append(names, fmt.Sprintf("%s: names %v, symtable %v", d, g, s.Names))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: index and ast differ:\n%s", f.Path, diffLines(want, got))
		}
		for _, n := range names {
			t.Errorf("%s: %s", f.Path, n)
		}
		checked++
		scopes += len(want)
	}
	return checked, scopes
}

// diffLines lists the lines only one side has.
func diffLines(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "  ast only:   %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "  index only: %s\n", g)
		}
	}
	return b.String()
}

// TestIndexMatchesASTOnFixtures: the fixture programs of the packages that
// use the index.
func TestIndexMatchesASTOnFixtures(t *testing.T) {
	var files []string
	for _, glob := range []string{"../../engine/testdata/*.py", "../../debugger/testdata/progs/*.py", "../../eval/scripts/*.py",
		"../../examples/*.py", "testdata/*.py"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d fixture programs found", len(files))
	}
	n, scopes := compareWithAST(t, files)
	t.Logf("%d fixture programs, %d scopes", n, scopes)
}

// TestIndexMatchesASTOnRealWorld: files of the shared realworld data set
// (Python written by people, Python 2 files skipped).
func TestIndexMatchesASTOnRealWorld(t *testing.T) {
	dir, err := paths.DataDir("")
	if err != nil {
		t.Skipf("no shared data folder: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "realworld", "*.py"))
	if len(files) == 0 {
		t.Skipf("no realworld files under %s", dir)
	}
	if testing.Short() && len(files) > 60 {
		files = files[:60]
	}
	n, scopes := compareWithAST(t, files)
	t.Logf("%d of %d realworld files parse in 3.11: %d scopes compared", n, len(files), scopes)
	if n == 0 {
		t.Fatal("no realworld file parsed")
	}
}
