// Package mcp is ndb's Model Context Protocol server (`ndb mcp`): a few
// coarse tools with compact answers, so that an agent can debug Python
// programs on any engine and ask the neural debugger for a function's
// output or inputs. It is a client of debugger.Session, like the terminal
// and the DAP server.
//
// Goroutine model: the SDK may run tool calls concurrently. The session
// table has its own mutex; each session has one more, so calls on one
// session run one at a time and calls on different sessions in parallel.
// A real-engine session is live (ndb mcp opens them so): its program waits
// at the stop, evaluate runs there, and the session holds a process until
// it is closed (debug_end, idle, evicted, or the server closes).
//
// The session table belongs to the Server, not to an MCP connection: over
// Streamable HTTP a one-shot client (a new MCP session per call) finds its
// debugging sessions again by id.
package mcp

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/debugger"
	"ndb/internal/termsafe"
)

// DefaultMaxSessions bounds the open sessions; the least recently used one
// is closed to make room (agents rarely say goodbye).
const DefaultMaxSessions = 256

// DefaultMaxLive bounds the live sessions (each holds a Python process);
// the least recently used live one is closed to make room.
const DefaultMaxLive = 64

// DefaultIdleTimeout closes a session no call has used for this long.
const DefaultIdleTimeout = 30 * time.Minute

// maxOutput bounds the program output one tool answer carries.
const maxOutput = 64 << 10

// Server holds the debugging sessions of its MCP connections.
type Server struct {
	reg           debugger.Engines
	defaultEngine string
	maxSessions   int
	maxLive       int
	idle          time.Duration
	ws            Workspace

	mu       sync.Mutex
	sessions map[string]*session
	next     int
	sweeping bool          // the idle sweeper runs
	stop     chan struct{} // closed by Close: the sweeper ends
}

type session struct {
	mu       sync.Mutex
	s        *debugger.Session
	id       string
	engine   string
	program  string // the file's path, "" for source text
	call     string
	used     time.Time // guarded by Server.mu
	live     bool      // the backend streams output: a live run, holding a process
	closed   bool
	out      strings.Builder // output of the command running, up to maxOutput
	outMu    sync.Mutex      // out: the tracer may write it from its reader
	outExtra int             // bytes past maxOutput
}

// write collects the program's output during a command (bounded).
func (ss *session) write(s string) {
	ss.outMu.Lock()
	defer ss.outMu.Unlock()
	if room := maxOutput - ss.out.Len(); room < len(s) {
		ss.outExtra += len(s) - max(room, 0)
		s = s[:max(room, 0)]
	}
	ss.out.WriteString(s)
}

// takeOutput returns the output collected since the last call.
func (ss *session) takeOutput() string {
	ss.outMu.Lock()
	defer ss.outMu.Unlock()
	s := ss.out.String()
	if ss.outExtra > 0 {
		s += fmt.Sprintf("\n... (%d more bytes of output)\n", ss.outExtra)
	}
	ss.out.Reset()
	ss.outExtra = 0
	return s
}

// close ends the session's program (once): a command running on it is
// interrupted, then its call ends first.
func (ss *session) close() {
	ss.s.Interrupt()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.closed {
		ss.closed = true
		ss.s.Close()
	}
}

// NewServer returns a server whose sessions come from reg (the engine
// registry); defaultEngine is used when a tool names none ("" = the
// registry's Default).
// Program files are read from the current directory (DefaultWorkspace)
// until SetWorkspace says otherwise.
func NewServer(reg debugger.Engines, defaultEngine string) *Server {
	if defaultEngine == "" {
		defaultEngine = reg.Default()
	}
	return &Server{reg: reg, defaultEngine: defaultEngine, maxSessions: DefaultMaxSessions, maxLive: DefaultMaxLive,
		idle: DefaultIdleTimeout, ws: DefaultWorkspace(), sessions: map[string]*session{}, stop: make(chan struct{})}
}

// SetMaxSessions changes the session bound (n >= 1).
func (s *Server) SetMaxSessions(n int) { s.maxSessions = max(n, 1) }

// SetMaxLive changes the bound of live sessions (n >= 1).
func (s *Server) SetMaxLive(n int) { s.maxLive = max(n, 1) }

// SetIdleTimeout changes how long an unused session stays open (0: until
// evicted or the server closes).
func (s *Server) SetIdleTimeout(d time.Duration) { s.idle = max(d, 0) }

// SetWorkspace sets where program files may be read from.
func (s *Server) SetWorkspace(w Workspace) { s.ws = w }

// Run serves the MCP protocol on t (e.g. a LineTransport on stdio); when
// the connection ends, it closes the sessions.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	defer s.Close()
	return s.MCPServer().Run(ctx, t)
}

// Close closes every session (their live programs end) and stops the idle
// sweeper; the server stays usable (a new session starts it again).
func (s *Server) Close() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*session{}
	if s.sweeping {
		close(s.stop)
		s.stop, s.sweeping = make(chan struct{}), false
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Go(ss.close)
	}
	wg.Wait()
}

// add registers a new session, evicting the least recently used ones to
// stay within the bounds, and returns its id.
func (s *Server) add(ss *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	ss.id = fmt.Sprintf("s%d", s.next)
	ss.used = time.Now()
	for len(s.sessions) >= s.maxSessions {
		s.evictLocked(false)
	}
	for ss.live && s.liveLocked() >= s.maxLive {
		s.evictLocked(true)
	}
	s.sessions[ss.id] = ss
	if s.idle > 0 && !s.sweeping {
		s.sweeping = true
		go s.sweep(s.stop, s.idle)
	}
	return ss.id
}

func (s *Server) liveLocked() int {
	n := 0
	for _, ss := range s.sessions {
		if ss.live {
			n++
		}
	}
	return n
}

// evictLocked closes the least recently used session (live: of the live
// ones); a call running on it is interrupted and finishes first.
func (s *Server) evictLocked(live bool) {
	oldest := ""
	for id, ss := range s.sessions {
		if (!live || ss.live) && (oldest == "" || ss.used.Before(s.sessions[oldest].used)) {
			oldest = id
		}
	}
	if ss, ok := s.sessions[oldest]; ok {
		delete(s.sessions, oldest)
		go ss.close()
	}
}

// sweep closes the sessions idle for longer than idle, until stop.
func (s *Server) sweep(stop chan struct{}, idle time.Duration) {
	t := time.NewTicker(min(max(idle/4, 10*time.Millisecond), 30*time.Second))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			s.closeIdle(now.Add(-idle))
		}
	}
}

// closeIdle closes the sessions last used before cutoff whose call (if
// any) has ended.
func (s *Server) closeIdle(cutoff time.Time) {
	s.mu.Lock()
	var old []*session
	for id, ss := range s.sessions {
		if ss.used.Before(cutoff) && ss.mu.TryLock() {
			ss.mu.Unlock() // no call on it now; a later get finds it gone
			delete(s.sessions, id)
			old = append(old, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range old {
		ss.close()
	}
}

// get returns a locked session; the caller releases it with s.release.
func (s *Server) get(id string) (*session, error) {
	s.mu.Lock()
	ss, ok := s.sessions[strings.TrimSpace(id)]
	if ok {
		ss.used = time.Now()
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no session %q (debug_sessions lists the open ones; start one with debug_start)", id)
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, fmt.Errorf("session %q was closed", id)
	}
	return ss, nil
}

// release unlocks ss after a call, which counts as a use from its end.
func (s *Server) release(ss *session) {
	s.mu.Lock()
	ss.used = time.Now()
	s.mu.Unlock()
	ss.mu.Unlock()
}

// remove takes a session out of the table and closes it.
func (s *Server) remove(id string) error {
	s.mu.Lock()
	ss, ok := s.sessions[strings.TrimSpace(id)]
	delete(s.sessions, strings.TrimSpace(id))
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no session %q (debug_sessions lists the open ones)", id)
	}
	ss.close()
	return nil
}

// runCtx is the context a command on ss runs under: a live run is not
// killed when the tool call is cancelled but interrupted (it stops at the
// program's next event); stop releases the watch.
func (ss *session) runCtx(ctx context.Context) (run context.Context, stop func() bool) {
	if !ss.live {
		return ctx, func() bool { return true }
	}
	return context.WithoutCancel(ctx), context.AfterFunc(ctx, ss.s.Interrupt)
}

// Tool names: exactly these.
const (
	ToolStart         = "debug_start"
	ToolStep          = "debug_step"
	ToolBreakpoint    = "debug_breakpoint"
	ToolContinue      = "debug_continue"
	ToolContext       = "debug_context"
	ToolSource        = "debug_source"
	ToolRestart       = "debug_restart"
	ToolEnd           = "debug_end"
	ToolSessions      = "debug_sessions"
	ToolPredictOutput = "predict_output"
	ToolPredictInput  = "predict_input"
	ToolEvaluate      = "evaluate"
)

// Instructions are the server's instructions to agents (sent at initialize).
const Instructions = `ndb debugs Python programs, as pdb does, on a real run (engine real: a kernel sandbox) or on a neural model's prediction (engine model; answers marked [predicted]).
Typical use: debug_start with program (a file path inside the workspace, or the source text itself), breakpoints ([{"line": 12}], or {"function": "f"}, with "condition" or "temporary") and it runs to the first breakpoint and answers with the location, the call stack and the variables in one call. Then debug_step (into, over, out; back_into, back_over, back_call step backwards), debug_continue (reverse: true goes back to the previous breakpoint), evaluate (Python at the stop, as pdb's p and !), debug_context, debug_source (the lines around a stop), debug_restart, and debug_end when done (sessions idle for a while are closed; debug_sessions lists them).
predict_output and predict_input ask the model for a call's return value or arguments without running anything.
Program files must be inside the workspace roots (the client's MCP roots, or ndb mcp --root); their size is capped.`

// MCPServer builds the SDK server with ndb's tools.
func (s *Server) MCPServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "ndb", Title: "ndb neural debugger for Python", Version: "0.2"},
		&sdk.ServerOptions{Instructions: Instructions})
	f := false
	moves := func() *sdk.ToolAnnotations { return &sdk.ToolAnnotations{DestructiveHint: &f, OpenWorldHint: &f} }
	reads := func() *sdk.ToolAnnotations {
		return &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
	}
	engines := s.reg.Names()
	stepModes := debugger.MoveModes()

	add := func(t *sdk.Tool, a *sdk.ToolAnnotations) *sdk.Tool { t.Annotations = a; return t }
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolStart, Title: "Start debugging",
		Description: "Start debugging a Python program. program: a file path (inside the workspace roots), or Python source text (with line breaks). " +
			"engine: real (runs it in a sandbox), model (predicts every state), openai, cwm. call: debug one call such as f(1, 'a'). " +
			"args and stdin: the script's sys.argv[1:] and standard input (a file program without call). " +
			"breakpoints: set before it runs; then, unless stop_on_entry is true, it runs to the first one. " +
			"Returns the session id and the stop: location, stack, variables, and what the program printed meanwhile.",
		InputSchema:  schemaFor[StartIn](map[string][]string{"engine": engines}),
		OutputSchema: schemaFor[Stop](nil)}, moves()), guard(s.start))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolStep, Title: "Step",
		Description:  "Step a session. mode: into, over, out (forwards, as pdb's s, n, r) or back_into, back_over, back_call (backwards; back_call goes to the current function's call, showing its arguments). Returns the new stop.",
		InputSchema:  schemaFor[StepIn](map[string][]string{"mode": stepModes}),
		OutputSchema: schemaFor[Stop](nil)}, moves()), guard(s.step))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolContinue, Title: "Continue",
		Description:  "Continue to the next breakpoint, or to the end of the program; to_line: run to that line (a temporary breakpoint); reverse: true goes back to the latest earlier breakpoint (or the start). Returns the new stop with its call stack.",
		InputSchema:  schemaFor[ContinueIn](nil),
		OutputSchema: schemaFor[Stop](nil)}, moves()), guard(s.cont))
	bpa := moves()
	bpa.IdempotentHint = true
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolBreakpoint, Title: "Breakpoints",
		Description: "Set a breakpoint (as pdb's b and tbreak): at a line, or at a function's first line (function: its name; real engine); condition: a Python condition on the frame's variables; temporary: cleared when it stops the program. clear: true removes the breakpoints at line or function (with neither, all of them). " +
			"With neither line nor function, lists them. Returns the breakpoints.",
		InputSchema:  schemaFor[BreakpointIn](nil),
		OutputSchema: schemaFor[Breakpoints](nil)}, bpa), guard(s.breakpoint))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolContext, Title: "Where the session is",
		Description:  "Where a session is: location, source line, call stack (outermost first) and local variables, in one answer.",
		InputSchema:  schemaFor[SessionIn](nil),
		OutputSchema: schemaFor[Context](nil)}, reads()), guard(s.context))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolSource, Title: "Source around a line",
		Description:  "The program's source around a line (default: the current stop's), numbered, with the current line marked -> and breakpoints B. context: lines before and after (default 5).",
		InputSchema:  schemaFor[SourceIn](nil),
		OutputSchema: schemaFor[SourceView](nil)}, reads()), guard(s.source))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolRestart, Title: "Restart",
		Description:  "Run the session's program again from the start (as pdb's restart), keeping its breakpoints; unless stop_on_entry is true, it runs to the first breakpoint when there are any. Returns the stop.",
		InputSchema:  schemaFor[RestartIn](nil),
		OutputSchema: schemaFor[Stop](nil)}, moves()), guard(s.restart))
	end := &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: &f}
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolEnd, Title: "End a session",
		Description:  "End a debugging session: its program stops and its id is forgotten.",
		InputSchema:  schemaFor[SessionIn](nil),
		OutputSchema: schemaFor[Ended](nil)}, end), guard(s.end))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolSessions, Title: "List sessions",
		Description:  "List the open debugging sessions: id, engine, program, where each is, and how long it has been idle.",
		InputSchema:  schemaFor[NoArgs](nil),
		OutputSchema: schemaFor[SessionList](nil)}, reads()), guard(s.list))
	ev := moves()
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolEvaluate, Title: "Evaluate",
		Description: "Evaluate Python in a session's program where it is stopped (real engine: the live program; as pdb's p, pp and !). " +
			"code: an expression or a statement. mode: auto (default: as pdb runs a typed line: an expression shows its repr, a statement runs and may change variables), expr, pretty, exec. " +
			"level: 0 the current frame (default), 1 its caller, ... At an uncaught exception's end: the traceback's frames, 0 where it was raised. " +
			"On a model engine an expression is evaluated over the stop's predicted values (Python literals; never a statement). " +
			"Where no live program waits (a stop stepped back to, the end) only a local name can be looked up.",
		InputSchema:  schemaFor[EvaluateIn](map[string][]string{"mode": {"auto", "expr", "pretty", "exec"}}),
		OutputSchema: schemaFor[Evaluation](nil)}, ev), guard(s.evaluate))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolPredictOutput, Title: "Predict a call's output",
		Description:  "Predict the return value of a call (e.g. f('abc', 2)) on Python code without running it (engine model by default; real runs it in the sandbox).",
		InputSchema:  schemaFor[PredictOutputIn](map[string][]string{"engine": engines}),
		OutputSchema: schemaFor[Prediction](nil)}, reads()), guard(s.predictOutput))
	sdk.AddTool(srv, add(&sdk.Tool{Name: ToolPredictInput, Title: "Predict a call's arguments",
		Description:  "Predict arguments a function of the code was called with, given the value it returned (a Python repr). Engine model or openai.",
		InputSchema:  schemaFor[PredictInputIn](map[string][]string{"engine": s.reg.InverseNames()}),
		OutputSchema: schemaFor[Prediction](nil)}, reads()), guard(s.predictInput))
	return srv
}

// callerKey carries the calling MCP session (for its roots).
type callerKey struct{}

func caller(ctx context.Context) *sdk.ServerSession {
	cs, _ := ctx.Value(callerKey{}).(*sdk.ServerSession)
	return cs
}

// guard turns a panic inside a tool into a tool error.
func guard[In, Out any](h func(context.Context, In) (Out, string, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(os.Stderr, "ndb mcp: panic: %v\n%s", p, debug.Stack())
				res, err = nil, fmt.Errorf("internal error: %v", p)
			}
		}()
		if req != nil {
			ctx = context.WithValue(ctx, callerKey{}, req.Session)
		}
		out, text, err := h(ctx, in)
		if err != nil {
			return nil, out, err
		}
		// The text is for reading: control characters a program put in its
		// values or output are escaped there (the structured answer keeps them).
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: termsafe.Text(text)}}}, out, nil
	}
}
