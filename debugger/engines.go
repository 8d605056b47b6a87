package debugger

import (
	"context"
	"errors"

	"ndb/tracer"
)

// Engines is where a front end (DAP, MCP, the terminal's command) gets its
// sessions and predictions: the engine registry (engine.Registry
// implements it), so that front ends translate their protocol to the
// session API and never build or name an engine's type themselves. It is
// safe for concurrent use.
type Engines interface {
	// Resolve is the engine a request names: name lower-cased, "" for the
	// default (Default) or, with model given, the model engine; an error
	// names the engines there are.
	Resolve(name, model string) (string, error)
	// Default is the engine of a request that names none.
	Default() string
	// Names lists every engine, in documentation order; InverseNames those
	// that predict a call's arguments from its result (PredictInput).
	Names() []string
	InverseNames() []string
	// Open starts a session of p on the engine called name (as Resolve
	// takes it), model being the model engine's file ("" = the registry's).
	// Session.Engine names the engine.
	Open(ctx context.Context, name, model string, p tracer.Program) (*Session, error)
	// PredictOutput is the return value of call on code, as the engine
	// answers it (SPEC section 6): predicted, or on the real engine run.
	PredictOutput(ctx context.Context, name, code, call string) (string, Stop, error)
	// PredictInput predicts the arguments function was called with when
	// it returned output (a repr); ErrNoInverse on an engine that cannot.
	PredictInput(ctx context.Context, name, code, function, output string) (tracer.Locals, Stop, error)
	// Close closes every engine (their workers, their programs).
	Close() error
}

// ErrNoInverse says an engine cannot predict the past from a given state.
var ErrNoInverse = errors.New("input prediction needs the model or openai engine (ndb's format has inv_step_call; the real program cannot be run backwards and CWM's format has no inverse)")
