package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestFusedAttentionMatchesSgemm compares the fused C attention kernels
// (every build this CPU runs) with the sgemm path on random q, k, v and dy:
// head sizes 32 and 64, batch 2, sequence lengths below, at and around the
// 64-row block and the 32-key tile, probabilities kept and recomputed.
// y, lse and dqkv within 1e-5 of the largest value.
func TestFusedAttentionMatchesSgemm(t *testing.T) {
	if kern.attnForwardHead == nil {
		t.Skip("no fused attention kernels in this build")
	}
	levels := kernelLevels()
	defer forceKernelLevel(levels[len(levels)-1])
	for _, l := range levels {
		forceKernelLevel(l)
		for _, dh := range []int{32, 64} {
			for _, T := range []int{1, 7, 32, 33, 64, 65, 70, 130, 200} {
				for _, keep := range []bool{true, false} {
					t.Run(fmt.Sprintf("level%d/dh%d/T%d/keep%v", l, dh, T, keep), func(t *testing.T) {
						testFusedAttention(t, dh, T, keep)
					})
				}
			}
		}
	}
}

func testFusedAttention(t *testing.T, dh, T int, keep bool) {
	cfg := Config{Dim: 2 * dh, HiddenDim: 8, Layers: 1, Heads: 2, Vocab: 8, MaxSeq: 256, RopeTheta: 10000, NormEps: 1e-5}
	B, C := 2, cfg.Dim
	budget := 0
	if keep {
		budget = 1 << 30
	}
	saved := AttentionCacheBytes
	AttentionCacheBytes = budget
	defer func() { AttentionCacheBytes = saved }()
	m, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	a := m.activationsFor(B, T)
	if (a.probs != nil) != keep {
		t.Fatalf("probabilities kept = %v, want %v", a.probs != nil, keep)
	}
	rng := rand.New(rand.NewPCG(uint64(T), uint64(dh)))
	qkv, dy := randSlice(rng, B*T*3*C), randSlice(rng, B*T*C)
	for i := range qkv {
		qkv[i] *= 2 // peaked softmax rows, not near-uniform ones
	}
	run := func(fused bool) []float32 {
		fusedAttention, fusedEveryISA = fused, true // the baseline build's kernels too
		defer func() { fusedAttention, fusedEveryISA = true, false }()
		if m.useFused() != fused {
			t.Fatalf("useFused = %v, want %v", m.useFused(), fused)
		}
		y, lse, dqkv := make([]float32, B*T*C), make([]float32, B*cfg.Heads*T), make([]float32, B*T*3*C)
		for i := range dqkv {
			dqkv[i] = float32(math.NaN()) // every element must be written
		}
		var probs []float32
		if keep {
			probs = a.probs[0]
			clear(probs)
		}
		m.attentionForward(y, lse, probs, qkv, B, T)
		m.attentionBackward(dqkv, dy, qkv, y, lse, probs, B, T)
		return append(append(y, lse...), dqkv...)
	}
	want, got := run(false), run(true)
	if worst, scale := maxDiff(got, want); worst > 1e-5*scale {
		t.Errorf("fused attention differs from sgemm by %.3g (largest %.3g)", worst, scale)
	}
}

// TestFusedAttentionTrainsTheSame runs forward and backward of a model with
// 32-wide heads through the fused kernels and through sgemm: loss within
// 1e-6 relative, every gradient within 1e-5 of the largest.
func TestFusedAttentionTrainsTheSame(t *testing.T) {
	if kern.attnForwardHead == nil {
		t.Skip("no fused attention kernels in this build")
	}
	cfg := Config{Dim: 64, HiddenDim: 96, Layers: 2, Heads: 2, Vocab: 40, MaxSeq: 128, RopeTheta: 10000, NormEps: 1e-5}
	B, T := 3, 97
	tokens, targets := testBatch(cfg, B, T, 41)
	run := func(fused bool) (float32, []float32) {
		fusedAttention = fused
		defer func() { fusedAttention = true }()
		m := testModel(t, cfg)
		m.ZeroGrads()
		loss := mustForward(t, m, tokens, B, T, targets)
		if err := m.Backward(); err != nil {
			t.Fatal(err)
		}
		return loss, m.Grads
	}
	l1, g1 := run(false)
	l2, g2 := run(true)
	sameTraining(t, "sgemm", "fused", l1, l2, g1, g2)
}

// TestParallelTasksRunsEachOnce: every task runs exactly once, on a valid
// worker, whatever the task count against the worker count.
func TestParallelTasksRunsEachOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 5, 64} {
			runs := make([]atomic.Int32, n)
			var bad atomic.Bool
			parallelTasks(n, func(w, i int) {
				if w < 0 || w >= procs {
					bad.Store(true)
				}
				runs[i].Add(1)
			})
			for i := range runs {
				if runs[i].Load() != 1 || bad.Load() {
					t.Fatalf("GOMAXPROCS %d, %d tasks: task %d ran %d times (bad worker: %v)", procs, n, i, runs[i].Load(), bad.Load())
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
	if lo, hi := chunkRows(100, 15); hi != 100 || lo != 93 || rowChunks(3) != 3 {
		t.Fatalf("chunkRows(100, 15) = %d, %d; rowChunks(3) = %d", lo, hi, rowChunks(3))
	}
}
