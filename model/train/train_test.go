package train

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/model/modelfile"
)

func tinyJob(t *testing.T, data, out string, steps int) Job {
	o := DefaultOptions()
	o.Batch, o.Seq, o.Steps = 4, 64, steps
	o.Warmup, o.EvalEvery, o.EvalWindows, o.SaveEvery = 5, 10, 16, 10
	o.LR, o.MinLR = 1e-2, 1e-3
	return Job{DataDir: data, Out: out, Config: "tiny", Options: o, Vocab: 300, StepsSet: true}
}

// TestValidationLossFalls trains the tiny config on trajectory text and
// checks that the loss on held-out programs goes down, and that the run
// leaves a loadable model with its training state, a loss log and a plot.
func TestValidationLossFalls(t *testing.T) {
	data := writeShards(t, 30, 2)
	out := filepath.Join(t.TempDir(), "tiny.model")
	res, err := Train(context.Background(), tinyJob(t, data, out, 60))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(res.Log)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 60 {
		t.Fatalf("log has %d records, want 60", len(recs))
	}
	var vals []float64
	for _, r := range recs {
		if r.ValLoss != nil {
			vals = append(vals, *r.ValLoss)
		}
	}
	if len(vals) != 6 {
		t.Fatalf("%d validation losses, want 6", len(vals))
	}
	t.Logf("validation losses: %.3f", vals)
	if !(vals[len(vals)-1] < 0.6*vals[0]) {
		t.Fatalf("validation loss did not fall enough: %v", vals)
	}
	if st, err := os.Stat(res.Plot); err != nil || st.Size() == 0 {
		t.Fatalf("no plot: %v", err)
	}
	mf, err := modelfile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Train == nil || mf.Train.Step != 60 {
		t.Fatalf("model file lacks the training state at step 60: %+v", mf.Train)
	}
}

// TestResumeIsExact stops a run at step 10, resumes it, and checks that the
// losses and the final weights equal those of an uninterrupted run.
func TestResumeIsExact(t *testing.T) {
	data := writeShards(t, 12, 2)
	dir := t.TempDir()
	const steps = 20
	full := filepath.Join(dir, "full.model")
	if _, err := Train(context.Background(), tinyJob(t, data, full, steps)); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "part.model")
	job := tinyJob(t, data, part, steps)
	job.StopAt = 10
	if _, err := Train(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	saved, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	// A resumed run that dies after step 13: its log has steps 11..13, but
	// the model file is rewound to the step-10 checkpoint.
	resume := tinyJob(t, data, part, 0)
	resume.StepsSet = false
	resume.Resume = true
	resume.StopAt = 13
	if _, err := Train(context.Background(), resume); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, saved, 0o644); err != nil {
		t.Fatal(err)
	}
	resume.StopAt = 0
	if _, err := Train(context.Background(), resume); err != nil {
		t.Fatal(err)
	}
	a, _ := ReadLog(full + ".log.jsonl")
	b, _ := ReadLog(part + ".log.jsonl")
	if len(a) != steps || len(b) != steps {
		t.Fatalf("logs have %d and %d records, want %d", len(a), len(b), steps)
	}
	for i := range a {
		if a[i].Loss != b[i].Loss || a[i].LR != b[i].LR || a[i].GradNorm != b[i].GradNorm ||
			(a[i].ValLoss == nil) != (b[i].ValLoss == nil) || a[i].ValLoss != nil && *a[i].ValLoss != *b[i].ValLoss {
			t.Fatalf("step %d: uninterrupted %+v, resumed %+v", i+1, a[i], b[i])
		}
	}
	ma, _ := modelfile.Load(full)
	mb, _ := modelfile.Load(part)
	for i := range ma.Weights {
		if ma.Weights[i] != mb.Weights[i] {
			t.Fatalf("weight %d differs after resume: %v vs %v", i, ma.Weights[i], mb.Weights[i])
		}
	}
}

func TestTrainBadInput(t *testing.T) {
	empty := t.TempDir()
	out := filepath.Join(t.TempDir(), "m.model")
	for _, tc := range []struct {
		name string
		job  Job
		want string
	}{
		{"missing dir", tinyJob(t, filepath.Join(empty, "none"), out, 5), "no such file"},
		{"no shards", tinyJob(t, empty, out, 5), "no .jsonl shards"},
		{"resume nothing", func() Job { j := tinyJob(t, writeShards(t, 3, 1), out, 5); j.Resume = true; return j }(), "--resume"},
		{"bad config", func() Job { j := tinyJob(t, writeShards(t, 3, 1), out, 5); j.Config = "huge"; return j }(), "unknown --config"},
		{"packed without tokenizer", func() Job {
			dir := t.TempDir()
			if _, err := Pack(writeShards(t, 3, 1), dir, newByteTokenizer(), PackOptions{}); err != nil {
				t.Fatal(err)
			}
			return tinyJob(t, dir, out, 5)
		}(), "give the tokenizer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(context.Background(), tc.job)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLRSchedule(t *testing.T) {
	o := Options{Steps: 100, Warmup: 10, LR: 1, MinLR: 0.1}
	if o.LRAt(0) != 0.1 || o.LRAt(9) != 1 || o.LRAt(100) != 0.1 {
		t.Fatalf("warmup/end: %v %v %v", o.LRAt(0), o.LRAt(9), o.LRAt(100))
	}
	if mid := o.LRAt(55); math.Abs(mid-0.55) > 1e-12 {
		t.Fatalf("cosine midpoint %v, want 0.55", mid)
	}
}

// TestLossOnFrames trains on the frames alone: the validation loss (on the
// validation frames) falls, and a bad --loss-on value is refused.
func TestLossOnFrames(t *testing.T) {
	data := writeShards(t, 30, 2)
	job := tinyJob(t, data, filepath.Join(t.TempDir(), "frames.model"), 40)
	job.Options.LossOn = LossOnFrames
	res, err := Train(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadLog(res.Log)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for _, r := range recs {
		if r.ValLoss != nil {
			vals = append(vals, *r.ValLoss)
		}
	}
	t.Logf("validation losses on frames: %.3f", vals)
	if len(vals) != 4 || !(vals[3] < 0.6*vals[0]) {
		t.Fatalf("validation loss on frames did not fall enough: %v", vals)
	}
	job.Options.LossOn = "source"
	job.Out = filepath.Join(t.TempDir(), "bad.model")
	if _, err := Train(context.Background(), job); err == nil || !strings.Contains(err.Error(), `loss on "source"`) {
		t.Fatalf("loss on source: got %v", err)
	}
}
