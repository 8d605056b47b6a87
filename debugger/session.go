package debugger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"ndb/tracer"
)

// Stop is where a command left the debugger: a trace state, an
// inv_line_call position (Event "inv_line_call"), or an exit (Event "exit"
// with Exit set, and Arg the uncaught exception's repr or the limit that
// stopped the run, when known).
type Stop struct {
	tracer.State
	Exit  string `json:"exit,omitempty"` // normal, error, never or inv_exit_entry when Event == "exit"
	Index int    `json:"index"`          // state index in the trace; -1 for exits and predicted stops

	// Predicted is set on every stop a model engine shows (model, openai,
	// cwm): the state comes from a model reading the source, not from a run
	// of the program. The trace backend (the real engine) leaves it false.
	Predicted bool `json:"predicted,omitempty"`
	// Confidence is how sure the model was of a predicted stop, when the
	// engine knows its token probabilities; nil otherwise (the real engine;
	// a model engine's start, which is read from the source; a server that
	// returns no log-probabilities).
	Confidence *Confidence `json:"confidence,omitempty"`
	// Interrupted says why a live run stopped here on its own, not at a
	// stop of the command: "interrupt" (Session.Interrupt, pdb's Ctrl-C)
	// or "timeout" (it ran the engine's time limit without a stop).
	Interrupted string `json:"interrupted,omitempty"`
}

// Confidence summarises the probabilities of the tokens a model wrote for
// a predicted stop (see docs/engines.md): their mean and their minimum.
// A command answered by several predictions (a rolled-out until or
// continue, a jump by stepping) has the figures over all their tokens.
type Confidence struct {
	Mean   float64 `json:"mean"`   // mean probability of the chosen tokens
	Min    float64 `json:"min"`    // the least probable chosen token's probability
	Tokens int     `json:"tokens"` // how many tokens the figures are over
	Frames int     `json:"frames"` // how many predicted frames (1 for a single prediction)
}

// Figures are the confidence's mean and least probability with two
// decimals, cut rather than rounded (0.996 is "0.99": "1.00" means sure),
// as every front end shows them.
func (c Confidence) Figures() (mean, min string) {
	cut := func(x float64) string { return fmt.Sprintf("%.2f", math.Floor(x*100+1e-9)/100) }
	return cut(c.Mean), cut(c.Min)
}

// PredictedMark is the mark a predicted stop carries in the terminal and
// in MCP answers: "[predicted 0.87 (min 0.41)]", or "[predicted]" when the
// engine knows no probabilities (a model's start, read from the source; a
// server without log-probabilities); "" for a real stop.
func PredictedMark(st Stop) string {
	switch {
	case !st.Predicted:
		return ""
	case st.Confidence == nil:
		return "[predicted]"
	}
	mean, min := st.Confidence.Figures()
	return fmt.Sprintf("[predicted %s (min %s)]", mean, min)
}

// EventExit is the Event of an exit Stop.
const EventExit = "exit"

// IsExit reports whether s ends the run in its direction.
func (s Stop) IsExit() bool { return s.Event == EventExit }

// Command is one request to a Backend. Action is the SPEC action; the other
// fields refine it for pdb exactness and are ignored where meaningless:
//
//   - Src, Line: the Breakpoint action's target (text, and the line number
//     it came from, 0 if none).
//   - Breaks: the line breakpoints in effect. For the trace backend they are
//     pdb's `b N` breakpoints: they stop Continue, and also s/n/r/unt when
//     those pass one. A predictive backend answers Continue with one Break
//     as `breakpoint <text of that line>`.
//   - Until: with StepOver, pdb's `until` (stop only at a greater line of
//     this frame, or at its return); Line > 0 is `until LINE`'s line.
//   - Backward: with Continue, reverse-continue to the latest earlier line
//     event on a breakpoint line, else inv_exit_entry.
type Command struct {
	Action   Action `json:"action"`
	Src      string `json:"src,omitempty"`
	Line     int    `json:"line,omitempty"`
	Breaks   []int  `json:"breaks,omitempty"`
	Until    bool   `json:"until,omitempty"`
	Backward bool   `json:"backward,omitempty"`
	// Jump is set (and Action empty) on a history step made by
	// Session.Jump: the live program's frame was moved to this line.
	Jump int `json:"jump,omitempty"`
	// Raised, with a forward Continue, also stops at every exception
	// event: where an exception is raised and each frame it passes
	// through (DAP's "raised" exception filter, as debugpy's; pdb has no
	// such command). Breakpoints stop as in pdb's continue. Backends
	// that simulate pdb (the trace backend) honour it.
	Raised bool `json:"raised,omitempty"`
}

// Reverse reports whether c moves backwards in time: an inverse action, or
// a reverse continue.
func (c Command) Reverse() bool { return c.Action.Inverse() || (c.Action == Continue && c.Backward) }

// Step is one entry of a session's history: the command and where it
// stopped. The first entry of a history is the start: zero Command.
type Step struct {
	Command Command `json:"command"`
	Stop    Stop    `json:"stop"`
}

// Backend is what answers a Session: the trace-backed debugger, or an
// engine that predicts states. Next gets the whole history so far
// (history[0] is the start) and the command, and returns the next stop; it
// must not keep the history slice. Source is the program text that line
// numbers refer to (for a --call program, with the `def main()` wrapper).
type Backend interface {
	Start(ctx context.Context) (Stop, error)
	Next(ctx context.Context, history []Step, cmd Command) (Stop, error)
	Source() string
}

// Inspector is optionally implemented by a Backend that knows more than the
// stops (the trace backend): the call stack and the current function's call.
type Inspector interface {
	// Stack lists the frames active at stop s, outermost first, each as its
	// latest state (a caller's is the line that made the call), s last.
	Stack(s Stop) []tracer.State
	// CallOf returns the call state of s's frame activation.
	CallOf(s Stop) (tracer.State, bool)
}

// StackTeller is optionally implemented by a Backend without an Inspector
// that knows its stops' call stacks better than the history shows them (a
// model engine: the stops a jump passed are not in the history).
type StackTeller interface {
	// StackOf is the call stack at the last stop of history, outermost
	// first, as Inspector.Stack.
	StackOf(history []Step) []tracer.State
}

// Outputter is optionally implemented by a Backend that ran the program
// (the trace backend): what it printed, shown when the run has ended since
// a trace does not say which state printed what.
type Outputter interface {
	Stdout() string
}

// ErrUnsupported is returned by a Backend for a command it cannot answer;
// the Session then emulates it when it can (reverse continue by steps).
var ErrUnsupported = errors.New("command not supported by this engine")

// ErrExited is returned for a forward command at the forward exit.
var ErrExited = errors.New("the program has exited; only reverse commands move from here")

// ErrAtStart is returned for a reverse command before the start (inv_exit_entry).
var ErrAtStart = errors.New("before the start of the program; only forward commands move from here")

// maxRepeats bounds the session's own loops (repeated continues toward a
// line whose text occurs on several lines, emulated reverse continue).
const maxRepeats = 100000

// Session is one debugging session over a Backend: the history of stops,
// the breakpoints, and the one verb Do. It is not safe for concurrent use;
// a front end serialises its requests.
type Session struct {
	b       Backend
	engine  string // the name of the engine that opened b ("" when not known)
	lines   []string
	breaks  map[int]bool
	bps     []*BreakSpec // every breakpoint, in the order set (breaks: their lines)
	lastNum int          // the last breakpoint number given
	history []Step
}

// NewSession starts b and returns a session stopped at its first stop.
func NewSession(ctx context.Context, b Backend) (*Session, error) {
	return NewEngineSession(ctx, b, "")
}

// NewEngineSession is NewSession for a backend that the engine called
// engine opened (Session.Engine names it to the front ends).
func NewEngineSession(ctx context.Context, b Backend, engine string) (*Session, error) {
	st, err := b.Start(ctx)
	if err != nil {
		return nil, err
	}
	return &Session{b: b, engine: engine, lines: SourceLines(b.Source()), breaks: map[int]bool{},
		history: []Step{{Stop: st}}}, nil
}

// Engine is the name of the engine whose backend the session drives ("",
// for a session made by NewSession).
func (s *Session) Engine() string { return s.engine }

// Output is what the program printed, when the backend ran it (ok false
// for a predicting backend).
func (s *Session) Output() (stdout string, ok bool) {
	if o, ok := s.b.(Outputter); ok {
		return o.Stdout(), true
	}
	return "", false
}

// Current is the stop the session is at.
func (s *Session) Current() Stop { return s.history[len(s.history)-1].Stop }

// History is every step so far, the start first. The caller must not modify it.
func (s *Session) History() []Step { return s.history }

// Source is the program text line numbers refer to.
func (s *Session) Source() string { return s.b.Source() }

// Backend returns the backend the session drives.
func (s *Session) Backend() Backend { return s.b }

// Line returns the text of line n (1-based), "" when out of range.
func (s *Session) Line(n int) string {
	if n < 1 || n > len(s.lines) {
		return ""
	}
	return s.lines[n-1]
}

// SetBreak sets a line breakpoint, refusing lines pdb refuses; a plain
// breakpoint already at the line is kept (no second one).
func (s *Session) SetBreak(line int) error {
	if why := CheckBreakLine(s.b.Source(), line); why != "" {
		return fmt.Errorf("line %d: %s", line, why)
	}
	for _, b := range s.bps {
		if b.Line == line && b.plain() {
			return nil
		}
	}
	s.add(&BreakSpec{Line: line})
	return nil
}

// add numbers bp (pdb's numbers: from 1, never reused in a session, kept
// across restarts) and sets it.
func (s *Session) add(bp *BreakSpec) {
	s.lastNum++
	bp.Number = s.lastNum
	s.bps = append(s.bps, bp)
	s.breaks[bp.Line] = true
}

// reindex rebuilds the breakpoint lines from the breakpoints (bdb keeps a
// line while any breakpoint is there, enabled or not).
func (s *Session) reindex() {
	s.breaks = map[int]bool{}
	for _, b := range s.bps {
		s.breaks[b.Line] = true
	}
}

// ClearBreak removes the breakpoints at line (of every kind).
func (s *Session) ClearBreak(line int) error {
	_, err := s.ClearLine(line)
	return err
}

// ClearLine removes the breakpoints at line (pdb's `cl FILE:LINE`) and
// returns them, in the order they were set.
func (s *Session) ClearLine(line int) ([]BreakSpec, error) {
	if !s.breaks[line] {
		return nil, fmt.Errorf("There is no breakpoint at line %d", line)
	}
	var gone []BreakSpec
	s.bps = slices.DeleteFunc(s.bps, func(b *BreakSpec) bool {
		if b.Line == line {
			gone = append(gone, *b)
		}
		return b.Line == line
	})
	s.reindex()
	return gone, nil
}

// ClearBreaks removes every breakpoint.
func (s *Session) ClearBreaks() { s.breaks, s.bps = map[int]bool{}, nil }

// Breaks lists the breakpoint lines in order.
func (s *Session) Breaks() []int {
	out := make([]int, 0, len(s.breaks))
	for l := range s.breaks {
		out = append(out, l)
	}
	sort.Ints(out)
	return out
}

// activeBreaks lists the lines with an enabled breakpoint, in order: the
// lines a backend without pdb's breakpoint logic stops at.
func (s *Session) activeBreaks() []int {
	var out []int
	for _, l := range s.Breaks() {
		if slices.ContainsFunc(s.bps, func(b *BreakSpec) bool { return b.Line == l && !b.Disabled }) {
			out = append(out, l)
		}
	}
	return out
}

// breakNumber is bdb's get_bpbynumber: the breakpoint numbered arg, or
// pdb's error.
func (s *Session) breakNumber(arg string) (*BreakSpec, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return nil, errors.New("Breakpoint number expected")
	}
	n, err := strconv.Atoi(arg)
	if err != nil {
		return nil, fmt.Errorf("Non-numeric breakpoint number %s", arg)
	}
	if n < 1 || n > s.lastNum {
		return nil, fmt.Errorf("Breakpoint number %d out of range", n)
	}
	for _, b := range s.bps {
		if b.Number == n {
			return b, nil
		}
	}
	return nil, fmt.Errorf("Breakpoint %d already deleted", n)
}

// BreakNumbered is the breakpoint numbered arg (a decimal number as pdb's
// commands take it); the error is pdb's.
func (s *Session) BreakNumbered(arg string) (BreakSpec, error) {
	b, err := s.breakNumber(arg)
	if err != nil {
		return BreakSpec{}, err
	}
	return *b, nil
}

// ClearNumber removes the breakpoint numbered arg (pdb's `cl N`).
func (s *Session) ClearNumber(arg string) (BreakSpec, error) {
	b, err := s.breakNumber(arg)
	if err != nil {
		return BreakSpec{}, err
	}
	s.bps = slices.DeleteFunc(s.bps, func(x *BreakSpec) bool { return x == b })
	s.reindex()
	return *b, nil
}

// SetCondition is pdb's `condition N [COND]`: COND replaces the
// breakpoint's condition ("" removes it). A condition is checked as
// AddBreak checks one.
func (s *Session) SetCondition(arg, cond string) (BreakSpec, error) {
	b, err := s.breakNumber(arg)
	if err != nil {
		return BreakSpec{}, err
	}
	c, text, err := s.parseCond(cond)
	if err != nil {
		return BreakSpec{}, err
	}
	b.cond, b.Cond = c, text
	return *b, nil
}

// SetIgnore is pdb's `ignore N COUNT`: the next COUNT crossings of the
// breakpoint (with its condition true) do not stop.
func (s *Session) SetIgnore(arg string, count int) (BreakSpec, error) {
	b, err := s.breakNumber(arg)
	if err != nil {
		return BreakSpec{}, err
	}
	b.Ignore = max(count, 0)
	return *b, nil
}

// EnableBreak is pdb's enable N (on) and disable N (off).
func (s *Session) EnableBreak(arg string, on bool) (BreakSpec, error) {
	b, err := s.breakNumber(arg)
	if err != nil {
		return BreakSpec{}, err
	}
	b.Disabled = !on
	return *b, nil
}

// ErrAmendStart is returned by Amend at the start: the first stop is the
// program's known entry, not a prediction, and a backend may derive it again
// (a model engine does after inv_exit_entry), which would drop the edit.
var ErrAmendStart = errors.New("the start of the run cannot be edited")

// Amend replaces the current stop's values (Locals and Arg) with stop's: a
// neural session's counterfactual (`set NAME = VALUE`); the next command
// continues from the edited stop, since the history is a model's context.
// The position must stay: stop must have the current stop's Event, Lineno,
// Function, Depth, Src, Frame, Gen, Exit and Index, else it is a different
// step (use Do). Amend refuses the start (ErrAmendStart) and exits (they have
// no state). The trace backend answers from the stop's position, so edits do
// not change what it answers.
func (s *Session) Amend(stop Stop) error {
	cur := s.Current()
	switch {
	case len(s.history) == 1:
		return ErrAmendStart
	case cur.IsExit():
		return errors.New("an exit has no state to edit")
	}
	if !stop.samePosition(cur) {
		return fmt.Errorf("amend must keep the stop's position (%s at line %d of %s), got %s at line %d of %s",
			cur.Event, cur.Lineno, cur.Function, stop.Event, stop.Lineno, stop.Function)
	}
	stop.Locals = slices.Clone(stop.Locals) // the history owns its stops
	s.history[len(s.history)-1].Stop = stop
	return nil
}

// samePosition reports whether a and b agree on every field but the values.
func (a Stop) samePosition(b Stop) bool {
	return a.Event == b.Event && a.Lineno == b.Lineno && a.Function == b.Function && a.Depth == b.Depth &&
		a.Src == b.Src && a.Frame == b.Frame && a.Gen == b.Gen && a.Exit == b.Exit && a.Index == b.Index
}

// Back drops the last step (a neural session's undo) and returns the stop
// it goes back to; false at the start.
func (s *Session) Back() (Stop, bool) {
	if len(s.history) <= 1 {
		return s.Current(), false
	}
	s.history = s.history[:len(s.history)-1]
	return s.Current(), true
}

// Restart starts the program again, as pdb's restart does, and returns the
// first stop; the breakpoints are kept. A live backend (Restarter) runs
// the program anew; otherwise the history after the first stop is dropped
// and the backend answers the next command from it, as after Back to the
// start.
func (s *Session) Restart(ctx context.Context) (Stop, error) {
	if r, ok := s.b.(Restarter); ok {
		st, err := r.Restart(ctx)
		if err != nil {
			return s.Current(), err
		}
		s.history = []Step{{Stop: st}}
		return st, nil
	}
	s.history = []Step{s.history[0]}
	return s.Current(), nil
}

// Do runs one command and returns where it stops. The session fills in the
// breakpoints in effect; a Continue with breakpoints set is repeated while
// the backend stops on a line that only shares its text with a breakpoint
// line; an InvStepInto that lands on an inv_line_call position steps once
// more (into the call's last state), so a user never rests there; a
// reverse continue the backend does not support is emulated by
// InvStepInto steps. Every step the backend took is in History.
func (s *Session) Do(ctx context.Context, cmd Command) (Stop, error) {
	if !cmd.Action.Valid() {
		return s.Current(), fmt.Errorf("unknown action %q", cmd.Action)
	}
	cur := s.Current()
	backward := cmd.Reverse()
	if cur.IsExit() && !backward && cur.Exit != ExitInvEntry {
		return cur, ErrExited
	}
	if cur.IsExit() && backward && cur.Exit == ExitInvEntry {
		return cur, ErrAtStart
	}
	cmd.Breaks = s.activeBreaks()
	if bb, ok := s.b.(breakpointBackend); ok && s.richBreaks() && cmd.Action != Breakpoint && (!backward || cmd.Action == Continue) {
		// The backend runs pdb's break_here itself (conditions, tbreak, functions).
		st, err := bb.nextWith(ctx, s.history, cmd, s.bps)
		s.dropDone()
		if err != nil {
			return s.Current(), err
		}
		s.history = append(s.history, Step{Command: cmd, Stop: st})
		return st, nil
	}
	defer s.dropDone()
	if cmd.Action == Continue && !cmd.Backward && len(cmd.Breaks) == 1 {
		cmd.Src, cmd.Line = s.Line(cmd.Breaks[0]), cmd.Breaks[0]
	}
	switch {
	case cmd.Action == Continue && cmd.Backward:
		// Repeated while the backend (which knows only the lines) stops
		// where the breakpoints' conditions fail, as a forward continue is.
		for range maxRepeats {
			before := s.Current()
			st, err := s.next(ctx, cmd)
			if errors.Is(err, ErrUnsupported) {
				return s.emulateReverseContinue(ctx, cmd.Breaks)
			}
			if err != nil || st.IsExit() || NewReverseContinue(nil, s.bps).Met(st.State) == 0 {
				return st, err
			}
			if st.Index == before.Index && st.State.SameEvent(before.State) {
				// The backend did not move (a model's walk back that reached
				// neither a breakpoint nor the start within its bound):
				// asking again would not move it either.
				return st, nil
			}
		}
		return s.Current(), fmt.Errorf("gave up after %d reverse continues", maxRepeats)
	case cmd.Action == Continue && len(cmd.Breaks) > 0, cmd.Action == Breakpoint && cmd.Line > 0:
		for i := range maxRepeats {
			st, err := s.next(ctx, cmd)
			if err != nil || st.IsExit() || st.Event != tracer.EventLine && cmd.Action == Continue {
				return st, err
			}
			if cmd.Action == Continue && s.breaks[st.Lineno] && s.stopsAt(st) || cmd.Action == Breakpoint && st.Lineno == cmd.Line {
				return st, nil
			}
			if !s.atBreakText(st, cmd) && !(i == 0 && cur.IsExit()) {
				// The backend stopped short of every breakpoint (a model's
				// walk at its bound): asking again would walk as far again.
				// (From before the start, backends answer with the start.)
				return st, nil
			}
		}
		return s.Current(), fmt.Errorf("gave up after %d continues", maxRepeats)
	case cmd.Action == InvStepInto:
		st, err := s.next(ctx, cmd)
		if err == nil && st.Event == KindInvLineCall {
			st, err = s.next(ctx, cmd)
		}
		return st, err
	}
	return s.next(ctx, cmd)
}

func (s *Session) next(ctx context.Context, cmd Command) (Stop, error) {
	st, err := s.b.Next(ctx, s.history, cmd)
	if err != nil {
		return s.Current(), err
	}
	s.history = append(s.history, Step{Command: cmd, Stop: st})
	return st, nil
}

// atBreakText reports whether a forward continue or breakpoint action
// that stopped at st may be repeated toward its breakpoint: st's line is a
// breakpoint's, or has its text (a model engine places a breakpoint by its
// line's text, which other lines may share).
func (s *Session) atBreakText(st Stop, cmd Command) bool {
	lines := cmd.Breaks
	if cmd.Action == Breakpoint {
		lines = []int{cmd.Line}
	}
	for _, n := range lines {
		if n == st.Lineno || s.Line(n) == st.Src {
			return true
		}
	}
	return false
}

func (s *Session) emulateReverseContinue(ctx context.Context, breaks []int) (Stop, error) {
	step := Command{Action: InvStepInto, Breaks: breaks}
	rule := NewReverseContinue(nil, s.bps)
	for range maxRepeats {
		st, err := s.next(ctx, step)
		if err != nil || st.IsExit() {
			return st, err
		}
		switch rule.Met(st.State) {
		case 0:
			return st, nil
		case 1: // the stop is the state met before this one
			s.history = s.history[:len(s.history)-1]
			return s.Current(), nil
		}
	}
	return s.Current(), fmt.Errorf("gave up after %d reverse steps", maxRepeats)
}

// Stack is the call stack at the current stop, outermost first. Without an
// Inspector backend it is rebuilt from the history (callers that were
// jumped over are then missing).
func (s *Session) Stack() []tracer.State {
	cur := s.Current()
	if cur.IsExit() {
		return nil
	}
	if in, ok := s.b.(Inspector); ok {
		return in.Stack(cur)
	}
	if st, ok := s.b.(StackTeller); ok {
		return st.StackOf(s.history)
	}
	var stack []tracer.State
	for _, h := range s.history {
		st := h.Stop
		if st.IsExit() {
			stack = stack[:0]
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].Depth >= st.Depth {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, st.State)
	}
	return stack
}

// Args are the current function's arguments: the locals of its call state
// (an Inspector's, else the latest call stop of the same frame in history).
func (s *Session) Args() (tracer.Locals, bool) {
	cur := s.Current()
	if cur.IsExit() {
		return nil, false
	}
	if in, ok := s.b.(Inspector); ok {
		c, ok := in.CallOf(cur)
		return c.Locals, ok
	}
	for i := len(s.history) - 1; i >= 0; i-- {
		st := s.history[i].Stop
		if st.Event == tracer.EventCall && st.Function == cur.Function && st.Depth == cur.Depth {
			return st.Locals, true
		}
	}
	return nil, false
}

// BreakSpec is one of pdb's breakpoints: at a line, or (Func set) at the
// first line a function executes, as pdb's `b FUNC` (Line is then the
// function's co_firstlineno, where pdb lists it); with a condition (a
// Python expression evaluated in the live frame on the real engine's live
// sessions; elsewhere one of Condition's forms over the reprs); temporary
// (tbreak: cleared when it stops the program). Number, Hits, Ignore and
// Disabled are bdb's number, hits, ignore and (not) enabled.
type BreakSpec struct {
	Line int    `json:"line"`
	Cond string `json:"cond,omitempty"`
	Temp bool   `json:"temp,omitempty"`
	Func string `json:"func,omitempty"`

	Number   int  `json:"number,omitempty"`
	Hits     int  `json:"hits,omitempty"`
	Ignore   int  `json:"ignore,omitempty"`
	Disabled bool `json:"disabled,omitempty"`

	cond      *Condition
	funcFirst int  // pdb's func_first_executable_line (Func set), 0 until known
	done      bool // a temporary breakpoint that stopped: cleared after the command
	// live evaluates the condition in a live run's frame at a state index
	// (known false: not evaluable there); set while a command runs.
	live func(k int, cond string) (ok, known bool, err error)
}

func (b *BreakSpec) plain() bool {
	return b.Cond == "" && !b.Temp && b.Func == "" && b.Ignore == 0 && !b.Disabled
}

// LiveConditions reports whether conditions are Python expressions
// evaluated in the program's frames (the real engine's live sessions);
// otherwise only Condition's forms over the recorded or predicted reprs.
func (s *Session) LiveConditions() bool {
	lr, ok := s.b.(LiveRunner)
	return ok && lr.IsLive()
}

// parseCond checks a condition: any Python expression that compiles (as
// pdb takes it) where conditions are evaluated live, else one of
// Condition's forms (the error says why not).
func (s *Session) parseCond(cond string) (*Condition, string, error) {
	cond = strings.TrimSpace(cond)
	if cond == "" {
		return nil, "", nil
	}
	c, err := ParseCondition(cond)
	if err == nil {
		return c, c.String(), nil
	}
	if !s.LiveConditions() {
		return nil, "", fmt.Errorf("%w; Python expressions are evaluated only where the real engine runs the program live", err)
	}
	return nil, cond, nil
}

// AddBreak sets a breakpoint with pdb's options. The line must be one
// pdb accepts; a condition must be one the session evaluates (parseCond).
// Function breakpoints need a backend that runs pdb's own breakpoint
// logic (the trace backend): a predicting engine has no frames to match.
// A plain line breakpoint at a line that has one is not set twice (see
// Break for pdb's way).
func (s *Session) AddBreak(bp BreakSpec) error {
	_, err := s.addBreak(bp, true)
	return err
}

// Break sets a breakpoint as pdb's b and tbreak do (every one a new
// numbered breakpoint, even at a line that has one) and returns it.
func (s *Session) Break(bp BreakSpec) (BreakSpec, error) {
	return s.addBreak(bp, false)
}

func (s *Session) addBreak(bp BreakSpec, dedup bool) (BreakSpec, error) {
	if bp.Func == "" || bp.Line > 0 {
		if why := CheckBreakLine(s.b.Source(), bp.Line); why != "" {
			return BreakSpec{}, fmt.Errorf("line %d: %s", bp.Line, why)
		}
	}
	if bp.Func != "" {
		if _, ok := s.b.(breakpointBackend); !ok {
			return BreakSpec{}, errors.New("function breakpoints need the real engine")
		}
	}
	c, text, err := s.parseCond(bp.Cond)
	if err != nil {
		return BreakSpec{}, err
	}
	bp.cond, bp.Cond = c, text
	bp.Hits, bp.funcFirst, bp.done, bp.live = 0, 0, false, nil
	if dedup && bp.plain() {
		if err := s.SetBreak(bp.Line); err != nil {
			return BreakSpec{}, err
		}
		return *s.bps[len(s.bps)-1], nil
	}
	s.add(&bp)
	return bp, nil
}

// BreakSpecs lists every breakpoint in the order they were set.
func (s *Session) BreakSpecs() []BreakSpec {
	out := make([]BreakSpec, len(s.bps))
	for i, b := range s.bps {
		out[i] = *b
	}
	return out
}

// richBreaks reports whether the backend's own breakpoint logic is needed:
// any breakpoint (pdb counts every breakpoint's hits).
func (s *Session) richBreaks() bool { return len(s.bps) > 0 }

// dropDone clears the temporary breakpoints that stopped the program.
func (s *Session) dropDone() {
	if !slices.ContainsFunc(s.bps, func(b *BreakSpec) bool { return b.done }) {
		return
	}
	s.bps = slices.DeleteFunc(s.bps, func(b *BreakSpec) bool { return b.done })
	s.reindex()
}

// stopsAt is pdb's effective() for a predicting backend's stop at a
// breakpoint line: a line breakpoint there whose condition holds (or
// cannot be evaluated, which stops as in pdb), hits and ignore counts
// kept as bdb keeps them. A temporary one that stops is marked for
// clearing.
func (s *Session) stopsAt(st Stop) bool {
	bp, flag := effective(s.bps, func(b *BreakSpec) bool { return b.Line == st.Lineno && b.Func == "" },
		func(b *BreakSpec) (bool, error) { return b.evalAt(-1, st.Locals) })
	if bp != nil && flag && bp.Temp {
		bp.done = true
	}
	return bp != nil
}

// Frames are the frames of the call stack at the current stop, outermost
// first, as Stops: with the trace backend each has its state's Index (so
// ArgsOf answers for it), else Index -1.
func (s *Session) Frames() []Stop {
	cur := s.Current()
	if cur.IsExit() {
		return nil
	}
	if rec, ok := s.b.(Recording); ok {
		tr := rec.Tree()
		if p, ok := rec.PosOf(cur); ok && p.Index >= 0 && p.Index < len(tr.T.States) {
			var rev []Stop
			for i := p.Index; i >= 0; i = tr.parent[i] {
				if i == p.Index {
					rev = append(rev, cur)
					continue
				}
				rev = append(rev, Stop{State: tr.T.States[i], Index: i})
			}
			slices.Reverse(rev)
			return rev
		}
	}
	stack := s.Stack()
	out := make([]Stop, len(stack))
	for i, st := range stack {
		out[i] = Stop{State: st, Index: -1}
	}
	if len(out) > 0 {
		out[len(out)-1] = cur
	}
	return out
}

// ArgsOf are the arguments of frame f's function (one of Frames), as Args
// gives them for the current stop.
func (s *Session) ArgsOf(f Stop) (tracer.Locals, bool) {
	cur := s.Current()
	if f.IsExit() {
		return nil, false
	}
	if f.Index == cur.Index && f.Frame == cur.Frame && f.Lineno == cur.Lineno {
		return s.Args()
	}
	if in, ok := s.b.(Inspector); ok && f.Index >= 0 {
		c, ok := in.CallOf(f)
		return c.Locals, ok
	}
	for i := len(s.history) - 1; i >= 0; i-- {
		st := s.history[i].Stop
		if st.Event == tracer.EventCall && st.Function == f.Function && st.Depth == f.Depth {
			return st.Locals, true
		}
	}
	return nil, false
}

// LastRun is the last state the program ran before the end the session
// stops at (a front end shows the end there, not where the last command
// started): the trace's last state for the trace backend, else the latest
// stop of the history before the end; false when the session is not at
// the end or nothing ran.
func (s *Session) LastRun() (Stop, bool) {
	cur := s.Current()
	if !cur.IsExit() || cur.Exit == ExitInvEntry {
		return Stop{}, false
	}
	if rec, ok := s.b.(Recording); ok {
		if n := len(rec.Tree().T.States); n > 0 {
			return StopAt(rec.Tree(), Pos{Index: n - 1}), true
		}
		return Stop{}, false
	}
	for i := len(s.history) - 1; i >= 0; i-- {
		if st := s.history[i].Stop; !st.IsExit() {
			return st, true
		}
	}
	return Stop{}, false
}
