package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"ndb/debugger"
	"ndb/engine"
	"ndb/engine/openai"
	"ndb/model/defaultmodel"
	"ndb/model/infer"
	"ndb/repl"
	"ndb/tracer"
)

// engineFlags are the engine options shared by debug, dap and mcp.
type engineFlags struct {
	model       string
	openaiURL   string
	openaiModel string
	openaiKey   string
	tokenIDs    bool
	python      string
}

// add registers the flags on fs (python only when the command has none).
func (f *engineFlags) add(fs *pflag.FlagSet, withPython bool) {
	fs.StringVar(&f.model, "model", "", "model file of the model engine (default: $NDB_MODEL, else the embedded model)")
	fs.StringVar(&f.openaiURL, "openai-url", "", "OpenAI-compatible API root for the openai and cwm engines, e.g. http://127.0.0.1:8000/v1 (env "+openai.EnvBaseURL+")")
	fs.StringVar(&f.openaiModel, "openai-model", "", "model name sent to the endpoint (env "+openai.EnvModel+")")
	fs.StringVar(&f.openaiKey, "openai-key", "", "API key for the endpoint; prefer the env "+openai.EnvAPIKey)
	fs.BoolVar(&f.tokenIDs, "openai-token-ids", false, "send prompts to the endpoint as the token ids of --model's tokenizer (default model: $NDB_MODEL, else the embedded one), for a server running ndb's model exported with ndb export --gguf")
	if withPython {
		fs.StringVar(&f.python, "python", "python3", "Python interpreter for the real engine and verify")
	}
}

func (f *engineFlags) options() engine.Options {
	o := engine.Options{Model: f.model, Python: f.python,
		OpenAI: openai.Config{BaseURL: f.openaiURL, Model: f.openaiModel, APIKey: f.openaiKey}}
	if f.tokenIDs {
		o.OpenAI.TokenIDs = tokenIDsOf(f.model)
	}
	return o
}

// haveDefaultModel reports whether the model engine can start without
// --model: a model is embedded or named by $NDB_MODEL.
func haveDefaultModel() bool {
	if os.Getenv(infer.ModelEnv) != "" {
		return true
	}
	// Open, not defaultmodel.Bytes: that copies the whole file, at every
	// start of every command.
	f, err := defaultmodel.FS.Open(defaultmodel.FileName)
	if err != nil {
		return false
	}
	f.Close()
	return true
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
	fs.IntVar(&f.maxEvents, "max-events", 0, fmt.Sprintf("events a whole run may record before it ends (exit never); 0: the default, %d on the real engine", engine.LiveMaxEvents))
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

var debugEngineFlags engineFlags

// Plug the model engines into `ndb debug` (cmd/ndb/debug.go's registry)
// and make the model engine the default when a default model exists.
func init() {
	for _, name := range []string{engine.Model, engine.OpenAI, engine.CWMName} {
		debugEngines[name] = func(ctx context.Context, p debugProgram) (debugger.Backend, func() error, error) {
			opts := debugEngineFlags.options()
			opts.Python = p.Python
			opts.NoSandbox, opts.Limits = p.NoSandbox, p.Limits
			e, err := engine.New(name, opts)
			if err != nil {
				return nil, nil, err
			}
			b, err := e.Open(ctx, p.Program)
			if err != nil {
				e.Close()
				return nil, nil, err
			}
			return b, e.Close, nil
		}
	}
	debugExtra = neuralCommands
	debugEngineFlags.add(debugCmd.Flags(), false)
	if f := debugCmd.Flags().Lookup("engine"); f != nil {
		f.Usage = "engine that answers the commands: real (runs the program under the tracer), model (ndb's model predicts every state), openai or cwm (an OpenAI-compatible endpoint)"
		if haveDefaultModel() {
			debugDefaultEngine = engine.Model
			f.DefValue = engine.Model
			f.Value.Set(engine.Model)
		}
	}
}

// neuralCommands gives the terminal the session commands of package engine:
// back on every engine; resample, set and verify on the model engines, with
// a real engine (started on first use) behind verify.
func neuralCommands(name string, p debugProgram) (*repl.Extra, func() error) {
	var real *engine.RealEngine
	if name != engine.Real {
		real = engine.NewReal(engine.Options{Python: p.Python, NoSandbox: p.NoSandbox, Limits: p.Limits, Workers: 1})
	}
	help := make([]repl.ExtraHelp, 0, len(engine.NeuralCommands))
	for _, c := range engine.NeuralCommands {
		if c.Name == "back" || real != nil {
			help = append(help, repl.ExtraHelp{Name: c.Name, Args: c.Args, Help: c.Help})
		}
	}
	run := func(ctx context.Context, s *debugger.Session, line string) (string, bool, bool, error) {
		res, ok, err := engine.RunCommand(ctx, s, real, line)
		return res.Message, res.Moved, ok, err
	}
	closeFn := func() error {
		if real != nil {
			return real.Close()
		}
		return nil
	}
	return &repl.Extra{Help: help, Run: run}, closeFn
}
