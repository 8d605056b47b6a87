// Package dap is ndb's Debug Adapter Protocol server (`ndb dap`), so that
// VS Code and other DAP clients debug Python programs on any engine: the
// real one (with reverse stepping) or a model. It is a client of
// debugger.Session, like the terminal.
//
// Goroutine model: Serve handles one client connection with a read loop
// and a worker. The worker answers the requests one at a time, in order,
// and owns the session; the read loop answers pause at once (it interrupts
// the command the worker runs: debugger.Session.Interrupt is safe from any
// goroutine), and threads while a command runs, so a continue in an
// endless loop can be paused. Messages are written under one mutex, in seq order. Listen runs
// one such pair per connection; connections share only the engine
// registry.
package dap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/engine"
	"ndb/tracer"
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
	token         string        // TCP connections' token (listen.go)
	roots         []string      // workspace roots (workspace.go); none: no confinement
	authTimeout   time.Duration // a TCP connection's time to present the token (listen.go)
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
	return &Server{reg: reg, log: log, authTimeout: AuthTimeout}
}

// LaunchArgs are the arguments of the launch request (launch.json).
type LaunchArgs struct {
	Program     string   `json:"program"`     // path of the Python file
	Engine      string   `json:"engine"`      // real, model, openai, cwm ("" = model)
	Model       string   `json:"model"`       // model file for the model engine ("" = the default model)
	Call        string   `json:"call"`        // debug this call of a function of program, e.g. f(1, 'a')
	Args        []string `json:"args"`        // the script's sys.argv[1:] (not with call)
	StopOnEntry bool     `json:"stopOnEntry"` // stop at the first state instead of running to a breakpoint
	NoDebug     bool     `json:"noDebug"`     // run to the end without stopping (VS Code's Run Without Debugging)
	// TerminateAtEnd ends the session (exited, terminated) when the program
	// ends; by default it stays stopped at the end so that reverse commands
	// still work, until the client disconnects.
	TerminateAtEnd bool   `json:"terminateAtEnd"`
	Token          string `json:"token"` // the server's token (ndb dap --listen prints it)
	// Console is where the program's input and output go: only
	// "internalConsole" (the Debug Console, the default) is possible; for
	// "integratedTerminal" and "externalTerminal" the launch says why not
	// (consoleNotice).
	Console string `json:"console"`
}

// consoleNotice is the output event text for a launch whose console ndb
// cannot give (docs/dap.md, "The program's input"), "" when it can.
func consoleNotice(console string) string {
	switch console {
	case "", "internalConsole":
		return ""
	case "integratedTerminal", "externalTerminal":
		return fmt.Sprintf("ndb: \"console\": %q is not supported: the program runs inside ndb's sandbox, not as a process the terminal could start (no runInTerminal), so its output is shown here and its stdin is empty (input() raises EOFError). For a program that reads its input, run `ndb debug --engine real FILE` in a terminal, or `ndb debug --stdin FILE`.\n", console)
	}
	return fmt.Sprintf("ndb: \"console\": unknown value %q (internalConsole is used)\n", console)
}

// Serve runs one DAP session over r and w until the client disconnects or
// the stream ends (stdio: no token). Malformed input never ends it: a bad
// frame or a body that is not a request is reported in an output event, a
// request that cannot be decoded (an unknown command, an argument of the
// wrong JSON type) gets an error response; then the next frame is read.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.serve(ctx, r, w, nil)
}

// errRefused ends a connection that was refused before its token (the
// refusal was answered).
var errRefused = errors.New("refused before the token")

// serve runs one session; gate is nil where no token is needed (stdio,
// unix sockets), else the connection's authentication (listen.go).
func (s *Server) serve(ctx context.Context, r io.Reader, w io.Writer, gate *authGate) error {
	ctx, cancel := context.WithCancel(ctx)
	c := &conn{srv: s, w: w, vars: map[int]varsRef{}, gate: gate}
	// One goroutine reads frames, decodes them and checks the token,
	// another (the worker) answers requests in order; pause (and threads
	// while a command runs) are answered as they are read, so that a pause
	// reaches a continue in an endless loop. The token is checked by the
	// reader, before it reads the next frame, so that every frame before
	// the token is read with the small pre-authentication bound.
	frames := make(chan frameRead)
	quit := make(chan struct{})
	go func() {
		fr := newFrameReader(r)
		deliver := func(f frameRead) bool {
			select {
			case frames <- f:
				return true
			case <-quit:
				return false
			}
		}
		for {
			pre := !gate.open()
			fr.maxBody = MaxBody
			if pre {
				fr.maxBody = MaxPreAuthBody
			}
			body, err := fr.next()
			var fe *FrameError
			switch {
			case errors.As(err, &fe):
				c.protocolError(fe.Msg)
				if pre {
					deliver(frameRead{err: errRefused})
					return
				}
				continue
			case err != nil:
				deliver(frameRead{err: err})
				return
			}
			req, ok := c.decode(body)
			if !ok {
				if pre { // before the token, only well-formed requests
					deliver(frameRead{err: errRefused})
					return
				}
				continue
			}
			if !c.authorize(req, body) {
				deliver(frameRead{err: errRefused})
				return
			}
			if !deliver(frameRead{req: req}) {
				return
			}
		}
	}()
	reqs := make(chan godap.RequestMessage, maxQueued)
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		for req := range reqs {
			if ctx.Err() != nil {
				continue
			}
			c.handle(ctx, req)
			if c.done {
				return
			}
		}
	}()
	defer func() {
		close(quit)
		close(reqs)
		c.interrupt() // a command still running stops at the program's next event
		cancel()
		<-worked
		c.closeSession()
	}()
	for {
		var f frameRead
		select {
		case f = <-frames:
		case <-worked: // disconnect
			return nil
		case <-ctx.Done():
			return nil
		}
		if f.err != nil {
			if errors.Is(f.err, io.EOF) || errors.Is(f.err, errRefused) || ctx.Err() != nil {
				return nil
			}
			return f.err
		}
		switch r := f.req.(type) {
		case *godap.PauseRequest: // Required; answered at once (see onPause)
			c.onPause(r)
			continue
		case *godap.ThreadsRequest: // Required; constant: answered at once while the program runs
			if c.isRunning() {
				c.send(&godap.ThreadsResponse{Response: c.response(r), Body: godap.ThreadsResponseBody{
					Threads: []godap.Thread{{Id: threadID, Name: "main"}}}})
				continue
			} // else in order with the other answers
		case *godap.DisconnectRequest, *godap.TerminateRequest, *godap.RestartRequest:
			c.interrupt() // rather than wait for a running command to stop by itself
		}
		select {
		case reqs <- f.req:
		case <-worked:
			return nil
		}
	}
}

// frameRead is one request (or the reader's error).
type frameRead struct {
	req godap.RequestMessage
	err error
}

// maxQueued bounds the requests read ahead of the one being answered.
const maxQueued = 1024

// decode reads one body; false when it is not a request to handle (it was
// answered with an error, or it is a client's response or event, which
// are ignored).
func (c *conn) decode(body []byte) (godap.RequestMessage, bool) {
	msg, err := godap.DecodeProtocolMessage(body)
	if err == nil {
		req, ok := msg.(godap.RequestMessage)
		return req, ok
	}
	// Read what can be read of the head to answer the right request.
	var head map[string]json.RawMessage
	if json.Unmarshal(body, &head) != nil {
		c.protocolError(fmt.Sprintf("a message that is not a JSON object (%d bytes)", len(body)))
		return nil, false
	}
	var typ, command string
	var seq int
	json.Unmarshal(head["type"], &typ)
	json.Unmarshal(head["command"], &command)
	seqErr := json.Unmarshal(head["seq"], &seq)
	switch {
	case typ == "response" || typ == "event":
		fmt.Fprintf(c.srv.log, "dap: ignoring a malformed %s from the client: %v\n", typ, err)
	case typ == "request" && seqErr == nil:
		fmt.Fprintf(c.srv.log, "dap: %s: %v\n", command, err)
		c.sendErrorFor(seq, command, "bad request: "+err.Error())
	default:
		c.protocolError("not a DAP request: " + err.Error())
	}
	return nil, false
}

// protocolError reports input that has no request seq to answer.
func (c *conn) protocolError(msg string) {
	fmt.Fprintf(c.srv.log, "dap: %s\n", msg)
	c.send(&godap.OutputEvent{Event: c.event("output"), Body: godap.OutputEventBody{Category: "console",
		Output: "ndb dap: malformed input: " + msg + "\n"}})
}

// authorize checks a TCP connection's token (see Listen): false when the
// request was refused (answered) and the connection must close. Before the
// token only initialize passes; a request that carries the right token
// (initialize's or launch's arguments) authenticates the connection.
func (c *conn) authorize(req godap.RequestMessage, body []byte) bool {
	if c.gate.open() {
		return true
	}
	var m struct {
		Arguments struct {
			Token *string `json:"token"`
		} `json:"arguments"`
	}
	json.Unmarshal(body, &m) // the request decoded, so body is an object
	r := req.GetRequest()
	switch {
	case m.Arguments.Token != nil && tokenOK(*m.Arguments.Token, c.srv.token):
		c.gate.pass()
		return true
	case m.Arguments.Token != nil:
		c.sendErrorFor(r.Seq, r.Command, "wrong token; closing the connection")
		return false
	case r.Command == "initialize":
		return true
	}
	c.sendErrorFor(r.Seq, r.Command, "this server needs its token before "+r.Command+
		": add \"token\" (printed by `ndb dap --listen` at start) to the launch arguments; closing the connection")
	return false
}

// conn is one client's state. The worker goroutine (serve) owns it,
// except for what the read loop touches: wmu guards the writer, seq and
// terminated; runMu the session of the command that runs (onPause).
type conn struct {
	srv *Server

	wmu        sync.Mutex
	w          io.Writer
	seq        int
	terminated bool

	runMu   sync.Mutex
	running *debugger.Session // set while a command runs the program

	gate     *authGate // a TCP connection's token check (authorize); nil: none needed
	heldInit bool      // the initialized event waits for the token (onInitialize)

	args       LaunchArgs
	sess       *debugger.Session
	eng        engine.Engine
	fileLines  int                       // lines of the program file; later lines are the wrapper's
	pending    map[string][]pendingBreak // breakpoints set before launch, by the file's absolute path
	lineBreaks []lineBreak               // the program's line breakpoints, as the session holds them (syncBreaks)
	funcs      []funcBreak               // function breakpoints (funcbreak.go)
	nextBP     int                       // last breakpoint id
	exited     bool                      // the exited event of this run was sent
	predEval   map[string]predEvalResult // evaluations over predicted values (predeval.go)
	vars       map[int]varsRef
	raised     bool // exception filter "raised": continue stops where an exception is raised (real engine)
	uncaught   bool // exception filter "uncaught": the end by an uncaught exception is an exception stop
	configured bool // configurationDone came (before or after launch)
	started    bool // the first stop (or the run to the end) was reported
	done       bool
	streamed   bool // the program's output comes as it is written (a live run): not again at the end
	closed     bool // the session's backend was closed (terminate)
}

// pendingBreak is a breakpoint set before launch, applied by launch.
type pendingBreak struct {
	id   int
	line int
	cond string
	src  godap.Source
}

// lineBreak is a line breakpoint of the program with its condition.
type lineBreak struct {
	line int
	cond string
}

// varsRef says what a variablesReference shows: the locals of stack frame
// frame, or the return value of the current stop.
type varsRef struct {
	value      string // a container's repr: its children (frame 0)
	frame      int
	retval     bool
	prediction bool // the Prediction scope of a predicted stop: its confidence
}

// send writes m with the next seq (messages of both goroutines go out in
// seq order).
func (c *conn) send(m godap.Message) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.sendLocked(m)
}

func (c *conn) sendLocked(m godap.Message) {
	switch x := m.(type) {
	case godap.EventMessage:
		if c.terminated {
			return // no event follows terminated
		}
		c.seq++
		x.GetEvent().Seq = c.seq
	case godap.ResponseMessage:
		c.seq++
		x.GetResponse().Seq = c.seq
	}
	if err := godap.WriteProtocolMessage(c.w, m); err != nil {
		fmt.Fprintf(c.srv.log, "dap: write: %v\n", err)
	}
}

func (c *conn) isTerminated() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.terminated
}

// response and event leave Seq to send.
func (c *conn) response(req godap.RequestMessage) godap.Response {
	r := req.GetRequest()
	return godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"},
		Command: r.Command, RequestSeq: r.Seq, Success: true}
}

func (c *conn) event(name string) godap.Event {
	return godap.Event{ProtocolMessage: godap.ProtocolMessage{Type: "event"}, Event: name}
}

func (c *conn) sendErrorFor(reqSeq int, command, msg string) {
	c.send(&godap.ErrorResponse{
		Response: godap.Response{ProtocolMessage: godap.ProtocolMessage{Type: "response"},
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
	if c.heldInit && c.gate.open() {
		c.heldInit = false
		c.send(&godap.InitializedEvent{Event: c.event("initialized")})
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
	case *godap.SetExceptionBreakpointsRequest: // Required by VS Code's start-up sequence; filters raised, uncaught
		return c.onSetExceptionBreakpoints(r)
	case *godap.SetFunctionBreakpointsRequest: // Optional (supportsFunctionBreakpoints)
		return c.onSetFunctionBreakpoints(r)
	case *godap.SetVariableRequest: // Optional (supportsSetVariable): model engines' counterfactuals
		return c.onSetVariable(ctx, r)
	case *godap.ConfigurationDoneRequest: // Optional (supportsConfigurationDoneRequest)
		return c.onConfigurationDone(ctx, r)
	case *godap.ThreadsRequest: // Required (answered by the read loop; here for completeness)
		c.send(&godap.ThreadsResponse{Response: c.response(r), Body: godap.ThreadsResponseBody{
			Threads: []godap.Thread{{Id: threadID, Name: "main"}}}})
		return nil
	case *godap.RestartRequest: // Optional (supportsRestartRequest)
		return c.onRestart(ctx, r)
	case *godap.ExceptionInfoRequest: // Optional (supportsExceptionInfoRequest)
		return c.onExceptionInfo(r)
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
	eng, err := c.srv.reg.Get(a.Engine, a.Model)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	prog := engine.Program{Path: a.Program, Source: string(src), Call: a.Call}
	if strings.TrimSpace(a.Call) == "" {
		prog.Context = &engine.Context{Args: a.Args} // run as `python FILE ARGS`: its folder, __file__, argv
	} else if len(a.Args) > 0 {
		return errors.New("launch: args need a script (no call)")
	}
	b, err := eng.Open(ctx, prog)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	sess, err := debugger.NewSession(ctx, b)
	if err != nil {
		return fmt.Errorf("launch: %w", err)
	}
	c.args, c.eng, c.sess = a, eng, sess
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

// applyPending sets the breakpoints given before launch: the program's
// (a refusal, or any breakpoint with noDebug, becomes a breakpoint event
// that unverifies it) and other files' (unverified: ndb debugs one file).
func (c *conn) applyPending() {
	paths := make([]string, 0, len(c.pending))
	for p := range c.pending {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, b := range c.pending[p] {
			why := ""
			switch {
			case c.args.NoDebug:
				why = "noDebug: the program runs without stopping"
			case p != "" && !samePath(p, c.args.Program):
				why = "ndb debugs only " + c.args.Program
			default:
				why = c.addBreak(b.line, b.cond)
			}
			if why != "" {
				src := b.src
				c.send(&godap.BreakpointEvent{Event: c.event("breakpoint"), Body: godap.BreakpointEventBody{Reason: "changed",
					Breakpoint: godap.Breakpoint{Id: b.id, Line: b.line, Source: &src, Message: why}}})
			}
		}
	}
	c.pending = nil
}

// addBreak sets a line breakpoint of the program with its condition in
// the session (Session.AddBreak, as the terminal's `b LINE, COND`); it
// returns why it was refused ("" when set).
func (c *conn) addBreak(line int, cond string) string {
	if err := c.sess.AddBreak(debugger.BreakSpec{Line: line, Cond: cond}); err != nil {
		return err.Error()
	}
	c.lineBreaks = append(c.lineBreaks, lineBreak{line, cond})
	return ""
}

// maxBreakpoints bounds the breakpoints of one request: a program has
// fewer lines, and each costs a check and an answer (a megabyte of them
// made hundreds of megabytes of work).
const maxBreakpoints = 10000

func (c *conn) onSetBreakpoints(r *godap.SetBreakpointsRequest) error {
	src := r.Arguments.Source
	bps := r.Arguments.Breakpoints
	if n := max(len(bps), len(r.Arguments.Lines)); n > maxBreakpoints {
		return fmt.Errorf("setBreakpoints: %d breakpoints, over the limit of %d", n, maxBreakpoints)
	}
	if len(bps) == 0 {
		for _, l := range r.Arguments.Lines {
			bps = append(bps, godap.SourceBreakpoint{Line: l})
		}
	}
	out := make([]godap.Breakpoint, len(bps))
	for i, b := range bps {
		c.nextBP++
		out[i] = godap.Breakpoint{Id: c.nextBP, Line: b.Line, Verified: true, Source: &src}
	}
	refuse := func(i int, why string) { out[i].Verified, out[i].Message = false, why }
	switch {
	case c.sess == nil:
		// Before launch: kept per file until launch knows the program.
		key := src.Path
		if abs, err := filepath.Abs(key); err == nil && key != "" {
			key = filepath.Clean(abs)
		}
		if c.pending == nil {
			c.pending = map[string][]pendingBreak{}
		}
		var text []byte
		if key != "" {
			if real, err := c.srv.confine("source", key, MaxProgramBytes); err == nil { // files of the workspace only
				text, _ = os.ReadFile(real)
			}
		}
		list := make([]pendingBreak, 0, len(bps))
		for i, b := range bps {
			why := ""
			if _, err := parseCondition(b.Condition); err != nil {
				why = err.Error()
			} else if text != nil {
				why = debugger.CheckBreakLine(string(text), b.Line)
			}
			if why != "" {
				refuse(i, why)
				continue
			}
			list = append(list, pendingBreak{id: out[i].Id, line: b.Line, cond: b.Condition, src: src})
		}
		c.pending[key] = list
	case c.args.NoDebug:
		for i := range out {
			refuse(i, "noDebug: the program runs without stopping")
		}
	case src.Path != "" && !samePath(src.Path, c.args.Program):
		for i := range out {
			refuse(i, "ndb debugs only "+c.args.Program) // breakpoints elsewhere never hit
		}
	default:
		// The client's list replaces the file's: the session starts over
		// from the function breakpoints, then takes these.
		c.lineBreaks = nil
		c.syncBreaks()
		for i, b := range bps {
			if why := c.addBreak(b.Line, b.Condition); why != "" {
				refuse(i, why)
			}
		}
	}
	c.send(&godap.SetBreakpointsResponse{Response: c.response(r), Body: godap.SetBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// samePath reports whether a and b name one file (symbolic links resolved
// where they can be).
func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	if errA != nil || errB != nil {
		return false
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		a = r
	}
	if r, err := filepath.EvalSymlinks(b); err == nil {
		b = r
	}
	return filepath.Clean(a) == filepath.Clean(b)
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

func (c *conn) onSetExceptionBreakpoints(r *godap.SetExceptionBreakpointsRequest) error {
	ids := append([]string(nil), r.Arguments.Filters...)
	for _, o := range r.Arguments.FilterOptions {
		ids = append(ids, o.FilterId)
	}
	c.raised, c.uncaught = false, false
	out := make([]godap.Breakpoint, 0, len(ids))
	for _, id := range ids {
		b := godap.Breakpoint{Verified: true}
		switch id {
		case "raised":
			c.raised = true
			if c.sess != nil && engine.IsPredicted(c.sess) {
				b.Verified, b.Message = false, "a model engine predicts only the stops it is asked for: raised exceptions need the real engine"
			}
		case "uncaught":
			c.uncaught = true
		default:
			b.Verified, b.Message = false, fmt.Sprintf("no exception filter %q (ndb has raised and uncaught)", id)
		}
		out = append(out, b)
	}
	c.send(&godap.SetExceptionBreakpointsResponse{Response: c.response(r), Body: godap.SetExceptionBreakpointsResponseBody{Breakpoints: out}})
	return nil
}

// onSetVariable sets a local of the current frame: in the live program
// (the real engine) it runs NAME = VALUE there, as pdb's !NAME = VALUE; on
// a model engine it edits the stop (engine.SetLocal, as the console's set
// NAME = VALUE: the next prediction continues from the edit).
func (c *conn) onSetVariable(ctx context.Context, r *godap.SetVariableRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	v, ok := c.vars[r.Arguments.VariablesReference]
	if !ok || v.frame != 1 || v.retval || v.prediction {
		return errors.New("setVariable: only the current frame's locals can be set")
	}
	name, value := strings.TrimSpace(r.Arguments.Name), strings.TrimSpace(r.Arguments.Value)
	var val string
	if engine.IsPredicted(c.sess) {
		st, err := engine.SetLocal(c.sess, name, value)
		if err != nil {
			return err
		}
		val, _ = st.Locals.Get(name)
	} else {
		if !isName(name) || value == "" || strings.ContainsAny(value, "\r\n") {
			return fmt.Errorf("setVariable: want a name and a one-line value, got %q = %q", name, value)
		}
		if c.closed {
			return errors.New("setVariable: the session has ended")
		}
		res, err := c.sess.Eval(ctx, 0, name+" = "+value, tracer.EvalExec)
		switch {
		case errors.Is(err, debugger.ErrNotLive):
			return fmt.Errorf("setVariable: %w", err)
		case err != nil:
			return err
		case !res.OK:
			return errors.New(res.Text)
		}
		if val, ok = res.Locals.Get(name); !ok {
			val, _ = c.sess.Current().Locals.Get(name)
		}
	}
	nv := c.variable(name, val, "")
	c.send(&godap.SetVariableResponse{Response: c.response(r), Body: godap.SetVariableResponseBody{Value: val,
		VariablesReference: nv.VariablesReference, NamedVariables: nv.NamedVariables, IndexedVariables: nv.IndexedVariables}})
	return nil
}

// maxRaisedSteps bounds the steps of a continue with the raised filter.
const maxRaisedSteps = 100000

// cont continues (backward: reverse-continues) as the session's continue
// does: its breakpoints, conditions and function breakpoints are pdb's
// (Session.AddBreak), whatever the engine. With the raised filter (the
// real engine) it goes by steps instead, to stop at exceptions too.
func (c *conn) cont(ctx context.Context, backward bool) (debugger.Stop, error) {
	if c.raised && !backward && !engine.IsPredicted(c.sess) {
		return c.contRaised(ctx)
	}
	return c.sess.Do(ctx, debugger.Command{Action: debugger.Continue, Backward: backward})
}

// contRaised continues by steps into, stopping where an exception is
// raised (each frame it passes through is an exception event) or at a
// line where one of the session's breakpoints stops (breakAt).
func (c *conn) contRaised(ctx context.Context) (debugger.Stop, error) {
	for range maxRaisedSteps {
		st, err := c.sess.Do(ctx, debugger.Command{Action: debugger.StepInto})
		if err != nil || st.IsExit() || st.Event == "exception" || st.Interrupted != "" {
			return st, err
		}
		if st.Event == "line" && c.breakAt(st) {
			return st, nil
		}
	}
	return c.sess.Current(), fmt.Errorf("gave up after %d steps looking for a raised exception", maxRaisedSteps)
}

// breakAt says whether one of the session's breakpoints stops the program
// at st, a line event a step reached: a line breakpoint there, or a
// function breakpoint whose function st has just entered, each with its
// condition (one that cannot be evaluated stops, as pdb's).
func (c *conn) breakAt(st debugger.Stop) bool {
	h := c.sess.History()
	entered := len(h) >= 2 && h[len(h)-2].Stop.Event == "call" && h[len(h)-2].Stop.Function == st.Function
	for _, b := range c.sess.BreakSpecs() {
		if b.Func == "" && b.Line != st.Lineno || b.Func != "" && (b.Func != st.Function || !entered) {
			continue
		}
		cd, err := debugger.ParseCondition(b.Cond)
		if err != nil || cd == nil {
			return true
		}
		if ok, err := cd.Eval(st.Locals); ok || err != nil {
			return true
		}
	}
	return false
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
	predicted := engine.IsPredicted(c.sess)
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

// report sends the events for a stop. At the end of the program it sends
// the program's output and "program ended: ..." on the console, then
// stays stopped at the end (reason "exit") so that reverse commands still
// work; with noDebug or terminateAtEnd it sends exited and terminated
// instead.
func (c *conn) report(st debugger.Stop, reason string) {
	if st.Interrupted != "" && !st.IsExit() {
		// pdb: "Program interrupted. (Use 'cont' to resume)."
		why := "Program interrupted"
		if st.Interrupted == "timeout" {
			why = "Program interrupted by the time limit (it ran that long without reaching a stop)"
		}
		c.output("console", why+". (Use continue to resume.)\n")
		c.stopped(st, "pause", "")
		return
	}
	if st.IsExit() && st.Exit != debugger.ExitInvEntry {
		if out, ok := c.sess.Output(); ok && out != "" && !c.streamed {
			c.output("stdout", out)
		}
		if pm, ok := c.sess.PostMortem(); ok && pm.Traceback != "" {
			c.output("stderr", pm.Traceback)
		}
		msg := "program ended: " + st.Exit
		if st.Arg != "" {
			msg += ": " + st.Arg
		}
		c.output("console", msg+"\n")
		if !c.exited {
			// The program's end, once per run: it stays the end however
			// often the client steps back to it.
			c.exited = true
			code := 0
			if st.Exit != "normal" {
				code = 1 // Python's status for an uncaught exception
			}
			c.send(&godap.ExitedEvent{Event: c.event("exited"), Body: godap.ExitedEventBody{ExitCode: code}})
		}
		if c.args.NoDebug || c.args.TerminateAtEnd || len(c.sess.History()) == 1 {
			// (A run that ended before its first state has nothing to
			// step back into.)
			c.terminate()
			return
		}
		if st.Exit == "error" && c.uncaught {
			// Post-mortem: the stack is the traceback's frames (when the
			// run has them), where evaluate works on a live run;
			// stepBack shows where it was raised.
			c.stopped(st, "exception", st.Arg)
			return
		}
		c.stopped(st, "exit", "")
		return
	}
	if st.IsExit() {
		reason = "entry"
	} else if reason == "breakpoint" && st.Event != "line" {
		reason = "step" // a continue stops at a line only at a breakpoint (a function's: its first line)
	}
	if st.Event == "exception" {
		reason = "exception"
	}
	c.stopped(st, reason, "")
}

func (c *conn) stopped(st debugger.Stop, reason, text string) {
	c.vars = map[int]varsRef{}
	desc := describe(st, reason)
	if p := predictedText(st); p != "" {
		desc += ", " + p
	}
	c.send(&godap.StoppedEvent{Event: c.event("stopped"), Body: godap.StoppedEventBody{
		Reason: reason, Description: desc, ThreadId: threadID, AllThreadsStopped: true, Text: text}})
}

// describe is a stop as a person reads it in the client's call stack
// pane: "Paused on breakpoint", "Returned from f", "Program ended".
func describe(st debugger.Stop, reason string) string {
	switch {
	case reason == "pause" && st.Interrupted == "timeout":
		return "Paused: the time limit interrupted the program"
	case reason == "pause":
		return "Paused"
	case st.IsExit() && st.Exit == debugger.ExitInvEntry:
		return "Before the start of the program"
	case st.IsExit() && st.Exit == "normal":
		return "Program ended"
	case st.IsExit() && st.Exit == "error" && reason == "exception":
		return "Paused on uncaught exception"
	case st.IsExit() && st.Exit == "error":
		return "Program ended with an uncaught exception"
	case st.IsExit():
		return "Program ended (" + st.Exit + ")"
	case st.Event == "exception":
		return "Paused on exception in " + st.Function
	case reason == "breakpoint":
		return "Paused on breakpoint"
	case reason == "entry":
		return "Paused on entry"
	case st.Event == "return":
		return "Returned from " + st.Function
	case st.Event == "call":
		return "Called " + st.Function
	}
	return "Paused on step"
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

func (c *conn) output(category, text string) {
	c.send(&godap.OutputEvent{Event: c.event("output"), Body: godap.OutputEventBody{Category: category, Output: text}})
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

// frames is the stack innermost first, as DAP lists it. At an exit it is
// one frame that says so, at the last line the program ran (a client
// shows nothing useful for a stopped thread without frames).
func (c *conn) frames() []debugger.Stop {
	if c.sess == nil {
		return nil
	}
	if pm, ok := c.postMortem(); ok {
		out := make([]debugger.Stop, len(pm.Frames))
		for i, f := range pm.Frames {
			out[len(out)-1-i] = f
		}
		return out
	}
	if cur := c.sess.Current(); cur.IsExit() {
		line := 1
		if last, ok := c.sess.LastRun(); ok && last.Lineno > 0 {
			line = last.Lineno
		}
		pseudo := cur
		pseudo.Lineno = line
		return []debugger.Stop{pseudo}
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

// postMortem is the post-mortem of an uncaught exception's exit when the
// session stops there (the uncaught filter) and the run has its frames.
func (c *conn) postMortem() (debugger.PostMortem, bool) {
	if !c.uncaught || c.args.NoDebug || c.args.TerminateAtEnd {
		return debugger.PostMortem{}, false
	}
	pm, ok := c.sess.PostMortem()
	return pm, ok && len(pm.Frames) > 0
}

func (c *conn) source(line int) *godap.Source {
	if c.args.Call != "" && line > c.fileLines {
		return &godap.Source{Name: "<ndb main>", SourceReference: wrapperRef, PresentationHint: "deemphasize"}
	}
	return &godap.Source{Name: filepath.Base(c.args.Program), Path: c.args.Program}
}

func (c *conn) onStackTrace(r *godap.StackTraceRequest) error {
	fs := c.frames()
	_, pm := c.postMortem()
	out := make([]godap.StackFrame, 0, len(fs))
	for i, f := range fs {
		name := f.Function
		switch {
		case pm: // the traceback's frames, each where the exception passed
		case f.Event == debugger.EventExit:
			name = "<" + strings.ToLower(describe(f, "")) + ">"
		case f.Event == "call":
			name += " --Call--"
		case f.Event == "return":
			name += " --Return--"
		case f.Event == "exception":
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
	if len(c.vars) >= maxRefs {
		c.vars = map[int]varsRef{} // a client that never moves: start over
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
	if id == 1 && fs[0].Predicted {
		ref3 := len(c.vars) + 1
		c.vars[ref3] = varsRef{frame: id, prediction: true}
		scopes = append(scopes, godap.Scope{Name: "Prediction", VariablesReference: ref3, NamedVariables: len(predictionVars(fs[0]))})
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
	var out []godap.Variable
	switch {
	case v.frame == 0: // a container's elements
		kids, _ := children(v.value)
		for _, k := range kids {
			out = append(out, c.variable(k.name, k.value, ""))
		}
	case v.prediction:
		out = predictionVars(fs[v.frame-1])
	case v.retval:
		f := fs[v.frame-1]
		name := "__return__"
		if f.Event == "exception" {
			name = "__exception__"
		}
		out = append(out, c.variable(name, f.Arg, name))
	default:
		for _, l := range fs[v.frame-1].Locals {
			out = append(out, c.variable(l.Name, l.Value, l.Name))
		}
	}
	if start := r.Arguments.Start; start > 0 || r.Arguments.Count > 0 {
		start = min(max(start, 0), len(out))
		out = out[start:]
		if n := r.Arguments.Count; n > 0 && n < len(out) {
			out = out[:n]
		}
	}
	if out == nil {
		out = []godap.Variable{}
	}
	c.send(&godap.VariablesResponse{Response: c.response(r), Body: godap.VariablesResponseBody{Variables: out}})
	return nil
}

// maxRefs bounds the variablesReferences of one stop.
const maxRefs = 1 << 16

// variable is a variable whose value, when it is a container, expands:
// its variablesReference (> 0) lists the elements read from its repr.
func (c *conn) variable(name, value, evalName string) godap.Variable {
	v := godap.Variable{Name: name, Value: value, EvaluateName: evalName}
	if kids, ok := children(value); ok && len(c.vars) < maxRefs {
		ref := len(c.vars) + 1
		c.vars[ref] = varsRef{value: value}
		v.VariablesReference = ref
		if isIndexed(kids) {
			v.IndexedVariables = len(kids)
		} else {
			v.NamedVariables = len(kids)
		}
	}
	return v
}

// isIndexed reports whether children are numbered 0, 1, ... (a list, a
// tuple, a set) rather than named.
func isIndexed(kids []child) bool {
	for i, k := range kids {
		if k.name != strconv.Itoa(i) && k.name != "..." {
			return false
		}
	}
	return true
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

// onEvaluate evaluates an expression in a frame of the live program
// (Session.Eval, pdb's p; in the debug console, context "repl", the line
// runs as pdb runs a line that is not a command, so statements work too). Where no live
// program waits (a model engine, a stop in the recorded past, the end) it
// looks a name up in the frame's recorded locals. In the debug console it
// also takes the neural session commands: back, resample, verify and set
// NAME = VALUE.
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
	notLive := debugger.ErrNotLive
	if !c.closed {
		res, mode, err := c.eval(ctx, id-1, expr, r.Arguments.Context == "repl")
		switch {
		case err == nil && !res.OK:
			return errors.New(res.Text) // pdb's line: NameError: name 'x' is not defined
		case err == nil:
			text := res.Text
			if mode == tracer.EvalExec {
				text = strings.TrimSuffix(text, "\n") // what the statement printed
			}
			v := c.variable("", text, "")
			c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: text,
				VariablesReference: v.VariablesReference, NamedVariables: v.NamedVariables, IndexedVariables: v.IndexedVariables}})
			if mode == tracer.EvalExec {
				// A statement may have changed the frame's variables.
				c.send(&godap.InvalidatedEvent{Event: c.event("invalidated"), Body: godap.InvalidatedEventBody{
					Areas: []godap.InvalidatedAreas{"variables"}, ThreadId: threadID}})
			}
			return nil
		case !errors.Is(err, debugger.ErrNotLive):
			return err
		}
	}
	v, ok := f.Locals.Get(expr)
	if !ok {
		if !engine.IsPredicted(c.sess) {
			return fmt.Errorf("%q is not a local name of this frame, and %v", expr, notLive)
		}
		var err error
		if v, err = c.evalPredicted(ctx, f, expr); err != nil {
			return err
		}
	}
	nv := c.variable("", v, "")
	c.send(&godap.EvaluateResponse{Response: c.response(r), Body: godap.EvaluateResponseBody{Result: v,
		VariablesReference: nv.VariablesReference, NamedVariables: nv.NamedVariables, IndexedVariables: nv.IndexedVariables}})
	return nil
}

// eval evaluates src in the frame level frames below the current stop's:
// as an expression (pdb's p), or, with statements (the debug console), as
// pdb runs a line that is not a command: compiled like a line typed at the
// Python prompt, so an expression shows its repr and a statement runs.
// mode is how it ran.
func (c *conn) eval(ctx context.Context, level int, src string, statements bool) (tracer.EvalResult, string, error) {
	mode := tracer.EvalExpr
	if statements {
		mode = tracer.EvalExec
	}
	res, err := c.sess.Eval(ctx, level, src, mode)
	return res, mode, err
}

// onExceptionInfo describes the exception the session stops at: the
// uncaught one at a post-mortem (with Python's traceback), or the one an
// exception event passes.
func (c *conn) onExceptionInfo(r *godap.ExceptionInfoRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	var b godap.ExceptionInfoResponseBody
	cur := c.sess.Current()
	if pm, ok := c.sess.PostMortem(); ok {
		tb := strings.TrimRight(pm.Traceback, "\n")
		last := tb[strings.LastIndexByte(tb, '\n')+1:] // KeyError: 'x'
		if last == "" {
			last = cur.Arg
		}
		typ, _, _ := strings.Cut(last, ":")
		b = godap.ExceptionInfoResponseBody{ExceptionId: typ, Description: last, BreakMode: "unhandled",
			Details: &godap.ExceptionDetails{Message: last, TypeName: typ, StackTrace: pm.Traceback}}
	} else if cur.Event == "exception" || cur.IsExit() && cur.Exit == "error" {
		typ, _, _ := strings.Cut(cur.Arg, "(") // the exception's repr: KeyError('x')
		mode := godap.ExceptionBreakMode("always")
		if cur.IsExit() {
			mode = "unhandled"
		}
		b = godap.ExceptionInfoResponseBody{ExceptionId: typ, Description: cur.Arg, BreakMode: mode,
			Details: &godap.ExceptionDetails{Message: cur.Arg, TypeName: typ}}
	} else {
		return errors.New("not stopped at an exception")
	}
	c.send(&godap.ExceptionInfoResponse{Response: c.response(r), Body: b})
	return nil
}

// neuralCommand runs a console command; ok is false when expr is none.
func (c *conn) neuralCommand(ctx context.Context, expr string) (result string, moved, ok bool, err error) {
	res, ok, err := engine.RunCommand(ctx, c.sess, c.srv.reg.Real(), expr)
	return res.Message, res.Moved, ok, err
}

// predictedText is how a predicted stop is described: "predicted
// (confidence 0.87, min 0.41)" with the mean and the least probability of
// the tokens the model wrote for it, "predicted" without figures (a
// model's start, read from the source); "" for the real engine's stops.
func predictedText(st debugger.Stop) string {
	switch {
	case !st.Predicted:
		return ""
	case st.Confidence == nil:
		return "predicted"
	}
	mean, min := st.Confidence.Figures()
	return fmt.Sprintf("predicted (confidence %s, min %s)", mean, min)
}

// predictionVars are the variables of a predicted stop's Prediction scope.
func predictionVars(st debugger.Stop) []godap.Variable {
	out := []godap.Variable{{Name: "predicted", Value: "True"}}
	if c := st.Confidence; c != nil {
		out = append(out,
			godap.Variable{Name: "confidence", Value: fmt.Sprintf("%.4g", c.Mean)},
			godap.Variable{Name: "confidence_min", Value: fmt.Sprintf("%.4g", c.Min)},
			godap.Variable{Name: "tokens", Value: fmt.Sprint(c.Tokens)})
	}
	return out
}
