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
//
// Files by responsibility: server.go (the connection, its goroutines and
// the dispatch of requests), launch.go (the session's life), breakpoints.go
// and funcbreak.go, stepping.go (commands that move the program, pause),
// events.go (stopped, exited, terminated, output), variables.go (stack,
// scopes, variables, setVariable), evaluate.go (evaluate, exceptionInfo),
// values.go (a repr's children), listen.go and workspace.go (TCP and unix
// listeners, the token, the workspace roots).
package dap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// threadID is the only thread: a traced or predicted program is one thread.
const threadID = 1

// wrapperRef is the sourceReference of the `def main()` wrapper that a
// --call program's source gains (its lines are past the file's end).
const wrapperRef = 1

// Server answers DAP clients.
type Server struct {
	reg           debugger.Engines
	log           io.Writer
	defaultEngine string
	token         string        // TCP connections' token (listen.go)
	roots         []string      // workspace roots (workspace.go); none: no confinement
	authTimeout   time.Duration // a TCP connection's time to present the token (listen.go)
}

// SetDefaultEngine names the engine of launches that name none ("" =
// the registry's Default).
func (s *Server) SetDefaultEngine(name string) { s.defaultEngine = name }

// NewServer returns a server whose sessions come from reg (the engine
// registry). log receives one line per failed request (nil: none).
func NewServer(reg debugger.Engines, log io.Writer) *Server {
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
	fileLines  int                       // lines of the program file; later lines are the wrapper's
	pending    map[string][]pendingBreak // breakpoints set before launch, by the file's absolute path
	lineBreaks []lineBreak               // the program's line breakpoints, as the session holds them (syncBreaks)
	funcs      []funcBreak               // function breakpoints (funcbreak.go)
	nextBP     int                       // last breakpoint id
	exited     bool                      // the exited event of this run was sent
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
