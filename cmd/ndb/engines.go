package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/openai"
	"ndb/model/infer"
	"ndb/repl"
	"ndb/tracer"
)

// engineFlags are the engine options shared by debug, dap, mcp and eval.
type engineFlags struct {
	model       string
	openaiURL   string
	openaiModel string
	openaiKey   string
	tokenIDs    bool
	python      string
	// The model engine's test-time compute on unsure frames (infer.Rerank,
	// docs/engines.md): off by default, measured not to pay on this model.
	rerankK     int
	rerankBelow float64
	rerankBy    string
	// Forward jumps answered by step_into predictions (engine.Options.Jumps).
	jumpSteps int
	jumpBelow float64
	jumpTime  time.Duration
}

// add registers the flags on fs (python only when the command has none),
// with jumps as the default of --jump-steps and --jump-below.
func (f *engineFlags) add(fs *pflag.FlagSet, withPython bool, jumps engine.Jumps) {
	fs.StringVar(&f.model, "model", "", "model file of the model engine (default: $NDB_MODEL, else the embedded model)")
	fs.StringVar(&f.openaiURL, "openai-url", "", "OpenAI-compatible API root for the openai and cwm engines, e.g. http://127.0.0.1:8000/v1 (env "+openai.EnvBaseURL+")")
	fs.StringVar(&f.openaiModel, "openai-model", "", "model name sent to the endpoint (env "+openai.EnvModel+")")
	fs.StringVar(&f.openaiKey, "openai-key", "", "API key for the endpoint; prefer the env "+openai.EnvAPIKey)
	fs.BoolVar(&f.tokenIDs, "openai-token-ids", false, "send prompts to the endpoint as the token ids of --model's tokenizer (default model: $NDB_MODEL, else the embedded one), for a server running ndb's model exported with ndb export --gguf")
	fs.IntVar(&f.rerankK, "rerank-k", infer.DefaultRerank.K, "model engine: frames sampled to rerank an unsure greedy frame (test-time compute; 0: plain greedy)")
	fs.Float64Var(&f.rerankBelow, "rerank-below", infer.DefaultRerank.Below, "model engine: rerank a greedy frame whose least token probability is below this")
	fs.StringVar(&f.rerankBy, "rerank-by", "agreement", "model engine: pick among the greedy frame and the samples by agreement (the frame written most often) or likelihood")
	fs.IntVar(&f.jumpSteps, "jump-steps", jumps.Steps, "model and openai engines: answer step_over, step_return, breakpoint and continue by up to this many step_into predictions (test-time compute; 0: one prediction of the target)")
	fs.Float64Var(&f.jumpBelow, "jump-below", jumps.Below, "with --jump-steps: step only the jumps whose direct prediction's least token probability is below this (0: every jump)")
	fs.DurationVar(&f.jumpTime, "jump-time", jumps.Time, "with --jump-steps: stop stepping a jump after this long, and answer it with its direct prediction (0: no limit)")
	if withPython {
		fs.StringVar(&f.python, "python", "python3", "Python interpreter for the real engine and verify")
	}
}

func (f *engineFlags) options() (engine.Options, error) {
	o := engine.Options{Model: f.model, Python: f.python,
		OpenAI: openai.Config{BaseURL: f.openaiURL, Model: f.openaiModel, APIKey: f.openaiKey}}
	if f.tokenIDs {
		o.OpenAI.TokenIDs = tokenIDsOf(f.model)
	}
	switch {
	case f.rerankK < 0:
		return o, errors.New("--rerank-k must not be negative (0: off)")
	case f.rerankBelow < 0 || f.rerankBelow > 1:
		return o, errors.New("--rerank-below is a probability, from 0 to 1")
	case f.rerankBy != "agreement" && f.rerankBy != "likelihood" && f.rerankBy != "":
		return o, fmt.Errorf("--rerank-by %q: agreement or likelihood", f.rerankBy)
	case f.jumpSteps < 0:
		return o, errors.New("--jump-steps must not be negative (0: off)")
	case f.jumpBelow < 0 || f.jumpBelow > 1:
		return o, errors.New("--jump-below is a probability, from 0 to 1")
	case f.jumpTime < 0:
		return o, errors.New("--jump-time must not be negative (0: no limit)")
	}
	o.Jumps = engine.Jumps{Steps: f.jumpSteps, Below: f.jumpBelow, Time: f.jumpTime}
	o.Rerank = &infer.Rerank{K: f.rerankK, Below: f.rerankBelow, ByLikelihood: f.rerankBy == "likelihood"}
	return o, nil
}

// liveFlags are the limits of a live run (engine.Options.Live), shared by
// debug, dap and mcp.
type liveFlags struct {
	timeout   time.Duration
	maxEvents int
}

// noTimeout stands for --timeout 0 (never): tracer.Limits reads a zero
// Timeout as its default.
const noTimeout = 100 * 365 * 24 * time.Hour

func (f *liveFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&f.timeout, "timeout", 10*time.Second, "how long one command may run the program before it is interrupted and stops where it is (real engine; 0: never)")
	fs.IntVar(&f.maxEvents, "max-events", 0, fmt.Sprintf("events a run may record before it ends (exit never; a c with no breakpoint records none); 0: the default, %d on the real engine", engine.LiveMaxEvents))
}

// limits returns base with the flags' limits.
func (f *liveFlags) limits(base tracer.Limits) (tracer.Limits, error) {
	if f.timeout < 0 || f.maxEvents < 0 {
		return base, fmt.Errorf("--timeout and --max-events must not be negative (0: never / the default)")
	}
	base.Timeout, base.MaxEvents = f.timeout, f.maxEvents
	if base.Timeout == 0 {
		base.Timeout = noTimeout
	}
	return base, nil
}

// neuralCommands gives the terminal the session commands of
// debugger.Session (RunCommand): back on every engine; resample, set and
// verify on a model engine's session (its backend, opened by the
// registry, has the registry's real engine behind verify), as in ndb dap.
func neuralCommands(s *debugger.Session) *repl.Extra {
	help := make([]repl.ExtraHelp, 0, len(debugger.NeuralCommands))
	for _, c := range debugger.NeuralCommands {
		if c.Name == "back" || s.Predicted() {
			help = append(help, repl.ExtraHelp{Name: c.Name, Args: c.Args, Help: c.Help})
		}
	}
	run := func(ctx context.Context, s *debugger.Session, line string) (string, bool, bool, error) {
		res, ok, err := s.RunCommand(ctx, line)
		return res.Message, res.Moved, ok, err
	}
	return &repl.Extra{Help: help, Run: run}
}
