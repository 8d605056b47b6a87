package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// CWM is the debugger.Backend of the cwm engine: CWM's own trace format
// (SPEC section 5), which has no actions. The backend keeps one predicted
// rollout, frame after frame from the entry's call, as CWM's demo does:
// step_into predicts one frame; step_over, step_return, breakpoint and
// continue predict frames until their target; backward commands move
// within the frames already predicted. The rollout is the context of every
// prediction; a history that went back (back, or a backward command) cuts
// it there.
//
// A CWM backend belongs to one session; a mutex serialises its methods.
type CWM struct {
	predicted
	modelSession
	entryLine int
	start     debugger.Stop

	// MaxRollout bounds the frames one command may predict; continue then
	// stops with exit never.
	MaxRollout int

	frames []cwmState // the rollout
	marks  []int      // marks[i]: the rollout index of history[i]'s stop
}

// cwmState is one predicted frame, placed.
type cwmState struct {
	st    tracer.State // Frame is a synthetic activation id
	ended bool         // the model wrote <|end_of_text|> after this frame
	conf  *debugger.Confidence
}

// NewCWM returns a CWM backend for p over pred.
func NewCWM(p tracer.Program, pred Predictor, base Draw) (*CWM, error) {
	b := &CWM{MaxRollout: 500, modelSession: modelSession{program: p}}
	if err := b.init(p, pred, base); err != nil {
		return nil, err
	}
	st, _, err := staticStart(b.ix, p)
	if err != nil {
		return nil, err
	}
	st.Frame = 1
	st.Predicted = true // read from the source, not a run
	b.start, b.entryLine = st, st.Lineno
	return b, nil
}

// Start returns the entry's call (or a script's first line); it is known.
func (b *CWM) Start(ctx context.Context) (debugger.Stop, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.frames = []cwmState{{st: b.start.State}}
	b.marks = []int{0}
	return b.start, nil
}

// sync cuts the rollout to the history's last stop and returns its index.
// An edited stop (set) replaces the rollout's frame, so the next prediction
// continues from the edited state.
func (b *CWM) sync(history []debugger.Step) (int, error) {
	n := len(history)
	if n > len(b.marks) || len(b.frames) == 0 {
		return 0, errors.New("engine: cwm: the history is not this backend's")
	}
	b.marks = b.marks[:n]
	pos := b.marks[n-1]
	last := history[n-1].Stop
	if last.IsExit() {
		return pos, nil
	}
	b.frames = b.frames[:pos+1]
	id := b.frames[pos].st.Frame
	b.frames[pos].st = last.State
	b.frames[pos].st.Frame = id
	if b.frames[pos].st.Event == debugger.KindInvLineCall {
		b.frames[pos].st.Event = tracer.EventLine
	}
	b.frames[pos].ended = false
	return pos, nil
}

func (b *CWM) stopAt(pos int) debugger.Stop {
	if pos < 0 {
		return debugger.BeforeStart()
	}
	s := b.frames[pos].st
	s.Frame = 0
	return debugger.Stop{State: s, Index: -1, Confidence: b.frames[pos].conf}
}

// exitStop is the exit after the model ended the trace at frame pos.
func (b *CWM) exitStop(pos int) debugger.Stop {
	st := debugger.Stop{State: tracer.State{Event: debugger.EventExit}, Exit: tracer.ExitNormal, Index: -1}
	last := b.frames[pos].st
	if last.Event == tracer.EventReturn && last.Depth == 0 && pos > 0 {
		// an uncaught exception: the module's exception event, then its return
		last = b.frames[pos-1].st
	}
	if last.Event == tracer.EventException && last.Depth == 0 {
		st.Exit, st.Arg = tracer.ExitError, last.Arg
	}
	return st
}

// Next answers cmd after history (see debugger.Backend). The stop is
// marked Predicted, with the confidence of the frames predicted for the
// command (a move within the rollout: the frame's own).
func (b *CWM) Next(ctx context.Context, history []debugger.Step, cmd debugger.Command) (debugger.Stop, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acc = confidenceSum{}
	st, err := b.next(ctx, history, cmd)
	if err != nil {
		return st, err
	}
	return b.mark(st), nil
}

func (b *CWM) next(ctx context.Context, history []debugger.Step, cmd debugger.Command) (debugger.Stop, error) {
	if len(history) == 0 {
		return debugger.Stop{}, errors.New("engine: empty history")
	}
	pos, err := b.sync(history)
	if err != nil {
		return debugger.Stop{}, err
	}
	cur := history[len(history)-1].Stop
	backward := cmd.Reverse()
	if cur.IsExit() {
		switch {
		case cur.Exit == debugger.ExitInvEntry && !backward:
			b.frames, b.marks = b.frames[:1], append(b.marks, 0)
			return b.stopAt(0), nil
		case cur.Exit == debugger.ExitInvEntry || !backward:
			return debugger.Stop{}, debugger.ErrExited
		}
		// Backward from the end: the rollout is still there.
		cur = b.stopAt(pos)
		if !b.frames[pos].ended {
			return debugger.Stop{}, ErrBackFromEnd
		}
		if cmd.Action == debugger.InvStepInto || cmd.Action == debugger.InvStepOver {
			b.marks = append(b.marks, pos)
			return cur, nil
		}
	}
	if backward {
		q := b.back(debugger.Pos{Index: pos, LineCall: cur.Event == debugger.KindInvLineCall}, cmd)
		b.marks = append(b.marks, max(q.Index, 0))
		st := b.stopAt(q.Index)
		if q.LineCall {
			st.Event = debugger.KindInvLineCall
		}
		return st, nil
	}
	// Forwards: frames predicted one at a time, and the stop rule every
	// engine shares (debugger.Rollout) says where the command stops.
	if cmd.Action == debugger.Breakpoint && cmd.Src == "" {
		cmd.Src = b.ix.line(cmd.Line)
	}
	from, ended, bound := pos, false, false
	limit := max(b.MaxRollout, 1)
	next := func() (tracer.State, bool, error) {
		switch {
		case b.frames[pos].ended:
			ended = true
			return tracer.State{}, false, nil
		case pos-from >= limit:
			bound = true
			return tracer.State{}, false, nil
		}
		if err := b.predictNext(ctx, pos); err != nil {
			return tracer.State{}, false, err
		}
		pos++
		if b.frames[pos].ended && b.frames[pos].st.Event == "" { // the end itself
			b.frames = b.frames[:pos]
			pos--
			b.frames[pos].ended = true
			ended = true
			return tracer.State{}, false, nil
		}
		return b.frames[pos].st, true, nil
	}
	_, k, err := debugger.Rollout(b.stackAt(from), cmd, next)
	switch {
	case err != nil:
		return debugger.Stop{}, err
	case from+1+k <= pos:
		b.marks = append(b.marks, from+1+k)
		return b.stopAt(from + 1 + k), nil
	case ended:
		b.marks = append(b.marks, pos)
		return b.exitStop(pos), nil
	}
	b.marks = append(b.marks, pos)
	if bound && (cmd.Action == debugger.Continue || cmd.Action == debugger.Breakpoint) {
		// The target never came: as SPEC's breakpoint, the run's end; a
		// rollout that does not end is an infinite loop.
		return debugger.Stop{State: tracer.State{Event: debugger.EventExit, Arg: "rollout limit"}, Exit: tracer.ExitNever, Index: -1}, nil
	}
	return b.stopAt(pos), nil
}

// stackAt is the call stack at rollout frame pos, outermost first: the
// latest frame before it at each smaller depth (the line that made the
// call), pos last.
func (b *CWM) stackAt(pos int) []tracer.State {
	cur := b.frames[pos].st
	out := []tracer.State{cur}
	want := cur.Depth - 1
	for q := pos - 1; q >= 0 && want >= 0; q-- {
		if s := b.frames[q].st; s.Depth == want {
			out = append(out, s)
			want--
		}
	}
	slices.Reverse(out)
	return out
}

// StackOf implements debugger.StackTeller: the rollout's frames are every
// state up to the stop, so its callers are known exactly.
func (b *CWM) StackOf(history []debugger.Step) []tracer.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(history)
	if n == 0 || n > len(b.marks) || history[n-1].Stop.IsExit() || b.marks[n-1] >= len(b.frames) {
		return nil
	}
	stack := b.stackAt(b.marks[n-1])
	stack[len(stack)-1], _ = stateOf(history[n-1].Stop) // as shown (set edits it)
	for i := range stack {
		stack[i].Frame = 0
	}
	return stack
}

// back moves backwards within the rollout, by the rules every engine
// shares: the inverse tree's (debugger.Tree.Apply) over the frames so
// far, and the rule of a reverse continue. Index -1 is before the entry.
func (b *CWM) back(p debugger.Pos, cmd debugger.Command) debugger.Pos {
	if cmd.Action == debugger.Continue {
		rule := debugger.NewReverseContinue(cmd.Breaks, nil)
		from := p.Index - 1
		if p.LineCall {
			from = p.Index // the line itself is in the past of its twin
		}
		for q := from; q >= 0; q-- {
			if back := rule.Met(b.frames[q].st); back >= 0 {
				return debugger.Pos{Index: q + back}
			}
		}
		return debugger.EntryExit
	}
	states := make([]tracer.State, p.Index+1)
	for i := range states {
		states[i] = b.frames[i].st
	}
	tr := debugger.NewTree(&tracer.Trace{States: states, Call: b.prog.Call})
	q := tr.Apply(p, cmd)
	for q.LineCall && q.Index < p.Index {
		// A line that made calls, met from after them: its calls' last
		// state, as the session's second step from there would give (the
		// rollout after p is cut, so the twin could not be stepped from).
		q = tr.Apply(q, cmd)
	}
	return q
}

// prompt is the CWM text of the rollout up to and including frame pos.
func (b *CWM) prompt(pos int) (string, error) {
	states := make([]tracer.State, pos+1)
	for i := range states {
		states[i] = b.frames[i].st
	}
	var sb strings.Builder
	p, err := format.CWMPrompt(b.source, b.entryLine)
	if err != nil {
		return "", err
	}
	sb.WriteString(p)
	for i, f := range format.CWMFrames(states) {
		t, err := format.CWMFrameText(f)
		if err != nil {
			return "", fmt.Errorf("frame %d: %w", i, err)
		}
		sb.WriteString(t)
	}
	return sb.String(), nil
}

// predictNext appends the predicted frame after pos (the rollout must end
// at pos). The end of the trace is appended as an empty state with ended.
func (b *CWM) predictNext(ctx context.Context, pos int) error {
	prompt, err := b.prompt(pos)
	if err != nil {
		return err
	}
	text, conf, err := b.ask(ctx, prompt)
	if err != nil {
		return err
	}
	if t := strings.TrimSpace(text); t == "" || strings.HasPrefix(t, format.TokEndOfText) {
		b.frames = append(b.frames, cwmState{ended: true, conf: conf})
		return nil
	}
	if !strings.HasSuffix(text, format.TokFrameSep) {
		text += format.TokFrameSep
	}
	f, _, _, err := format.ParseCWMFrame(strings.TrimLeft(text, " \n"))
	if err != nil {
		return fmt.Errorf("engine: the model wrote no valid CWM frame: %w", err)
	}
	// Place it as a step_into from the previous frame.
	hist := make([]debugger.Step, pos+1)
	for i := range hist {
		hist[i].Stop = debugger.Stop{State: b.frames[i].st}
	}
	s := tracer.State{Event: f.Event, Src: f.Src, Arg: f.Arg}
	cur := debugger.Stop{State: b.frames[pos].st}
	b.ix.place(&s, cur, stackOf(hist), debugger.StepInto, 0)
	s.Frame = b.activation(pos, s)
	if s.Event == tracer.EventCall || s.Event == tracer.EventLine {
		var prev tracer.Locals
		for q := pos; q >= 0; q-- {
			if p := b.frames[q].st; p.Frame == s.Frame && (p.Event == tracer.EventCall || p.Event == tracer.EventLine) {
				prev = p.Locals
				break
			}
		}
		s.Locals = format.MergeCWMLocals(prev, f)
	}
	b.frames = append(b.frames, cwmState{st: s, conf: conf})
	return nil
}

// activation gives s the id of its Python frame: a new one for a call,
// else the latest frame at its depth.
func (b *CWM) activation(pos int, s tracer.State) int {
	maxID := 0
	for q := 0; q <= pos; q++ {
		maxID = max(maxID, b.frames[q].st.Frame)
	}
	if s.Event == tracer.EventCall {
		return maxID + 1
	}
	for q := pos; q >= 0; q-- {
		if p := b.frames[q].st; p.Depth == s.Depth {
			if p.Event == tracer.EventReturn && p.Depth > 0 && q == pos {
				continue
			}
			return p.Frame
		}
		if b.frames[q].st.Depth < s.Depth {
			break
		}
	}
	return maxID + 1
}
