package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"ndb/debugger"
	"ndb/tracer"
)

// StartIn are debug_start's arguments.
type StartIn struct {
	Program     string           `json:"program" jsonschema:"path of a Python file inside the workspace roots, or the Python source itself (with its line breaks)"`
	Engine      string           `json:"engine,omitempty" jsonschema:"the engine (default: the server's)"`
	Call        string           `json:"call,omitempty" jsonschema:"debug this call of a function of the program, e.g. f(1, 'a')"`
	Args        []string         `json:"args,omitempty" jsonschema:"the script's command-line arguments, sys.argv[1:] (a file program without call)"`
	Stdin       string           `json:"stdin,omitempty" jsonschema:"the script's standard input (a file program without call)"`
	Breakpoints []BreakpointSpec `json:"breakpoints,omitempty" jsonschema:"breakpoints set before the program runs"`
	StopOnEntry *bool            `json:"stop_on_entry,omitempty" jsonschema:"stop at the program's first event; default: true without breakpoints, false with them (it runs to the first breakpoint)"`
}

// BreakpointSpec is one breakpoint: at a line, or at a function's first
// line, as pdb's b and tbreak.
type BreakpointSpec struct {
	Line      int    `json:"line,omitempty" jsonschema:"line number in the program"`
	Function  string `json:"function,omitempty" jsonschema:"a function's name: stop at its first line when it is called (real engine)"`
	Condition string `json:"condition,omitempty" jsonschema:"stop only when this Python condition on the frame's variables holds, e.g. n > 3"`
	Temporary bool   `json:"temporary,omitempty" jsonschema:"cleared when it stops the program (pdb's tbreak)"`
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
	// Stack is the call stack, outermost first, as function:line (the
	// answers of debug_start, debug_restart and debug_continue).
	Stack []string `json:"stack,omitempty"`
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
		roots, err := s.ws.allowed(ctx, caller(ctx))
		if err != nil {
			return Stop{}, "", err
		}
		if path, source, err = readProgram(in.Program, roots, s.ws.MaxBytes); err != nil {
			return Stop{}, "", err
		}
	}
	script := path != "" && strings.TrimSpace(in.Call) == ""
	switch {
	case !script && (len(in.Args) > 0 || in.Stdin != ""):
		return Stop{}, "", errors.New("args and stdin are for a script: a program file, without call")
	case len(in.Stdin) > maxStdin:
		return Stop{}, "", fmt.Errorf("stdin of %d bytes: at most %d", len(in.Stdin), maxStdin)
	}
	name, err := s.engine(in.Engine)
	if err != nil {
		return Stop{}, "", err
	}
	prog := tracer.Program{Path: path, Source: source, Call: in.Call}
	if script {
		// a file runs as `python FILE ARGS < STDIN`: its folder, __file__, argv
		prog.Context = &tracer.Context{Args: in.Args}
		if in.Stdin != "" {
			prog.Context.Stdin = []byte(in.Stdin)
		}
	}
	ds, err := s.reg.Open(ctx, name, "", prog)
	if err != nil {
		return Stop{}, "", err
	}
	ss := &session{s: ds, engine: ds.Engine(), program: path, call: strings.TrimSpace(in.Call)}
	ss.live = ds.SetOutput(ss.write) // what it printed before its first stop comes at once
	for i, bp := range in.Breakpoints {
		if err := addBreak(ds, bp); err != nil {
			ds.Close()
			return Stop{}, "", fmt.Errorf("breakpoints[%d]: %w", i, err)
		}
	}
	ss.mu.Lock() // before it is listed: no other call runs on it until its first stop
	id := s.add(ss)
	defer s.release(ss)
	st, err := s.firstStop(ctx, ss, in.StopOnEntry)
	if err != nil {
		return Stop{}, "", fmt.Errorf("%s (session %s is open at the start)", err, id)
	}
	text := fmt.Sprintf("%s (%s engine) %s", id, ss.engine, stopText(st))
	if bs := ds.BreakSpecs(); len(bs) > 0 {
		text += "\nbreakpoints: " + breaksText(bs)
	}
	return st, text, nil
}

// firstStop is the answer at a (re)start: the first stop, or with
// breakpoints and stop_on_entry not true, where continue stops.
func (s *Server) firstStop(ctx context.Context, ss *session, stopOnEntry *bool) (Stop, error) {
	cur := ss.s.Current()
	onEntry := len(ss.s.Breaks()) == 0
	if stopOnEntry != nil {
		onEntry = *stopOnEntry
	}
	if !onEntry && !cur.IsExit() {
		run, stop := ss.runCtx(ctx)
		var err error
		cur, err = ss.s.Do(run, debugger.Command{Action: debugger.Continue})
		stop()
		if err != nil {
			return Stop{}, err
		}
	}
	return s.answer(ss, cur, true), nil
}

// addBreak sets bp through the session's breakpoint API (the terminal's).
func addBreak(ds *debugger.Session, bp BreakpointSpec) error {
	spec := debugger.BreakSpec{Line: bp.Line, Cond: strings.TrimSpace(bp.Condition), Temp: bp.Temporary}
	if f := strings.TrimSpace(bp.Function); f != "" {
		if bp.Line != 0 {
			return errors.New("give a line or a function, not both")
		}
		line := debugger.FunctionLine(ds.Source(), f)
		if line == 0 {
			return fmt.Errorf("the program defines no function %q", f)
		}
		spec.Line, spec.Func = line, f
	} else if bp.Line <= 0 {
		return errors.New("a breakpoint needs a line (1 or more) or a function")
	}
	return ds.AddBreak(spec)
}

// answer is the compact stop st of ss, with the program's output meanwhile
// and why it was interrupted (and the call stack with stack).
func (s *Server) answer(ss *session, st debugger.Stop, stack bool) Stop {
	out := compact(ss.id, st)
	out.Output = ss.takeOutput()
	if !ss.live && st.IsExit() {
		// A whole-run trace has the output only as a whole: at the end.
		if o, ok := ss.s.Output(); ok {
			ss.write(o)
			out.Output = ss.takeOutput()
		}
	}
	out.Interrupted = st.Interrupted
	if stack && !st.IsExit() {
		for _, f := range ss.s.Stack() {
			out.Stack = append(out.Stack, fmt.Sprintf("%s:%d", f.Function, f.Lineno))
		}
	}
	return out
}

// StepIn are debug_step's arguments.
type StepIn struct {
	Session string `json:"session"`
	Mode    string `json:"mode" jsonschema:"into, over, out (forwards) or back_into, back_over, back_call (backwards)"`
}

func (s *Server) step(ctx context.Context, in StepIn) (Stop, string, error) {
	mode := strings.TrimSpace(in.Mode)
	mv, ok := debugger.MoveNamed(mode)
	if !ok || mv.Mode != mode {
		return Stop{}, "", fmt.Errorf("mode %q: want one of %s", in.Mode, strings.Join(debugger.MoveModes(), ", "))
	}
	return s.do(ctx, in.Session, mv.Command, false)
}

func (s *Server) do(ctx context.Context, id string, cmd debugger.Command, stack bool) (Stop, string, error) {
	ss, err := s.get(id)
	if err != nil {
		return Stop{}, "", err
	}
	defer s.release(ss)
	run, stop := ss.runCtx(ctx)
	st, err := ss.s.Do(run, cmd)
	stop()
	if err != nil {
		return Stop{}, "", err
	}
	out := s.answer(ss, st, stack)
	return out, ss.id + " " + stopText(out), nil
}

// SessionIn names a session.
type SessionIn struct {
	Session string `json:"session" jsonschema:"the session id debug_start answered"`
}

// ContinueIn are debug_continue's arguments.
type ContinueIn struct {
	Session string `json:"session"`
	Reverse bool   `json:"reverse,omitempty" jsonschema:"go back to the latest earlier stop at a breakpoint (or the start)"`
	ToLine  int    `json:"to_line,omitempty" jsonschema:"run to this line (a temporary breakpoint there, as pdb's tbreak LINE then continue)"`
}

func (s *Server) cont(ctx context.Context, in ContinueIn) (Stop, string, error) {
	if in.ToLine != 0 {
		if in.Reverse {
			return Stop{}, "", errors.New("to_line runs forwards: give reverse or to_line, not both")
		}
		ss, err := s.get(in.Session)
		if err != nil {
			return Stop{}, "", err
		}
		err = addBreak(ss.s, BreakpointSpec{Line: in.ToLine, Temporary: true})
		s.release(ss)
		if err != nil {
			return Stop{}, "", err
		}
	}
	return s.do(ctx, in.Session, debugger.Command{Action: debugger.Continue, Backward: in.Reverse}, true)
}

// RestartIn are debug_restart's arguments.
type RestartIn struct {
	Session     string `json:"session"`
	StopOnEntry *bool  `json:"stop_on_entry,omitempty" jsonschema:"stop at the program's first event; default: true without breakpoints, false with them"`
}

func (s *Server) restart(ctx context.Context, in RestartIn) (Stop, string, error) {
	ss, err := s.get(in.Session)
	if err != nil {
		return Stop{}, "", err
	}
	defer s.release(ss)
	ss.takeOutput() // what the old run printed is not the new one's
	run, stop := ss.runCtx(ctx)
	_, err = ss.s.Restart(run)
	stop()
	if err != nil {
		return Stop{}, "", err
	}
	st, err := s.firstStop(ctx, ss, in.StopOnEntry)
	if err != nil {
		return Stop{}, "", err
	}
	return st, ss.id + " restarted: " + stopText(st), nil
}

// Ended is debug_end's answer.
type Ended struct {
	Session string `json:"session"`
	Ended   bool   `json:"ended"`
}

func (s *Server) end(ctx context.Context, in SessionIn) (Ended, string, error) {
	if err := s.remove(in.Session); err != nil {
		return Ended{}, "", err
	}
	id := strings.TrimSpace(in.Session)
	return Ended{Session: id, Ended: true}, id + " ended", nil
}

// NoArgs is the input of a tool without arguments.
type NoArgs struct{}

// SessionInfo describes an open session.
type SessionInfo struct {
	Session     string `json:"session"`
	Engine      string `json:"engine"`
	Program     string `json:"program"` // the file, or "<source>"
	Call        string `json:"call,omitempty"`
	Location    string `json:"location"` // function:line, exit ..., or running
	Live        bool   `json:"live"`
	IdleSeconds int    `json:"idle_seconds"`
}

// SessionList is debug_sessions' answer.
type SessionList struct {
	Sessions           []SessionInfo `json:"sessions"`
	MaxSessions        int           `json:"max_sessions"`
	IdleTimeoutSeconds int           `json:"idle_timeout_seconds"`
}

func (s *Server) list(ctx context.Context, _ NoArgs) (SessionList, string, error) {
	s.mu.Lock()
	out := SessionList{Sessions: []SessionInfo{}, MaxSessions: s.maxSessions, IdleTimeoutSeconds: int(s.idle / time.Second)}
	now := time.Now()
	for _, ss := range s.sessions {
		info := SessionInfo{Session: ss.id, Engine: ss.engine, Program: ss.program, Call: ss.call, Live: ss.live,
			IdleSeconds: int(now.Sub(ss.used) / time.Second), Location: "running"}
		if info.Program == "" {
			info.Program = "<source>"
		}
		if ss.mu.TryLock() {
			info.Location = location(ss.s.Current())
			ss.mu.Unlock()
		}
		out.Sessions = append(out.Sessions, info)
	}
	s.mu.Unlock()
	sort.Slice(out.Sessions, func(i, j int) bool { return sessionNum(out.Sessions[i].Session) < sessionNum(out.Sessions[j].Session) })
	var b strings.Builder
	fmt.Fprintf(&b, "%d sessions open (at most %d", len(out.Sessions), out.MaxSessions)
	if out.IdleTimeoutSeconds > 0 {
		fmt.Fprintf(&b, "; closed after %v idle", s.idle)
	}
	b.WriteString(")")
	for _, i := range out.Sessions {
		fmt.Fprintf(&b, "\n%s %s %s", i.Session, i.Engine, i.Program)
		if i.Call != "" {
			fmt.Fprintf(&b, " call %s", i.Call)
		}
		fmt.Fprintf(&b, " at %s, idle %ds", i.Location, i.IdleSeconds)
	}
	return out, b.String(), nil
}

func sessionNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "s"))
	return n
}

func location(st debugger.Stop) string {
	if st.IsExit() {
		return "exit " + st.Exit
	}
	return fmt.Sprintf("%s:%d", st.Function, st.Lineno)
}

// BreakpointIn are debug_breakpoint's arguments.
type BreakpointIn struct {
	Session   string `json:"session"`
	Line      int    `json:"line,omitempty" jsonschema:"line number in the program"`
	Function  string `json:"function,omitempty" jsonschema:"a function's name: stop at its first line when it is called (real engine)"`
	Condition string `json:"condition,omitempty" jsonschema:"stop only when this Python condition on the frame's variables holds, e.g. n > 3"`
	Temporary bool   `json:"temporary,omitempty" jsonschema:"cleared when it stops the program (pdb's tbreak)"`
	Clear     bool   `json:"clear,omitempty" jsonschema:"remove the breakpoints at line (or function) instead; with neither, remove every breakpoint"`
}

// Breakpoint is one breakpoint of a session.
type Breakpoint struct {
	Line      int    `json:"line"`
	Function  string `json:"function,omitempty"`
	Condition string `json:"condition,omitempty"`
	Temporary bool   `json:"temporary,omitempty"`
}

// Breakpoints lists a session's breakpoints in the order they were set.
type Breakpoints struct {
	Session     string       `json:"session"`
	Breakpoints []Breakpoint `json:"breakpoints"`
}

func (s *Server) breakpoint(ctx context.Context, in BreakpointIn) (Breakpoints, string, error) {
	ss, err := s.get(in.Session)
	if err != nil {
		return Breakpoints{}, "", err
	}
	defer s.release(ss)
	switch {
	case in.Clear && in.Line == 0 && strings.TrimSpace(in.Function) != "":
		line := debugger.FunctionLine(ss.s.Source(), strings.TrimSpace(in.Function))
		if line == 0 {
			return Breakpoints{}, "", fmt.Errorf("the program defines no function %q", in.Function)
		}
		err = ss.s.ClearBreak(line)
	case in.Clear && in.Line == 0:
		ss.s.ClearBreaks()
	case in.Clear:
		err = ss.s.ClearBreak(in.Line)
	case in.Line == 0 && strings.TrimSpace(in.Function) == "":
		// no breakpoint given: the list
	default:
		err = addBreak(ss.s, BreakpointSpec{Line: in.Line, Function: in.Function, Condition: in.Condition, Temporary: in.Temporary})
	}
	if err != nil {
		return Breakpoints{}, "", err
	}
	specs := ss.s.BreakSpecs()
	out := Breakpoints{Session: ss.id, Breakpoints: make([]Breakpoint, len(specs))}
	for i, b := range specs {
		out.Breakpoints[i] = Breakpoint{Line: b.Line, Function: b.Func, Condition: b.Cond, Temporary: b.Temp}
	}
	if len(specs) == 0 {
		return out, "breakpoints: none", nil
	}
	return out, "breakpoints: " + breaksText(specs), nil
}

// breaksText is the breakpoints as "3, 7 if n > 2, f (line 12), tbreak 9".
func breaksText(specs []debugger.BreakSpec) string {
	parts := make([]string, len(specs))
	for i, b := range specs {
		p := strconv.Itoa(b.Line)
		if b.Func != "" {
			p = fmt.Sprintf("%s (line %d)", b.Func, b.Line)
		}
		if b.Temp {
			p = "tbreak " + p
		}
		if b.Cond != "" {
			p += " if " + b.Cond
		}
		parts[i] = p
	}
	return strings.Join(parts, ", ")
}

// SourceIn are debug_source's arguments.
type SourceIn struct {
	Session string `json:"session"`
	Line    int    `json:"line,omitempty" jsonschema:"the line to show around (default: the current stop's)"`
	Context int    `json:"context,omitempty" jsonschema:"lines before and after it (default 5, at most 200)"`
}

// SourceView is debug_source's answer.
type SourceView struct {
	Session string   `json:"session"`
	First   int      `json:"first"`             // number of Lines[0]
	Current int      `json:"current,omitempty"` // the stop's line, 0 at an exit
	Lines   []string `json:"lines"`
	Breaks  []int    `json:"breakpoints,omitempty"` // breakpoint lines shown
}

// maxSourceContext bounds debug_source's context.
const maxSourceContext = 200

func (s *Server) source(ctx context.Context, in SourceIn) (SourceView, string, error) {
	if in.Context < 0 || in.Context > maxSourceContext {
		return SourceView{}, "", fmt.Errorf("context %d: want 0 to %d lines", in.Context, maxSourceContext)
	}
	ss, err := s.get(in.Session)
	if err != nil {
		return SourceView{}, "", err
	}
	defer s.release(ss)
	lines := debugger.SourceLines(ss.s.Source())
	cur := ss.s.Current()
	v := SourceView{Session: ss.id}
	if !cur.IsExit() {
		v.Current = cur.Lineno
	}
	at := in.Line
	if at == 0 {
		at = max(v.Current, 1)
	}
	if at < 1 || at > len(lines) {
		return SourceView{}, "", fmt.Errorf("line %d: the program has lines 1 to %d", at, len(lines))
	}
	n := in.Context
	if n == 0 {
		n = 5
	}
	first, last := max(at-n, 1), min(at+n, len(lines))
	v.First, v.Lines = first, lines[first-1:last]
	breaks := map[int]bool{}
	for _, l := range ss.s.Breaks() {
		breaks[l] = true
		if l >= first && l <= last {
			v.Breaks = append(v.Breaks, l)
		}
	}
	var b strings.Builder
	for i, l := range v.Lines {
		n := first + i
		mark := "  "
		switch {
		case n == v.Current:
			mark = "->"
		case breaks[n]:
			mark = "B "
		}
		if n == v.Current && breaks[n] {
			mark = "B>"
		}
		fmt.Fprintf(&b, "%4d %s %s\n", n, mark, l)
	}
	return v, strings.TrimSuffix(b.String(), "\n"), nil
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
	defer s.release(ss)
	cur := ss.s.Current()
	c := Context{Session: ss.id, Event: cur.Event, Src: cur.Src, Value: cur.Arg, Engine: ss.engine, Stack: []string{},
		Predicted: cur.Predicted, Confidence: cur.Confidence, Location: location(cur)}
	if pm, ok := ss.s.PostMortem(); ok && len(pm.Frames) > 0 {
		c.Traceback = pm.Traceback
		for _, f := range pm.Frames {
			c.Stack = append(c.Stack, fmt.Sprintf("%s:%d", f.Function, f.Lineno))
		}
		c.Locals = localsMap(pm.Frames[len(pm.Frames)-1])
		cur.Locals = pm.Frames[len(pm.Frames)-1].Locals
	} else if !cur.IsExit() {
		for _, f := range ss.s.Stack() {
			c.Stack = append(c.Stack, fmt.Sprintf("%s:%d", f.Function, f.Lineno))
		}
		c.Locals = localsMap(cur)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s (%s)", ss.id, c.Location, c.Event)
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
	// Predicted: a model engine's session, so the code was evaluated over
	// the stop's predicted values (in the sandbox), not in a run.
	Predicted bool `json:"predicted,omitempty"`
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
	defer s.release(ss)
	ev := Evaluation{Session: ss.id}
	run, stop := ss.runCtx(ctx)
	res, err := ss.s.Eval(run, in.Level, strings.TrimSpace(in.Code), mode)
	stop()
	switch {
	case errors.Is(err, debugger.ErrNotLive):
		return s.recorded(ss, in, err)
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
	if ss.s.Predicted() {
		ev.Predicted = true
		return ev, ev.Result + "  [over the predicted values]", nil
	}
	return ev, ev.Result, nil
}

// recorded looks a local name up in the recorded state of the frame.
func (s *Server) recorded(ss *session, in EvaluateIn, why error) (Evaluation, string, error) {
	name := strings.TrimSpace(in.Code)
	frames := ss.s.Frames()
	if in.Level < len(frames) {
		if v, ok := frames[len(frames)-1-in.Level].Locals.Get(name); ok {
			return Evaluation{Session: ss.id, Result: v, Recorded: true}, v + "  [recorded: no live program here]", nil
		}
	}
	return Evaluation{}, "", fmt.Errorf("%q is not a local name of this frame, and %v", name, why)
}

// PredictOutputIn are predict_output's arguments.
type PredictOutputIn struct {
	Code   string `json:"code" jsonschema:"Python source defining the function"`
	Call   string `json:"call" jsonschema:"the call, e.g. f('abc', 2)"`
	Engine string `json:"engine,omitempty" jsonschema:"the engine (default: the server's; real runs the code)"`
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
	name, err := s.engine(in.Engine)
	if err != nil {
		return Prediction{}, "", err
	}
	out, st, err := s.reg.PredictOutput(ctx, name, in.Code, in.Call)
	if err != nil {
		return Prediction{}, "", err
	}
	text := out
	if m := debugger.PredictedMark(st); m != "" {
		text += "  " + m
	}
	return Prediction{Output: out, Engine: name, Predicted: st.Predicted, Confidence: st.Confidence}, text, nil
}

// PredictInputIn are predict_input's arguments.
type PredictInputIn struct {
	Code     string `json:"code" jsonschema:"Python source defining the function"`
	Function string `json:"function" jsonschema:"the function's name"`
	Output   string `json:"output" jsonschema:"the value it returned, as a Python repr"`
	Engine   string `json:"engine,omitempty" jsonschema:"the engine (default: the server's)"`
}

func (s *Server) predictInput(ctx context.Context, in PredictInputIn) (Prediction, string, error) {
	name, err := s.engine(in.Engine)
	if err != nil {
		return Prediction{}, "", err
	}
	args, st, err := s.reg.PredictInput(ctx, name, in.Code, in.Function, in.Output)
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
	return Prediction{Args: m, Call: call, Engine: name, Predicted: st.Predicted, Confidence: st.Confidence}, text, nil
}

// engine is the engine a tool call names (none: the server's default).
func (s *Server) engine(name string) (string, error) {
	if strings.TrimSpace(name) == "" {
		name = s.defaultEngine
	}
	return s.reg.Resolve(name, "")
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
// engine's stop, its predicted mark), then the stack, the output and an
// interrupt on lines of their own.
func stopText(st Stop) string {
	t := stopLine(st)
	if len(st.Stack) > 1 {
		t += "\nstack: " + strings.Join(st.Stack, " > ")
	}
	return t + outputText(st)
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
