package debugger

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"ndb/tracer"
)

// TestLiveHashSeed: a live run's hash() is python3's under the tracer's
// PYTHONHASHSEED (a session's random seed, RandomHashSeed), and a restart
// keeps it, as restarts under one pdb do.
func TestLiveHashSeed(t *testing.T) {
	python := pythonExe(t)
	if a, b := RandomHashSeed(), RandomHashSeed(); a == b {
		t.Errorf("two random seeds are equal: %s", a) // once in 2^32 runs
	}
	const seed = "12345"
	cmd := exec.Command(python, "-c", "print(hash('abc'), sorted({'x', 'y', 'z'}) == list({'x', 'y', 'z'}))")
	cmd.Env = append(os.Environ(), "PYTHONHASHSEED="+seed)
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := tracer.New(tracer.Options{Python: python, HashSeed: seed})
	if err != nil {
		t.Skipf("no tracer: %v", err)
	}
	if tr.HashSeed() != seed {
		t.Errorf("HashSeed() = %s", tr.HashSeed())
	}
	ctx := context.Background()
	b, err := NewLiveBackend(ctx, func(ctx context.Context, out func(string)) (*tracer.Run, error) {
		return tr.Start(ctx, tracer.Program{Source: "x = 1\ny = 2\n"}, tracer.Limits{}, out)
	}, tr.Close)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 2 {
		res, err := s.Eval(ctx, 0, "(hash('abc'), sorted({'x', 'y', 'z'}) == list({'x', 'y', 'z'}))", tracer.EvalExpr)
		if err != nil || !res.OK {
			t.Fatalf("eval: %v %+v", err, res)
		}
		if got := strings.Trim(strings.ReplaceAll(res.Text, ",", ""), "()"); got != strings.TrimSpace(string(want)) {
			t.Errorf("hash and set order under seed %s: %s, python3: %s", seed, got, want)
		}
		if _, err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
