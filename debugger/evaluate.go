package debugger

import (
	"context"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"

	"ndb/tracer"
)

// RunArgs are the arguments the last RestartWith gave the program (pdb's
// sys.argv[1:] after `run ARGS`); nil when none was given.
func (s *Session) RunArgs() []string {
	if lr, ok := s.b.(LiveRunner); ok {
		return lr.RunArgs()
	}
	return nil
}

// RestartWith starts the program again as Restart does, with args as its
// sys.argv[1:] (pdb's `run ARGS`; later restarts keep them); refused where
// the backend cannot run the program anew.
func (s *Session) RestartWith(ctx context.Context, args []string) (Stop, error) {
	r, ok := s.b.(ArgsRestarter)
	if !ok {
		return s.Current(), errors.New("restart with arguments needs the real engine (a model's predictions are of one run)")
	}
	st, err := r.RestartWith(ctx, args)
	if err != nil {
		return s.Current(), err
	}
	s.history = []Step{{Stop: st}}
	return st, nil
}

// Eval evaluates src in the program, as pdb's p (tracer.EvalExpr), pp
// (EvalPretty) and ! (EvalExec) do: in the frame level frames below the
// current stop's (0: its own). At an uncaught exception's exit (see
// PostMortem) level counts from the frame that raised it. A statement that
// changes the frame's locals changes the current stop's Locals with them:
// the stop shows the frame as it now is, and the run goes on from there
// (the trace before it stays as recorded). ErrNotLive where no live
// program waits. A model engine's backend (ValueEvaluator) evaluates an
// expression over the level-th frame's predicted values instead, so every
// front end's p, watch and evaluate get the same answer there.
func (s *Session) Eval(ctx context.Context, level int, src, mode string) (tracer.EvalResult, error) {
	ev, ok := s.b.(Evaluator)
	if !ok {
		return s.evalValues(ctx, level, src, mode)
	}
	res, err := ev.Eval(ctx, s.Current(), level, src, mode)
	if err == nil && res.Locals != nil && level == 0 && !s.Current().IsExit() {
		s.history[len(s.history)-1].Stop.Locals = slices.Clone(res.Locals)
	}
	return res, err
}

// evalValues is Eval on a backend without a live program: a
// ValueEvaluator's answer over the level-th frame's values, else
// ErrNotLive.
func (s *Session) evalValues(ctx context.Context, level int, src, mode string) (tracer.EvalResult, error) {
	ve, ok := s.b.(ValueEvaluator)
	frames := s.Frames()
	if !ok || level < 0 || level >= len(frames) {
		return tracer.EvalResult{}, ErrNotLive
	}
	return ve.EvalValues(ctx, frames[len(frames)-1-level], src, mode)
}

// Live reports whether the live program waits at the current stop:
// Eval and Jump work there.
func (s *Session) Live() bool {
	lr, ok := s.b.(LiveRunner)
	return ok && lr.LiveAt(s.Current())
}

// Jump moves the live program to line in the current stop's frame, as
// pdb's j does (the frame's next line is line; only at a line event). The
// new position is a step of the history (Command.Jump) at a state of its
// own; what failed is returned as an error with pdb's text.
func (s *Session) Jump(ctx context.Context, line int) (Stop, error) {
	j, ok := s.b.(Jumper)
	if !ok {
		return s.Current(), ErrNotLive
	}
	st, res, err := j.Jump(ctx, s.history, line)
	if err != nil {
		return s.Current(), err
	}
	if !res.OK {
		return s.Current(), errors.New(res.Text)
	}
	s.history = append(s.history, Step{Command: Command{Jump: line}, Stop: st})
	return st, nil
}

// Interrupt asks a command that runs the live program to stop at its next
// event (pdb's Ctrl-C); the stop has Interrupted set. A no-op for other
// backends. Unlike the rest of Session, safe from any goroutine.
func (s *Session) Interrupt() {
	if in, ok := s.b.(Interrupter); ok {
		in.Interrupt()
	}
}

// SetOutput sends the program's output to f as it is written, and reports
// whether the backend streams it (a live run); if not, Output has it once
// the run has ended.
func (s *Session) SetOutput(f func(string)) bool {
	st, ok := s.b.(Streamer)
	return ok && st.SetOutput(f)
}

// Close releases what the backend holds (a live run's program).
func (s *Session) Close() error {
	if c, ok := s.b.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// PostMortem is what pdb shows when a program raises an uncaught exception:
// Python's traceback and the frames it went through, outermost first, each
// at the state where the exception passed (its exception event); the last
// is where it was raised.
type PostMortem struct {
	Traceback string
	Frames    []Stop
}

// PostMortem is the post-mortem of the current stop when it is the error
// exit of a real run whose exception left the program; false otherwise.
// With a live backend, Eval at that exit evaluates in the traceback's
// frames (level 0: the last of Frames).
func (s *Session) PostMortem() (PostMortem, bool) {
	cur := s.Current()
	rec, ok := s.b.(Recording)
	if !ok || !cur.IsExit() || cur.Exit != tracer.ExitError {
		return PostMortem{}, false
	}
	t := rec.Tree().T
	if t.Exit.Reason == "sys.exit" { // pdb: no post-mortem for SystemExit (see ExitNote)
		return PostMortem{}, false
	}
	chain := exceptionChain(t)
	if len(chain) == 0 {
		return PostMortem{}, false
	}
	pm := PostMortem{Traceback: t.Traceback}
	for _, i := range chain {
		pm.Frames = append(pm.Frames, Stop{State: t.States[i], Index: i})
	}
	return pm, true
}

// exceptionChain finds the uncaught exception's way out at the end of
// trace t: the exception event of each frame it left, outermost first.
// Each frame shows its exception event and then its return, the callee's
// pair right before its caller's.
func exceptionChain(t *tracer.Trace) []int {
	states := t.States
	var chain []int // outermost first
	k := len(states) - 1
	for k >= 1 {
		ret, exc := &states[k], &states[k-1]
		if ret.Event != tracer.EventReturn || exc.Event != tracer.EventException || exc.Frame != ret.Frame {
			break
		}
		if len(chain) > 0 && exc.Depth != states[chain[len(chain)-1]].Depth+1 {
			break
		}
		if len(chain) > 0 && exc.Arg != states[chain[0]].Arg {
			break
		}
		chain = append(chain, k-1)
		k -= 2
	}
	return chain
}

// ExitNote is what pdb says when the program ends by sys.exit() ("The
// program exited via sys.exit(). Exit status: N"), at the exit of a real
// run that ended so; false otherwise. pdb then restarts the program; ndb
// stays at the exit, where reverse commands go on (restart runs it anew).
func (s *Session) ExitNote() (string, bool) {
	cur := s.Current()
	rec, ok := s.b.(Recording)
	if !ok || !cur.IsExit() || cur.Exit == ExitInvEntry || rec.Tree().T.Exit.Reason != "sys.exit" {
		return "", false
	}
	exit := rec.Tree().T.Exit
	status := strconv.Itoa(exit.Code)
	if m := sysExitArg.FindStringSubmatch(exit.Error); m != nil {
		status = m[1] // sys.exit('message'): pdb shows the argument
	}
	return "The program exited via sys.exit(). Exit status: " + status, true
}

var sysExitArg = regexp.MustCompile(`^SystemExit\('(.*)'\)$`)
