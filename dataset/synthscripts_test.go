package dataset

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"ndb/dataset/synth"
	"ndb/model/train"
	"ndb/tracer"
)

// TestSynthScriptIDs: every script is its own held-out split key, ids are
// distinct, programs are scripts (no call).
func TestSynthScriptIDs(t *testing.T) {
	s := &synthScriptSource{seed: 3}
	keys := map[string]bool{}
	for i := 0; i < 200; i++ {
		it, skip := s.Item(i)
		if skip != "" {
			t.Fatalf("item %d skipped: %s", i, skip)
		}
		if it.Program.Call != "" || it.Program.Source == "" {
			t.Fatalf("item %d: %+v", i, it.Program)
		}
		want := fmt.Sprintf("synthscript/3/%d", i)
		if got := train.SplitKey(it.ID); got != want {
			t.Fatalf("SplitKey(%s) = %s, want %s", it.ID, got, want)
		}
		if keys[it.ID] {
			t.Fatalf("repeated id %s", it.ID)
		}
		keys[it.ID] = true
	}
	if s.Len() != -1 || s.Name() != "synthetic-scripts" {
		t.Fatal("want an unbounded source named synthetic-scripts")
	}
}

// TestSynthScriptsRun traces 300 scripts (60 with -short) with the real
// tracer (SYNTH_SCRIPTS_RUN=N for more): all end in bounds, only the scripts meant to raise raise, traces
// stay small, and the constructs occur at the expected rates.
func TestSynthScriptsRun(t *testing.T) {
	tr := newRealTracer(t)
	n := 300
	if testing.Short() {
		n = 60
	}
	if v, err := strconv.Atoi(os.Getenv("SYNTH_SCRIPTS_RUN")); err == nil && v > 0 {
		n = v // a heavier run: SYNTH_SCRIPTS_RUN=3000 go test ./dataset -run TestSynthScriptsRun -v
	}
	var errs, uncaught, events, maxEvents, lines int
	count := map[string]int{}
	for i := 0; i < n; i++ {
		p := synth.GenerateScript(1, i)
		f := synth.InspectScript(1, i)
		for name, on := range map[string]bool{"class": f.Class, "property": f.Property, "generator": f.Generator,
			"try": f.Try, "finally": f.Finally, "print": f.Print, "fstring": f.FString, "main": f.MainGuard,
			"typed": f.TypedFunc, "chain": f.Chain, "loop": f.ModuleLoop} {
			if on {
				count[name]++
			}
		}
		if f.Lines < 8 || f.Lines > 40 {
			t.Errorf("%s: %d lines, want 8-40", p.Path, f.Lines)
		}
		lines += f.Lines
		trace, err := tr.Trace(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		ev := len(trace.States)
		events += ev
		maxEvents = max(maxEvents, ev)
		if f.Uncaught {
			uncaught++
		}
		switch trace.Exit.Kind {
		case tracer.ExitNormal:
			if f.Uncaught {
				t.Errorf("%s: meant to raise, ended normally", p.Path)
			}
		case tracer.ExitError:
			errs++
			if !f.Uncaught {
				t.Errorf("%s: unexpected %s %s\n%s", p.Path, trace.Exit.Error, trace.Exit.Reason, p.Source)
			}
		default:
			t.Errorf("%s: exit %+v\n%s", p.Path, trace.Exit, p.Source)
		}
		if ev > 1000 {
			t.Errorf("%s: %d events\n%s", p.Path, ev, p.Source)
		}
	}
	t.Logf("%d scripts: mean %.1f lines, mean %.0f events (max %d), %d end in an uncaught exception; %v",
		n, float64(lines)/float64(n), float64(events)/float64(n), maxEvents, errs, count)
	if errs > n/10 {
		t.Errorf("%d of %d scripts raise", errs, n)
	}
	// constructs each present in a fair share of scripts
	for name, lo := range map[string]float64{"class": 0.2, "generator": 0.2, "try": 0.3, "print": 0.8, "main": 0.45,
		"fstring": 0.4, "typed": 0.1, "chain": 0.2, "loop": 0.2} {
		if float64(count[name]) < lo*float64(n) {
			t.Errorf("%s in %d of %d scripts, want at least %.0f%%", name, count[name], n, 100*lo)
		}
	}
	if !testing.Short() && float64(count["main"]) > 0.75*float64(n) {
		t.Errorf("__main__ guard in %d of %d scripts, want some without", count["main"], n)
	}
}

// TestGenSyntheticScripts: ndb gen's job writes script trajectories.
func TestGenSyntheticScripts(t *testing.T) {
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	// through OpenSource as `ndb gen --source synthetic-scripts` does, when
	// the shared data (cruxeval.jsonl) is there
	var src Source = &synthScriptSource{seed: 1}
	if d, err := DataDir(""); err == nil {
		if _, err := os.Stat(filepath.Join(d, "cruxeval.jsonl")); err == nil {
			if src, err = OpenSource("synthetic-scripts", d, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	j := &Job{Source: src, N: 64, Seed: 1, PerTrace: 8, ShardUnits: 4, Out: dir, Workers: 1,
		NewTracer: func() (Tracer, error) { return tracer.New(tracer.Options{Python: python}) }}
	sum, err := Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Trajectories != 64 {
		t.Fatalf("%d trajectories, want 64 (skipped %v)", sum.Trajectories, sum.Skipped)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "shard-*.jsonl"))
	lines := 0
	for _, m := range matches {
		f, err := os.Open(m)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var rec Record
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Source != "synthetic-scripts" || !strings.HasPrefix(rec.ProgramID, "synthscript/1/") || rec.Call != "" {
				t.Fatalf("record %+v", rec)
			}
			if !strings.Contains(rec.Text, "<|trace_context_start|>") {
				t.Fatalf("text %q", rec.Text)
			}
			lines++
		}
		f.Close()
	}
	if lines != 64 {
		t.Fatalf("%d lines in shards, want 64", lines)
	}
}
