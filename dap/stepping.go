package dap

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// Commands that move the program: step, next, out, continue and their
// reverses, the raised-exceptions continue, and pause.

// cont continues (backward: reverse-continues) as the session's continue
// does: its breakpoints, conditions and function breakpoints are pdb's
// (Session.AddBreak), whatever the engine. With the raised filter it also
// stops at every exception event (Command.Raised: the same stop rule,
// breakpoints counted as pdb counts them).
func (c *conn) cont(ctx context.Context, backward bool) (debugger.Stop, error) {
	return c.sess.Do(ctx, debugger.Command{Action: debugger.Continue, Backward: backward, Raised: c.raised && !backward})
}

// move runs a command and reports where it stopped. On a live run it
// answers first, as a client shows the program running (and offers
// pause) once a continue is answered; a model's prediction cannot be
// paused, so there it answers after the command ran, and a command that
// fails (a model's bad frame, a move the model cannot make) gets an error
// response and leaves the session where it was. A forward command at the
// end of the program, or a reverse one before its start, is an error
// response: nothing moves, so no stopped event follows.
func (c *conn) move(ctx context.Context, req godap.RequestMessage, cmd debugger.Command, reason string) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	if c.isTerminated() {
		return errors.New("the session has ended")
	}
	cur := c.sess.Current()
	switch {
	case cur.IsExit() && cur.Exit != debugger.ExitInvEntry && !cmd.Reverse():
		return debugger.ErrExited
	case cur.IsExit() && cur.Exit == debugger.ExitInvEntry && cmd.Reverse():
		return debugger.ErrAtStart
	}
	answer := func() {
		switch r := req.(type) {
		case *godap.NextRequest:
			c.send(&godap.NextResponse{Response: c.response(r)})
		case *godap.StepInRequest:
			c.send(&godap.StepInResponse{Response: c.response(r)})
		case *godap.StepOutRequest:
			c.send(&godap.StepOutResponse{Response: c.response(r)})
		case *godap.ContinueRequest:
			c.send(&godap.ContinueResponse{Response: c.response(r), Body: godap.ContinueResponseBody{AllThreadsContinued: true}})
		case *godap.StepBackRequest:
			c.send(&godap.StepBackResponse{Response: c.response(r)})
		case *godap.ReverseContinueRequest:
			c.send(&godap.ReverseContinueResponse{Response: c.response(r)})
		}
	}
	predicted := c.sess.Predicted()
	if !predicted {
		answer()
	}
	text := ""
	st, err := c.run(func() (debugger.Stop, error) {
		var st debugger.Stop
		var err error
		if cmd.Action == debugger.Continue {
			st, err = c.cont(ctx, cmd.Backward)
		} else {
			st, err = c.sess.Do(ctx, cmd)
		}
		if err == nil && cmd.Reverse() && st.IsExit() && st.Exit == debugger.ExitInvEntry {
			// Back past the first stop: rest on the first stop, not on an
			// empty "before the start" with no frame to show.
			if first, ferr := c.sess.Do(ctx, debugger.Command{Action: debugger.StepInto}); ferr == nil && !first.IsExit() {
				st, reason, text = first, "entry", "Reached the start of the program"
			}
		}
		return st, err
	})
	if err != nil {
		if predicted {
			return err // the error response; the session stays where it was
		}
		c.output("stderr", err.Error()+"\n")
		c.stopped(c.sess.Current(), "step", err.Error())
		return nil
	}
	if predicted {
		answer()
	}
	if text != "" {
		c.stopped(st, reason, text)
		return nil
	}
	c.report(st, reason)
	return nil
}

func (c *conn) isRunning() bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	return c.running != nil
}

// interrupt pauses the command that runs the program, if one does (safe
// from any goroutine: Session.Interrupt is).
func (c *conn) interrupt() {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.running != nil {
		c.running.Interrupt()
	}
}

// onPause interrupts the running command, which then stops at the
// program's next event (its stopped event says "pause"). Only a live run
// pauses; a model's prediction ends at its next stop by itself. Not
// running, a pause has nothing to do.
func (c *conn) onPause(r *godap.PauseRequest) {
	c.interrupt()
	c.send(&godap.PauseResponse{Response: c.response(r)})
}

// run runs a command that moves the program, as the one pause
// interrupts; a panic in it becomes its error (its response has gone).
func (c *conn) run(f func() (debugger.Stop, error)) (st debugger.Stop, err error) {
	c.runMu.Lock()
	c.running = c.sess
	c.runMu.Unlock()
	defer func() {
		c.runMu.Lock()
		c.running = nil
		c.runMu.Unlock()
		if p := recover(); p != nil {
			fmt.Fprintf(c.srv.log, "dap: panic: %v\n%s", p, debug.Stack())
			st, err = c.sess.Current(), fmt.Errorf("internal error: %v", p)
		}
	}()
	return f()
}
