// Package dap is ndb's Debug Adapter Protocol server (`ndb dap`), so that
// VS Code and other DAP clients debug Python programs on any engine: the
// real one (with reverse stepping) or a model. It is a client of
// debugger.Session, like the terminal.
//
// Goroutine model: Serve handles one client connection in one goroutine,
// reading a request, answering it and sending its events before reading the
// next one, so a session needs no locks. Listen runs one such goroutine per
// connection; connections share only the engine registry.
package dap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/engine"
)

// threadID is the only thread: a traced or predicted program is one thread.
const threadID = 1

// wrapperRef is the sourceReference of the `def main()` wrapper that a
// --call program's source gains (its lines are past the file's end).
const wrapperRef = 1

// Server answers DAP clients.
type Server struct {
	reg           *engine.Registry
	log           io.Writer
	defaultEngine string
}

// SetDefaultEngine names the engine of launches that name none ("" =
// engine.Default).
func (s *Server) SetDefaultEngine(name string) { s.defaultEngine = name }

// NewServer returns a server whose sessions get their engines from reg.
// log receives one line per failed request (nil: none).
func NewServer(reg *engine.Registry, log io.Writer) *Server {
	if log == nil {
		log = io.Discard
	}
	return &Server{reg: reg, log: log}
}

// LaunchArgs are the arguments of the launch request (launch.json).
type LaunchArgs struct {
	Program     string `json:"program"`     // path of the Python file
	Engine      string `json:"engine"`      // real, model, openai, cwm ("" = model)
	Model       string `json:"model"`       // model file for the model engine ("" = the default model)
	Call        string `json:"call"`        // debug this call of a function of program, e.g. f(1, 'a')
	StopOnEntry bool   `json:"stopOnEntry"` // stop at the first state instead of running to a breakpoint
}

// Listen accepts connections on addr and serves each until ctx is done.
// Only loopback addresses are accepted unless allowRemote is set: the
// server runs programs (real engine) for whoever connects.
func (s *Server) Listen(ctx context.Context, addr string, allowRemote bool, ready func(net.Addr)) error {
	if err := CheckLoopback(addr); err != nil && !allowRemote {
		return err
	}
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(l.Addr())
	}
	go func() { <-ctx.Done(); l.Close() }()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() { <-cctx.Done(); c.Close() }()
			s.Serve(cctx, c, c)
		}()
	}
}

// CheckLoopback returns an error unless addr's host is a loopback address
// (or localhost).
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("address %q is not loopback: the server runs programs for whoever connects; use 127.0.0.1 (or --allow-remote)", addr)
	}
	return nil
}

// Serve runs one DAP session over r and w until the client disconnects or
// the stream ends.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	c := &conn{srv: s, r: bufio.NewReader(r), w: w, vars: map[int]varsRef{}}
	defer c.closeSession()
	for {
		msg, err := godap.ReadProtocolMessage(c.r)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			var fe *godap.DecodeProtocolMessageFieldError
			if errors.As(err, &fe) {
				// A request we cannot decode (an unknown command or bad
				// arguments): answer it, keep the session.
				c.sendErrorFor(fe.Seq, fe.SubType, err.Error())
				continue
			}
			return err
		}
		req, ok := msg.(godap.RequestMessage)
		if !ok {
			continue // responses and events from a client are ignored
		}
		c.handle(ctx, req)
		if c.done {
			return nil
		}
	}
}

// conn is one client's state.
type conn struct {
	srv *Server
	r   *bufio.Reader
	w   io.Writer
	seq int

	args       LaunchArgs
	sess       *debugger.Session
	eng        engine.Engine
	fileLines  int          // lines of the program file; later lines are the wrapper's
	pending    map[int]bool // breakpoints set before launch
	vars       map[int]varsRef
	configured bool
	launched   bool
	done       bool
	terminated bool
}

// varsRef says what a variablesReference shows: the locals of stack frame
// frame, or the return value of the current stop.
type varsRef struct {
	frame  int
	retval bool
}

func (c *conn) send(m godap.Message) {
	if err := godap.WriteProtocolMessage(c.w, m); err != nil {
		fmt.Fprintf(c.srv.log, "dap: write: %v\n", err)
	}
}

func (c *conn) nextSeq() int { c.seq++; return c.seq }

func (c *conn) response(req godap.RequestMessage) godap.Response {
	r := req.GetRequest()
	return godap.Response{ProtocolMessage: godap.ProtocolMessage{Seq: c.nextSeq(), Type: "response"},
		Command: r.Command, RequestSeq: r.Seq, Success: true}
}

func (c *conn) event(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Seq: c.nextSeq(), Type: "event"}, Event: name}
}

func (c *conn) sendErrorFor(reqSeq int, command, msg string) {
	c.send(&godap.ErrorResponse{
		Response: godap.Response{ProtocolMessage: godap.ProtocolMessage{Seq: c.nextSeq(), Type: "response"},
			Command: command, RequestSeq: reqSeq, Success: false, Message: msg},
		Body: godap.ErrorResponseBody{Error: &godap.ErrorMessage{Id: 1, Format: msg, ShowUser: true}},
	})
}

func (c *conn) sendError(req godap.RequestMessage, err error) {
	r := req.GetRequest()
	fmt.Fprintf(c.srv.log, "dap: %s: %v\n", r.Command, err)
	c.sendErrorFor(r.Seq, r.Command, err.Error())
}

// handle answers one request; a panic becomes an error response.
func (c *conn) handle(ctx context.Context, req godap.RequestMessage) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(c.srv.log, "dap: panic in %s: %v\n%s", req.GetRequest().Command, p, debug.Stack())
			c.sendError(req, fmt.Errorf("internal error: %v", p))
		}
	}()
	if err := c.dispatch(ctx, req); err != nil {
		c.sendError(req, err)
	}
}

// dispatch is the one type switch over requests. Each case says whether
// the request is Required by every client or Optional (a capability we
// announce in initialize).
func (c *conn) dispatch(ctx context.Context, req godap.RequestMessage) error {
	switch r := req.(type) {
	case *godap.InitializeRequest: // Required
		return c.onInitialize(r)
	case *godap.LaunchRequest: // Required
		return c.onLaunch(ctx, r)
	case *godap.SetBreakpointsRequest: // Required
		return c.onSetBreakpoints(r)
	case *godap.SetExceptionBreakpointsRequest: // Required by VS Code's start-up sequence; we have no filters
		c.send(&godap.SetExceptionBreakpointsResponse{Response: c.response(r)})
		return nil
	case *godap.ConfigurationDoneRequest: // Optional (supportsConfigurationDoneRequest)
		return c.onConfigurationDone(ctx, r)
	case *godap.ThreadsRequest: // Required
		c.send(&godap.ThreadsResponse{Response: c.response(r), Body: godap.ThreadsResponseBody{
			Threads: []godap.Thread{{Id: threadID, Name: "main"}}}})
		return nil
	case *godap.StackTraceRequest: // Required
		return c.onStackTrace(r)
	case *godap.ScopesRequest: // Required
		return c.onScopes(r)
	case *godap.VariablesRequest: // Required
		return c.onVariables(r)
	case *godap.SourceRequest: // Required for the wrapper's lines (sourceReference)
		return c.onSource(r)
	case *godap.NextRequest: // Required
		return c.move(ctx, r, debugger.Command{Action: debugger.StepOver}, "step")
	case *godap.StepInRequest: // Required
		return c.move(ctx, r, debugger.Command{Action: debugger.StepInto}, "step")
	case *godap.StepOutRequest: // Required
		return c.move(ctx, r, debugger.Command{Action: debugger.StepReturn}, "step")
	case *godap.ContinueRequest: // Required
		return c.move(ctx, r, debugger.Command{Action: debugger.Continue}, "breakpoint")
	case *godap.StepBackRequest: // Optional (supportsStepBack)
		return c.move(ctx, r, debugger.Command{Action: debugger.InvStepOver}, "step")
	case *godap.ReverseContinueRequest: // Optional (supportsStepBack)
		return c.move(ctx, r, debugger.Command{Action: debugger.Continue, Backward: true}, "breakpoint")
	case *godap.EvaluateRequest: // Optional (variable names, and the neural commands in the REPL)
		return c.onEvaluate(ctx, r)
	case *godap.DisconnectRequest: // Required
		c.send(&godap.DisconnectResponse{Response: c.response(r)})
		c.done = true
		return nil
	case *godap.TerminateRequest: // Optional (supportsTerminateRequest)
		c.send(&godap.TerminateResponse{Response: c.response(r)})
		c.terminate()
		return nil
	default:
		return fmt.Errorf("request %q is not supported by ndb", req.GetRequest().Command)
	}
}

func (c *conn) onInitialize(r *godap.InitializeRequest) error {
	c.send(&godap.InitializeResponse{Response: c.response(r), Body: godap.Capabilities{
		SupportsConfigurationDoneRequest: true,
		SupportsStepBack:                 true,
		SupportsEvaluateForHovers:        true,
		SupportsTerminateRequest:         true,
	}})
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
	if abs, err := filepath.Abs(a.Program); err == nil {
		a.Program = abs
	}
	src, err := os.ReadFile(a.Program)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	if a.Engine == "" {
		a.Engine = c.srv.defaultEngine
	}
	eng, err := c.srv.reg.Get(a.Engine, a.Model)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	b, err := eng.Open(ctx, engine.Program{Path: a.Program, Source: string(src), Call: a.Call})
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	sess, err := debugger.NewSession(ctx, b)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	c.args, c.eng, c.sess = a, eng, sess
	c.fileLines = len(debugger.SourceLines(string(src)))
	for line := range c.pending {
		sess.SetBreak(line) // refusals were reported when they were set
	}
	c.send(&godap.LaunchResponse{Response: c.response(r)})
	return nil
}

func (c *conn) onSetBreakpoints(r *godap.SetBreakpointsRequest) error {
	lines := r.Arguments.Lines
	if len(r.Arguments.Breakpoints) > 0 {
		lines = lines[:0:0]
		for _, b := range r.Arguments.Breakpoints {
			lines = append(lines, b.Line)
		}
	}
	out := make([]godap.Breakpoint, len(lines))
	if p := r.Arguments.Source.Path; c.sess != nil && p != "" && !samePath(p, c.args.Program) {
		// ndb debugs one file: breakpoints elsewhere never hit.
		for i, l := range lines {
			out[i] = godap.Breakpoint{Line: l, Source: &r.Arguments.Source, Message: "ndb debugs only " + c.args.Program}
		}
		c.send(&godap.SetBreakpointsResponse{Response: c.response(r), Body: godap.SetBreakpointsResponseBody{Breakpoints: out}})
		return nil
	}
	if c.sess == nil {
		c.pending = map[int]bool{}
	} else {
		c.sess.ClearBreaks()
	}
	for i, l := range lines {
		out[i] = godap.Breakpoint{Line: l, Verified: true, Source: &r.Arguments.Source}
		var why string
		if c.sess != nil {
			if err := c.sess.SetBreak(l); err != nil {
				why = err.Error()
			}
		} else if src, err := os.ReadFile(r.Arguments.Source.Path); err == nil {
			why = debugger.CheckBreakLine(string(src), l)
			if why == "" {
				c.pending[l] = true
			}
		} else {
			c.pending[l] = true
		}
		if why != "" {
			out[i].Verified, out[i].Message = false, why
		}
	}
	c.send(&godap.SetBreakpointsResponse{Response: c.response(r), Body: godap.SetBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && filepath.Clean(a) == filepath.Clean(b)
}

func (c *conn) onConfigurationDone(ctx context.Context, r *godap.ConfigurationDoneRequest) error {
	c.send(&godap.ConfigurationDoneResponse{Response: c.response(r)})
	if c.sess == nil || c.configured {
		return nil
	}
	c.configured = true
	if cur := c.sess.Current(); cur.IsExit() && cur.Exit != debugger.ExitInvEntry {
		// The run ended before its first stop (a syntax error): tell how,
		// rather than "the program has exited" from a continue.
		c.report(cur, "entry")
		return nil
	}
	if c.args.StopOnEntry {
		c.stopped(c.sess.Current(), "entry", "")
		return nil
	}
	st, err := c.sess.Do(ctx, debugger.Command{Action: debugger.Continue})
	if err != nil {
		c.output("stderr", err.Error())
		c.stopped(c.sess.Current(), "exception", err.Error())
		return nil
	}
	c.report(st, "breakpoint")
	return nil
}

// move runs one command, answers the request, then reports where it
// stopped. Errors of the command (a model's bad frame, a move past the
// end) are shown to the user and leave the session where it was.
func (c *conn) move(ctx context.Context, req godap.RequestMessage, cmd debugger.Command, reason string) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	// Run first, answer after: a panic in the engine then yields one
	// error response instead of a success followed by an error.
	st, err := c.sess.Do(ctx, cmd)
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
	if err != nil {
		c.output("stderr", err.Error()+"\n")
		c.stopped(c.sess.Current(), "step", err.Error())
		return nil
	}
	c.report(st, reason)
	return nil
}

// report sends the events for a stop: stopped, or exited and terminated at
// the end of the program.
func (c *conn) report(st debugger.Stop, reason string) {
	if st.IsExit() && st.Exit != debugger.ExitInvEntry {
		if out, ok := c.sess.Output(); ok && out != "" {
			c.output("stdout", out)
		}
		msg := "program ended: " + st.Exit
		if st.Arg != "" {
			msg += ": " + st.Arg
		}
		c.output("console", msg+"\n")
		code := 0
		if st.Exit != "normal" {
			code = 1
		}
		c.send(&godap.ExitedEvent{Event: c.event("exited"), Body: godap.ExitedEventBody{ExitCode: code}})
		c.terminate()
		return
	}
	if st.IsExit() {
		reason = "entry"
	} else if reason == "breakpoint" && !(st.Event == "line" && contains(c.sess.Breaks(), st.Lineno)) {
		reason = "step"
	}
	if st.Event == "exception" {
		reason = "exception"
	}
	c.stopped(st, reason, "")
}

func contains(xs []int, x int) bool {
	i := sort.SearchInts(xs, x)
	return i < len(xs) && xs[i] == x
}

func (c *conn) stopped(st debugger.Stop, reason, text string) {
	c.vars = map[int]varsRef{}
	desc := st.Event
	switch {
	case st.IsExit() && st.Exit == debugger.ExitInvEntry:
		desc = "before the start (" + st.Exit + ")"
	case st.IsExit():
		desc = "after the end (" + st.Exit + ")"
	}
	c.send(&godap.StoppedEvent{Event: c.event("stopped"), Body: godap.StoppedEventBody{
		Reason: reason, Description: desc, ThreadId: threadID, AllThreadsStopped: true, Text: text}})
}

func (c *conn) terminate() {
	if c.terminated {
		return
	}
	c.terminated = true
	c.send(&godap.TerminatedEvent{Event: c.event("terminated")})
}

func (c *conn) output(category, text string) {
	c.send(&godap.OutputEvent{Event: c.event("output"), Body: godap.OutputEventBody{Category: category, Output: text}})
}

func (c *conn) closeSession() {}

// frames is the stack innermost first, as DAP lists it.
func (c *conn) frames() []debugger.Stop {
	if c.sess == nil || c.sess.Current().IsExit() {
		return nil
	}
	stack := c.sess.Stack()
	out := make([]debugger.Stop, len(stack))
	for i, s := range stack {
		out[len(stack)-1-i] = debugger.Stop{State: s}
	}
	if len(out) > 0 {
		out[0] = c.sess.Current() // the current stop, with its own event
	}
	return out
}

func (c *conn) source(line int) *godap.Source {
	if c.args.Call != "" && line > c.fileLines {
		return &godap.Source{Name: "<ndb main>", SourceReference: wrapperRef, PresentationHint: "deemphasize"}
	}
	return &godap.Source{Name: filepath.Base(c.args.Program), Path: c.args.Program}
}

func (c *conn) onStackTrace(r *godap.StackTraceRequest) error {
	fs := c.frames()
	out := make([]godap.StackFrame, 0, len(fs))
	for i, f := range fs {
		name := f.Function
		switch f.Event {
		case "call":
			name += " --Call--"
		case "return":
			name += " --Return--"
		case "exception":
			name += " --Exception--"
		}
		out = append(out, godap.StackFrame{Id: i + 1, Name: name, Line: max(f.Lineno, 1), Column: 1, Source: c.source(f.Lineno)})
	}
	start := min(max(r.Arguments.StartFrame, 0), len(out))
	out = out[start:]
	if n := r.Arguments.Levels; n > 0 && n < len(out) {
		out = out[:n]
	}
	c.send(&godap.StackTraceResponse{Response: c.response(r), Body: godap.StackTraceResponseBody{StackFrames: out, TotalFrames: len(fs)}})
	return nil
}

func (c *conn) onScopes(r *godap.ScopesRequest) error {
	fs := c.frames()
	id := r.Arguments.FrameId
	if id < 1 || id > len(fs) {
		return fmt.Errorf("no frame %d", id)
	}
	ref := len(c.vars) + 1
	c.vars[ref] = varsRef{frame: id}
	scopes := []godap.Scope{{Name: "Locals", PresentationHint: "locals", VariablesReference: ref, NamedVariables: len(fs[id-1].Locals)}}
	if id == 1 && (fs[0].Event == "return" || fs[0].Event == "exception") {
		ref2 := len(c.vars) + 1
		c.vars[ref2] = varsRef{frame: id, retval: true}
		name := "Return value"
		if fs[0].Event == "exception" {
			name = "Exception"
		}
		scopes = append([]godap.Scope{{Name: name, VariablesReference: ref2, NamedVariables: 1}}, scopes...)
	}
	c.send(&godap.ScopesResponse{Response: c.response(r), Body: godap.ScopesResponseBody{Scopes: scopes}})
	return nil
}

func (c *conn) onVariables(r *godap.VariablesRequest) error {
	v, ok := c.vars[r.Arguments.VariablesReference]
	fs := c.frames()
	if !ok || v.frame > len(fs) {
		return fmt.Errorf("no variables %d (they expire when the program moves)", r.Arguments.VariablesReference)
	}
	f := fs[v.frame-1]
	var out []godap.Variable
	if v.retval {
		name := "__return__"
		if f.Event == "exception" {
			name = "__exception__"
		}
		out = append(out, godap.Variable{Name: name, Value: f.Arg, EvaluateName: name})
	} else {
		for _, l := range f.Locals {
			out = append(out, godap.Variable{Name: l.Name, Value: l.Value, EvaluateName: l.Name})
		}
	}
	if out == nil {
		out = []godap.Variable{}
	}
	c.send(&godap.VariablesResponse{Response: c.response(r), Body: godap.VariablesResponseBody{Variables: out}})
	return nil
}

func (c *conn) onSource(r *godap.SourceRequest) error {
	ref := r.Arguments.SourceReference
	if r.Arguments.Source != nil && r.Arguments.Source.SourceReference != 0 {
		ref = r.Arguments.Source.SourceReference
	}
	if c.sess == nil || ref != wrapperRef {
		return fmt.Errorf("no source %d", ref)
	}
	c.send(&godap.SourceResponse{Response: c.response(r), Body: godap.SourceResponseBody{Content: c.sess.Source(), MimeType: "text/x-python"}})
	return nil
}

// onEvaluate looks a name up in a frame's locals (the only expressions a
// model can answer: it never runs code). In the debug console (context
// "repl") it also takes the neural session commands: back, resample,
// verify and set NAME = VALUE.
func (c *conn) onEvaluate(ctx context.Context, r *godap.EvaluateRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	expr := strings.TrimSpace(r.Arguments.Expression)
	if r.Arguments.Context == "repl" {
		if res, moved, ok, err := c.neuralCommand(ctx, expr); ok {
			if err != nil {
				return err
			}
			c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: res}})
			if moved {
				c.report(c.sess.Current(), "step")
			}
			return nil
		}
	}
	fs := c.frames()
	id := r.Arguments.FrameId
	if id == 0 {
		id = 1
	}
	if id < 1 || id > len(fs) {
		return errors.New("the program is not stopped in a frame")
	}
	f := fs[id-1]
	if (expr == "__return__" && f.Event == "return" || expr == "__exception__" && f.Event == "exception") && id == 1 {
		c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: f.Arg}})
		return nil
	}
	v, ok := f.Locals.Get(expr)
	if !ok {
		return fmt.Errorf("name %q is not defined here (ndb evaluates local names only)", expr)
	}
	c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: v}})
	return nil
}

// neuralCommand runs a console command; ok is false when expr is none.
func (c *conn) neuralCommand(ctx context.Context, expr string) (result string, moved, ok bool, err error) {
	res, ok, err := engine.RunCommand(ctx, c.sess, c.srv.reg.Real(), expr)
	return res.Message, res.Moved, ok, err
}
