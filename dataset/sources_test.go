package dataset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/internal/paths"
)

// dataDir finds the shared data for tests, or skips.
func dataDir(t *testing.T) string {
	t.Helper()
	d, err := DataDir("")
	if err != nil {
		t.Skip(err)
	}
	if _, err := os.Stat(filepath.Join(d, "cruxeval.jsonl")); err != nil {
		t.Skipf("no shared data: %v", err)
	}
	return d
}

func TestSources(t *testing.T) {
	d := dataDir(t)
	cases := []struct {
		name     string
		min, max int
	}{
		{"mbppplus", 40000, 44000},
		{"mbpp", 2000, 5000},
		{"humaneval", 700, 1500},
	}
	for _, c := range cases {
		src, err := OpenSource(c.name, d, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d items, %d dropped as CruxEval duplicates", c.name, src.Len(), src.Dropped())
		if src.Len() < c.min || src.Len() > c.max {
			t.Errorf("%s: %d items, want [%d, %d]", c.name, src.Len(), c.min, c.max)
		}
		ids := map[string]bool{}
		for i := 0; i < src.Len(); i++ {
			it, skip := src.Item(i)
			if skip != "" || it.Program.Call == "" || strings.Contains(it.Program.Source, "\r") {
				t.Fatalf("%s item %d: %+v %s", c.name, i, it, skip)
			}
			if ids[it.ID] {
				t.Fatalf("%s: repeated id %s", c.name, it.ID)
			}
			ids[it.ID] = true
		}
	}
}

func TestSourceSamples(t *testing.T) {
	d := dataDir(t)
	src, _ := OpenSource("mbppplus", d, 1)
	it, _ := src.Item(0)
	if it.ID != "mbppplus/Mbpp_2/0" || it.Program.Call != "similar_elements([3, 4, 5, 6], [5, 7, 4, 10])" {
		t.Fatalf("first MBPP+ item: %+v", it)
	}
	he, _ := OpenSource("humaneval", d, 1)
	it, _ = he.Item(0)
	if it.Program.Call != "has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)" {
		t.Fatalf("first HumanEval item: %+v", it)
	}
	mb, _ := OpenSource("mbpp", d, 1)
	it, _ = mb.Item(0)
	if it.Program.Call != "min_cost([[1, 2, 3], [4, 8, 2], [1, 5, 3]], 2, 2)" || !strings.HasPrefix(it.Program.Source, "R = 3\nC = 3\n") {
		t.Fatalf("first MBPP item: %+v", it)
	}
}

// TestCruxEvalDedup: a folder holding a CruxEval function (with its white
// space changed) and another program keeps only the other one.
func TestCruxEvalDedup(t *testing.T) {
	d := dataDir(t)
	b, _ := os.ReadFile(filepath.Join(d, "cruxeval.jsonl"))
	var rec struct{ Code string }
	json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &rec)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "copy.py"), []byte(strings.ReplaceAll(rec.Code, "    ", "\t")+"\n\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "mine.py"), []byte("x = 1\nprint(x)\n"), 0o644)
	src, err := OpenSource(dir, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	if src.Len() != 1 || src.Dropped() != 1 {
		t.Fatalf("got %d items, %d dropped; want 1 and 1", src.Len(), src.Dropped())
	}
	if it, _ := src.Item(0); it.ID != "dir/mine.py" || it.Program.Call != "" {
		t.Fatalf("kept %+v", it)
	}
	crux, _ := LoadCruxEval(d)
	if len(crux) < 790 {
		t.Fatalf("CruxEval set has %d functions", len(crux))
	}
}

func TestExtractCall(t *testing.T) {
	cases := []struct{ line, name, want string }{
		{"assert f(1, 2) == 3", "f", "f(1, 2)"},
		{"assert set(f((1, 2), 'a)')) == set()", "f", "f((1, 2), 'a)')"},
		{"assert g(1) == 2 and f(2) == 3", "f", "f(2)"},
		{`assert "f(9)" != f("x")`, "f", `f("x")`},
		{"assert ff(1) == 2", "f", ""},
		{"assert f(1 == 2", "f", ""},
	}
	for _, c := range cases {
		got, ok := extractCall(c.line, c.name)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("extractCall(%q) = %q, %v; want %q", c.line, got, ok, c.want)
		}
	}
	for args, want := range map[string]bool{"(1, 'a', [None, True])": true, "(x)": false, "(float('inf'), -1e5, 3j)": true,
		"(b'ab', r'\\d')": true, "(os.getcwd())": false, "({1: 'x'})": true} {
		if literalArgs(args) != want {
			t.Errorf("literalArgs(%q) != %v", args, want)
		}
	}
}

func TestPyArgLists(t *testing.T) {
	raw := sanitizeJSON([]byte(`[[[1, 2.5, -3e10], "a\"b\n\u00e9 NaN", true, null, {"z": [false], "a": -Infinity}], [Infinity]]`))
	got, err := pyArgLists(raw)
	want := []string{`[1, 2.5, -3e10], "a\"b\né NaN", True, None, {"z": [False], "a": float('-inf')}`, `float('inf')`}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %q, want %q (%v)", got, want, err)
	}
}

func TestDataDir(t *testing.T) {
	t.Setenv("NDB_DATA_DIR", "/from/env")
	if d, _ := DataDir("/from/flag"); d != "/from/flag" {
		t.Fatalf("flag: %s", d)
	}
	if d, _ := DataDir(""); d != "/from/env" {
		t.Fatalf("env: %s", d)
	}
	t.Setenv("NDB_DATA_DIR", "")
	d, err := DataDir("")
	if err != nil || filepath.Base(d) != "data" || filepath.Base(filepath.Dir(d)) != "shared" {
		t.Fatalf("fallback: %s, %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(d, "..", "..", filepath.Base(mustRepoRoot(t)), "go.mod")); err != nil {
		t.Fatalf("fallback %s is not next to the repo root: %v", d, err)
	}
}

func mustRepoRoot(t *testing.T) string {
	root, err := paths.RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	return root
}
