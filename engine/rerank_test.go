package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ndb/debugger"
	"ndb/model/infer"
)

// TestModelEngineRerankDefault: the model engine's predictor reranks as
// Options.Rerank says, infer.DefaultRerank (off) when it is nil.
func TestModelEngineRerankDefault(t *testing.T) {
	if _, err := infer.Default(); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		opt  *infer.Rerank
		want infer.Rerank
	}{{nil, infer.DefaultRerank}, {&infer.Rerank{}, infer.Rerank{}}, {&infer.Rerank{K: 8, Below: 0.3}, infer.Rerank{K: 8, Below: 0.3}}} {
		e, err := New(Model, Options{Rerank: tc.opt})
		if err != nil {
			t.Fatal(err)
		}
		ip, ok := e.(*neuralEngine).pred.(InferPredictor)
		if !ok || ip.Rerank == nil || *ip.Rerank != tc.want {
			t.Errorf("Options.Rerank %v: the engine's predictor reranks with %+v, want %+v", tc.opt, ip.Rerank, tc.want)
		}
	}
}

// teacherForced is the calibration set (TestConfidenceCalibration): every
// step_into of the real run, at most 30 per program, of eval/scripts,
// examples and testdata, as (program, real history).
func teacherForced(t testing.TB) []struct {
	prog Program
	h    []debugger.Step
} {
	ctx := context.Background()
	var files []string
	for _, g := range []string{"../eval/scripts/*.py", "../examples/*.py", "testdata/*.py"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	var out []struct {
		prog Program
		h    []debugger.Step
	}
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
		out = append(out, struct {
			prog Program
			h    []debugger.Step
		}{prog, rs.History()})
	}
	return out
}

// TestRerankTradeoff measures test-time compute on the default model (the
// table in docs/engines.md): the calibration set's teacher-forced step_into
// predictions, exact or not, and the time per prediction, without
// reranking and with K alternatives below a confidence threshold. Several
// minutes, so only with NDB_RERANK=1:
//
//	NDB_RERANK=1 go test ./engine -run TestRerankTradeoff -v -timeout 30m
func TestRerankTradeoff(t *testing.T) {
	if os.Getenv("NDB_RERANK") == "" {
		t.Skip("set NDB_RERANK=1 (several minutes)")
	}
	p, err := infer.Default()
	if err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	set := teacherForced(t)
	for _, r := range []infer.Rerank{{}, {K: 4, Below: 0.5}, {K: 8, Below: 0.5}, {K: 4, Below: 0.5, ByLikelihood: true}} {
		n, ok, resampled := 0, 0, 0
		var took time.Duration
		for _, s := range set {
			nb, err := NewNeural(s.prog, InferPredictor{P: p, Rerank: &r}, Draw{})
			if err != nil {
				t.Fatal(err)
			}
			for k := 1; k < len(s.h); k++ {
				t0 := time.Now()
				st, err := nb.Next(ctx, s.h[:k], s.h[k].Command)
				took += time.Since(t0)
				if err != nil {
					continue
				}
				n++
				if len(debugger.Compare(k, st, s.h[k].Stop)) == 0 {
					ok++
				}
				// the greedy frame's own confidence says whether it was resampled
				if st.Confidence != nil && st.Confidence.Min < r.Below {
					resampled++
				}
			}
		}
		t.Logf("K %d below %.2f likelihood %v: %d predictions, %.1f%% exact, %.1f ms per state (%d answered below the threshold)",
			r.K, r.Below, r.ByLikelihood, n, 100*float64(ok)/float64(n), float64(took.Milliseconds())/float64(n), resampled)
	}
}

// BenchmarkPredictedState is the time of one predicted state in a session
// (step_into along the calibration programs' real histories, in order, so
// the prompt cache is reused) with the default model, plain greedy (the
// default) and
// reranking K = 4 and 8 alternatives below a min confidence of 0.5:
//
//	go test ./engine -run '^$' -bench PredictedState -benchtime 60x
func BenchmarkPredictedState(b *testing.B) {
	p, err := infer.Default()
	if err != nil {
		b.Skip(err)
	}
	set := teacherForced(b)
	for _, tc := range []struct {
		name string
		r    *infer.Rerank
	}{{"greedy", nil}, {"k4-below0.5", &infer.Rerank{K: 4, Below: 0.5}}, {"k8-below0.5", &infer.Rerank{K: 8, Below: 0.5}}} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			i, k := 0, 1
			var nb *Neural
			for b.Loop() {
				if nb == nil || k >= len(set[i].h) {
					if nb != nil {
						i, k = (i+1)%len(set), 1
					}
					if nb, err = NewNeural(set[i].prog, InferPredictor{P: p, Rerank: tc.r}, Draw{}); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := nb.Next(ctx, set[i].h[:k], set[i].h[k].Command); err != nil {
					b.Fatal(err)
				}
				k++
			}
		})
	}
}
