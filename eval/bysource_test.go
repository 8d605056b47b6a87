package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"ndb/dataset"
	"ndb/engine"
	"ndb/model/train"
	"ndb/tracer"
)

// TestNextStateBySource: two sources in one run (the fixture scripts split
// in two) give a per-source report whose counts add up to the overall,
// the real engine scores 100% in each, and the JSON and the table show
// every source.
func TestNextStateBySource(t *testing.T) {
	progs := fixturePrograms(t)
	sets := []SourcePrograms{{Source: "alpha", Programs: progs[:2]}, {Source: "beta", Programs: progs[2:]}}
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	opts := NextStateOptions{N: 6, HorizonN: 6, Seed: 5, Real: real, Engine: real}
	ctx := context.Background()
	exs, err := CollectSources(ctx, sets, opts)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[int]string{}
	for _, ex := range exs {
		if s, ok := groups[ex.group]; ok && s != ex.Source {
			t.Fatalf("group %d shared by %s and %s", ex.group, s, ex.Source)
		}
		groups[ex.group] = ex.Source
	}
	rep, err := RunNextState(ctx, exs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.SourceNames(); len(got) != 2 || got[0] != "alpha" || got[1] != "beta" {
		t.Fatalf("sources %v", got)
	}
	total, fw, inv := 0, 0, 0
	for _, name := range rep.SourceNames() {
		ss := rep.Sources[name]
		total += ss.Examples
		fw += ss.Forward.N
		inv += ss.Inverse.N
		if ss.Programs == 0 || ss.Programs > len(progs)-2 {
			t.Errorf("%s: %d programs", name, ss.Programs)
		}
		for a, s := range ss.PerAction {
			if s.N > opts.N || s.EM() != 1 {
				t.Errorf("%s %s: n %d em %.3f", name, a, s.N, s.EM())
			}
		}
		if ss.Horizon == nil || ss.Horizon.EM() != 1 {
			t.Errorf("%s: horizon %+v", name, ss.Horizon)
		}
	}
	if total != rep.Examples || fw != rep.Forward.N || inv != rep.Inverse.N {
		t.Fatalf("sources add to %d examples (%d fw, %d inv), overall %d (%d, %d)", total, fw, inv, rep.Examples, rep.Forward.N, rep.Inverse.N)
	}
	b, err := json.Marshal(rep.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var js struct {
		BySource map[string]struct {
			Examples int            `json:"examples"`
			Forward  map[string]any `json:"forward"`
			PerAct   map[string]any `json:"per_action"`
		} `json:"by_source"`
	}
	if err := json.Unmarshal(b, &js); err != nil || len(js.BySource) != 2 || js.BySource["alpha"].Forward["em"] != 1.0 {
		t.Fatalf("json %s (%v)", b, err)
	}
	md := rep.Markdown()
	for _, want := range []string{"By source", "| alpha |", "| beta |", "| **all** |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// A source's trace filter leaves its dropped programs out.
	drop := dropID(progs[2].ID)
	sets[1].Filter = drop
	exs2, err := CollectSources(ctx, sets, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs2 {
		if ex.Program == string(drop) {
			t.Fatalf("filtered program %s gave examples", drop)
		}
	}
	// One source: no source tags, the report as before.
	one, err := CollectExamples(ctx, progs, opts)
	if err != nil {
		t.Fatal(err)
	}
	rep1, err := RunNextState(ctx, one, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep1.Sources != nil || strings.Contains(rep1.Markdown(), "By source") || rep1.JSON()["by_source"] != nil {
		t.Errorf("single source report has a by-source part")
	}
}

// dropID is a trace filter that drops one program.
type dropID string

func (d dropID) DropTrace(it dataset.Item, _ *tracer.Trace) string {
	if it.ID == string(d) {
		return "test"
	}
	return ""
}

// TestHeldOutUnbounded: an unbounded source gives its first held-out
// programs, each in the validation split.
func TestHeldOutUnbounded(t *testing.T) {
	src, err := dataset.OpenSource("synthetic", mustDataDir(), 7)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ val, limit, want int }{{5, 12, 12}, {50, 3, 3}}
	for _, c := range cases {
		got, err := HeldOut(src, c.val, c.limit)
		if err != nil || len(got) != c.want {
			t.Fatalf("val %d limit %d: %d programs, %v", c.val, c.limit, len(got), err)
		}
		for _, p := range got {
			if train.ProgramHash(p.ID)%100 >= uint64(c.val) {
				t.Errorf("%s is not held out at %d%%", p.ID, c.val)
			}
		}
	}
	if _, err := HeldOut(src, 0, 5); err == nil {
		t.Error("0% gave programs")
	}
}

// TestHeldOutTheAlgorithmsByFile (shared data; skipped when absent): the
// held-out split of the file sources, thealgorithms and realworld, takes
// whole files, calls and script.
func TestHeldOutTheAlgorithmsByFile(t *testing.T) {
	dir, err := dataset.DataDir("")
	if err != nil {
		t.Skip(err)
	}
	for _, name := range []string{dataset.SourceTheAlgorithms, dataset.SourceRealWorld} {
		src, err := dataset.OpenSource(name, dir, 1)
		if err != nil {
			t.Logf("no %s: %v", name, err)
			continue
		}
		held, err := HeldOut(src, 5, 0)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]bool{}
		files := map[string]bool{}
		for _, p := range held {
			in[p.ID] = true
			files[train.SplitKey(p.ID)] = true
		}
		scripts := 0
		for i := 0; i < src.Len(); i++ {
			it, _ := src.Item(i)
			if files[train.SplitKey(it.ID)] != in[it.ID] {
				t.Errorf("%s: its file is split across the sides", it.ID)
			}
			if in[it.ID] && it.Program.Call == "" {
				scripts++
			}
		}
		t.Logf("%s held out at 5%%: %d of %d units, %d files (%d script units)", name, len(held), src.Len(), len(files), scripts)
	}
}
