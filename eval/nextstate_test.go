package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/dataset"
	"ndb/engine"
	"ndb/format"
	"ndb/model/infer/infertest"
	"ndb/tracer"
)

func TestCompareFrames(t *testing.T) {
	locals := func(kv ...string) tracer.Locals {
		var l tracer.Locals
		for i := 0; i+1 < len(kv); i += 2 {
			l = append(l, tracer.Var{Name: kv[i], Value: kv[i+1]})
		}
		return l
	}
	line := format.Frame{Kind: format.Line, Src: "    x = 1", Locals: locals("x", "1", "y", "'a'")}
	ret := format.Frame{Kind: format.Return, Src: "    return x", Arg: "[1, 2]"}
	exit := format.Frame{Kind: format.ExitNormal}
	with := func(f format.Frame, edit func(*format.Frame)) format.Frame { edit(&f); return f }
	cases := []struct {
		name       string
		pred, want format.Frame
		exact      bool
		fields     map[string]bool // absent: N/A
	}{
		{"same line", line, line, true, map[string]bool{FieldEvt: true, FieldSrc: true, FieldLocals: true}},
		{"other value", with(line, func(f *format.Frame) { f.Locals = locals("x", "2", "y", "'a'") }), line, false,
			map[string]bool{FieldEvt: true, FieldSrc: true, FieldLocals: false}},
		{"other order", with(line, func(f *format.Frame) { f.Locals = locals("y", "'a'", "x", "1") }), line, false,
			map[string]bool{FieldEvt: true, FieldSrc: true, FieldLocals: false}},
		{"elision differs", with(line, func(f *format.Frame) { f.Elided = true }), line, false,
			map[string]bool{FieldEvt: true, FieldSrc: true, FieldLocals: false}},
		{"other line", with(line, func(f *format.Frame) { f.Src = "    y = 2" }), line, false,
			map[string]bool{FieldEvt: true, FieldSrc: false, FieldLocals: true}},
		{"call for line", with(line, func(f *format.Frame) { f.Kind = format.Call }), line, false,
			map[string]bool{FieldEvt: false, FieldSrc: true, FieldLocals: true}},
		{"same return", ret, ret, true, map[string]bool{FieldEvt: true, FieldSrc: true, FieldArg: true}},
		{"other value returned", with(ret, func(f *format.Frame) { f.Arg = "[1]" }), ret, false,
			map[string]bool{FieldEvt: true, FieldSrc: true, FieldArg: false}},
		{"line for return", line, ret, false, map[string]bool{FieldEvt: false, FieldSrc: false, FieldArg: false}},
		{"exit for return", exit, ret, false, map[string]bool{FieldEvt: false, FieldSrc: false, FieldArg: false}},
		{"exit", exit, exit, true, map[string]bool{FieldEvt: true}},
		{"return for exit", ret, exit, false, map[string]bool{FieldEvt: false}},
		{"inverse kinds differ", with(line, func(f *format.Frame) { f.Kind = format.InvLine }), line, false,
			map[string]bool{FieldEvt: false, FieldSrc: true, FieldLocals: true}},
		{"nothing predicted", format.Frame{}, line, false, map[string]bool{FieldEvt: false, FieldSrc: false, FieldLocals: false}},
		{"nothing vs exit", format.Frame{}, exit, false, map[string]bool{FieldEvt: false}},
	}
	for _, c := range cases {
		m := CompareFrames(c.pred, c.want)
		if m.Exact != c.exact || len(m.Fields) != len(c.fields) {
			t.Errorf("%s: %+v, want exact %v fields %v", c.name, m, c.exact, c.fields)
			continue
		}
		for f, v := range c.fields {
			if got, ok := m.Fields[f]; !ok || got != v {
				t.Errorf("%s: %s = %v (present %v), want %v", c.name, f, got, ok, v)
			}
		}
	}
	// A score over the table: fields count only where they apply.
	var s Score
	for _, c := range cases {
		s.Add(CompareFrames(c.pred, c.want))
	}
	if s.N != len(cases) || s.Counts[FieldArg] != 4 || s.Counts[FieldEvt] != len(cases) {
		t.Errorf("score counts: %+v", s)
	}
	if v, ok := s.Field(FieldArg); !ok || v != 0.25 {
		t.Errorf("em_arg = %v, want 0.25", v)
	}
	if got := s.Summary(); got["n"] != len(cases) {
		t.Errorf("summary %v", got)
	}
}

func fixturePrograms(t *testing.T) []NamedProgram {
	t.Helper()
	src, err := dataset.OpenSource("testdata/progs", mustDataDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []NamedProgram
	for i := 0; i < src.Len(); i++ {
		if it, skip := src.Item(i); skip == "" {
			out = append(out, NamedProgram{ID: it.ID, Program: it.Program})
		}
	}
	if len(out) < 4 {
		t.Fatalf("only %d fixture programs", len(out))
	}
	return out
}

// mustDataDir is the shared data folder, or an empty temporary one (a
// folder of scripts needs cruxeval.jsonl only to drop duplicates).
func mustDataDir() string {
	if dir, err := dataset.DataDir(""); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "cruxeval.jsonl")); err == nil {
			return dir
		}
	}
	dir, _ := os.MkdirTemp("", "ndb-eval-empty-")
	os.WriteFile(filepath.Join(dir, "cruxeval.jsonl"), nil, 0o644)
	return dir
}

// TestRealEngineNextState: through the real engine's backend (pdb's stepping
// replayed over the trace), every next state of the held-out trajectories
// is the true one, for all eight actions and the horizon jumps.
func TestRealEngineNextState(t *testing.T) {
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	opts := NextStateOptions{N: 30, HorizonN: 40, Seed: 3, Real: real, Engine: real}
	if testing.Short() {
		opts.N, opts.HorizonN = 10, 10
	}
	ctx := context.Background()
	exs, err := CollectExamples(ctx, fixturePrograms(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CollectExamples(ctx, fixturePrograms(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(exs) {
		t.Fatalf("not reproducible: %d then %d examples", len(exs), len(again))
	}
	for i := range exs {
		a, _ := format.Serialize(exs[i].Traj)
		b, _ := format.Serialize(again[i].Traj)
		if a != b || exs[i].Cut != again[i].Cut {
			t.Fatalf("example %d differs between two runs with one seed", i)
		}
	}
	rep, err := RunNextState(ctx, exs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped != 0 || rep.Errors != 0 {
		t.Errorf("dropped %d, errors %d", rep.Dropped, rep.Errors)
	}
	for _, a := range AllActions() {
		s := rep.PerAction[a]
		if s == nil || s.N == 0 {
			t.Errorf("no %s example", a)
			continue
		}
		if s.N > opts.N {
			t.Errorf("%s: %d examples, asked for %d", a, s.N, opts.N)
		}
		if s.EM() != 1 {
			t.Errorf("%s: real engine exact match %.3f, want 1 (%+v)", a, s.EM(), s)
		}
	}
	hz := 0
	for a, bins := range rep.HorizonBins {
		for _, b := range bins {
			hz += b.N
			if b.N > 0 && b.EM() != 1 {
				t.Errorf("horizon %s: exact match %.3f", a, b.EM())
			}
		}
	}
	if hz == 0 {
		t.Error("no horizon example")
	}
}

// TestModelEngineSmoke runs both harnesses on a tiny random model: they
// finish, count what they should and report fractions in range; the report
// (Markdown, JSON, PNG plots) is written.
func TestModelEngineSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a tokenizer and decodes a few hundred frames")
	}
	pred := engine.InferPredictor{P: infertest.Tiny(t, 512)}
	eng := engine.NewNeuralEngine(engine.Model, pred, engine.Draw{}, false)
	real := engine.NewReal(engine.Options{Workers: 1})
	defer real.Close()
	ctx := context.Background()
	opts := NextStateOptions{N: 3, HorizonN: 6, Seed: 1, Real: real, Predictor: pred, Engine: eng, K: 2}
	exs, err := CollectExamples(ctx, fixturePrograms(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range exs {
		if ex.Horizon {
			continue
		}
		want, err := format.Prompt(ex.Traj, ex.Cut)
		got, err2 := format.PromptText(ex.Traj.Source, ex.Traj.Frames[:ex.Cut+1], ex.Traj.Steps[:ex.Cut+1])
		if err != nil || err2 != nil || got != want {
			t.Fatalf("the prompt is not the training text: %v %v", err, err2)
		}
	}
	var dump bytes.Buffer
	opts.Dump = &dump
	rep, err := RunNextState(ctx, exs, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.Dropped != 0 {
		t.Errorf("%d errors (%q), %d dropped: constrained decoding always gives a frame", rep.Errors, rep.ErrorSamples, rep.Dropped)
	}
	// The dump has one line per example, each with its true frame's text
	// and the exactness the scores counted.
	lines := strings.Split(strings.TrimSpace(dump.String()), "\n")
	exact := 0
	for _, l := range lines {
		var d struct {
			Exact      bool
			Want, Pred string
			Prompt     string
			Action     string
		}
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.Want == "" || d.Prompt == "" || d.Action == "" {
			t.Fatalf("dump line %q: %v", l, err)
		}
		if d.Exact != (d.Pred == d.Want) {
			t.Fatalf("dump line says exact=%v for %q vs %q", d.Exact, d.Pred, d.Want)
		}
		if d.Exact {
			exact++
		}
	}
	if len(lines) != len(exs) {
		t.Errorf("dump has %d lines for %d examples", len(lines), len(exs))
	}
	scored := 0
	for _, s := range rep.PerAction {
		scored += s.Exact
	}
	for _, bins := range rep.HorizonBins {
		for _, s := range bins {
			scored += s.Exact
		}
	}
	if exact != scored {
		t.Errorf("dump counts %d exact, the report %d", exact, scored)
	}
	total := 0
	for a, s := range rep.PerAction {
		total += s.N
		for k, v := range s.Summary() {
			if f, ok := v.(float64); ok && (f < 0 || f > 1) {
				t.Errorf("%s %s = %v out of range", a, k, f)
			}
		}
		if _, ok := s.EMAtK(); !ok {
			t.Errorf("%s: em@k missing", a)
		}
	}
	if total+rep.Dropped+countHorizon(rep) != len(exs) || total == 0 {
		t.Errorf("scored %d + %d horizon of %d examples", total, countHorizon(rep), len(exs))
	}
	dir := t.TempDir()
	files, err := rep.WritePlots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("plots %v, want fields, direction and horizon", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) || len(b) < 2000 {
			t.Errorf("%s is not a PNG figure (%d bytes, %v)", f, len(b), err)
		}
	}
	md := rep.Markdown()
	for _, want := range []string{"| step_into |", "| inv_step_call |", "**forward**", "**inverse**", "em@2", "Horizon"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	js, err := json.Marshal(rep.JSON())
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		PerAction map[string]map[string]float64 `json:"per_action"`
	}
	if err := json.Unmarshal(js, &back); err != nil || len(back.PerAction) != len(rep.PerAction) {
		t.Fatalf("json %s: %v", js, err)
	}
	for a, m := range back.PerAction {
		if _, ok := m["em"]; !ok || m["n"] < 1 {
			t.Errorf("per_action[%s] = %v", a, m)
		}
	}

	// CruxEval through the same engine, with k candidates for input.
	items := cruxItems(t, 6)
	sc := newScorer(t)
	for _, task := range []string{TaskOutput, TaskInput} {
		crep, err := RunCruxEval(ctx, items, CruxOptions{Task: task, Engine: eng, Predictor: pred, Real: real, Scorer: sc, K: 3, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]float64{"pass@1": crep.PassAt1, "exact": crep.ExactMatch, "literal": crep.Literal,
			"pass@k": crep.PassAtK, "majority": crep.Majority, "sc": crep.SelfCons} {
			if v < 0 || v > 100 {
				t.Errorf("%s %s = %v", task, name, v)
			}
		}
		if crep.N != len(items) || len(crep.Results) != len(items) {
			t.Errorf("%s: %d results for %d items", task, len(crep.Results), len(items))
		}
		if task == TaskInput {
			if crep.K != 3 || crep.PassAtK < crep.Majority || crep.PassAtK < crep.SelfCons {
				t.Errorf("input: k=%d pass@k %.1f < majority %.1f or sc %.1f", crep.K, crep.PassAtK, crep.Majority, crep.SelfCons)
			}
			for _, r := range crep.Results {
				if len(r.Candidates) != 3 {
					t.Errorf("%s: %d candidates", r.ID, len(r.Candidates))
				}
			}
		}
	}
}

func countHorizon(r *NextStateReport) int {
	n := 0
	for _, bins := range r.HorizonBins {
		for _, b := range bins {
			n += b.N
		}
	}
	return n
}
