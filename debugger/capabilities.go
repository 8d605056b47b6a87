package debugger

import (
	"context"
	"errors"

	"ndb/tracer"
)

// What a Backend can do beyond Backend itself is declared by the
// interfaces below (and Inspector, StackTeller, Outputter in session.go):
// the Session checks for an interface, never for a concrete backend, so
// that an engine gains a capability by implementing its methods. The
// trace backend (the real engine) implements the live and recorded ones;
// the model engines' backends (package engine) the predicted ones.
type (
	// Evaluator evaluates in the program's real frames where a live run
	// waits.
	Evaluator interface {
		// Eval runs src (tracer.EvalExpr, EvalPretty or EvalExec) in the
		// level-th frame below stop at's (0: its own; at an error exit, the
		// frames of the traceback, innermost first); ErrNotLive where the
		// program does not wait.
		Eval(ctx context.Context, at Stop, level int, src, mode string) (tracer.EvalResult, error)
	}
	// Jumper moves the line of a live run's frame (pdb's j).
	Jumper interface {
		// Jump moves the frame of the last stop of history to line.
		Jump(ctx context.Context, history []Step, line int) (Stop, tracer.EvalResult, error)
	}
	// Interrupter pauses a running command at the program's next event.
	Interrupter interface {
		// Interrupt is safe from any goroutine.
		Interrupt()
	}
	// Streamer passes the program's output on as it is written.
	Streamer interface {
		SetOutput(func(string)) bool
	}
	// Restarter runs the program anew.
	Restarter interface {
		Restart(ctx context.Context) (Stop, error)
	}
	// ArgsRestarter runs the program anew with other arguments.
	ArgsRestarter interface {
		RestartWith(ctx context.Context, args []string) (Stop, error)
	}
	// LiveRunner is a backend that may run its program live (the real
	// engine): IsLive says whether it does, so that breakpoint conditions
	// are Python evaluated in its frames; LiveAt whether the program waits
	// at stop s (Eval and Jump work there); RunArgs are the arguments of
	// the last RestartWith (nil: none given).
	LiveRunner interface {
		IsLive() bool
		LiveAt(s Stop) bool
		RunArgs() []string
	}
	// Recording is a backend that answers from a recorded run of the
	// program (the real engine): the index of its trace, and the position
	// of a stop in it (false for a stop that has none). The session reads
	// the run's frames, its end and its uncaught exception there.
	Recording interface {
		Tree() *Tree
		PosOf(s Stop) (Pos, bool)
	}
	// Resampler is a backend whose stops are a model's predictions (the
	// model engines): it can draw another prediction.
	Resampler interface {
		// Resample makes the next prediction a sample instead of greedy.
		Resample()
	}
	// ReprChecker is a predicting backend that says whether its context
	// can hold value as a local's repr text (a model's format has special
	// tokens that no value may contain): SetLocal refuses what it cannot.
	ReprChecker interface {
		HoldsRepr(value string) bool
	}
	// ValueEvaluator is a predicting backend that evaluates an expression
	// over the values a frame's stop shows (the model engines: over the
	// predicted literal values, in the real engine's sandbox, never in the
	// program). It answers as Evaluator does: res.OK false with Python's
	// error line for an expression that raises; an error wrapping
	// ErrNotLive for what it cannot evaluate (a statement).
	ValueEvaluator interface {
		EvalValues(ctx context.Context, frame Stop, src, mode string) (tracer.EvalResult, error)
	}
	// Verifier is a predicting backend that can have its program run for
	// real, under the real engine's tracer (Session.Verify).
	Verifier interface {
		// RealTrace traces the backend's program; ErrNoRealEngine when the
		// engine that opened it has no real engine.
		RealTrace(ctx context.Context) (*tracer.Trace, error)
	}
	// ProgramTracer runs a program under the tracer's limits and returns
	// its trace (the real engine's Trace): what a model engine's backend is
	// given to verify its predictions and to evaluate over its values.
	ProgramTracer interface {
		Trace(ctx context.Context, p tracer.Program) (*tracer.Trace, error)
	}
)

// ErrNoRealEngine says a predicting backend has no real engine to run its
// program (verify, expressions over predicted values).
var ErrNoRealEngine = errors.New("no real engine to run the program")

// NotLive is an error that is ErrNotLive (errors.Is) with a backend's own
// reason: a model engine's "never statements", rather than the live
// program's "step forward to it".
func NotLive(why string) error { return notLiveError(why) }

type notLiveError string

func (e notLiveError) Error() string        { return string(e) }
func (e notLiveError) Is(target error) bool { return target == ErrNotLive }
