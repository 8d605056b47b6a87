// Package engine holds ndb's engines, the debugger.Backends that answer a
// debugging session, chosen by name with New:
//
//   - real: runs the program once under the tracer (its limits) and answers
//     every command from that trace, exactly as pdb would (debugger.TraceBackend);
//   - model: ndb's own Go model (model/infer) predicts every stop in ndb's
//     format; the default engine; without a model path, the default model;
//   - openai: the same prompts sent to any OpenAI-compatible /v1/completions
//     endpoint (vLLM, llama.cpp's server, Ollama);
//   - cwm: that endpoint with CWM's own trace format, jumps rolled out frame
//     by frame.
//
// Model engines never run the user's program; only real does (and, for a
// model engine's session, verify and expressions over its predicted
// values: the registry hands its real engine to the model engines'
// backends as a debugger.ProgramTracer).
//
// An Engine is safe for concurrent use: servers open many sessions on one.
// Each Backend it opens belongs to one session.
package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"ndb/debugger"
	"ndb/engine/openai"
	"ndb/internal/pysource"
	"ndb/model/infer"
	"ndb/tracer"
)

// Program is what to debug: a script, or one call of a function it defines.
// (An alias, so front ends need not import the tracer.)
type Program = tracer.Program

// Context runs a Program as `python FILE ARGS` would: from its folder, with
// its arguments and stdin (docs/tracer.md, "Program context").
type Context = tracer.Context

// Engine names.
const (
	Real    = "real"
	Model   = "model"
	OpenAI  = "openai"
	CWMName = "cwm"
)

// Default is the engine preferred when none is named; DefaultName (a
// Registry's Default) falls back to the real engine when no model exists.
const Default = Model

// Names lists the engines New knows, in documentation order.
func Names() []string { return []string{Real, Model, OpenAI, CWMName} }

// Engine opens backends for programs.
type Engine interface {
	// Name is the engine's name as New takes it.
	Name() string
	// Open returns a backend for p, ready for debugger.NewSession.
	Open(ctx context.Context, p Program) (debugger.Backend, error)
	// Close releases what the engine holds (tracer workers).
	Close() error
}

// Options configure New. Zero fields take defaults.
type Options struct {
	// Model is the model file of the model engine ("" = infer.Default: the
	// file in $NDB_MODEL, else the embedded default model).
	Model string
	// Predictor, if set, replaces the model of the model engine (tests,
	// custom runtimes).
	Predictor Predictor
	// OpenAI configures the openai and cwm engines; empty fields are read
	// from NDB_OPENAI_BASE_URL, NDB_OPENAI_MODEL and NDB_OPENAI_API_KEY.
	OpenAI openai.Config
	// Draw is how ordinary predictions decode (zero: greedy).
	Draw Draw
	// Rerank is the model engine's test-time compute on unsure greedy
	// predictions (infer.Rerank): nil takes infer.DefaultRerank, a Rerank
	// with K 0 turns it off.
	Rerank *infer.Rerank
	// MaxTokens is the model engine's budget of one predicted frame (0:
	// the runtime's default); FreeProgram turns off the program rules of
	// its constrained decoding (ablations). ndb eval sets them.
	MaxTokens   int
	FreeProgram bool
	// Jumps is how the model and openai engines answer forward jumps
	// (zero: one prediction each).
	Jumps Jumps
	// Python is the interpreter of the real engine and of Verify.
	Python string
	// Limits bound each traced run (zero fields: the tracer's defaults).
	Limits tracer.Limits
	// NoSandbox runs the real engine's programs without the kernel sandbox
	// (tracer.Options.NoSandbox): only for code you trust.
	NoSandbox bool
	// Workers is how many tracer workers the real engine keeps (default 2):
	// sessions trace once at start, so a few serve many sessions.
	Workers int
	// Live makes the real engine's sessions live (docs/debugger.md, "Live
	// sessions"): each has a tracer of its own whose program runs only as
	// far as the commands need, so expressions evaluate in its frames.
	// Limits.Timeout is then how long a command may run the program before
	// it is interrupted (a stop), and MaxEvents defaults to LiveMaxEvents.
	Live bool
}

// Jumps answers forward jumps (step over, step out, a continue to one
// breakpoint) by at most Steps step_into predictions (Neural.JumpSteps),
// only those whose direct prediction's least token probability is below
// Below where it is positive (Neural.JumpBelow), giving up after Time
// where it is positive (Neural.JumpTime).
type Jumps struct {
	Steps int
	Below float64
	Time  time.Duration
}

// InteractiveJumps are the jumps of the interactive front ends' model and
// openai engines (ndb debug, dap, mcp; --jump-steps 0 turns them off):
// an unsure jump is stepped, up to 24 steps. On the held-out sessions it
// takes more `b LINE` + c right and makes all of `make demo`'s stops the
// real program's, for a few tenths of a second more on the jumps it steps
// (docs/engines.md, "Jumps by stepping"). ndb eval keeps one prediction
// per jump (the paper's measure) unless asked.
var InteractiveJumps = Jumps{Steps: 24, Below: 0.5, Time: 2 * time.Second}

// LiveMaxEvents is a live session's default event limit: its program runs
// as long as the user lets it; the trace's size limit bounds its memory.
const LiveMaxEvents = 50_000_000

// New returns the engine called name.
func New(name string, opts Options) (Engine, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case Real:
		return NewReal(opts), nil
	case Model, "":
		pred := opts.Predictor
		if pred == nil {
			var p *infer.Predictor
			var err error
			if opts.Model != "" {
				p, err = infer.Load(opts.Model)
			} else {
				p, err = infer.Default()
			}
			if err != nil {
				return nil, fmt.Errorf("engine model: %w", err)
			}
			rr := opts.Rerank
			if rr == nil {
				rr = &infer.DefaultRerank
			}
			pred = InferPredictor{P: p, Rerank: rr, MaxTokens: opts.MaxTokens, FreeProgram: opts.FreeProgram,
				Python: cmp.Or(opts.Python, "python3")}
		}
		return &neuralEngine{name: Model, pred: pred, draw: opts.Draw, python: opts.Python, jumps: opts.Jumps}, nil
	case OpenAI, CWMName:
		cfg := withEnv(opts.OpenAI)
		c, err := openai.New(cfg)
		if err != nil {
			return nil, err
		}
		n := strings.ToLower(strings.TrimSpace(name))
		if n == CWMName && opts.Jumps.Steps > 0 {
			return nil, errors.New("engine cwm cannot answer jumps by stepping: only the model and openai engines predict in ndb's format")
		}
		return &neuralEngine{name: n, pred: &OpenAIPredictor{C: c, CWM: n == CWMName}, draw: opts.Draw, cwm: n == CWMName,
			python: opts.Python, jumps: opts.Jumps}, nil
	}
	return nil, fmt.Errorf("unknown engine %q (have: %s)", name, strings.Join(Names(), ", "))
}

// withEnv fills empty fields of cfg from the environment.
func withEnv(cfg openai.Config) openai.Config {
	env := openai.ConfigFromEnv()
	if cfg.BaseURL == "" {
		cfg.BaseURL = env.BaseURL
	}
	if cfg.Model == "" {
		cfg.Model = env.Model
	}
	if cfg.APIKey == "" {
		cfg.APIKey = env.APIKey
	}
	return cfg
}

// neuralEngine opens Neural or CWM backends over one shared predictor.
type neuralEngine struct {
	name   string
	pred   Predictor
	draw   Draw
	cwm    bool
	jumps  Jumps  // Neural.JumpSteps and JumpBelow of every backend
	python string // the interpreter checkProgram asks ("": python3)
	// real runs the programs for verify and evaluates expressions over
	// the predicted values (the registry's real engine); nil: neither.
	real debugger.ProgramTracer
}

func (e *neuralEngine) Name() string { return e.name }
func (e *neuralEngine) Close() error { return nil }

// Open refuses, with a *RefusedError, a program that does not compile and
// a call of a name the program does not define (checkProgram: the text is
// compiled, never run), as the real engine would end them at once.
func (e *neuralEngine) Open(ctx context.Context, p Program) (debugger.Backend, error) {
	if err := checkProgram(ctx, e.python, p); err != nil {
		return nil, err
	}
	python := cmp.Or(e.python, "python3") // as checkProgram resolves ""
	if e.cwm {
		b, err := NewCWM(p, e.pred, e.draw)
		if err != nil {
			return nil, err
		}
		b.Real = e.real
		b.compiled(ctx, python)
		return b, nil
	}
	b, err := NewNeural(p, e.pred, e.draw)
	if err != nil {
		return nil, err
	}
	b.compiled(ctx, python)
	b.JumpSteps, b.JumpBelow, b.JumpTime, b.Real = e.jumps.Steps, e.jumps.Below, e.jumps.Time, e.real
	return b, nil
}

// FormatPredictor is the predictor behind e when e predicts frames of
// ndb's format from ndb's prompts (model, openai), for measurements that
// send the training text itself (ndb eval next-state); nil for the real
// and cwm engines.
func FormatPredictor(e Engine) Predictor {
	if ne, ok := e.(*neuralEngine); ok && !ne.cwm {
		return ne.pred
	}
	return nil
}

// PredictScored asks pred for k continuations of prompt drawn as d, with
// the predictor's confidence in each when it knows it (a ScoredPredictor:
// ndb's model, whose greedy one-frame answer is the reranked one, or a
// server that returns log-probabilities); else by Predict, without.
func PredictScored(ctx context.Context, pred Predictor, prompt string, k int, d Draw) ([]Prediction, error) {
	if sp, ok := pred.(ScoredPredictor); ok {
		return sp.PredictScored(ctx, prompt, k, d)
	}
	texts, err := pred.Predict(ctx, prompt, k, d)
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, len(texts))
	for i, t := range texts {
		out[i] = Prediction{Text: t}
	}
	return out, nil
}

// NewNeuralEngine returns an engine named name that predicts with pred in
// ndb's format (or CWM's, with cwm set).
func NewNeuralEngine(name string, pred Predictor, draw Draw, cwm bool) Engine {
	return &neuralEngine{name: name, pred: pred, draw: draw, cwm: cwm}
}

// RealEngine is the real engine: a pool of tracer workers, started on
// demand, each tracing one program at a time.
type RealEngine struct {
	opts tracer.Options
	idle chan *tracer.Tracer
	slot chan struct{} // a token per worker that may still be started
	done chan struct{}
	live bool // sessions are live runs, each on a tracer of its own
}

// NewReal returns a real engine with opts.Workers workers (default 2).
func NewReal(opts Options) *RealEngine {
	n := opts.Workers
	if n <= 0 {
		n = 2
	}
	e := &RealEngine{opts: tracer.Options{Python: opts.Python, Limits: opts.Limits, NoSandbox: opts.NoSandbox},
		idle: make(chan *tracer.Tracer, n), slot: make(chan struct{}, n), done: make(chan struct{}), live: opts.Live}
	if e.live && e.opts.Limits.MaxEvents == 0 {
		e.opts.Limits.MaxEvents = LiveMaxEvents
	}
	for range n {
		e.slot <- struct{}{}
	}
	return e
}

// Name is "real".
func (e *RealEngine) Name() string { return Real }

// Trace runs p under the tracer's limits on a pooled worker. A failure of
// ndb's own (a worker that died) is retried once on a fresh worker:
// what the program itself does is reported in the trace, not as an error.
// A p with a Context runs as `python FILE ARGS` would, from its folder
// (docs/tracer.md, "Program context"); data-set programs have none.
func (e *RealEngine) Trace(ctx context.Context, p Program) (*tracer.Trace, error) {
	tr, err := e.traceOnce(ctx, p)
	if err != nil && ctx.Err() == nil && !errors.Is(err, errClosed) {
		tr, err = e.traceOnce(ctx, p)
	}
	return tr, err
}

var errClosed = errors.New("engine: closed")

func (e *RealEngine) traceOnce(ctx context.Context, p Program) (*tracer.Trace, error) {
	var t *tracer.Tracer
	select {
	case t = <-e.idle:
	default:
		select {
		case t = <-e.idle:
		case <-e.slot:
			var err error
			opts := e.opts
			opts.ProgramDir = tracer.ContextDir(p) // bound from the start: no restart for it
			if t, err = tracer.New(opts); err != nil {
				e.slot <- struct{}{}
				return nil, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-e.done:
			return nil, errClosed
		}
	}
	tr, err := t.Trace(ctx, p)
	if err != nil {
		// The worker may be dead: replace it rather than pool it.
		t.Close()
		e.slot <- struct{}{}
		return nil, err
	}
	select {
	case <-e.done: // closed meanwhile: do not pool it
		t.Close()
	default:
		e.idle <- t
	}
	return tr, nil
}

// Open traces p and returns a backend over its trace; a live engine's
// backend runs p on a tracer of its own, to its first stop only.
func (e *RealEngine) Open(ctx context.Context, p Program) (debugger.Backend, error) {
	if e.live {
		select {
		case <-e.done:
			return nil, errClosed
		default:
		}
		opts := e.opts
		opts.ProgramDir = tracer.ContextDir(p)
		if opts.HashSeed == "" { // hash randomization as under python3, one seed per session (docs/debugger.md)
			opts.HashSeed = debugger.RandomHashSeed()
		}
		t, err := tracer.New(opts)
		if err != nil {
			return nil, err
		}
		return debugger.NewLiveBackend(ctx, func(ctx context.Context, out func(string)) (*tracer.Run, error) {
			return t.Start(ctx, debugger.WithRunArgs(ctx, p), opts.Limits, out)
		}, t.Close)
	}
	tr, err := e.Trace(ctx, p)
	if err != nil {
		return nil, err
	}
	return debugger.NewTraceBackend(tr), nil
}

// Close stops the idle workers; busy ones stop when their Trace returns.
func (e *RealEngine) Close() error {
	select {
	case <-e.done:
		return nil
	default:
	}
	close(e.done)
	var errs []error
	for {
		select {
		case t := <-e.idle:
			errs = append(errs, t.Close())
		case <-time.After(10 * time.Millisecond):
			return errors.Join(errs...)
		}
	}
}

// InferPredictor adapts ndb's Go model runtime to Predictor.
type InferPredictor struct {
	P *infer.Predictor
	// Rerank applies to greedy one-frame predictions (nil: plain greedy).
	Rerank *infer.Rerank
	// MaxTokens bounds one frame (0: the runtime's default); FreeProgram
	// turns off the program rules of constrained decoding (ablations).
	MaxTokens   int
	FreeProgram bool
	// Jumps is how the model and openai engines answer forward jumps
	// (zero: one prediction each).
	Jumps Jumps
	// Python is the interpreter the programs would run on: the modules
	// they import from its standard library show as it shows them
	// (stdlibModules; "": not asked).
	Python string
}

// sampleOptions are the runtime's options for a prediction drawn as d.
func (p InferPredictor) sampleOptions(ctx context.Context, d Draw) infer.SampleOptions {
	o := infer.SampleOptions{Temperature: d.Temperature, TopP: d.TopP, Seed: d.Seed, Rerank: p.Rerank,
		MaxTokens: p.MaxTokens, FreeProgram: p.FreeProgram}
	if p.Python != "" {
		o.ModuleReprs = func(modules []string) map[string]string { return stdlibModules(ctx, p.Python, modules) }
		o.Compiled = func(src string) *pysource.Compiled { return compiledProgram(ctx, p.Python, src) }
	}
	return o
}

// Predict samples k frames (constrained decoding keeps them well-formed).
func (p InferPredictor) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	return p.P.Sample(ctx, prompt, k, p.sampleOptions(ctx, d))
}

// PredictScored samples k frames with their confidence: the mean and the
// least of the chosen tokens' probabilities, each renormalised over the
// tokens constrained decoding allowed (infer.Predictor.SampleScored).
func (p InferPredictor) PredictScored(ctx context.Context, prompt string, k int, d Draw) ([]Prediction, error) {
	scored, err := p.P.SampleScored(ctx, prompt, k, p.sampleOptions(ctx, d))
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, len(scored))
	for i, s := range scored {
		out[i] = Prediction{Text: s.Text, Confidence: ConfidenceOf(s.Probs)}
	}
	return out, nil
}

// OpenAIPredictor sends prompts to an OpenAI-compatible endpoint, with the
// stop sequences of ndb's format (a frame ends at <|action_sep|> or, for an
// exit, <|end_of_text|>) or of CWM's (<|frame_sep|>, <|end_of_text|>).
type OpenAIPredictor struct {
	C         *openai.Client
	CWM       bool
	MaxTokens int // per frame; 0 means 1024
}

// Predict asks for k completions.
func (p *OpenAIPredictor) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	preds, err := p.PredictScored(ctx, prompt, k, d)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(preds))
	for i, pr := range preds {
		out[i] = pr.Text
	}
	return out, nil
}

// PredictScored asks for k completions with the log-probabilities of
// their tokens ("logprobs": 1); a completion's confidence is the mean and
// the least of exp(logprob) over the tokens of the text kept (up to the
// stop), as the server reports them. Without log-probabilities in the
// answer it is nil.
func (p *OpenAIPredictor) PredictScored(ctx context.Context, prompt string, k int, d Draw) ([]Prediction, error) {
	stop := []string{"<|action_sep|>", "<|end_of_text|>"}
	if p.CWM {
		stop = []string{"<|frame_sep|>", "<|end_of_text|>"}
	}
	mt := p.MaxTokens
	if mt <= 0 {
		mt = 1024
	}
	req := openai.Request{Prompt: prompt, MaxTokens: mt, Temperature: d.Temperature, TopP: d.TopP, Stop: stop, N: k, Logprobs: true}
	if d.Seed != 0 {
		s := int64(d.Seed)
		req.Seed = &s
	}
	ch, err := p.C.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make([]Prediction, 0, len(ch))
	for _, c := range ch {
		text, _ := openai.CutAtStop(c.Text, stop)
		conf := ConfidenceOf(keptProbs(c, len(text)))
		if p.CWM && strings.TrimSpace(text) != "" {
			text += "<|frame_sep|>"
		}
		out = append(out, Prediction{Text: text, Confidence: conf})
	}
	return out, nil
}

// keptProbs are the probabilities of the tokens of c that make up its first
// n bytes (all tokens when the server's token texts do not add up to the
// text); nil without log-probabilities or with a token the server gave no
// figure for.
func keptProbs(c openai.Choice, n int) []float64 {
	lps := c.TokenLogprobs
	if len(c.Tokens) == len(lps) && n < len(c.Text) {
		at, keep := 0, 0
		for keep < len(c.Tokens) && at < n {
			at += len(c.Tokens[keep])
			keep++
		}
		lps = lps[:keep]
	}
	var probs []float64
	for _, lp := range lps {
		if math.IsNaN(lp) {
			return nil
		}
		probs = append(probs, math.Exp(lp))
	}
	return probs
}
