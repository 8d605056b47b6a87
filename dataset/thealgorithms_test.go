package dataset

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"ndb/model/train"
	"ndb/tracer"
)

const theAlgoFixture = "testdata/thealgorithms"

func TestDoctestCalls(t *testing.T) {
	mod := `import math
from heapq import heappush as push, heappop
LIMIT = 10


def f(a, b=1):
    """
    >>> f(1, 2)
    3
    >>> f(1,
    ...   b=5)  # doctest: +ELLIPSIS
    6
    >>> f(1, 2)
    3
    >>> x = f(1)
    >>> f(x)
    >>> print(f(2))
    >>> f(1) == 2
    >>> f
    >>> import os
    >>> [f(i) for i in range(3)]
    >>> sorted(gen(3))
    >>> len([1, 2])
    >>> f(LIMIT, b=math.pi)
    >>> f(*[k for k in range(2)])
    >>> f(acc := 2, acc)
    >>> f(lambda y: y, 1)
    >>> Node(3).next.value(4)
    >>> Node(3).items[0]
    >>> f("a # not a comment", 1)
    >>> f('(', 1)
    >>> from_x(1)
    >>> f(undefined_name)
    >>> push([], 1)
    """
    return a + b


class Node:
    pass
`
	want := []string{
		"f(1, 2)",
		"f(1, b=5)",
		"sorted(gen(3))" + "\x00skip", // gen is not a module name: skipped
		"f(LIMIT, b=math.pi)",
		"f(*[k for k in range(2)])",
		"f(acc := 2, acc)",
		"f(lambda y: y, 1)",
		"Node(3).next.value(4)",
		`f("a # not a comment", 1)`,
		"f('(', 1)",
		"push([], 1)",
	}
	var keep []string
	for _, w := range want {
		if !strings.HasSuffix(w, "\x00skip") {
			keep = append(keep, w)
		}
	}
	got := DoctestCalls(mod)
	if !slices.Equal(got, keep) {
		t.Fatalf("calls:\n got %q\nwant %q", got, keep)
	}
}

func TestStripMainBlock(t *testing.T) {
	cases := []struct{ in, want string }{
		{"def f():\n    return 1\n\n\nif __name__ == \"__main__\":\n    f()\n# c\n\n    f()\n", "def f():\n    return 1\n"},
		{"x = 1\nif __name__ == '__main__': print(x)\ny = 2\n", "x = 1\ny = 2\n"},
		{"if __name__ == \"__main__\":\n    import doctest\n\n    doctest.testmod()\nZ = 3\n", "Z = 3\n"},
		{"def f():\n    pass\n", "def f():\n    pass\n"},
	}
	for i, c := range cases {
		if got := StripMainBlock(c.in); got != c.want {
			t.Errorf("case %d: got %q want %q", i, got, c.want)
		}
	}
}

// TestTheAlgorithmsFixture checks the units built from the fixture files:
// function units (calls, ids, no main block) and script units.
func TestTheAlgorithmsFixture(t *testing.T) {
	s, err := loadFiles(SourceTheAlgorithms, SourceTheAlgorithms, theAlgoFixture, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids, calls []string
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		ids = append(ids, it.ID)
		calls = append(calls, it.Program.Call)
		if it.Program.Call != "" && strings.Contains(it.Program.Source, "__main__") {
			t.Errorf("%s: function unit keeps the main block", it.ID)
		}
		if it.Program.Call == "" && !strings.Contains(it.Program.Source, "__main__") {
			t.Errorf("%s: script unit lost its main block", it.ID)
		}
	}
	wantIDs := []string{
		"thealgorithms/data_structures__tiny_stack/0", "thealgorithms/data_structures__tiny_stack/1",
		"thealgorithms/data_structures__tiny_stack",
		"thealgorithms/maths__tiny_sum/0", "thealgorithms/maths__tiny_sum/1", "thealgorithms/maths__tiny_sum/2",
		"thealgorithms/maths__tiny_sum/3", "thealgorithms/maths__tiny_sum",
		"thealgorithms/other__tiny_loop/0", "thealgorithms/other__tiny_loop",
	}
	wantCalls := []string{"Stack(3).push(4)", "Stack(0).size()", "",
		"add_all(1, 2, 3)", "add_all(1, 2)", "list(squares(3))", "root(-1)", "",
		"spin(10)", ""}
	if !slices.Equal(ids, wantIDs) || !slices.Equal(calls, wantCalls) {
		t.Fatalf("ids %q\ncalls %q", ids, calls)
	}
	if f, sc, long := s.Counts(); f != 7 || sc != 3 || long != 0 {
		t.Fatalf("counts %d %d %d", f, sc, long)
	}
	for _, c := range []struct {
		kind string
		n    int
	}{{SourceTheAlgorithmsFunctions, 7}, {SourceTheAlgorithmsScripts, 3}} {
		k, err := loadFiles(c.kind, SourceTheAlgorithms, theAlgoFixture, nil, c.kind == SourceTheAlgorithmsFunctions, c.kind == SourceTheAlgorithmsScripts)
		if err != nil || k.Len() != c.n || k.Name() != c.kind {
			t.Fatalf("%s: %v len %d", c.kind, err, k.Len())
		}
	}
}

// TestTheAlgorithmsSplitByFile: the held-out split (train.ProgramHash of
// SplitKey) puts every unit of a file, call or script, on the same side.
func TestTheAlgorithmsSplitByFile(t *testing.T) {
	s, err := loadFiles(SourceTheAlgorithms, SourceTheAlgorithms, theAlgoFixture, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		stem := strings.Split(it.ID, "/")[1]
		if k := train.SplitKey(it.ID); k != "thealgorithms/"+stem {
			t.Errorf("SplitKey(%s) = %s", it.ID, k)
		}
		if train.ProgramHash(it.ID) != train.ProgramHash("thealgorithms/"+stem) {
			t.Errorf("%s hashes apart from its file", it.ID)
		}
	}
}

func TestFileDropTrace(t *testing.T) {
	call := Item{Program: tracer.Program{Call: "f(1)"}}
	script := Item{}
	st := []tracer.State{{Event: "call"}}
	cases := []struct {
		it   Item
		tr   *tracer.Trace
		want string
	}{
		{call, &tracer.Trace{States: st, Exit: tracer.Exit{Kind: tracer.ExitNormal}}, ""},
		{call, &tracer.Trace{States: st, Exit: tracer.Exit{Kind: tracer.ExitError}}, ""},
		{script, &tracer.Trace{States: st, Exit: tracer.Exit{Kind: tracer.ExitError}}, SkipScriptError},
		{call, &tracer.Trace{States: st, Exit: tracer.Exit{Kind: tracer.ExitNever, Reason: "events"}}, SkipOutOfBounds},
		{script, &tracer.Trace{States: st, Exit: tracer.Exit{Kind: tracer.ExitNever, Reason: "timeout"}}, SkipOutOfBounds},
		{call, &tracer.Trace{Exit: tracer.Exit{Kind: tracer.ExitError}}, "trace-error"},
	}
	for i, c := range cases {
		if got := FileDropTrace(c.it, c.tr); got != c.want {
			t.Errorf("case %d: %q want %q", i, got, c.want)
		}
	}
}

// TestTheAlgorithmsTraces traces every fixture unit with gen's limits: the
// calls run without the main block, the scripts run it, the looping script
// is dropped out of bounds.
func TestTheAlgorithmsTraces(t *testing.T) {
	drops := map[string]string{}
	traceFileUnits(t, SourceTheAlgorithms, theAlgoFixture, func(it Item, res *tracer.Trace, why string) {
		if it.Program.Call != "" && res.Stdout != "" {
			t.Errorf("%s: the call printed %q (main block ran?)", it.ID, res.Stdout)
		}
		if why != "" {
			drops[it.ID] = why
		}
		if it.ID == "thealgorithms/maths__tiny_sum" && !strings.Contains(res.Stdout, "3\n4") {
			t.Errorf("script did not run its main block: %q", res.Stdout)
		}
		if it.Program.Call == "root(-1)" && res.Exit.Kind != tracer.ExitError {
			t.Errorf("root(-1): %+v", res.Exit)
		}
	})
	want := map[string]string{"thealgorithms/other__tiny_loop": SkipOutOfBounds}
	if len(drops) != len(want) || drops["thealgorithms/other__tiny_loop"] != SkipOutOfBounds {
		t.Fatalf("drops %v, want %v", drops, want)
	}
}

// TestGenTheAlgorithmsFixture runs ndb gen's job on the fixture source with
// the real tracer: every kept unit yields its trajectories.
func TestGenTheAlgorithmsFixture(t *testing.T) {
	s, err := loadFiles(SourceTheAlgorithms, SourceTheAlgorithms, theAlgoFixture, nil, true, true)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sum, err := Run(context.Background(), realJob(t, s, 40, 1, 4, out))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Trajectories < 30 {
		t.Fatalf("%d trajectories (skipped %v)", sum.Trajectories, sum.Skipped)
	}
	shards := readShards(t, out)
	ids := map[string]bool{}
	for name, data := range shards {
		if !strings.HasSuffix(name, ".jsonl") {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
			var r Record
			if err := jsonUnmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if r.Source != SourceTheAlgorithms || !strings.HasPrefix(r.ProgramID, "thealgorithms/") {
				t.Fatalf("record %s %s", r.Source, r.ProgramID)
			}
			ids[r.ProgramID] = true
		}
	}
	if !ids["thealgorithms/maths__tiny_sum"] || !ids["thealgorithms/data_structures__tiny_stack/0"] {
		t.Fatalf("programs %v", ids)
	}
}

// TestTheAlgorithmsRealData reads the shared data set (skipped when absent)
// and checks the counts are non-trivial; -v logs them.
func TestTheAlgorithmsRealData(t *testing.T) {
	d := dataDir(t)
	if _, err := os.Stat(filepath.Join(d, "thealgorithms")); err != nil {
		t.Skipf("no thealgorithms: %v", err)
	}
	src, err := OpenSource(SourceTheAlgorithms, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*fileSource)
	f, sc, long := s.Counts()
	t.Logf("thealgorithms: %d units: %d function units, %d script units, %d too long, %d CruxEval drops", s.Len(), f, sc, long, s.Dropped())
	if f < 2000 || sc < 500 || s.Len() != f+sc {
		t.Fatalf("counts: %d functions, %d scripts, %d items", f, sc, s.Len())
	}
	files := map[string]bool{}
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		files[train.SplitKey(it.ID)] = true
	}
	// one split key per file (a file whose whole text is too long may
	// still have short function units)
	if len(files) < sc || len(files) > 639 {
		t.Errorf("%d split keys, %d script units", len(files), sc)
	}
}

// TestTheAlgorithmsMeasure traces every unit of the real data with gen's
// default limits (10,000 events, 5 s) and logs how many stay in bounds.
// Slow (minutes): run with NDB_MEASURE=1 go test ./dataset -run TestTheAlgorithmsMeasure -v
func TestTheAlgorithmsMeasure(t *testing.T) { measureFileSource(t, SourceTheAlgorithms) }

// measureFileSource traces every unit of file source name (shared data)
// with gen's default limits and logs, per kind, the units in bounds and the
// drops by reason, and the files with at least one kept unit.
func measureFileSource(t *testing.T, name string) {
	if os.Getenv("NDB_MEASURE") == "" {
		t.Skip("set NDB_MEASURE=1")
	}
	d := dataDir(t)
	src, err := OpenSource(name, d, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*fileSource)
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skip(err)
	}
	newTr := func() *tracer.Tracer {
		tr, err := tracer.New(tracer.Options{Python: python, Limits: tracer.Limits{Timeout: 5 * time.Second, MaxEvents: 10000}})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := newTr()
	defer func() { tr.Close() }()
	type tally struct{ n, kept int }
	by := map[string]map[string]int{"function": {}, "script": {}}
	tot := map[string]*tally{"function": {}, "script": {}}
	kept, held, errors := map[string]bool{}, map[string]bool{}, map[string]int{}
	start := time.Now()
	for i := 0; i < s.Len(); i++ {
		it, _ := s.Item(i)
		kind := "function"
		if it.Program.Call == "" {
			kind = "script"
		}
		res, err := tr.Trace(context.Background(), it.Program)
		if err != nil {
			tr.Close()
			tr = newTr()
			by[kind]["tracer-failure"]++
			tot[kind].n++
			continue
		}
		why := s.DropTrace(it, res)
		tot[kind].n++
		if why == "" {
			tot[kind].kept++
			why = "kept:" + string(res.Exit.Kind)
			key := train.SplitKey(it.ID)
			kept[key] = true
			if train.ProgramHash(it.ID)%100 < 5 {
				held[key] = true
			}
		} else if why == SkipScriptError {
			// the exception's type: which failures the rule drops
			errType, _, _ := strings.Cut(res.Exit.Error, "(")
			errors[errType]++
		}
		by[kind][why]++
	}
	for _, k := range []string{"function", "script"} {
		t.Logf("%s units: %d, in bounds %d (%.1f%%): %v", k, tot[k].n, tot[k].kept, 100*float64(tot[k].kept)/float64(max(1, tot[k].n)), by[k])
	}
	t.Logf("files with a kept unit: %d of %d (%d held out at 5%%); script errors by type: %v", len(kept), s.Files(), len(held), errors)
	t.Logf("traced in %.0f s", time.Since(start).Seconds())
}

// TestModuleNamesFromTheIndex: a doctest call may use a name the module
// binds under a top-level try or if, not a def inside a string or one the
// main block binds (the call unit runs without it). The line patterns
// before the index took `def fake(` in the string and missed gcd; the
// first-column `def` search took fake as a defined function too.
func TestModuleNamesFromTheIndex(t *testing.T) {
	mod := `try:
    from math import gcd
except ImportError:
    gcd = None
DOC = """
def fake(x):
    return x
"""


def f(a):
    """
    >>> f(gcd(4, 6))
    >>> fake(1)
    >>> main_only(2)
    """
    return a


if __name__ == "__main__":
    def main_only(x):
        return x
`
	if got := DoctestCalls(mod); !slices.Equal(got, []string{"f(gcd(4, 6))"}) {
		t.Errorf("calls %q, want only f(gcd(4, 6))", got)
	}
	if got := definedFunctions(mod); !slices.Equal(got, []string{"f"}) {
		t.Errorf("defined functions %q, want f", got)
	}
}
