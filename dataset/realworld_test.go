package dataset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/model/train"
	"ndb/tracer"
)

const realWorldFixture = "testdata/realworld"

// fixtureDataDir is a data folder holding the realworld fixture and an
// empty cruxeval.jsonl, so OpenSource resolves the names as for the shared data.
func fixtureDataDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "cruxeval.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(realWorldFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(d, "realworld")); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRealWorldFixture: the three --source names open the fixture folder
// (README.md and LICENSES/ ignored), with thealgorithms' unit rules: each
// file's doctest calls, then the whole file; ids under realworld/.
func TestRealWorldFixture(t *testing.T) {
	d := fixtureDataDir(t)
	src, err := OpenSource(SourceRealWorld, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*fileSource)
	var ids, calls []string
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		ids = append(ids, it.ID)
		calls = append(calls, it.Program.Call)
		if it.Program.Call != "" && strings.Contains(it.Program.Source, "__main__") {
			t.Errorf("%s: function unit keeps the main block", it.ID)
		}
	}
	wantIDs := []string{
		"realworld/keon__algorithms__maths__gcd/0", "realworld/keon__algorithms__maths__gcd/1",
		"realworld/keon__algorithms__maths__gcd/2", "realworld/keon__algorithms__maths__gcd/3",
		"realworld/keon__algorithms__maths__gcd",
		"realworld/pymotw__collections__counter_demo",
		"realworld/realpython__needs__numpy_mean/0", "realworld/realpython__needs__numpy_mean",
		"realworld/zoran__misc__forever",
	}
	// gcd(g, 8) uses the doctest's own variable: skipped
	wantCalls := []string{"gcd(12, 18)", "gcd(7, 0)", "lcm(4, 6)", "lcm(0, 0)", "", "", "mean([1, 2, 3])", "", ""}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(calls, wantCalls) {
		t.Fatalf("ids %q\ncalls %q", ids, calls)
	}
	if f, sc, long := s.Counts(); f != 5 || sc != 4 || long != 0 || s.Files() != 4 {
		t.Fatalf("counts %d %d %d, %d files", f, sc, long, s.Files())
	}
	for _, c := range []struct {
		name string
		n    int
	}{{SourceRealWorldFunctions, 5}, {SourceRealWorldScripts, 4}} {
		k, err := OpenSource(c.name, d, 1)
		if err != nil || k.Len() != c.n || k.Name() != c.name {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	// split by file: every unit of a file hashes as the file
	for _, id := range ids {
		stem := strings.Split(id, "/")[1]
		if train.SplitKey(id) != "realworld/"+stem {
			t.Errorf("SplitKey(%s) = %s", id, train.SplitKey(id))
		}
	}
	if _, err := OpenSource(SourceRealWorld, t.TempDir(), 1); err == nil {
		t.Error("a data folder without realworld/ (and cruxeval.jsonl) opened")
	}
}

// TestRealWorldTraces traces every fixture unit with gen's limits and the
// source's rule: a doctest call that raises is kept (exit_error is data), a
// file importing a module that is not installed fails at import (script
// dropped, its call has no states), an endless loop is out of bounds.
func TestRealWorldTraces(t *testing.T) {
	got := map[string]string{}
	traceFileUnits(t, SourceRealWorld, realWorldFixture, func(it Item, res *tracer.Trace, why string) {
		if why == "" {
			why = "kept:" + string(res.Exit.Kind)
		}
		got[it.ID] = why
		if it.ID == "realworld/pymotw__collections__counter_demo" && res.Stdout != "a 3\nb 2\n" {
			t.Errorf("script stdout %q", res.Stdout)
		}
	})
	want := map[string]string{
		"realworld/keon__algorithms__maths__gcd/0":    "kept:" + tracer.ExitNormal,
		"realworld/keon__algorithms__maths__gcd/1":    "kept:" + tracer.ExitNormal,
		"realworld/keon__algorithms__maths__gcd/2":    "kept:" + tracer.ExitNormal,
		"realworld/keon__algorithms__maths__gcd/3":    "kept:" + tracer.ExitError,
		"realworld/keon__algorithms__maths__gcd":      "kept:" + tracer.ExitNormal,
		"realworld/pymotw__collections__counter_demo": "kept:" + tracer.ExitNormal,
		"realworld/realpython__needs__numpy_mean/0":   "trace-error",
		"realworld/realpython__needs__numpy_mean":     SkipScriptError,
		"realworld/zoran__misc__forever":              SkipOutOfBounds,
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
}

// TestGenRealWorldFixture runs ndb gen's job on the fixture source: the
// kept units yield trajectories, the dropped ones are counted by reason.
func TestGenRealWorldFixture(t *testing.T) {
	s, err := loadFiles(SourceRealWorld, SourceRealWorld, realWorldFixture, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Run(context.Background(), realJob(t, s, 36, 1, 4, out))
	if err != nil {
		t.Fatal(err)
	}
	// 9 units of 4: the 3 dropped ones yield nothing
	if sum.Trajectories != 24 || sum.Skipped[SkipOutOfBounds] != 1 || sum.Skipped[SkipScriptError] != 1 || sum.Skipped["trace-error"] != 1 {
		t.Fatalf("%d trajectories, skipped %v", sum.Trajectories, sum.Skipped)
	}
	for name, data := range readShards(t, out) {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
			var r Record
			if err := jsonUnmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if r.Source != SourceRealWorld || !strings.HasPrefix(r.ProgramID, "realworld/") || r.Exit == "exit_never" {
				t.Fatalf("record %s %s %s", r.Source, r.ProgramID, r.Exit)
			}
		}
	}
}

// TestRealWorldRealData reads the shared data set (skipped when absent):
// every file is read, units are split by file; -v logs the counts.
func TestRealWorldRealData(t *testing.T) {
	d := dataDir(t)
	if _, err := os.Stat(filepath.Join(d, "realworld")); err != nil {
		t.Skipf("no realworld: %v", err)
	}
	src, err := OpenSource(SourceRealWorld, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*fileSource)
	f, sc, long := s.Counts()
	files, held, heldUnits := map[string]bool{}, map[string]bool{}, 0
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		k := train.SplitKey(it.ID)
		files[k] = true
		if train.ProgramHash(it.ID)%100 < 5 {
			held[k] = true
			heldUnits++
		}
	}
	t.Logf("realworld: %d files, %d units: %d function units, %d script units; %d too long, %d CruxEval drops; %d files with a unit, %d held out at 5%% (%d units)",
		s.Files(), s.Len(), f, sc, long, s.Dropped(), len(files), len(held), heldUnits)
	if s.Files() < 2000 || sc < 1500 || f < 500 || s.Len() != f+sc || len(files) > s.Files() || len(held) == 0 {
		t.Fatalf("counts: %d files, %d functions, %d scripts, %d items", s.Files(), f, sc, s.Len())
	}
}

// TestRealWorldMeasure traces every unit of the real data with gen's
// limits and logs how many stay in bounds (slow: minutes).
// NDB_MEASURE=1 go test ./dataset -run TestRealWorldMeasure -v -timeout 2h
func TestRealWorldMeasure(t *testing.T) { measureFileSource(t, SourceRealWorld) }
