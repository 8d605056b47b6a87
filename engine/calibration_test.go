package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/model/infer"
)

// TestConfidenceCalibration measures how the confidence of the default
// model's stops relates to their being right (the table in docs/engines.md):
// for every step_into of the real run (at most 30 per program) the model
// predicts the next stop from the real history (teacher-forced), and each
// prediction is counted as exact (debugger.Compare finds no divergence) or
// not, binned by its min and by its mean. It takes about a minute, so it
// runs only with NDB_CALIBRATION=1:
//
//	NDB_CALIBRATION=1 go test ./engine -run TestConfidenceCalibration -v
func TestConfidenceCalibration(t *testing.T) {
	if os.Getenv("NDB_CALIBRATION") == "" {
		t.Skip("set NDB_CALIBRATION=1 (about a minute)")
	}
	ctx := context.Background()
	p, err := infer.Default()
	if err != nil {
		t.Skip(err)
	}
	var files []string
	for _, g := range []string{"../eval/scripts/*.py", "../examples/*.py", "testdata/*.py"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	type rec struct {
		min, mean float64
		ok        bool
	}
	var recs []rec
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		call := ""
		if strings.Contains(f, "vowels") {
			call = "f('banana', 4)"
		}
		prog := Program{Path: f, Source: string(src), Call: call}
		rb, err := testReal(t).Open(ctx, prog)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := debugger.NewSession(ctx, rb)
		for range 30 {
			if st, err := rs.Do(ctx, debugger.Command{Action: debugger.StepInto}); err != nil || st.IsExit() {
				break
			}
		}
		h := rs.History()
		nb, err := NewNeural(prog, InferPredictor{P: p}, Draw{})
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k < len(h); k++ {
			st, err := nb.Next(ctx, h[:k], h[k].Command)
			if err != nil || st.Confidence == nil {
				continue
			}
			recs = append(recs, rec{st.Confidence.Min, st.Confidence.Mean, len(debugger.Compare(k, st, h[k].Stop)) == 0})
		}
	}
	t.Logf("%d teacher-forced step_into predictions on %d programs", len(recs), len(files))
	for _, by := range []string{"min", "mean"} {
		var b strings.Builder
		for _, bin := range [][2]float64{{0, 0.1}, {0.1, 0.3}, {0.3, 0.5}, {0.5, 0.7}, {0.7, 0.9}, {0.9, 0.99}, {0.99, 1.01}} {
			n, ok := 0, 0
			for _, r := range recs {
				v := r.min
				if by == "mean" {
					v = r.mean
				}
				if v >= bin[0] && v < bin[1] {
					n++
					if r.ok {
						ok++
					}
				}
			}
			if n > 0 {
				fmt.Fprintf(&b, "\n  %s in [%.2f, %.2f): %4d stops, %5.1f%% exact", by, bin[0], min(bin[1], 1), n, 100*float64(ok)/float64(n))
			}
		}
		t.Logf("by %s:%s", by, b.String())
	}
}
