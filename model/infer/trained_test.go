package infer

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"ndb/format"
	"ndb/model/train"
	"ndb/model/train/synthtext"
)

// TestTrainedModelPredicts trains a tiny model on fixture trajectories,
// loads it from its file and checks that greedy constrained decoding
// predicts the frames of programs it never saw far better than chance.
func TestTrainedModelPredicts(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model")
	}
	data := t.TempDir()
	var b strings.Builder
	rng := rand.New(rand.NewPCG(1, 1))
	for id := 0; id < 300; id++ {
		text, prog := synthtext.Trajectory(rng, id)
		line, _ := json.Marshal(map[string]string{"text": text, "program_id": prog})
		b.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(data, "shard-00000.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	o := train.DefaultOptions()
	o.Batch, o.Seq, o.Steps, o.Warmup, o.EvalEvery, o.SaveEvery = 8, 128, 250, 20, 250, 0
	o.LR, o.MinLR = 1e-2, 1e-3
	out := filepath.Join(t.TempDir(), "tiny.model")
	if _, err := train.Train(context.Background(), train.Job{DataDir: data, Out: out, Config: "tiny", Options: o, Vocab: 400, StepsSet: true}); err != nil {
		t.Fatal(err)
	}
	p, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	prompts, wants := fixturePrompts(99, 60)
	exact, kinds := 0, 0
	for i, prompt := range prompts {
		got, err := p.NextFrame(context.Background(), prompt, Greedy)
		if err != nil {
			t.Fatal(err)
		}
		f, err := format.ParseFrame(got)
		if err != nil {
			t.Fatalf("prediction %q does not parse: %v", got, err)
		}
		if want, _ := format.ParseFrame(wants[i]); want.Kind == f.Kind {
			kinds++
		}
		if plain, err := p.NextFrame(context.Background(), prompt, SampleOptions{NoDraft: true}); err != nil || plain != got {
			t.Fatalf("greedy with drafts %q, without %q (%v)", got, plain, err)
		}
		if got == wants[i] {
			exact++
		} else if testing.Verbose() {
			t.Logf("want %q\n got %q", wants[i], got)
		}
	}
	// A 50k-parameter model trained for seconds learns the structure (which
	// frame comes next) and some of the values.
	st := p.Stats()
	t.Logf("frame kind right %d/%d, exact match %d/%d; drafts: %+v, %.2f tokens per pass", kinds, len(prompts), exact, len(prompts), st, float64(st.Tokens)/float64(st.Passes))
	if st.Accepted == 0 {
		t.Fatalf("no draft token was ever accepted: %+v", st)
	}
	if kinds*10 < 8*len(prompts) || exact*10 < len(prompts) {
		t.Fatalf("kind %d/%d, exact %d/%d: the trained model should do better", kinds, len(prompts), exact, len(prompts))
	}
}
