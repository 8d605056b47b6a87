package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ndb/dataset"
	"ndb/model/tokenizer"
	"ndb/tracer"
)

// genFlags are the flags of `ndb gen`.
type genFlags struct {
	source, out, shard, dataDir, python string
	n, workers, perTrace, shardUnits    int
	seed                                uint64
	maxSteps, maxChars, maxEvents       int
	reprLimit                           int
	inverse, deep, unwrap, bpHit        float64
	timeout                             time.Duration
	memoryMB                            int64
	quiet                               bool
	tokenizer                           string
	sandbox                             sandboxFlags
}

func init() {
	var f genFlags
	cmd := &cobra.Command{
		Use:   "gen --source SRC --n N --seed S --out DIR",
		Short: "Generate training trajectories (sharded JSONL) from programs",
		Long: `gen traces programs and samples debugger trajectories from each trace with
the action-policy mixture of docs/data.md, writing them in the model's text
format (docs/format.md) as sharded JSONL: one trajectory per line with text,
direction, actions, source and program_id (schema in docs/data.md).

SRC is synthetic, synthetic-scripts (whole module-level scripts), mbppplus, mbpp,
humaneval, thealgorithms (TheAlgorithms/Python:
doctest calls and whole files; thealgorithms-functions or thealgorithms-scripts for
one kind), realworld (2,235 files of 12 public repositories, the same two kinds;
realworld-functions, realworld-scripts), or a folder of .py scripts. The
output is the same bytes for the same arguments whatever --workers is; a
killed run resumes where it stopped when started again with the same
arguments; --shard i/N makes this machine write only its share of the shards,
so N machines can split one job.`,
		Example: `  ndb gen --source mbppplus --n 100000 --seed 1 --out /tmp/gen/mbppplus
  ndb gen --source synthetic --n 1000000 --seed 1 --out /data/gen --shard 3/16
  ndb gen export --in /tmp/gen/mbppplus --out /tmp/gen/mbppplus.sft.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGen(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.source, "source", "", "synthetic, synthetic-scripts, mbppplus, mbpp, humaneval, thealgorithms[-functions|-scripts], realworld[-functions|-scripts], or a folder of .py scripts")
	fl.IntVar(&f.n, "n", 0, "number of trajectories of the whole job")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the program order, the synthetic programs and the sampler")
	fl.StringVar(&f.out, "out", "", "output folder (shards, their stats and manifest.json)")
	fl.StringVar(&f.shard, "shard", "0/1", "i/N: write only shards s with s % N == i")
	fl.StringVar(&f.dataDir, "data-dir", "", "shared data folder (default $NDB_DATA_DIR, else ../shared/data from the repo root)")
	fl.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel tracer workers (persistent interpreters)")
	fl.IntVar(&f.perTrace, "per-trace", dataset.DefaultPerTrace, "trajectories sampled from each trace")
	fl.IntVar(&f.shardUnits, "shard-units", 256, "traced programs per shard file")
	d := dataset.DefaultSamplerConfig
	fl.IntVar(&f.maxSteps, "max-steps", d.MaxSteps, "sampled actions before a trajectory is finished (continue / inv_step_call)")
	fl.IntVar(&f.maxChars, "max-chars", d.MaxChars, "characters before a trajectory is finished the same way")
	fl.Float64Var(&f.inverse, "inverse", d.InverseProb, "probability that a trajectory is inverse")
	fl.Float64Var(&f.deep, "deep", d.DeepEntryProb, "probability of starting at a call below the entry")
	fl.Float64Var(&f.unwrap, "unwrap", d.UnwrapProb, "probability that a deep trajectory shows the program without the main wrapper (its call site)")
	fl.Float64Var(&f.bpHit, "bp-hit", d.BreakpointHitProb, "probability that a breakpoint is set on a line the run still reaches (else any breakpoint-able line)")
	fl.StringVar(&f.python, "python", "python3", "Python interpreter to run")
	fl.IntVar(&f.maxEvents, "max-events", 10000, "events per traced run (exit never beyond)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Second, "wall-clock limit per traced run (exit never beyond)")
	fl.Int64Var(&f.memoryMB, "memory-mb", 1024, "address-space limit per traced run, MiB")
	fl.IntVar(&f.reprLimit, "repr-limit", tracer.DefaultLimits().ReprLimit, "characters of a repr kept before the tracer's cut marker")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	f.sandbox.add(fl)
	fl.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer file (ndb tokenizer): count tokens in the summary besides characters")

	var ef struct {
		in, out string
		seed    uint64
		all     bool
	}
	export := &cobra.Command{
		Use:   "export --in DIR --out FILE.jsonl",
		Short: "Export gen shards as prompt/completion JSONL for fine-tuning tools",
		Long: `export cuts each trajectory of a gen output folder right after one action
(drawn per trajectory, seeded; every action with --all-cuts) and writes
{"prompt", "completion", "action", "direction", "program_id", ...} lines: the
prompt ends with <|frame_sep|>, the completion is the next frame up to its
<|action_sep|> (or an exit with <|trace_end|><|end_of_text|>).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if ef.in == "" || ef.out == "" {
				return fmt.Errorf("--in and --out are required")
			}
			st, err := dataset.Export(ef.in, ef.out, int64(ef.seed), ef.all)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "%d trajectories -> %d examples in %s\n", st.Trajectories, st.Examples, ef.out)
			for _, a := range sortedNames(st.ByAction) {
				fmt.Fprintf(os.Stderr, "  %-14s %d\n", a, st.ByAction[a])
			}
			return nil
		},
	}
	export.Flags().StringVar(&ef.in, "in", "", "gen output folder")
	export.Flags().StringVar(&ef.out, "out", "", "prompt/completion JSONL file to write")
	export.Flags().Uint64Var(&ef.seed, "seed", 1, "seed of the cut points")
	export.Flags().BoolVar(&ef.all, "all-cuts", false, "one example per action instead of one per trajectory")
	cmd.AddCommand(export)
	rootCmd.AddCommand(cmd)
}

// check refuses flag values the job would silently replace or misread,
// before any data is loaded.
func (f genFlags) check() error {
	if err := f.sandbox.check(); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"--per-trace", int64(f.perTrace)}, {"--shard-units", int64(f.shardUnits)}, {"--max-steps", int64(f.maxSteps)},
		{"--max-chars", int64(f.maxChars)}, {"--max-events", int64(f.maxEvents)}, {"--repr-limit", int64(f.reprLimit)},
		{"--memory-mb", f.memoryMB}, {"--timeout", int64(f.timeout)}} {
		if v.n <= 0 {
			return fmt.Errorf("%s must be positive", v.name)
		}
	}
	for _, v := range []struct {
		name string
		p    float64
	}{{"--inverse", f.inverse}, {"--deep", f.deep}, {"--unwrap", f.unwrap}, {"--bp-hit", f.bpHit}} {
		if !(v.p >= 0 && v.p <= 1) {
			return fmt.Errorf("%s is a probability: want 0 to 1, got %v", v.name, v.p)
		}
	}
	return nil
}

// tracerOptions are the options of each worker's tracer. Data-set
// programs get no Context: they run as "<program>" in an empty folder.
func (f genFlags) tracerOptions(python string) tracer.Options {
	lim := tracer.Limits{Timeout: f.timeout, MaxEvents: f.maxEvents, MemoryBytes: f.memoryMB << 20, ReprLimit: f.reprLimit,
		MaxTraceBytes: f.sandbox.traceBytes()}
	return tracer.Options{Python: python, Limits: lim, NoSandbox: f.sandbox.noSandbox}
}

func runGen(ctx context.Context, f genFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if f.source == "" || f.out == "" || f.n <= 0 {
		return fmt.Errorf("--source, --out and a positive --n are required")
	}
	if err := f.check(); err != nil {
		return err
	}
	shard, shards, err := parseShard(f.shard)
	if err != nil {
		return err
	}
	dataDir, err := dataset.DataDir(f.dataDir)
	if err != nil {
		return err
	}
	src, err := dataset.OpenSource(f.source, dataDir, int64(f.seed))
	if err != nil {
		return err
	}
	python, err := tracer.ResolvePython(f.python)
	if err != nil {
		return err
	}
	job := &dataset.Job{
		Source: src, N: f.n, Seed: int64(f.seed), PerTrace: f.perTrace, ShardUnits: f.shardUnits, Out: f.out,
		Shard: shard, Shards: shards, Workers: max(1, f.workers),
		NewTracer: func() (dataset.Tracer, error) {
			return tracer.New(f.tracerOptions(python))
		},
		Sampler: dataset.SamplerConfig{MaxSteps: f.maxSteps, MaxChars: f.maxChars, DeepEntryProb: f.deep, InverseProb: f.inverse, UnwrapProb: f.unwrap, BreakpointHitProb: f.bpHit},
	}
	if !f.quiet {
		job.Progress = os.Stderr
	}
	if f.tokenizer != "" {
		tok, err := tokenizer.Load(f.tokenizer)
		if err != nil {
			return err
		}
		job.CountTokens = func(s string) int { return len(tok.Encode(s)) }
	}
	start := time.Now()
	sum, err := dataset.Run(ctx, job)
	if err != nil {
		return err
	}
	el := time.Since(start).Seconds()
	sum.Write(os.Stderr)
	fmt.Fprintf(os.Stderr, "wall %.1fs with %d workers (%.0f trajectories/s for this run, resumed shards included in the counts)\n",
		el, job.Workers, float64(sum.Trajectories)/el)
	return nil
}

// parseShard reads "i/N".
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("--shard wants i/N with 0 <= i < N, got %q", s)
	}
	return i, n, nil
}

func sortedNames(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
