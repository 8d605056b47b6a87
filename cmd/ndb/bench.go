package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"ndb/model/nn"
)

// benchCmd is the parent of the benchmark commands (`bench train` here,
// `bench infer` in its own file).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Measure training and inference speed",
}

var benchTrainFlags struct {
	json      bool
	config    string
	batch     int
	seq       int
	vocab     int
	steps     int
	vsTorch   bool
	python    string
	peakSecs  float64
	torchStep int
}

var benchTrainCmd = &cobra.Command{
	Use:   "train",
	Short: "Time training steps (forward, backward, clip, AdamW) against the CPU's FMA peak",
	Long: `bench train times full training steps of a named config on random tokens and
reports tokens/s, achieved GFLOP/s and the fraction of this machine's fp32 FMA peak
(measured by the same command with an FMA loop on every core).

FLOPs per token = 6 * (matrix parameters: all but embed_tokens and the norms)
                + 6 * layers * hidden_size * seq_len   (causal attention, fwd + bwd)
Work the implementation adds (the diagonal attention blocks' upper halves, and q k^T
recomputed in backward when the probabilities exceed nn.AttentionCacheBytes) is not counted.

On a shared machine read the CPU-time view too: gflops_per_cpu_s (FLOPs per CPU-second of
this process) against peak_gflops_per_core_cpu_s (the FMA loop per CPU-second of one
thread) gives fraction_of_core_peak, which does not move with other processes' load.`,
	Args: cobra.NoArgs,
	RunE: runBenchTrain,
}

func init() {
	f := benchTrainCmd.Flags()
	f.BoolVar(&benchTrainFlags.json, "json", false, "print one JSON line")
	f.StringVar(&benchTrainFlags.config, "config", "small", "named model config")
	f.IntVar(&benchTrainFlags.batch, "batch", 8, "sequences per step")
	f.IntVar(&benchTrainFlags.seq, "seq", 512, "sequence length")
	f.IntVar(&benchTrainFlags.vocab, "vocab", 4096, "vocabulary size")
	f.IntVar(&benchTrainFlags.steps, "steps", 5, "timed steps (after one warm-up step)")
	f.BoolVar(&benchTrainFlags.vsTorch, "vs-torch", false, "also train the same model with PyTorch and report torch_tokens_per_s")
	f.StringVar(&benchTrainFlags.python, "python", "/usr/bin/python3", "Python with torch, for --vs-torch")
	f.Float64Var(&benchTrainFlags.peakSecs, "peak-seconds", 1, "how long the FMA peak loop runs")
	f.IntVar(&benchTrainFlags.torchStep, "torch-steps", 3, "timed PyTorch steps")
	benchCmd.AddCommand(benchTrainCmd)
	rootCmd.AddCommand(benchCmd)
}

// trainBenchResult is the JSON line of `ndb bench train --json`.
type trainBenchResult struct {
	Config         string    `json:"config"`
	Model          nn.Config `json:"model"`
	Params         int       `json:"params"`
	Batch          int       `json:"batch"`
	SeqLen         int       `json:"seq_len"`
	Threads        int       `json:"threads"`
	Steps          int       `json:"steps"`
	BLAS           string    `json:"blas"`
	Kernels        string    `json:"kernels"`
	CoreTypeEnv    string    `json:"openblas_coretype_env"`
	StepMS         float64   `json:"step_ms"`
	TokensPerS     float64   `json:"tokens_per_s"`
	FlopsPerToken  float64   `json:"flops_per_token"`
	GFLOPSPerS     float64   `json:"gflops_per_s"`
	PeakGFLOPSPerS float64   `json:"peak_gflops_per_s"`
	PeakISA        string    `json:"peak_isa"`
	PeakCoreGFLOPS float64   `json:"peak_gflops_per_core_cpu_s"`
	FractionOfPeak float64   `json:"fraction_of_peak"`
	Loss           float32   `json:"loss"`
	// CPU-time view, for a shared machine: GFLOP per CPU-second of this
	// process against the per-core peak. Equal to the wall-clock figures
	// when the process has every core to itself.
	CPUUse             float64 `json:"cpu_s_per_wall_s"`
	GFLOPSPerCPUSecond float64 `json:"gflops_per_cpu_s"`
	FractionOfCorePeak float64 `json:"fraction_of_core_peak"`
	TorchTokensPS      float64 `json:"torch_tokens_per_s,omitempty"`
	TorchThreads       int     `json:"torch_threads,omitempty"`
	TorchPerCPU        float64 `json:"torch_tokens_per_cpu_s,omitempty"`
	TokensPerCPU       float64 `json:"tokens_per_cpu_s"`
	SpeedupPerCPU      float64 `json:"speedup_vs_torch_per_cpu_s,omitempty"`
	SpeedupVsTorch     float64 `json:"speedup_vs_torch,omitempty"`
}

func runBenchTrain(cmd *cobra.Command, _ []string) error {
	fl := benchTrainFlags
	cfg, ok := nn.Configs[fl.config]
	if !ok {
		return fmt.Errorf("bench train: unknown config %q", fl.config)
	}
	cfg.Vocab = fl.vocab
	if fl.seq > cfg.MaxSeq {
		cfg.MaxSeq = fl.seq
	}
	if fl.batch <= 0 || fl.seq <= 0 || fl.steps <= 0 {
		return fmt.Errorf("bench train: batch, seq and steps must be positive")
	}
	res := trainBenchResult{Config: fl.config, Model: cfg, Params: cfg.NumParams(), Batch: fl.batch,
		SeqLen: fl.seq, Threads: runtime.GOMAXPROCS(0), Steps: fl.steps, BLAS: nn.BLASName,
		Kernels: nn.KernelISA, CoreTypeEnv: os.Getenv("OPENBLAS_CORETYPE")}

	pk, err := nn.MeasurePeak(time.Duration(fl.peakSecs * float64(time.Second)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench train:", err)
	}
	peak := pk.GFLOPS
	res.PeakGFLOPSPerS, res.PeakCoreGFLOPS, res.PeakISA = peak, pk.PerCoreGFLOPS, pk.ISA

	m, err := nn.New(cfg, 1)
	if err != nil {
		return err
	}
	opt := nn.NewAdamW(m)
	rng := rand.New(rand.NewPCG(1, 1))
	n := fl.batch * fl.seq
	tokens, targets := make([]int32, n), make([]int32, n)
	for i := range tokens {
		tokens[i], targets[i] = int32(rng.IntN(cfg.Vocab)), int32(rng.IntN(cfg.Vocab))
	}
	step := func() (float32, error) {
		m.ZeroGrads()
		loss, err := m.Forward(tokens, fl.batch, fl.seq, targets)
		if err != nil {
			return 0, err
		}
		if err := m.Backward(); err != nil {
			return 0, err
		}
		m.ClipGrads(1)
		opt.Update(m, 3e-4)
		return loss, nil
	}
	if _, err := step(); err != nil { // warm-up: allocations, page faults
		return err
	}
	start, cpu0 := time.Now(), cpuSeconds()
	for range fl.steps {
		if res.Loss, err = step(); err != nil {
			return err
		}
	}
	secs, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
	res.StepMS = secs / float64(fl.steps) * 1e3
	res.TokensPerS = float64(n*fl.steps) / secs
	matrixParams := cfg.NumParams() - cfg.Vocab*cfg.Dim - (2*cfg.Layers+1)*cfg.Dim
	res.FlopsPerToken = 6*float64(matrixParams) + 6*float64(cfg.Layers*cfg.Dim*fl.seq)
	res.GFLOPSPerS = res.FlopsPerToken * res.TokensPerS / 1e9
	res.CPUUse = cpu / secs
	res.TokensPerCPU = float64(n*fl.steps) / cpu
	res.GFLOPSPerCPUSecond = res.FlopsPerToken * float64(n*fl.steps) / cpu / 1e9
	if peak > 0 {
		res.FractionOfPeak = res.GFLOPSPerS / peak
		res.FractionOfCorePeak = res.GFLOPSPerCPUSecond / pk.PerCoreGFLOPS
	}

	if fl.vsTorch {
		tr, err := benchTorch(fl.python, cfg, fl.batch, fl.seq, fl.torchStep, res.Threads)
		if err != nil {
			return fmt.Errorf("bench train --vs-torch: %w", err)
		}
		tps := tr.TokensPerS
		res.TorchTokensPS, res.TorchThreads, res.TorchPerCPU = tps, tr.Threads, tr.TokensPerCPU
		res.SpeedupVsTorch = res.TokensPerS / tps
		if tr.TokensPerCPU > 0 {
			res.SpeedupPerCPU = res.TokensPerCPU / tr.TokensPerCPU
		}
	}

	if fl.json {
		return json.NewEncoder(cmd.OutOrStdout()).Encode(res)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "config %s (%d params), batch %d x seq %d, %d threads, %s\n", res.Config, res.Params, res.Batch, res.SeqLen, res.Threads, res.BLAS)
	fmt.Fprintf(out, "%.0f tokens/s (%.1f ms/step), %.1f GFLOP/s = %.1f%% of the %.1f GFLOP/s %s FMA peak\n",
		res.TokensPerS, res.StepMS, res.GFLOPSPerS, 100*res.FractionOfPeak, res.PeakGFLOPSPerS, res.PeakISA)
	if res.CPUUse < 0.9*float64(res.Threads) {
		fmt.Fprintf(out, "(shared machine: %.2f of %d cores used; %.1f GFLOP per CPU-second = %.1f%% of one core's peak)\n",
			res.CPUUse, res.Threads, res.GFLOPSPerCPUSecond, 100*res.FractionOfCorePeak)
	}
	if fl.vsTorch {
		fmt.Fprintf(out, "PyTorch: %.0f tokens/s on %d threads; ndb is %.2fx\n", res.TorchTokensPS, res.TorchThreads, res.SpeedupVsTorch)
	}
	return nil
}

// cpuSeconds is the user+system CPU time this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// torchResult is what testdata/torch_llama.py bench prints.
type torchResult struct {
	TokensPerS   float64 `json:"tokens_per_s"`
	TokensPerCPU float64 `json:"tokens_per_cpu_s"`
	Threads      int     `json:"threads"`
}

// benchTorch trains the same model with PyTorch (testdata/torch_llama.py,
// embedded) on the same number of threads.
func benchTorch(python string, cfg nn.Config, batch, seq, steps, threads int) (torchResult, error) {
	var r torchResult
	dir, err := os.MkdirTemp("", "ndb-bench-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "torch_llama.py")
	if err := os.WriteFile(script, nn.TorchScript, 0o644); err != nil {
		return r, err
	}
	cfgJSON, _ := json.Marshal(cfg)
	out, err := exec.Command(python, script, "bench", string(cfgJSON), fmt.Sprint(batch), fmt.Sprint(seq), fmt.Sprint(steps), fmt.Sprint(threads)).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return r, fmt.Errorf("%s: %v\n%s", python, err, ee.Stderr)
		}
		return r, fmt.Errorf("%s (install python3-torch): %v", python, err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("torch output %q: %v", out, err)
	}
	return r, nil
}
