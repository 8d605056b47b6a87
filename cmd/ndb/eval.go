package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
	"ndb/eval"
	"ndb/tracer"
)

// evalFlags are the options both eval commands share.
type evalFlags struct {
	engineFlags
	sandbox sandboxFlags
	engine  string
	dataDir string
	seed    uint64
	json    bool
	report  string
	k       int
	quiet   bool
	workers int
	// maxTokens is the model engine's frame budget (0: the runtime's).
	maxTokens int
	// freeProgram turns the model engine's program rules off (ablation).
	freeProgram bool
}

func (f *evalFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.engineFlags.add(fs, true, engine.Jumps{})
	f.sandbox.add(fs)
	fs.StringVar(&f.engine, "engine", engine.Model, "engine to measure: real, model, openai, cwm")
	fs.StringVar(&f.dataDir, "data-dir", "", "shared data folder (default $NDB_DATA_DIR, else ../shared/data from the repo root)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of every random choice (examples, samples)")
	fs.BoolVar(&f.json, "json", false, "print one final JSON line with the results")
	fs.StringVar(&f.report, "report", "", "write the Markdown table, JSON and PNG plots into this folder")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fs.IntVar(&f.workers, "workers", 2, "tracer workers")
	fs.BoolVar(&f.freeProgram, "free-program", false, "model engine: let predicted source lines and LOCALS keys be any text, not only the program's lines and names (ablation)")
}

// evalEngines is what a run measures with: the engine, from an
// engine.Registry as ndb debug, dap and mcp get theirs (the model engine's
// scored predictor with its rerank: the decoding users get), its predictor
// when it predicts ndb's format (model, openai), and the registry's real
// engine, which traces the contexts.
type evalEngines struct {
	reg    *engine.Registry
	engine engine.Engine
	pred   engine.Predictor
	real   *engine.RealEngine
}

func (e *evalEngines) Close() { e.reg.Close() }

func (f *evalFlags) engines() (*evalEngines, error) {
	if err := f.sandbox.check(); err != nil {
		return nil, err
	}
	if f.sandbox.noSandbox {
		// the CruxEval scorer's sandbox reads only the environment
		os.Setenv(tracer.UnsafeNoSandboxEnv, "1")
	}
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	opts.Workers, opts.NoSandbox = f.workers, f.sandbox.noSandbox
	opts.Limits = tracer.Limits{MaxTraceBytes: f.sandbox.traceBytes()}
	opts.MaxTokens, opts.FreeProgram = f.maxTokens, f.freeProgram
	reg := engine.NewRegistry(opts)
	e, err := reg.Get(f.engine, "")
	if err != nil {
		reg.Close()
		return nil, err
	}
	out := &evalEngines{reg: reg, engine: e, pred: engine.FormatPredictor(e), real: reg.Real()}
	return out, nil
}

// bar is a progress bar on stderr (nil when quiet).
func (f *evalFlags) bar(n int, what string) *progressbar.ProgressBar {
	if f.quiet {
		return nil
	}
	return progressbar.NewOptions(n, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }))
}

// openDump opens a --dump FILE before any work, so that a bad path costs
// none; closeDump flushes and closes it. No path: a nil writer.
func openDump(path string) (w io.Writer, closeDump func(), err error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	bw := bufio.NewWriter(f)
	return bw, func() {
		bw.Flush()
		f.Close()
	}, nil
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

// evalEnv is what an eval subcommand has opened before it measures (evalFlags.open).
type evalEnv struct {
	ctx  context.Context
	dump io.Writer             // the --dump file; nil without one
	sets []eval.SourcePrograms // the held-out programs, for a command that takes them
	eng  *evalEngines
	undo []func() // in opening order
}

// close releases what open opened, the last opened first.
func (e *evalEnv) close() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
	e.undo = nil
}

// open is the prelude every eval subcommand runs, in this order: the
// held-out flags' check (held nil: the command takes no programs), the
// command's own check (nil: none), the --dump file (before any work, so
// that a bad path costs none), the interrupt context, the held-out
// programs and the engines. On an error nothing stays open.
func (f *evalFlags) open(held *heldOutFlags, check func() error, dumpPath string) (*evalEnv, error) {
	if held != nil {
		if err := held.check(); err != nil {
			return nil, err
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	r := &evalEnv{}
	fail := func(err error) (*evalEnv, error) {
		r.close()
		return nil, err
	}
	dump, closeDump, err := openDump(dumpPath)
	if err != nil {
		return nil, err
	}
	r.dump, r.undo = dump, append(r.undo, closeDump)
	ctx, cancel := signalContext()
	r.ctx, r.undo = ctx, append(r.undo, cancel)
	if held != nil {
		if r.sets, err = held.sets(f.dataDir, int64(f.seed)); err != nil {
			return fail(err)
		}
	}
	if r.eng, err = f.engines(); err != nil {
		return fail(err)
	}
	r.undo = append(r.undo, r.eng.Close)
	return r, nil
}

func evalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure a debugger engine: next-state accuracy, whole sessions and CruxEval (docs/eval.md)",
	}
	cmd.AddCommand(evalNextStateCommand(), evalCruxCommand(), evalSessionCommand())
	return cmd
}

func evalNextStateCommand() *cobra.Command {
	var f evalFlags
	var held heldOutFlags
	var dump string
	var n, horizonN, perTrace int
	var pdbSemantics bool
	cmd := &cobra.Command{
		Use:   "next-state (--programs DIR | --source NAME[,NAME...])",
		Short: "Next-state exact match per action and field on held-out programs, horizon curves, exact match@k",
		Long: `Samples trajectories on held-out programs with the training policy, cuts each right after an
action, and compares the engine's greedy prediction of the next frame with the true one: the whole
frame and each field (em_evt, em_src, em_locals, em_arg; N/A where the event has none), per action,
forward and inverse. --horizon-n adds horizon examples (step actions, then one jump: accuracy
against the fraction of states skipped); --k adds exact match@k (temperature 0.6, top-p 0.95).

--programs DIR: every .py file under DIR, traced as a script. --source NAME: the held-out split of
mbppplus, mbpp, humaneval, thealgorithms or realworld (each also -functions, -scripts)
(program ids whose FNV-1a hash % 100 < --val-percent, the rule ndb train uses for validation, so
training never saw them; thealgorithms and realworld are held out by file). Several sources, comma-separated,
and --programs DIR alongside: --n examples per action are drawn from each, and the report adds
a table (JSON: "by_source") of each source's scores next to the overall ones.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := f.open(&held, func() error {
				if f.k == 1 || f.k < 0 {
					return errors.New("--k is the number of samples for exact match@k: 0 (off) or at least 2")
				}
				return nil
			}, dump)
			if err != nil {
				return err
			}
			defer env.close()
			ctx, sets, eng := env.ctx, env.sets, env.eng
			var progs []eval.NamedProgram
			for _, set := range sets {
				progs = append(progs, set.Programs...)
			}
			pred := eng.pred
			if f.jumpSteps > 0 {
				pred = nil // the backend's stepping answers, from the true history
			}
			opts := eval.NextStateOptions{N: n, HorizonN: horizonN, PerTrace: perTrace, Seed: f.seed,
				Real: eng.real, Predictor: pred, Engine: eng.engine, K: f.k, PDBSemantics: pdbSemantics,
				ForwardOnly: eng.engine.Name() == engine.CWMName, Dump: env.dump}
			if !f.quiet {
				fmt.Fprintf(os.Stderr, "ndb eval next-state: %d held-out programs, engine %s, sampling examples...\n", len(progs), eng.engine.Name())
			}
			t0 := time.Now()
			var exs []*eval.Example
			if len(sets) == 1 { // one source: the report as before, no by-source table
				opts.TraceFilter = sets[0].Filter
				exs, err = eval.CollectExamples(ctx, progs, opts)
			} else {
				exs, err = eval.CollectSources(ctx, sets, opts)
			}
			if err != nil {
				return err
			}
			if !f.quiet {
				fmt.Fprintf(os.Stderr, "%d examples in %.1f s\n", len(exs), time.Since(t0).Seconds())
			}
			bar := f.bar(len(exs), "next-state")
			opts.Progress = func(done, total int) {
				if bar != nil {
					bar.Set(done)
				}
			}
			rep, err := eval.RunNextState(ctx, exs, opts)
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			out := rep.JSON()
			out["programs"] = len(progs)
			out["seed"] = f.seed
			if f.report != "" {
				if err := writeReport(f.report, "nextstate", rep.Markdown(), out); err != nil {
					return err
				}
				files, err := rep.WritePlots(f.report)
				if err != nil {
					return err
				}
				if !f.quiet {
					fmt.Fprintf(os.Stderr, "report: %s\n", strings.Join(append([]string{filepath.Join(f.report, "nextstate.md")}, files...), ", "))
				}
			}
			return f.print(out, rep.Markdown())
		},
	}
	f.add(cmd)
	fs := cmd.Flags()
	held.add(fs, "held-out split of data sources, comma-separated: mbppplus, mbpp, humaneval, thealgorithms[-functions|-scripts], realworld[-functions|-scripts] (several: a per-source report)",
		"use at most this many held-out programs (0: all)")
	fs.IntVar(&n, "n", 800, "examples per action (per source when several)")
	fs.IntVar(&horizonN, "horizon-n", 0, "horizon examples in all (0: none)")
	fs.IntVar(&perTrace, "per-trace", 4, "trajectories sampled per trace and pass")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "model engine: token budget of one predicted frame (0: the runtime's default, 384)")
	fs.IntVar(&f.k, "k", 0, "exact match@k with k samples at temperature 0.6, top-p 0.95 (0: off)")
	fs.StringVar(&dump, "dump", "", "write every example (action, prompt, true and predicted frame) as JSON lines to this file")
	fs.BoolVar(&pdbSemantics, "pdb", false, "real engine: answer through pdb's stepping (its session semantics) instead of the action tree of docs/debugger.md")
	return cmd
}

// mustDataDirOrEmpty resolves the data folder, or "" when there is none
// (a folder of scripts needs cruxeval.jsonl only to drop duplicates).
func mustDataDirOrEmpty(flag string) string {
	dir, err := dataset.DataDir(flag)
	if err != nil {
		return ""
	}
	return dir
}

func evalCruxCommand() *cobra.Command {
	var f evalFlags
	var data, task, action, out string
	var limit int
	cmd := &cobra.Command{
		Use:   "cruxeval",
		Short: "CruxEval output and input prediction through debugger actions, scored by running the code",
		Long: `Output prediction (--task output): from the call of f (true context: main's call, its line, f's
call with the arguments), one step_return (--action step_return) or one breakpoint at f's return
line then one step_return from it (--action breakpoint). Input prediction (--task input): one
inv_step_call from f's true return state; the model sees the code without the call. --task both
runs output (step_return and breakpoint) and input. pass@1: assert f(INPUT) == OUTPUT run in a
sandboxed interpreter with the answer; only Python literals count (ast.literal_eval). --k N (input)
samples N candidates and reports pass@k, majority vote and forward self-consistency.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" {
				dir, err := dataset.DataDir(f.dataDir)
				if err != nil {
					return err
				}
				data = filepath.Join(dir, "cruxeval.jsonl")
			}
			items, err := eval.LoadCruxEval(data)
			if err != nil {
				return err
			}
			if limit > 0 && limit < len(items) {
				items = items[:limit]
			}
			type run struct {
				task   string
				action debugger.Action
			}
			var runs []run
			switch task {
			case eval.TaskOutput:
				if action == "" {
					action = string(debugger.StepReturn)
				}
				runs = []run{{task, debugger.Action(action)}}
			case eval.TaskInput:
				if action != "" && action != string(debugger.InvStepCall) {
					return fmt.Errorf("input prediction is by inv_step_call, not %q", action)
				}
				runs = []run{{task, debugger.InvStepCall}}
			case "both":
				runs = []run{{eval.TaskOutput, debugger.StepReturn}, {eval.TaskOutput, debugger.Breakpoint}, {eval.TaskInput, debugger.InvStepCall}}
			default:
				return fmt.Errorf("--task is output, input or both, not %q", task)
			}
			if f.k == 1 || f.k < 0 {
				return errors.New("--k is the number of candidates: 0 (off) or at least 2")
			}
			if strings.EqualFold(f.engine, engine.CWMName) && (task == eval.TaskInput || task == "both") {
				return errors.New("the cwm engine cannot predict inputs: CWM's trace format has no inverse actions (use --task output)")
			}
			env, err := f.open(nil, nil, "")
			if err != nil {
				return err
			}
			defer env.close()
			ctx, eng := env.ctx, env.eng
			sc, err := eval.NewScorer(f.python)
			if err != nil {
				return err
			}
			defer sc.Close()
			var reps []*eval.CruxReport
			var all []eval.CruxResult
			for _, r := range runs {
				desc := fmt.Sprintf("cruxeval %s/%s", r.task, r.action)
				bar := f.bar(len(items), desc)
				rep, err := eval.RunCruxEval(ctx, items, eval.CruxOptions{Task: r.task, Action: r.action, Engine: eng.engine,
					Predictor: eng.pred, Real: eng.real, Scorer: sc, K: f.k, Seed: f.seed,
					Progress: func() {
						if bar != nil {
							bar.Add(1)
						}
					}})
				if bar != nil {
					bar.Finish()
				}
				if err != nil {
					return err
				}
				reps = append(reps, rep)
				for _, res := range rep.Results {
					res.ID = rep.Task + "/" + rep.Action + "/" + res.ID
					all = append(all, res)
				}
				if !f.quiet {
					fmt.Fprintf(os.Stderr, "%s by %s: pass@1 %.1f%%, exact match %.1f%%, %d items, %.1f s\n", rep.Task, rep.Action, rep.PassAt1, rep.ExactMatch, rep.N, rep.Seconds)
				}
			}
			if out == "" && f.report != "" {
				out = filepath.Join(f.report, "cruxeval_items.jsonl")
			}
			if out != "" {
				if err := writeItems(out, all); err != nil {
					return err
				}
			}
			summary := cruxJSON(reps)
			summary["seed"] = f.seed
			if f.report != "" {
				if err := writeReport(f.report, "cruxeval", eval.CruxMarkdown(reps), summary); err != nil {
					return err
				}
				if err := eval.WriteCruxPlot(reps, filepath.Join(f.report, "cruxeval.png")); err != nil {
					return err
				}
			}
			return f.print(summary, eval.CruxMarkdown(reps))
		},
	}
	f.add(cmd)
	fs := cmd.Flags()
	fs.StringVar(&data, "cruxeval", "", "`FILE` of CruxEval items, JSON lines (default: the data folder's cruxeval.jsonl)")
	fs.StringVar(&data, "data", "", "CruxEval items file")
	fs.MarkDeprecated("data", "use --cruxeval FILE (--data names a folder of ndb gen shards elsewhere)")
	fs.StringVar(&task, "task", eval.TaskOutput, "output, input or both")
	fs.StringVar(&action, "action", "", "output prediction by step_return (default) or breakpoint")
	fs.StringVar(&out, "dump", "", "write every item's result (JSON lines) to this file (default with --report: DIR/cruxeval_items.jsonl)")
	fs.StringVar(&out, "out", "", "per-item results file")
	fs.MarkDeprecated("out", "use --dump FILE, as eval next-state does")
	fs.IntVar(&limit, "limit", 0, "only the first N items (0: all)")
	fs.IntVar(&f.maxTokens, "max-tokens", 256, "model engine: token budget of one predicted frame (CruxEval values are at most 50 characters)")
	fs.IntVar(&f.k, "k", 0, "input prediction: sample k candidates (temperature 0.6, top-p 0.95) for majority vote and self-consistency (0: off)")
	return cmd
}

// cruxJSON is the final JSON line: one run's fields at the top level, and
// with several runs, each under "runs" as well (keyed task/action).
func cruxJSON(reps []*eval.CruxReport) map[string]any {
	toMap := func(r *eval.CruxReport) map[string]any {
		b, _ := json.Marshal(r)
		var m map[string]any
		json.Unmarshal(b, &m)
		return m
	}
	out := map[string]any{}
	if len(reps) == 1 {
		out = toMap(reps[0])
	} else {
		runs := map[string]any{}
		var secs float64
		for _, r := range reps {
			runs[r.Task+"/"+r.Action] = toMap(r)
			secs += r.Seconds
		}
		out["runs"] = runs
		out["seconds"] = secs
		// The headline: the first run's numbers.
		for k, v := range toMap(reps[0]) {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

func writeItems(path string, items []eval.CruxResult) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func writeReport(dir, name, markdown string, summary map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(markdown), 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644)
}

// print writes a run's result: with --json the one JSON line, else the
// Markdown table.
func (f *evalFlags) print(summary map[string]any, markdown string) error {
	if f.json {
		return printJSONLine(summary)
	}
	fmt.Print(markdown)
	return nil
}

func printJSONLine(v map[string]any) error {
	b, err := json.Marshal(v) // encoding/json sorts map keys: stable output
	if err != nil {
		return err
	}
	fmt.Println(string(b))
	return nil
}

func init() { rootCmd.AddCommand(evalCommand()) }

// heldOutFlags choose the held-out programs of next-state and session.
type heldOutFlags struct {
	programs, source  string
	valPercent, limit int
}

func (h *heldOutFlags) add(fs *pflag.FlagSet, sourceHelp, limitHelp string) {
	fs.StringVar(&h.programs, "programs", "", "folder of held-out .py scripts")
	fs.StringVar(&h.source, "source", "", sourceHelp)
	fs.IntVar(&h.valPercent, "val-percent", 5, "the validation percent training used (programs with hash % 100 below it are held out)")
	fs.IntVar(&h.limit, "limit-programs", 0, limitHelp)
}

func (h *heldOutFlags) check() error {
	if h.programs == "" && h.source == "" {
		return errors.New("give --programs DIR or --source NAME[,NAME...] (or both)")
	}
	return nil
}

// sets are the held-out programs of an eval command: --programs DIR (every
// .py file under it, as scripts) and each --source NAME's held-out split
// (eval.HeldOut, with the source's trace rule).
func (h *heldOutFlags) sets(dataDir string, seed int64) ([]eval.SourcePrograms, error) {
	programs, source, valPercent, limit := h.programs, h.source, h.valPercent, h.limit
	var sets []eval.SourcePrograms
	if programs != "" {
		if st, err := os.Stat(programs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--programs %s: not a folder of .py scripts", programs)
		}
		src, err := dataset.OpenSource(programs, mustDataDirOrEmpty(dataDir), seed)
		if err != nil {
			return nil, err
		}
		var progs []eval.NamedProgram
		for i := 0; i < src.Len(); i++ {
			if it, skip := src.Item(i); skip == "" {
				progs = append(progs, eval.NamedProgram{ID: it.ID, Program: it.Program})
			}
		}
		if len(progs) == 0 {
			return nil, fmt.Errorf("no .py program under %s", programs)
		}
		sets = append(sets, eval.SourcePrograms{Source: programs, Programs: progs})
	}
	if source != "" {
		dir, err := dataset.DataDir(dataDir)
		if err != nil {
			return nil, err
		}
		for _, name := range strings.Split(source, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			src, err := dataset.OpenSource(name, dir, seed)
			if err != nil {
				return nil, err
			}
			progs, err := eval.HeldOut(src, valPercent, limit)
			if err != nil {
				return nil, err
			}
			filter, _ := src.(dataset.TraceFilter)
			sets = append(sets, eval.SourcePrograms{Source: name, Programs: progs, Filter: filter})
		}
	}
	return sets, nil
}

func evalSessionCommand() *cobra.Command {
	var f evalFlags
	var held heldOutFlags
	var dump string
	var sessions, stops int
	var keepBreaks bool
	cmd := &cobra.Command{
		Use:   "session (--programs DIR | --source NAME[,NAME...])",
		Short: "Whole-session accuracy: random pdb command sequences, the engine against the real program",
		Long: `Runs --sessions seeded random pdb command sequences per source (s, n, r, unt, c, b LINE + c, and
the reverse rs, rn, rr, b LINE + rc) of up to --stops commands on held-out programs, each command on
the measured engine's session and on the real program's session side by side (debugger.Session, as
the front ends drive them), and reports the fraction of sessions whose first k stops are all right
(k = 1, 3, 5, 10), the mean number of stops before the first wrong one, per source and overall. A
stop is right when next-state's exact match holds on it: the same event, source line, locals (all
of them) and value, or the same exit (docs/eval.md). Programs: as for next-state (--programs DIR,
--source NAME[,...] held-out splits).`,
		Example: `  ndb eval session --programs eval/scripts --source thealgorithms-scripts,realworld-scripts --sessions 30`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := f.open(&held, func() error {
				if sessions <= 0 || stops <= 0 {
					return errors.New("--sessions and --stops must be positive")
				}
				return nil
			}, dump)
			if err != nil {
				return err
			}
			defer env.close()
			bar := f.bar(sessions*len(env.sets), "sessions")
			rep, err := eval.RunSessions(env.ctx, env.sets, eval.SessionOptions{Sessions: sessions, Stops: stops, Seed: f.seed,
				KeepBreaks: keepBreaks, Real: env.eng.real, Engine: env.eng.engine, Dump: env.dump, Progress: func(done, total int) {
					if bar != nil {
						bar.Set(done)
					}
				}})
			if bar != nil {
				bar.Finish()
			}
			if err != nil {
				return err
			}
			out := rep.JSON()
			out["seed"] = f.seed
			if f.report != "" {
				if err := writeReport(f.report, "session", rep.Markdown(), out); err != nil {
					return err
				}
			}
			return f.print(out, rep.Markdown())
		},
	}
	f.add(cmd)
	fs := cmd.Flags()
	held.add(fs, "held-out split of data sources, comma-separated (as for next-state; realworld, thealgorithms-scripts, ...)",
		"use at most this many held-out programs per source (0: all)")
	fs.IntVar(&sessions, "sessions", 30, "sessions per source")
	fs.IntVar(&stops, "stops", 10, "commands per session (fewer when the program ends)")
	fs.BoolVar(&keepBreaks, "keep-breaks", false, "keep each b LINE set for the rest of the session, as pdb does (later n, r, unt, c stop there too; a model engine answers those by predicted steps, many times slower); default: a b LINE serves its one command, like tbreak")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "model engine: token budget of one predicted frame (0: the runtime's default, 384)")
	fs.StringVar(&dump, "dump", "", "write every session (commands, the first wrong stop, predicted and real) as JSON lines to this file")
	return cmd
}
