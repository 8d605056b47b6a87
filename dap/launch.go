package dap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/tracer"
)

// The session's life: initialize, launch, configurationDone, restart, the
// run to the first stop, and its end (terminate).

func (c *conn) onInitialize(r *godap.InitializeRequest) error {
	c.send(&godap.InitializeResponse{Response: c.response(r), Body: godap.Capabilities{
		SupportsConfigurationDoneRequest: true,
		SupportsStepBack:                 true,
		SupportsEvaluateForHovers:        true,
		SupportsTerminateRequest:         true,
		SupportsConditionalBreakpoints:   true,
		SupportsSetVariable:              true,
		SupportsFunctionBreakpoints:      true,
		SupportsExceptionInfoRequest:     true,
		SupportsRestartRequest:           true,
		ExceptionBreakpointFilters: []godap.ExceptionBreakpointsFilter{
			{Filter: "raised", Label: "Raised Exceptions", Description: "Continue stops where an exception is raised, caught or not (real engine)"},
			{Filter: "uncaught", Label: "Uncaught Exceptions", Description: "Stop at the end of a program that an exception ended", Default: true},
		},
	}})
	if !c.gate.open() {
		// Before the token: configuration requests would be refused, so
		// the client is told to send them only once launch brings it.
		c.heldInit = true
		return nil
	}
	c.send(&godap.InitializedEvent{Event: c.event("initialized")})
	return nil
}

func (c *conn) onLaunch(ctx context.Context, r *godap.LaunchRequest) error {
	if c.sess != nil {
		return errors.New("already launched")
	}
	var a LaunchArgs
	// A launch without arguments lacks "program": say that, not a JSON error.
	if len(bytes.TrimSpace(r.Arguments)) > 0 {
		if err := json.Unmarshal(r.Arguments, &a); err != nil {
			return fmt.Errorf("launch arguments: %w", err)
		}
	}
	if a.Program == "" {
		return errors.New("launch: \"program\" (a Python file) is required")
	}
	// Confined to the workspace roots, a regular file of bounded size;
	// errors never quote the file.
	real, src, err := c.srv.readProgram(a.Program)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	a.Program = real
	if a.Model != "" {
		if a.Model, err = c.srv.confine("model", a.Model, 0); err != nil {
			return fmt.Errorf("launch: %w", err)
		}
	}
	if a.Engine == "" {
		a.Engine = c.srv.defaultEngine
	}
	prog := tracer.Program{Path: a.Program, Source: string(src), Call: a.Call}
	if strings.TrimSpace(a.Call) == "" {
		prog.Context = &tracer.Context{Args: a.Args} // run as `python FILE ARGS`: its folder, __file__, argv
	} else if len(a.Args) > 0 {
		return errors.New("launch: args need a script (no call)")
	}
	sess, err := c.srv.reg.Open(ctx, a.Engine, a.Model, prog)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	c.args, c.sess = a, sess
	c.fileLines = len(debugger.SourceLines(string(src)))
	c.lineBreaks = nil
	c.send(&godap.LaunchResponse{Response: c.response(r)})
	if n := consoleNotice(a.Console); n != "" {
		c.output("important", n)
	}
	// A live run's output is an output event as it is written (events
	// after terminated are dropped by send).
	c.streamed = sess.SetOutput(func(s string) { c.output("stdout", s) })
	c.applyPending()
	for _, b := range c.syncBreaks() {
		c.send(&godap.BreakpointEvent{Event: c.event("breakpoint"), Body: godap.BreakpointEventBody{Reason: "changed", Breakpoint: b}})
	}
	if c.configured {
		c.begin(ctx) // configurationDone came first
	}
	return nil
}

func (c *conn) onConfigurationDone(ctx context.Context, r *godap.ConfigurationDoneRequest) error {
	c.send(&godap.ConfigurationDoneResponse{Response: c.response(r)})
	c.configured = true
	if c.sess != nil {
		c.begin(ctx)
	} // else launch begins: clients send configurationDone before or after launch
	return nil
}

// onRestart runs the program anew (Session.Restart: a live run starts
// again; a model's history goes back to its start), with the same
// breakpoints, then on as after configurationDone: to the first stop, or
// the entry with stopOnEntry. The launch arguments stay those of launch.
func (c *conn) onRestart(ctx context.Context, r *godap.RestartRequest) error {
	if c.sess == nil || !c.started {
		return errors.New("not launched")
	}
	if c.isTerminated() {
		return errors.New("the session has ended")
	}
	c.send(&godap.RestartResponse{Response: c.response(r)})
	if _, err := c.run(func() (debugger.Stop, error) { return c.sess.Restart(ctx) }); err != nil {
		c.output("stderr", err.Error()+"\n")
		c.stopped(c.sess.Current(), "step", err.Error())
		return nil
	}
	c.output("console", "Restarting "+c.args.Program+"\n")
	c.started, c.exited = false, false
	c.begin(ctx)
	return nil
}

// begin runs the program to its first stop once both launch and
// configurationDone have come, in either order.
func (c *conn) begin(ctx context.Context) {
	if c.started {
		return
	}
	c.started = true
	if cur := c.sess.Current(); cur.IsExit() && cur.Exit != debugger.ExitInvEntry {
		// The run ended before its first stop (a syntax error): tell how,
		// rather than "the program has exited" from a continue.
		c.report(cur, "entry")
		return
	}
	if c.args.StopOnEntry && !c.args.NoDebug {
		c.stopped(c.sess.Current(), "entry", "")
		return
	}
	st, err := c.run(func() (debugger.Stop, error) { return c.cont(ctx, false) })
	if err != nil {
		c.output("stderr", err.Error()+"\n")
		c.stopped(c.sess.Current(), "exception", err.Error())
		return
	}
	c.report(st, "breakpoint")
}

// terminate sends terminated (once) and ends the live program.
func (c *conn) terminate() {
	c.wmu.Lock()
	if !c.terminated {
		c.sendLocked(&godap.TerminatedEvent{Event: c.event("terminated")})
		c.terminated = true
	}
	c.wmu.Unlock()
	c.closeSession()
}

// closeSession ends the session's live program (worker goroutine, or
// serve once the worker is done).
func (c *conn) closeSession() {
	if c.sess != nil && !c.closed {
		c.closed = true
		if err := c.sess.Close(); err != nil {
			fmt.Fprintf(c.srv.log, "dap: close: %v\n", err)
		}
	}
}
