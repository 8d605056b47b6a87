package main

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
	"ndb/model/train"
)

var trainFlags struct {
	data, out, config, packDir string
	steps                      int
	tokens                     string
	dur                        time.Duration
	resume                     bool
	init, tokenizer            string
	vocab                      int
	pre                        tokenizer.Pretokenizer
	quiet                      bool
	stopAt                     int
	opt                        train.Options
}

var trainCmd = &cobra.Command{
	Use:   "train --data DIR --out MODEL [--config NAME] [--steps N | --tokens N | --time DUR]",
	Short: "Train the model on `ndb gen` shards (AdamW, validation on held-out programs, exact resume)",
	Long: `Train trains ndb's network on the trajectories of DIR (shards written by ` + "`ndb gen`" + `,
or a directory written by ` + "`ndb pack`" + `) and writes MODEL: config, tokenizer, weights and the
training state, saved every --save-every steps and at the end.

Without --tokenizer (or --init/--resume), a --vocab-token BPE is trained on the training
programs first, with the --pretokenizer split (ndb's, or llama3 for a GGUF export that
llama.cpp tokenizes as ndb does). Shards are packed into MODEL.data/ (reused while shards
and tokenizer are unchanged); 5% of the functions (program_id less its input number), chosen by hash, are
held out and give the validation loss every --eval-every steps. Batches are windows of --seq+1 tokens at offsets
drawn by SplitMix64 from --seed and the step (docs/training.md), so --resume continues a
run exactly: the same losses as a run that was never stopped.

The schedule: linear warmup to --lr, cosine decay to --min-lr at the last step; AdamW
(betas 0.9/0.95, weight decay --weight-decay on matrices), global gradient-norm clipping.
The run's length is --steps, or --tokens (rounded up to whole steps), or --time (steps sized
from a timed step, and stopped at the deadline). --resume keeps the saved schedule unless one
of them is given again.

Outputs: MODEL, MODEL.log.jsonl (one line per step: loss, lr, grad norm, tokens/s, and
val_loss where measured) and MODEL.png (the training curve).`,
	Args: cobra.NoArgs,
	RunE: runTrain,
}

func runTrain(cmd *cobra.Command, _ []string) error {
	f := &trainFlags
	if f.data == "" || f.out == "" {
		return fmt.Errorf("train: --data and --out are required")
	}
	fl := cmd.Flags()
	// Checked here, not when the network is built: that comes after the
	// tokenizer is trained and the shards packed, minutes into a run.
	if _, ok := nn.Configs[f.config]; !ok && fl.Changed("config") {
		return fmt.Errorf("train: unknown --config %q (have: %s)", f.config, strings.Join(slices.Sorted(maps.Keys(nn.Configs)), ", "))
	}
	job := train.Job{
		DataDir: f.data, Out: f.out, PackDir: f.packDir, Config: f.config, Options: f.opt,
		Time: f.dur, StepsSet: fl.Changed("steps"), Resume: f.resume, Init: f.init,
		Tokenizer: f.tokenizer, Vocab: f.vocab, Pretokenizer: f.pre, StopAt: f.stopAt,
		Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, "ndb train: "+format+"\n", args...) },
	}
	job.Options.Steps = f.steps
	if f.tokens != "" {
		n, err := parseCount(f.tokens)
		if err != nil {
			return fmt.Errorf("train: --tokens: %w", err)
		}
		job.Tokens = n
	}
	if fl.Changed("pretokenizer") && (f.tokenizer != "" || f.init != "" || f.resume) {
		return fmt.Errorf("train: --pretokenizer is for a tokenizer trained here; the one of --tokenizer, --init or --resume keeps its own")
	}
	if n := countSet(fl.Changed("steps"), f.tokens != "", f.dur > 0); n > 1 {
		return fmt.Errorf("train: give one of --steps, --tokens, --time")
	}
	if !f.quiet {
		job.Progress = os.Stderr
	}
	res, err := train.Train(cmd.Context(), job)
	if err != nil {
		return err
	}
	st := res.State
	val := "n/a"
	if !math.IsNaN(res.ValLoss) {
		val = fmt.Sprintf("%.4f", res.ValLoss)
	}
	fmt.Printf("trained %s (%d params) to step %d of %d: %d tokens in %.0fs, val loss %s\n",
		res.Model, res.Params, st.Step, st.Options.Steps, st.Tokens, st.Elapsed, val)
	fmt.Printf("loss log %s, curve %s\n", res.Log, res.Plot)
	return nil
}

var packFlags struct {
	data, tokenizer, model, out string
	valPercent                  int
}

var packCmd = &cobra.Command{
	Use:   "pack --data DIR (--tokenizer FILE | --model FILE) --out DIR",
	Short: "Tokenize `ndb gen` shards into train.bin/val.bin (uint32 ids) split by program",
	Long: `Pack tokenizes every trajectory of DIR's shards (*.jsonl, *.jsonl.gz, in path order),
ends each with <|end_of_text|>, and concatenates them into OUT/train.bin and OUT/val.bin
(little-endian uint32 token ids) with OUT/meta.json. A program goes to val.bin when
FNV-1a-64(its split key) % 100 < --val-percent, the split key being program_id without its
input number (mbppplus/Mbpp_2/17 -> mbppplus/Mbpp_2): held-out functions are never trained on.
This is the same packing ` + "`ndb train`" + ` does; docs/training.md gives the exact format.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		f := packFlags
		if f.data == "" || f.out == "" || (f.tokenizer == "") == (f.model == "") {
			return fmt.Errorf("pack: need --data, --out and one of --tokenizer, --model")
		}
		var tok *tokenizer.Tokenizer
		var err error
		if f.tokenizer != "" {
			tok, err = tokenizer.Load(f.tokenizer)
		} else {
			var mf *modelfile.Model
			if mf, err = modelfile.Load(f.model); err == nil {
				tok = mf.Tokenizer
			}
		}
		if err != nil {
			return fmt.Errorf("pack: %w", err)
		}
		meta, err := train.Pack(f.data, f.out, train.TokenizerOf(tok), train.PackOptions{ValPercent: f.valPercent})
		if err != nil {
			return err
		}
		fmt.Printf("packed %d shards into %s: train %d tokens (%d docs, %d programs), val %d tokens (%d docs, %d programs)\n",
			len(meta.Shards), f.out, meta.TrainTokens, meta.TrainDocs, meta.TrainPrograms, meta.ValTokens, meta.ValDocs, meta.ValPrograms)
		return nil
	},
}

// parseCount reads a count such as 5000000, 5M, 2.5G or 300k.
func parseCount(s string) (int64, error) {
	mult := 1.0
	switch strings.ToLower(s[len(s)-1:]) {
	case "k":
		mult = 1e3
	case "m":
		mult = 1e6
	case "g", "b":
		mult = 1e9
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a positive count", s)
	}
	return int64(v * mult), nil
}

func countSet(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func init() {
	d := train.DefaultOptions()
	f := &trainFlags
	fl := trainCmd.Flags()
	fl.StringVar(&f.data, "data", "", "`DIR` of ndb gen shards (or a directory written by ndb pack)")
	fl.StringVar(&f.out, "out", "", "model file to write (and to continue with --resume)")
	fl.StringVar(&f.config, "config", "tiny", "model size: "+strings.Join(slices.Sorted(maps.Keys(nn.Configs)), ", ")+" (model/nn Configs)")
	fl.StringVar(&f.packDir, "pack-dir", "", "where to pack the shards (default OUT.data)")
	fl.IntVar(&f.steps, "steps", d.Steps, "optimizer steps")
	fl.StringVar(&f.tokens, "tokens", "", "train on this many tokens instead (e.g. 50M)")
	fl.DurationVar(&f.dur, "time", 0, "train for this long instead (e.g. 2h)")
	fl.IntVar(&f.opt.Batch, "batch", d.Batch, "sequences per step")
	fl.IntVar(&f.opt.Seq, "seq", d.Seq, "tokens per sequence")
	fl.Float64Var(&f.opt.LR, "lr", d.LR, "peak learning rate")
	fl.Float64Var(&f.opt.MinLR, "min-lr", d.MinLR, "final learning rate of the cosine")
	fl.IntVar(&f.opt.Warmup, "warmup", d.Warmup, "linear warmup steps")
	fl.Float64Var(&f.opt.WeightDecay, "weight-decay", d.WeightDecay, "AdamW weight decay (matrices only)")
	fl.Float64Var(&f.opt.ClipNorm, "clip", d.ClipNorm, "gradient-norm clip")
	fl.Uint64Var(&f.opt.Seed, "seed", d.Seed, "seed of the initial weights and the batches")
	fl.IntVar(&f.opt.EvalEvery, "eval-every", d.EvalEvery, "steps between validation losses")
	fl.IntVar(&f.opt.EvalWindows, "eval-windows", d.EvalWindows, "validation windows per evaluation (0: all)")
	fl.IntVar(&f.opt.SaveEvery, "save-every", d.SaveEvery, "steps between checkpoints")
	fl.BoolVar(&f.opt.Align, "align", false, "start every window at a trajectory's start, so frames are trained with their program in view (not mirrored by the PyTorch trainer)")
	fl.StringVar(&f.opt.LossOn, "loss-on", train.LossOnAll, "targets trained on: all tokens, or frames (only what the model writes when it debugs: not the program or the actions; the PyTorch trainer has the same flag)")
	fl.BoolVar(&f.resume, "resume", false, "continue the run saved in --out exactly")
	fl.StringVar(&f.init, "init", "", "start from this model's weights (fresh optimizer and schedule)")
	fl.StringVar(&f.tokenizer, "tokenizer", "", "tokenizer file (default: train one on the data)")
	fl.IntVar(&f.vocab, "vocab", train.DefaultVocab, "vocabulary of a tokenizer trained here")
	fl.TextVar(&f.pre, "pretokenizer", tokenizer.PretokenizerNDB, "`NAME` of the pre-tokenizer of a tokenizer trained here: "+pretokenizerChoices)
	fl.BoolVar(&f.quiet, "quiet", false, "no progress bar")
	fl.IntVar(&f.stopAt, "stop-at", 0, "stop after this step with a checkpoint (for trying --resume)")
	f.opt.Beta1, f.opt.Beta2, f.opt.Eps = d.Beta1, d.Beta2, d.Eps
	rootCmd.AddCommand(trainCmd)

	pf := packCmd.Flags()
	pf.StringVar(&packFlags.data, "data", "", "`DIR` of ndb gen shards")
	pf.StringVar(&packFlags.tokenizer, "tokenizer", "", "tokenizer file")
	pf.StringVar(&packFlags.model, "model", "", "model file whose tokenizer to use")
	pf.StringVar(&packFlags.out, "out", "", "output directory")
	pf.IntVar(&packFlags.valPercent, "val-percent", train.DefaultValPercent, "percent of programs held out (-1: none)")
	rootCmd.AddCommand(packCmd)
}
