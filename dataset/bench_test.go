package dataset

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"ndb/tracer"
)

func realJob(t testing.TB, src Source, n, workers, perTrace int, out string) *Job {
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python: %v", err)
	}
	lim := tracer.Limits{Timeout: 5 * time.Second, MaxEvents: 10000}
	return &Job{Source: src, N: n, Seed: 1, PerTrace: perTrace, ShardUnits: 16, Out: out, Workers: workers,
		NewTracer: func() (Tracer, error) { return tracer.New(tracer.Options{Python: python, Limits: lim}) }}
}

// TestGenRealTracer runs a small MBPP+ job with the real tracer on 1 and 2
// workers and checks that the bytes agree.
func TestGenRealTracer(t *testing.T) {
	d := dataDir(t)
	src, err := OpenSource("mbppplus", d, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 256
	if testing.Short() {
		n = 64
	}
	a, b := t.TempDir(), t.TempDir()
	sa, err := Run(context.Background(), realJob(t, src, n, 1, 8, a))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), realJob(t, src, n, 2, 8, b)); err != nil {
		t.Fatal(err)
	}
	sameShards(t, readShards(t, a), readShards(t, b), "real tracer, 1 vs 2 workers")
	if sa.Trajectories != n {
		t.Fatalf("%d trajectories, want %d (skipped %v)", sa.Trajectories, n, sa.Skipped)
	}
}

// TestGenSynthetic runs a small synthetic job with the real tracer.
func TestGenSynthetic(t *testing.T) {
	d := dataDir(t)
	src, err := OpenSource("synthetic", d, 5)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	s, err := Run(context.Background(), realJob(t, src, 64, 2, 8, out))
	if err != nil {
		t.Fatal(err)
	}
	if s.Trajectories+8*(s.Skipped[SkipCruxEval]+s.Skipped[SkipNoInput]) != 64 {
		t.Fatalf("summary %+v", s)
	}
	for name, data := range readShards(t, out) {
		if strings.HasSuffix(name, ".jsonl") && !strings.Contains(data, `"program_id":"synth/5/`) {
			t.Fatalf("%s has no synthetic program ids", name)
		}
	}
}

// BenchmarkGenMBPPPlus measures trajectories per second of `ndb gen` on MBPP+
// with the real tracer, one worker per core, 8 trajectories per trace:
//
//	go test ./dataset -run '^$' -bench GenMBPPPlus -benchtime 4x
func BenchmarkGenMBPPPlus(b *testing.B) {
	for _, perTrace := range []int{8, 16} {
		b.Run(fmt.Sprintf("per-trace=%d", perTrace), func(b *testing.B) {
			benchGen(b, "mbppplus", perTrace)
		})
	}
}

// BenchmarkGenSynthetic is the same on synthetic programs.
func BenchmarkGenSynthetic(b *testing.B) { benchGen(b, "synthetic", 8) }

func benchGen(b *testing.B, source string, perTrace int) {
	d, err := DataDir("")
	if err != nil {
		b.Skip(err)
	}
	src, err := OpenSource(source, d, 1)
	if err != nil {
		b.Skip(err)
	}
	const n = 2048
	total, elapsed := 0, 0.0
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), fmt.Sprint(i))
		j := realJob(b, src, n, runtime.NumCPU(), perTrace, out)
		j.Seed = int64(i + 1)
		start := time.Now()
		s, err := Run(context.Background(), j)
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start).Seconds()
		total += s.Trajectories
		os.RemoveAll(out)
	}
	b.ReportMetric(float64(total)/elapsed, "traj/s")
}

// BenchmarkSampleTrajectory measures the sampler and serializer alone (no
// tracing) on one MBPP-like trace.
func BenchmarkSampleTrajectory(b *testing.B) {
	tr := newRealTracer(b)
	src := "def f(nums):\n    out = []\n    for i, n in enumerate(nums):\n        if n % 2:\n            out.append(n * i)\n        else:\n            out.insert(0, str(n))\n    return out\n"
	trace, err := tr.Trace(context.Background(), tracer.Program{Source: src, Call: "f(list(range(40)))"})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	chars := 0
	for i := 0; i < b.N; i++ {
		s, err := SampleTrajectory(r, trace, DefaultSamplerConfig)
		if err != nil {
			b.Fatal(err)
		}
		chars += len(s.Text)
	}
	b.ReportMetric(float64(chars)/float64(b.N), "chars/traj")
}
