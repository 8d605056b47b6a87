// Package mcp is ndb's Model Context Protocol server (`ndb mcp`): a few
// coarse tools with compact answers, so that an agent can debug Python
// programs on any engine and ask the neural debugger for a function's
// output or inputs. It is a client of debugger.Session, like the terminal
// and the DAP server.
//
// Goroutine model: the SDK may run tool calls concurrently. The session
// table has its own mutex; each session has one more, so calls on one
// session run one at a time and calls on different sessions in parallel.
// A real-engine session is live (engine.Options.Live): its program waits
// at the stop, evaluate runs there, and the session holds a process until
// it is closed (evicted, or Run returns).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/debugger"
	"ndb/engine"
	"ndb/tracer"
)

// DefaultMaxSessions bounds the open sessions; the least recently used one
// is closed to make room (agents rarely say goodbye).
const DefaultMaxSessions = 256

// DefaultMaxLive bounds the live sessions (each holds a Python process);
// the least recently used live one is closed to make room.
const DefaultMaxLive = 64

// maxOutput bounds the program output one tool answer carries.
const maxOutput = 64 << 10

// Server holds the debugging sessions of one MCP connection (or several).
type Server struct {
	reg           *engine.Registry
	defaultEngine string
	maxSessions   int
	maxLive       int

	mu       sync.Mutex
	sessions map[string]*session
	next     int
}

type session struct {
	mu       sync.Mutex
	s        *debugger.Session
	engine   string
	program  string
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

// close ends the session's program (once), after a call on it ends.
func (ss *session) close() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.closed {
		ss.closed = true
		ss.s.Close()
	}
}

// NewServer returns a server whose sessions get engines from reg;
// defaultEngine is used when debug_start names none ("" = engine.Default).
func NewServer(reg *engine.Registry, defaultEngine string) *Server {
	if defaultEngine == "" {
		defaultEngine = engine.Default
	}
	return &Server{reg: reg, defaultEngine: defaultEngine, maxSessions: DefaultMaxSessions, maxLive: DefaultMaxLive,
		sessions: map[string]*session{}}
}

// SetMaxSessions changes the session bound (n >= 1).
func (s *Server) SetMaxSessions(n int) { s.maxSessions = max(n, 1) }

// SetMaxLive changes the bound of live sessions (n >= 1).
func (s *Server) SetMaxLive(n int) { s.maxLive = max(n, 1) }

// Run serves the MCP protocol on t (e.g. &sdk.StdioTransport{}); when the
// connection ends, it closes the sessions.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	defer s.Close()
	return s.MCPServer().Run(ctx, t)
}

// Close closes every session (their live programs end).
func (s *Server) Close() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, ss := range all {
		ss.close()
	}
}

// Tool names: exactly these.
const (
	ToolStart         = "debug_start"
	ToolStep          = "debug_step"
	ToolBreakpoint    = "debug_breakpoint"
	ToolContinue      = "debug_continue"
	ToolContext       = "debug_context"
	ToolPredictOutput = "predict_output"
	ToolPredictInput  = "predict_input"
	ToolEvaluate      = "evaluate"
)

// MCPServer builds the SDK server with ndb's tools.
func (s *Server) MCPServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "ndb", Title: "ndb neural debugger for Python", Version: "0.1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: ToolStart, Description: "Start debugging a Python program. program: a file path, or Python source text. " +
		"engine: real (runs it), model (predicts every state; default), openai, cwm. call: debug one call such as f(1, 'a'). " +
		"Returns the session id and the first stop. Moving tools also return what the program printed meanwhile."}, guard(s.start))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolStep, Description: "Step a session. mode: into, over, out (forwards, as pdb's s, n, r) or back_into, back_over, back_call (backwards; back_call goes to the current function's call, showing its arguments). Returns the new stop."}, guard(s.step))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolBreakpoint, Description: "Set a breakpoint at a line of the program (clear: remove it). Returns the breakpoints."}, guard(s.breakpoint))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolContinue, Description: "Continue to the next breakpoint, or to the end of the program. Returns the new stop."}, guard(s.cont))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolEvaluate, Description: "Evaluate Python in a session's program where it is stopped (real engine: the live program; as pdb's p, pp and !). " +
		"code: an expression or a statement. mode: auto (default: as pdb runs a typed line: an expression shows its repr, a statement runs and may change variables), expr, pretty, exec. " +
		"level: 0 the current frame (default), 1 its caller, ... At an uncaught exception's end: the traceback's frames, 0 where it was raised. " +
		"Where no live program waits (a model engine, a stop stepped back to) only a local name can be looked up."}, guard(s.evaluate))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolContext, Description: "Where a session is: location, source line, call stack (outermost first) and local variables, in one answer."}, guard(s.context))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolPredictOutput, Description: "Predict the return value of a call (e.g. f('abc', 2)) on Python code without running it (engine model by default; real runs it)."}, guard(s.predictOutput))
	sdk.AddTool(srv, &sdk.Tool{Name: ToolPredictInput, Description: "Predict arguments a function of the code was called with, given the value it returned (a Python repr). Engine model or openai."}, guard(s.predictInput))
	return srv
}

// guard turns a panic inside a tool into a tool error.
func guard[In, Out any](h func(context.Context, In) (Out, string, error)) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(os.Stderr, "ndb mcp: panic: %v\n%s", p, debug.Stack())
				res, err = nil, fmt.Errorf("internal error: %v", p)
			}
		}()
		out, text, err := h(ctx, in)
		if err != nil {
			return nil, out, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
	}
}

// StartIn are debug_start's arguments.
type StartIn struct {
	Program string `json:"program" jsonschema:"path of a Python file, or the Python source itself"`
	Engine  string `json:"engine,omitempty" jsonschema:"real, model, openai or cwm"`
	Call    string `json:"call,omitempty" jsonschema:"debug this call of a function of the program, e.g. f(1, 'a')"`
}

// Stop is a compact stop.
type Stop struct {
	Session  string            `json:"session,omitempty"`
	Event    string            `json:"event"` // call, line, return, exception, exit
	Line     int               `json:"line,omitempty"`
	Function string            `json:"function,omitempty"`
	Depth    int               `json:"depth,omitempty"`
	Src      string            `json:"src,omitempty"`
	Locals   map[string]string `json:"locals,omitempty"`
	Value    string            `json:"value,omitempty"` // return value or exception repr
	Exit     string            `json:"exit,omitempty"`  // normal, error, never, inv_exit_entry
	// Predicted: a model engine's stop (not a run of the program), with
	// the mean and least probability of the tokens written for it.
	Predicted  bool                 `json:"predicted,omitempty"`
	Confidence *debugger.Confidence `json:"confidence,omitempty"`
	// Output is what the program printed during the command (bounded).
	Output string `json:"output,omitempty"`
	// Interrupted says why a run was interrupted before a stop of its
	// own: "timeout" (it ran the time limit without one) or "interrupt"
	// (the tool call was cancelled).
	Interrupted string `json:"interrupted,omitempty"`
}

func (s *Server) start(ctx context.Context, in StartIn) (Stop, string, error) {
	if strings.TrimSpace(in.Program) == "" {
		return Stop{}, "", errors.New("program is required: a file path or Python source")
	}
	path, source := "", in.Program
	if !strings.Contains(in.Program, "\n") {
		b, err := os.ReadFile(in.Program)
		if err != nil {
			return Stop{}, "", fmt.Errorf("program: %w (give a file path, or the source with its line breaks)", err)
		}
		path, source = in.Program, string(b)
	}
	name := in.Engine
	if name == "" {
		name = s.defaultEngine
	}
	eng, err := s.reg.Get(name, "")
	if err != nil {
		return Stop{}, "", err
	}
	prog := engine.Program{Path: path, Source: source, Call: in.Call}
	if path != "" && strings.TrimSpace(in.Call) == "" {
		prog.Context = &engine.Context{} // a file runs as `python FILE`: its folder, __file__, argv
	}
	b, err := eng.Open(ctx, prog)
	if err != nil {
		return Stop{}, "", err
	}
	ds, err := debugger.NewSession(ctx, b)
	if err != nil {
		if c, ok := b.(interface{ Close() error }); ok {
			c.Close()
		}
		return Stop{}, "", err
	}
	ss := &session{s: ds, engine: eng.Name(), program: path, used: time.Now()}
	ss.live = ds.SetOutput(ss.write) // what it printed before its first stop comes at once
	s.mu.Lock()
	s.next++
	id := "s" + strconv.Itoa(s.next)
	for len(s.sessions) >= s.maxSessions {
		s.evictLocked(false)
	}
	for ss.live && s.liveLocked() >= s.maxLive {
		s.evictLocked(true)
	}
	s.sessions[id] = ss
	s.mu.Unlock()
	st := s.answer(ss, id, ds.Current())
	return st, fmt.Sprintf("%s (%s engine) %s", id, eng.Name(), stopText(st)), nil
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
// ones); a call running on it finishes first.
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

// answer is the compact stop of a command's result, with the program's
// output meanwhile and why it was interrupted.
func (s *Server) answer(ss *session, id string, st debugger.Stop) Stop {
	out := compact(id, st)
	out.Output = ss.takeOutput()
	if !ss.live && st.IsExit() {
		// A whole-run trace has the output only as a whole: at the end.
		if o, ok := ss.s.Output(); ok {
			ss.write(o)
			out.Output = ss.takeOutput()
		}
	}
	out.Interrupted = st.Interrupted
	return out
}

// get returns a locked session; the caller unlocks it.
func (s *Server) get(id string) (*session, error) {
	s.mu.Lock()
	ss, ok := s.sessions[strings.TrimSpace(id)]
	if ok {
		ss.used = time.Now()
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no session %q (start one with debug_start)", id)
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil, fmt.Errorf("session %q was closed (the least recently used of too many)", id)
	}
	return ss, nil
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

// StepIn are debug_step's arguments.
type StepIn struct {
	Session string `json:"session"`
	Mode    string `json:"mode" jsonschema:"into, over, out, back_into, back_over or back_call"`
}

var modes = map[string]debugger.Action{
	"into": debugger.StepInto, "over": debugger.StepOver, "out": debugger.StepReturn,
	"back_into": debugger.InvStepInto, "back_over": debugger.InvStepOver, "back_call": debugger.InvStepCall,
}

func (s *Server) step(ctx context.Context, in StepIn) (Stop, string, error) {
	a, ok := modes[strings.TrimSpace(in.Mode)]
	if !ok {
		return Stop{}, "", fmt.Errorf("mode %q: want into, over, out, back_into, back_over or back_call", in.Mode)
	}
	return s.do(ctx, in.Session, debugger.Command{Action: a})
}

func (s *Server) do(ctx context.Context, id string, cmd debugger.Command) (Stop, string, error) {
	ss, err := s.get(id)
	if err != nil {
		return Stop{}, "", err
	}
	defer ss.mu.Unlock()
	run, stop := ss.runCtx(ctx)
	st, err := ss.s.Do(run, cmd)
	stop()
	if err != nil {
		return Stop{}, "", err
	}
	out := s.answer(ss, id, st)
	return out, id + " " + stopText(out), nil
}

// SessionIn names a session.
type SessionIn struct {
	Session string `json:"session"`
}

func (s *Server) cont(ctx context.Context, in SessionIn) (Stop, string, error) {
	return s.do(ctx, in.Session, debugger.Command{Action: debugger.Continue})
}

// BreakpointIn are debug_breakpoint's arguments.
type BreakpointIn struct {
	Session string `json:"session"`
	Line    int    `json:"line" jsonschema:"line number in the program"`
	Clear   bool   `json:"clear,omitempty" jsonschema:"remove the breakpoint instead"`
}

// Breakpoints lists a session's breakpoint lines.
type Breakpoints struct {
	Breakpoints []int `json:"breakpoints"`
}

func (s *Server) breakpoint(ctx context.Context, in BreakpointIn) (Breakpoints, string, error) {
	ss, err := s.get(in.Session)
	if err != nil {
		return Breakpoints{}, "", err
	}
	defer ss.mu.Unlock()
	if in.Clear {
		err = ss.s.ClearBreak(in.Line)
	} else {
		err = ss.s.SetBreak(in.Line)
	}
	if err != nil {
		return Breakpoints{}, "", err
	}
	bs := ss.s.Breaks()
	txt := make([]string, len(bs))
	for i, l := range bs {
		txt[i] = strconv.Itoa(l)
	}
	return Breakpoints{Breakpoints: bs}, "breakpoints: " + strings.Join(txt, ", "), nil
}

// Context is debug_context's answer.
type Context struct {
	Session  string            `json:"session"`
	Location string            `json:"location"` // function:line, or the exit
	Event    string            `json:"event"`
	Src      string            `json:"src,omitempty"`
	Stack    []string          `json:"stack"` // outermost first, function:line
	Locals   map[string]string `json:"locals,omitempty"`
	Value    string            `json:"value,omitempty"`
	Engine   string            `json:"engine"`
	// Traceback is Python's, at the end of a program that an uncaught
	// exception ended (Stack and Locals are then the traceback's frames and
	// the innermost one's variables, where evaluate runs).
	Traceback string `json:"traceback,omitempty"`

	Predicted  bool                 `json:"predicted,omitempty"`
	Confidence *debugger.Confidence `json:"confidence,omitempty"`
}

func (s *Server) context(ctx context.Context, in SessionIn) (Context, string, error) {
	ss, err := s.get(in.Session)
	if err != nil {
		return Context{}, "", err
	}
	defer ss.mu.Unlock()
	cur := ss.s.Current()
	c := Context{Session: in.Session, Event: cur.Event, Src: cur.Src, Value: cur.Arg, Engine: ss.engine, Stack: []string{},
		Predicted: cur.Predicted, Confidence: cur.Confidence}
	if pm, ok := ss.s.PostMortem(); ok && len(pm.Frames) > 0 {
		c.Location = "exit " + cur.Exit
		c.Traceback = pm.Traceback
		for _, f := range pm.Frames {
			c.Stack = append(c.Stack, fmt.Sprintf("%s:%d", f.Function, f.Lineno))
		}
		c.Locals = localsMap(pm.Frames[len(pm.Frames)-1])
		cur.Locals = pm.Frames[len(pm.Frames)-1].Locals
	} else if cur.IsExit() {
		c.Location = "exit " + cur.Exit
	} else {
		c.Location = fmt.Sprintf("%s:%d", cur.Function, cur.Lineno)
		for _, f := range ss.s.Stack() {
			c.Stack = append(c.Stack, fmt.Sprintf("%s:%d", f.Function, f.Lineno))
		}
		c.Locals = localsMap(cur)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s (%s)", in.Session, c.Location, c.Event)
	if c.Src != "" {
		fmt.Fprintf(&b, " `%s`", strings.TrimSpace(c.Src))
	}
	if len(c.Stack) > 0 {
		fmt.Fprintf(&b, "\nstack: %s", strings.Join(c.Stack, " > "))
	}
	if l := localsText(cur); l != "" {
		fmt.Fprintf(&b, "\nlocals: %s", l)
	}
	if c.Value != "" {
		fmt.Fprintf(&b, "\nvalue: %s", c.Value)
	}
	if c.Traceback != "" {
		fmt.Fprintf(&b, "\n%s", strings.TrimSuffix(c.Traceback, "\n"))
	}
	if m := debugger.PredictedMark(cur); m != "" {
		fmt.Fprintf(&b, "\n%s", m)
	}
	return c, b.String(), nil
}

// EvaluateIn are evaluate's arguments.
type EvaluateIn struct {
	Session string `json:"session"`
	Code    string `json:"code" jsonschema:"a Python expression or statement"`
	Mode    string `json:"mode,omitempty" jsonschema:"auto (default; as pdb runs a typed line), expr (pdb's p), pretty (pp) or exec (!)"`
	Level   int    `json:"level,omitempty" jsonschema:"frames below the current one: 0 the current frame (default), 1 its caller"`
}

// Evaluation is evaluate's answer.
type Evaluation struct {
	Session string `json:"session"`
	// Result is the value's repr (pretty: pprint's text; a statement: what
	// it printed).
	Result string `json:"result"`
	// Locals are the frame's variables after a statement.
	Locals map[string]string `json:"locals,omitempty"`
	// Recorded: no live program waits here (a model engine, a stop stepped
	// back to, the end), so a local name was looked up in the recorded
	// state instead.
	Recorded bool `json:"recorded,omitempty"`
}

var evalModes = map[string]string{"": tracer.EvalExec, "auto": tracer.EvalExec, "expr": tracer.EvalExpr,
	"pretty": tracer.EvalPretty, "exec": tracer.EvalExec}

// maxCode bounds evaluate's code.
const maxCode = 64 << 10

func (s *Server) evaluate(ctx context.Context, in EvaluateIn) (Evaluation, string, error) {
	mode, ok := evalModes[strings.TrimSpace(in.Mode)]
	switch {
	case !ok:
		return Evaluation{}, "", fmt.Errorf("mode %q: want auto, expr, pretty or exec", in.Mode)
	case strings.TrimSpace(in.Code) == "":
		return Evaluation{}, "", errors.New("code is required: an expression or a statement")
	case len(in.Code) > maxCode:
		return Evaluation{}, "", fmt.Errorf("code of %d bytes: at most %d", len(in.Code), maxCode)
	case in.Level < 0:
		return Evaluation{}, "", fmt.Errorf("level %d: want 0 (the current frame) or more (its callers)", in.Level)
	}
	ss, err := s.get(in.Session)
	if err != nil {
		return Evaluation{}, "", err
	}
	defer ss.mu.Unlock()
	ev := Evaluation{Session: in.Session}
	run, stop := ss.runCtx(ctx)
	res, err := ss.s.Eval(run, in.Level, strings.TrimSpace(in.Code), mode)
	stop()
	switch {
	case errors.Is(err, debugger.ErrNotLive):
		return s.recorded(ss, in)
	case err != nil:
		return Evaluation{}, "", err
	case !res.OK:
		return Evaluation{}, "", errors.New(res.Text) // pdb's line: NameError: name 'x' is not defined
	}
	ev.Result = res.Text
	if mode == tracer.EvalExec {
		ev.Result = strings.TrimSuffix(ev.Result, "\n")
		if len(res.Locals) > 0 {
			ev.Locals = localsMap(debugger.Stop{State: tracer.State{Locals: res.Locals}})
		}
	}
	return ev, ev.Result, nil
}

// recorded looks a local name up in the recorded state of the frame.
func (s *Server) recorded(ss *session, in EvaluateIn) (Evaluation, string, error) {
	name := strings.TrimSpace(in.Code)
	frames := ss.s.Frames()
	if in.Level < len(frames) {
		if v, ok := frames[len(frames)-1-in.Level].Locals.Get(name); ok {
			return Evaluation{Session: in.Session, Result: v, Recorded: true}, v + "  [recorded: no live program here]", nil
		}
	}
	if engine.IsPredicted(ss.s) {
		return Evaluation{}, "", fmt.Errorf("%q is not a local name of this frame (a model engine never runs code: only local names can be looked up)", name)
	}
	return Evaluation{}, "", fmt.Errorf("%q is not a local name of this frame, and %v", name, debugger.ErrNotLive)
}

// PredictOutputIn are predict_output's arguments.
type PredictOutputIn struct {
	Code   string `json:"code" jsonschema:"Python source defining the function"`
	Call   string `json:"call" jsonschema:"the call, e.g. f('abc', 2)"`
	Engine string `json:"engine,omitempty" jsonschema:"model (default), openai, cwm or real"`
}

// Prediction is predict_output's and predict_input's answer.
type Prediction struct {
	Output string            `json:"output,omitempty"`
	Args   map[string]string `json:"args,omitempty"`
	Call   string            `json:"call,omitempty"`
	Engine string            `json:"engine"`

	Predicted  bool                 `json:"predicted,omitempty"`
	Confidence *debugger.Confidence `json:"confidence,omitempty"` // of the prediction that answered
}

func (s *Server) predictOutput(ctx context.Context, in PredictOutputIn) (Prediction, string, error) {
	eng, err := s.reg.Get(s.engineOr(in.Engine), "")
	if err != nil {
		return Prediction{}, "", err
	}
	out, st, err := engine.PredictOutput(ctx, eng, in.Code, in.Call)
	if err != nil {
		return Prediction{}, "", err
	}
	text := out
	if m := debugger.PredictedMark(st); m != "" {
		text += "  " + m
	}
	return Prediction{Output: out, Engine: eng.Name(), Predicted: st.Predicted, Confidence: st.Confidence}, text, nil
}

// PredictInputIn are predict_input's arguments.
type PredictInputIn struct {
	Code     string `json:"code" jsonschema:"Python source defining the function"`
	Function string `json:"function" jsonschema:"the function's name"`
	Output   string `json:"output" jsonschema:"the value it returned, as a Python repr"`
	Engine   string `json:"engine,omitempty" jsonschema:"model (default) or openai"`
}

func (s *Server) predictInput(ctx context.Context, in PredictInputIn) (Prediction, string, error) {
	eng, err := s.reg.Get(s.engineOr(in.Engine), "")
	if err != nil {
		return Prediction{}, "", err
	}
	args, st, err := engine.PredictInput(ctx, eng, in.Code, in.Function, in.Output)
	if err != nil {
		return Prediction{}, "", err
	}
	vals := make([]string, len(args))
	m := map[string]string{}
	for i, a := range args {
		vals[i] = a.Value
		m[a.Name] = a.Value
	}
	call := strings.TrimSpace(in.Function) + "(" + strings.Join(vals, ", ") + ")"
	text := call
	if pm := debugger.PredictedMark(st); pm != "" {
		text += "  " + pm
	}
	return Prediction{Args: m, Call: call, Engine: eng.Name(), Predicted: st.Predicted, Confidence: st.Confidence}, text, nil
}

func (s *Server) engineOr(name string) string {
	if strings.TrimSpace(name) == "" {
		return s.defaultEngine
	}
	return name
}

func compact(id string, st debugger.Stop) Stop {
	out := Stop{Session: id, Event: st.Event, Line: st.Lineno, Function: st.Function, Depth: st.Depth, Src: st.Src,
		Locals: localsMap(st), Value: st.Arg, Exit: st.Exit, Predicted: st.Predicted, Confidence: st.Confidence}
	return out
}

func localsMap(st debugger.Stop) map[string]string {
	if len(st.Locals) == 0 {
		return nil
	}
	m := make(map[string]string, len(st.Locals))
	for _, v := range st.Locals {
		m[v.Name] = v.Value
	}
	return m
}

// localsText is name=value pairs in the frame's own order.
func localsText(st debugger.Stop) string {
	parts := make([]string, 0, len(st.Locals))
	for _, v := range st.Locals {
		parts = append(parts, v.Name+"="+v.Value)
	}
	return strings.Join(parts, " ")
}

// stopText is one line: where, what, and the locals (and for a model
// engine's stop, its predicted mark).
func stopText(st Stop) string {
	return stopLine(st) + outputText(st)
}

// outputText is how an answer shows the program's output and an interrupt.
func outputText(st Stop) string {
	var b strings.Builder
	switch st.Interrupted {
	case "timeout":
		b.WriteString("\ninterrupted: the program ran the time limit without reaching a stop (continue resumes it)")
	case "":
	default:
		b.WriteString("\ninterrupted (continue resumes it)")
	}
	if st.Output != "" {
		b.WriteString("\noutput:\n" + strings.TrimSuffix(st.Output, "\n"))
	}
	return b.String()
}

func stopLine(st Stop) string {
	mark := ""
	if m := debugger.PredictedMark(debugger.Stop{Predicted: st.Predicted, Confidence: st.Confidence}); m != "" {
		mark = "  " + m
	}
	if st.Event == debugger.EventExit {
		t := "exit " + st.Exit
		if st.Value != "" {
			t += ": " + st.Value
		}
		return t + mark
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s:%d `%s`", st.Event, st.Function, st.Line, strings.TrimSpace(st.Src))
	if st.Value != "" {
		fmt.Fprintf(&b, " -> %s", st.Value)
	}
	if len(st.Locals) > 0 {
		keys := make([]string, 0, len(st.Locals))
		for k := range st.Locals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%s", k, st.Locals[k])
		}
	}
	return b.String() + mark
}
