package eval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"ndb/format"
)

// handReport is a next-state report built from hand-made comparisons.
func handReport() *NextStateReport {
	line := format.Frame{Kind: format.Line, Src: "    x = 1", Locals: nil}
	ret := format.Frame{Kind: format.Return, Src: "    return x", Arg: "1"}
	r := &NextStateReport{Engine: "hand", PerAction: map[string]*Score{}, Forward: &Score{}, Inverse: &Score{},
		HorizonBins: map[string][]*Score{}, HorizonSteps: map[string]map[int]*Score{}, K: 2, Examples: 7, Seconds: 1.5}
	add := func(a string, pred, want format.Frame, anyK bool) {
		s := r.PerAction[a]
		if s == nil {
			s = &Score{}
			r.PerAction[a] = s
		}
		s.Add(CompareFrames(pred, want))
		s.AddK(anyK)
	}
	add("step_into", line, line, true)
	add("step_into", ret, line, true)
	add("step_return", ret, ret, true)
	add("step_return", format.Frame{Kind: format.Return, Src: "    return x", Arg: "2"}, ret, false)
	add("inv_step_call", format.Frame{Kind: format.InvCall, Src: "def f(x):"}, format.Frame{Kind: format.InvCall, Src: "def f(x):"}, true)
	r.Forward.Merge(r.PerAction["step_into"])
	r.Forward.Merge(r.PerAction["step_return"])
	r.Inverse.Merge(r.PerAction["inv_step_call"])
	bins := make([]*Score, HorizonBinCount)
	for i := range bins {
		bins[i] = &Score{}
	}
	bins[0].Add(CompareFrames(ret, ret))
	bins[9].Add(CompareFrames(line, ret))
	r.HorizonBins["continue"] = bins
	r.HorizonSteps["continue"] = map[int]*Score{0: bins[0], 4: bins[9]}
	return r
}

// TestReportGolden pins the Markdown tables (go test -run Golden -update
// rewrites testdata/*.golden after an intended change).
func TestReportGolden(t *testing.T) {
	crux := []*CruxReport{
		{Task: TaskOutput, Action: "step_return", Engine: "hand", N: 800, PassAt1: 12.5, ExactMatch: 11.25, Literal: 90, Errors: 3, Seconds: 61},
		{Task: TaskInput, Action: "inv_step_call", Engine: "hand", N: 800, PassAt1: 10, ExactMatch: 5, Literal: 99, K: 8, PassAtK: 30, Majority: 12, SelfCons: 15, Seconds: 200},
	}
	for name, got := range map[string]string{"nextstate.md": handReport().Markdown(), "cruxeval.md": CruxMarkdown(crux)} {
		path := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n%s", name, path, got)
		}
	}
	// The JSON line: per_action fractions, N/A fields absent.
	b, err := json.Marshal(handReport().JSON())
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		PerAction map[string]map[string]float64 `json:"per_action"`
		Horizon   map[string]struct {
			BySkipped []map[string]float64 `json:"by_skipped"`
		} `json:"horizon"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	si := back.PerAction["step_into"]
	if si["em"] != 0.5 || si["n"] != 2 || si["em_evt"] != 0.5 || si["em@k"] != 1 {
		t.Errorf("step_into %v", si)
	}
	if _, ok := si["em_arg"]; ok {
		t.Errorf("em_arg of line frames should be N/A: %v", si)
	}
	if sr := back.PerAction["step_return"]; sr["em_arg"] != 0.5 || sr["em_src"] != 1 || sr["em@k"] != 0.5 {
		t.Errorf("step_return %v", sr)
	}
	if hz := back.Horizon["continue"].BySkipped; len(hz) != 2 || hz[0]["em"] != 1 || hz[1]["em"] != 0 || hz[1]["skipped_from"] != 0.9 {
		t.Errorf("horizon %v", hz)
	}
}
