package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"ndb/debugger"
	"ndb/tracer"

	"ndb/model/defaultmodel"
	"ndb/model/infer"
)

// Registry hands out engines by name, creating each (name, model) pair
// once and sharing it: a server's sessions share one model in memory and
// one pool of tracer workers. It is the one place engines are built for
// the commands that debug or measure (ndb debug, dap, mcp, eval), so they
// all get the same engine for a name: the model engine's scored predictor
// with its rerank, the real engine's limits. It is safe for concurrent use.
type Registry struct {
	base Options

	mu      sync.Mutex
	engines map[string]Engine
	real    *RealEngine
}

// NewRegistry returns a registry whose engines use base (a Get that names
// a model file overrides base.Model).
func NewRegistry(base Options) *Registry {
	return &Registry{base: base, engines: map[string]Engine{}}
}

// Get returns the engine called name ("" = r.Default(), or the model
// engine when model is given), for model the model file of the model
// engine ("" = base.Model, the server's --model, else the default model;
// ignored by others).
func (r *Registry) Get(name, model string) (Engine, error) {
	name = r.named(name, model)
	if name != Model {
		model = ""
	}
	key := name + "\x00" + model
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.engines[key]; ok {
		return e, nil
	}
	if name == Real {
		return r.realLocked(), nil
	}
	opts := r.base
	if model != "" {
		opts.Model = model
		opts.Predictor = nil
	}
	e, err := New(name, opts)
	if err != nil {
		return nil, err
	}
	if ne, ok := e.(*neuralEngine); ok {
		ne.real = r.realLocked() // verify, and expressions over predicted values
	}
	r.engines[key] = e
	return e, nil
}

// The Registry is the debugger.Engines of the front ends.
var _ debugger.Engines = (*Registry)(nil)

// Resolve implements debugger.Engines: the engine Get would give for
// name and model, without building it.
func (r *Registry) Resolve(name, model string) (string, error) {
	name = r.named(name, model)
	if !slices.Contains(Names(), name) {
		return "", fmt.Errorf("unknown engine %q (have: %s)", name, strings.Join(Names(), ", "))
	}
	return name, nil
}

// Names implements debugger.Engines: every engine New knows.
func (r *Registry) Names() []string { return Names() }

// InverseNames implements debugger.Engines: the engines whose backends
// predict a call's inputs (ndb's format has inv_step_call).
func (r *Registry) InverseNames() []string { return []string{Model, OpenAI} }

// Open implements debugger.Engines: a session of p on the engine called
// name, for model the model engine's file.
func (r *Registry) Open(ctx context.Context, name, model string, p tracer.Program) (*debugger.Session, error) {
	e, err := r.Get(name, model)
	if err != nil {
		return nil, err
	}
	b, err := e.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	s, err := debugger.NewEngineSession(ctx, b, e.Name())
	if err != nil {
		closeBackend(b)
		return nil, err
	}
	return s, nil
}

// PredictOutput implements debugger.Engines (see PredictOutput).
func (r *Registry) PredictOutput(ctx context.Context, name, code, call string) (string, debugger.Stop, error) {
	e, err := r.Get(name, "")
	if err != nil {
		return "", debugger.Stop{}, err
	}
	return PredictOutput(ctx, e, code, call)
}

// PredictInput implements debugger.Engines (see PredictInput); an engine
// that has no inverse is refused before anything is opened.
func (r *Registry) PredictInput(ctx context.Context, name, code, function, output string) (tracer.Locals, debugger.Stop, error) {
	n, err := r.Resolve(name, "")
	if err != nil {
		return nil, debugger.Stop{}, err
	}
	if !slices.Contains(r.InverseNames(), n) {
		return nil, debugger.Stop{}, debugger.ErrNoInverse
	}
	e, err := r.Get(n, "")
	if err != nil {
		return nil, debugger.Stop{}, err
	}
	return PredictInput(ctx, e, code, function, output)
}

// named is the engine a request names: name lower-cased, "" for the
// default or, with model given, the model engine.
func (r *Registry) named(name, model string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	switch {
	case name == "" && model != "":
		return Model
	case name == "":
		return r.Default()
	}
	return name
}

// Default is the engine of a request that names none: DefaultName of the
// registry's options.
func (r *Registry) Default() string { return DefaultName(r.base) }

// DefaultName is the one default-engine policy of ndb's commands: the model
// engine when there is a model to run (opts names a model file or a
// predictor, or a default model exists: HaveDefaultModel), else the real
// engine, so that a build without a model still debugs.
func DefaultName(opts Options) string {
	if opts.Model != "" || opts.Predictor != nil || HaveDefaultModel() {
		return Model
	}
	return Real
}

// HaveDefaultModel reports whether the model engine can start without a
// model file: $NDB_MODEL names one or a model is embedded.
func HaveDefaultModel() bool {
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

// Real is the registry's real engine (for verify).
func (r *Registry) Real() *RealEngine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.realLocked()
}

func (r *Registry) realLocked() *RealEngine {
	if r.real == nil {
		r.real = NewReal(r.base)
		r.engines[Real+"\x00"] = r.real
	}
	return r.real
}

// Close closes every engine.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for k, e := range r.engines {
		if err := e.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", strings.ReplaceAll(k, "\x00", " "), err))
		}
	}
	r.engines = map[string]Engine{}
	r.real = nil
	return errors.Join(errs...)
}
