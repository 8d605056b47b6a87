package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"ndb/debugger"
	"ndb/format"
	"ndb/internal/pysource"
	"ndb/tracer"
)

// Predictor writes what follows a prompt: k candidate continuations. For
// ndb's format a continuation is one frame (format.FrameText); for CWM's,
// one CWM frame up to its <|frame_sep|>, or <|end_of_text|>.
type Predictor interface {
	Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error)
}

// Draw says how to decode: the zero Draw is greedy.
type Draw struct {
	Temperature float64
	TopP        float64
	Seed        uint64
}

// ResampleDraw is how `resample` decodes: the paper's sampling
// (temperature 0.6, top-p 0.95), with a fresh seed each time.
var ResampleDraw = Draw{Temperature: 0.6, TopP: 0.95}

// PredictorFunc adapts a function to Predictor (tests, wrappers).
type PredictorFunc func(ctx context.Context, prompt string, k int, d Draw) ([]string, error)

// Predict calls f.
func (f PredictorFunc) Predict(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
	return f(ctx, prompt, k, d)
}

// maxContextFrames bounds the frames of one prompt: older ones are dropped
// (the segment then starts at a later stop, whose frame shows all locals).
const maxContextFrames = 256

// Neural is the debugger.Backend of the model and openai engines: every
// stop is predicted in ndb's format (SPEC section 5) from the predicted
// history, which is the context of each prediction; the program never
// runs. Commands the format has no single action for, or whose action
// would not stop where pdb does, are rolled out step by step and stopped by
// the rules every engine shares (pdb's until, continue with several
// breakpoints, n and r while breakpoints are set, r at a return, reverse
// continue), at most MaxRollout predictions each.
//
// A Neural backend belongs to one session; its methods are serialised by a
// mutex so that a front end may call Resample from another goroutine.
type Neural struct {
	predicted
	modelSession
	start  debugger.Stop
	script bool
	paths  notedPaths // how each answer was reached (stops.go)

	// MaxRollout bounds the predictions of one rolled-out command, and
	// RolloutTime (when positive) the time they take: a model that never
	// reaches a breakpoint or the start would otherwise keep a user waiting
	// for minutes once each prediction fills the context window.
	MaxRollout  int
	RolloutTime time.Duration
	// JumpSteps, when positive, answers the forward jumps (step_over,
	// step_return, breakpoint, continue) by predicting step_into states one
	// at a time until the jump's target (SPEC section 3), at most JumpSteps
	// of them, instead of one prediction of the target; where that fails
	// (stepTo), the one prediction answers after all. Why: a small model
	// predicts one step far better than a jump over many.
	JumpSteps int
	// JumpBelow, when positive, keeps JumpSteps to the jumps whose one
	// direct prediction is unsure: its least token probability below
	// JumpBelow (test-time compute where the model is unsure).
	JumpBelow float64
	// JumpTime, when positive, bounds the time stepping one jump takes:
	// past it the direct prediction answers (a step's prediction grows
	// with the frame's history, and a jump through a long loop kept a
	// user waiting for seconds).
	JumpTime time.Duration
}

// NewNeural returns a backend predicting p's states with pred.
func NewNeural(p tracer.Program, pred Predictor, base Draw) (*Neural, error) {
	b := &Neural{MaxRollout: 200, RolloutTime: 30 * time.Second, modelSession: modelSession{program: p}}
	if err := b.init(p, pred, base); err != nil {
		return nil, err
	}
	st, script, err := staticStart(b.ix, p)
	if err != nil {
		return nil, err
	}
	st.Predicted = true // read from the source, not a run (no confidence: it is not a model's guess)
	b.start, b.script = st, script
	return b, nil
}

// staticStart is the first stop, known without running anything: main's
// call for a --call program (SPEC section 5), else the first line event of
// the module as pdb shows it.
func staticStart(ix *sourceIndex, p tracer.Program) (debugger.Stop, bool, error) {
	if strings.ContainsAny(p.Call, "\r\n") {
		return debugger.Stop{}, false, fmt.Errorf("engine: call %q must be a single line", p.Call)
	}
	if strings.TrimSpace(p.Call) != "" {
		w := CallWrapper(ix.px)
		if w == nil {
			return debugger.Stop{}, false, errors.New("engine: wrapped program has no main")
		}
		return debugger.Stop{State: tracer.State{Event: tracer.EventCall, Lineno: w.First, Function: w.Name,
			Src: ix.line(w.First)}, Index: -1}, false, nil
	}
	for n := 1; n <= len(ix.lines); n++ {
		if ix.scope[n-1] == "<module>" {
			return debugger.Stop{State: tracer.State{Event: tracer.EventLine, Lineno: n, Function: "<module>",
				Src: ix.lines[n-1]}, Index: -1}, true, nil
		}
	}
	return debugger.Stop{}, false, errors.New("engine: the program has no statement")
}

// CallWrapper is the def tracer.WrapCall puts around a --call program's
// call (SPEC section 5: `def main():` returning it, after the program):
// the module's last def main, since the program may define a main of its
// own before it. Nil if there is none.
func CallWrapper(px *pysource.Index) *pysource.Scope {
	defs := px.TopLevel(pysource.Function)
	for i := len(defs) - 1; i >= 0; i-- {
		if defs[i].Name == "main" {
			return defs[i]
		}
	}
	return nil
}

// Start returns the first stop (not predicted: it is known).
func (b *Neural) Start(ctx context.Context) (debugger.Stop, error) { return b.start, nil }

// ErrBackFromEnd says a model cannot step backwards from a forward exit.
var ErrBackFromEnd = errors.New("a model engine cannot step back from the program's end (its text has no state there); use back to undo")

// Next predicts the stop after cmd (see debugger.Backend). The stop is
// marked Predicted, with the confidence of the predictions that answered
// the command.
func (b *Neural) Next(ctx context.Context, history []debugger.Step, cmd debugger.Command) (debugger.Stop, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.acc = confidenceSum{}
	st, path, err := b.next(ctx, history, cmd)
	if err != nil {
		return st, err
	}
	st = b.mark(st)
	b.paths.note(history, path, st)
	return st, nil
}

func (b *Neural) next(ctx context.Context, history []debugger.Step, cmd debugger.Command) (debugger.Stop, []debugger.Step, error) {
	if len(history) == 0 {
		return debugger.Stop{}, nil, errors.New("engine: empty history")
	}
	cur := history[len(history)-1].Stop
	backward := cmd.Reverse()
	if cur.IsExit() {
		switch {
		case cur.Exit == debugger.ExitInvEntry && !backward:
			return b.start, nil, nil
		case backward && cur.Exit != debugger.ExitInvEntry:
			return debugger.Stop{}, nil, ErrBackFromEnd
		default:
			return debugger.Stop{}, nil, debugger.ErrExited
		}
	}
	// The context of every prediction: the history with each stop a
	// command reached by several predictions shown as those predictions.
	hist := b.paths.expand(history)
	w := newWalker(b, ctx, hist)
	if len(cmd.Breaks) > 0 {
		cmd = b.dropUnreachable(hist, cmd)
		if cmd.Action == debugger.Continue && backward && len(cmd.Breaks) == 0 {
			st := debugger.BeforeStart()
			st.Predicted = true
			return st, nil, nil
		}
	}
	if !b.resample {
		// a step the stops seen already decide (a step back over a step,
		// a step forward again): the model is not asked again
		if st, ok := debugger.Recall(hist, cmd, b.ix.stepText()); ok {
			return st, nil, nil
		}
		if backward && cmd.Action != debugger.Continue && b.replay(ctx, history) {
			hist = b.paths.expand(history)
			w = newWalker(b, ctx, hist)
			if st, ok := debugger.Recall(hist, cmd, b.ix.stepText()); ok {
				return st, nil, nil
			}
		}
	}
	switch {
	case backward && cmd.Action == debugger.Continue:
		return w.reverseContinue(cmd.Breaks)
	case backward:
		st, err := w.one(format.Step{Action: cmd.Action}, 0)
		return st, w.path, err
	}
	if b.JumpSteps > 0 && b.JumpBelow <= 0 {
		if st, ok, err := w.stepTo(cmd); ok || err != nil {
			return st, w.path, err
		}
		b.acc = confidenceSum{} // the direct prediction answers: its confidence alone
		w.reset()
	}
	if rolledOut(cmd, cur) {
		// The format has no one action for these: predicted steps, and
		// pdb's rules (debugger.Rollout) say where the command stops.
		by := debugger.StepInto
		if cmd.Action != debugger.Continue && len(cmd.Breaks) == 0 {
			by = debugger.StepOver // no callee can stop n, unt or r without breakpoints: skip them
		}
		st, res, err := w.walk(cmd, by, b.MaxRollout)
		if err != nil || res != walkBound || cmd.Until || cmd.Action == debugger.Continue {
			return st, w.path, err // an until or continue at the bound: the last state reached
		}
		b.acc = confidenceSum{} // n or r at the bound: the direct prediction answers
		w.reset()
	}
	st, err := b.direct(w, history, cmd)
	if err != nil || b.JumpSteps <= 0 || b.JumpBelow <= 0 || b.acc.get() == nil || b.acc.min >= b.JumpBelow {
		return st, w.path, err
	}
	// an unsure jump: stepped to its target instead, where that works
	direct, path, acc := st, slices.Clone(w.path), b.acc
	w.reset()
	b.acc = confidenceSum{}
	if st, ok, err := w.stepTo(cmd); ok || err != nil {
		return st, w.path, err
	}
	b.acc = acc
	return direct, path, nil
}

// replay fills in the states a forward jump passed over before a step
// back from its answer: the jump is walked again from the stop it was given
// at, by step_into predictions (stepTo), and where that walk arrives at the
// very stop the jump answered, the walk is noted as the jump's path, from
// which Recall answers the step back. Why: a model predicts a step forward
// far better than a step back (the state before a jump's answer is a value
// the run computed on the way). False where the last command was no such
// jump, it was stepped already, or the walk went elsewhere.
func (b *Neural) replay(ctx context.Context, history []debugger.Step) bool {
	n := len(history)
	if b.JumpSteps <= 0 || n < 2 {
		return false
	}
	last := history[n-1]
	if last.Command.Reverse() || last.Command.Action == debugger.StepInto || history[n-2].Stop.IsExit() {
		return false
	}
	if b.paths.stepped(n - 1) {
		return false
	}
	w := newWalker(b, ctx, b.paths.expand(history[:n-1]))
	st, ok, err := w.stepTo(last.Command)
	b.acc = confidenceSum{} // the step back's answer keeps its own confidence
	if err != nil || !ok || !debugger.SameStop(st, last.Stop) {
		return false
	}
	b.paths.note(history[:n-1], w.path, last.Stop)
	return true
}

// direct answers cmd by the one prediction of its format action.
func (b *Neural) direct(w *walker, history []debugger.Step, cmd debugger.Command) (debugger.Stop, error) {
	switch {
	case cmd.Action == debugger.Breakpoint:
		src := cmd.Src
		if src == "" {
			src = b.ix.line(cmd.Line)
		}
		return w.toLine(history, cmd, src, false)
	case cmd.Action == debugger.Continue && cmd.Src != "":
		return w.toLine(history, cmd, cmd.Src, true)
	case cmd.Action.Valid():
		return w.one(format.Step{Action: cmd.Action}, 0)
	}
	return debugger.Stop{}, fmt.Errorf("engine: unknown action %q", cmd.Action)
}

// dropUnreachable removes from a command's breakpoints the lines pdb
// cannot stop at: a line that runs nothing (pysource's NeverRuns: a
// docstring's, a closing bracket's, an uncalled function's) and, for a continue, a line of a
// script's module code that runs once and that the module's frame has
// left behind (forwards) or not reached yet (backwards). A model asked for
// such a line names a stop there anyway. With none left, a forward
// continue runs to the end, a reverse one back to before the start.
func (b *Neural) dropUnreachable(hist []debugger.Step, cmd debugger.Command) debugger.Command {
	stack := b.ix.stackAt(hist)
	once := cmd.Action == debugger.Continue && b.script && len(stack) > 0 && stack[0].Function == "<module>"
	reachable := func(l int) bool {
		if silent := b.ix.px.NeverRuns(l, b.script); silent || !once {
			return !silent
		}
		at := stack[0].Lineno
		if !cmd.Backward {
			return !b.ix.px.Passed(l, at)
		}
		// the stop itself is the line event of once-run code: its only one
		onlyHit := len(stack) == 1 && stack[0].Event == tracer.EventLine && l == at && b.ix.px.Passed(l, at)
		return !b.ix.px.Ahead(l, at) && !onlyHit
	}
	keep := slices.DeleteFunc(slices.Clone(cmd.Breaks), func(l int) bool { return !reachable(l) })
	if len(keep) == len(cmd.Breaks) {
		return cmd
	}
	cmd.Breaks = keep
	if cmd.Action == debugger.Continue {
		cmd.Src, cmd.Line = "", 0
		if len(keep) == 1 && !cmd.Backward {
			cmd.Src, cmd.Line = b.ix.line(keep[0]), keep[0]
		}
	}
	return cmd
}

// rolledOut reports whether a forward command at cur is answered by
// predicted steps instead of one prediction: pdb's until, a continue with
// several breakpoints, a step over or out while breakpoints are set (pdb
// stops at one on the way, which the format's step_over and step_return
// skip), and a step out at a return (pdb goes on to the caller's next stop
// in its own frame; the format's step_return to the next state, which may
// be another call made by the caller's line).
func rolledOut(cmd debugger.Command, cur debugger.Stop) bool {
	switch cmd.Action {
	case debugger.StepOver:
		return cmd.Until || len(cmd.Breaks) > 0
	case debugger.StepReturn:
		return len(cmd.Breaks) > 0 || cur.Event == tracer.EventReturn
	case debugger.Continue:
		return len(cmd.Breaks) > 1 || cmd.Raised
	}
	return false
}

// maxBreakRepeats bounds how often one breakpoint is predicted again
// because the model's stop shares the breakpoint's text but not its line.
const maxBreakRepeats = 32

// repeatsOf counts the trailing history entries that answered cmd's
// breakpoint line.
func repeatsOf(history []debugger.Step, cmd debugger.Command) int {
	n := 0
	for i := len(history) - 1; i > 0; i-- {
		c := history[i].Command
		if c.Action != cmd.Action || c.Line != cmd.Line || cmd.Line == 0 {
			break
		}
		n++
	}
	return n
}

// walker makes the predictions of one command: each is asked with the
// context so far and joins it; path keeps them, the answer last.
type walker struct {
	b     *Neural
	ctx   context.Context
	start time.Time // for RolloutTime
	// stepEnd: when stepping a jump must give up (JumpTime; zero: never)
	stepEnd time.Time
	hist    []debugger.Step // the context: the (expanded) history, then path
	n0      int             // the history's length in hist
	path    []debugger.Step
}

func newWalker(b *Neural, ctx context.Context, hist []debugger.Step) *walker {
	return &walker{b: b, ctx: ctx, start: time.Now(), hist: hist, n0: len(hist)}
}

// timeUp reports whether the command has spent its RolloutTime.
func (w *walker) timeUp() bool {
	return w.b.RolloutTime > 0 && time.Since(w.start) > w.b.RolloutTime
}

// reset drops the predictions made so far (a direct prediction answers
// after all).
func (w *walker) reset() { w.hist, w.path = w.hist[:w.n0], nil }

// cut keeps the first n predictions.
func (w *walker) cut(n int) { w.hist, w.path = w.hist[:w.n0+n], w.path[:n] }

// one predicts the state after step and adds it to the context.
func (w *walker) one(step format.Step, wantLine int) (debugger.Stop, error) {
	st, err := w.b.predict(w.ctx, w.hist, step, wantLine)
	if err != nil {
		return st, err
	}
	if step.Action.Inverse() && w.b.script && st.Event == tracer.EventCall && st.Src == "" {
		// A script's module call, which has no text, is before the start
		// (pdb's first stop is the module's first line), as on every engine.
		before := debugger.BeforeStart()
		before.Predicted, before.Confidence = true, st.Confidence
		st = before
		if cur := w.hist[len(w.hist)-1].Stop; step.Action != debugger.InvStepCall && !w.b.atStartLine(cur) {
			// One step back from a later state reaches the start at most.
			st = w.b.start
		}
	}
	s := debugger.Step{Command: debugger.Command{Action: step.Action, Src: step.Src}, Stop: st}
	w.hist, w.path = append(w.hist, s), append(w.path, s)
	return st, nil
}

// toLine answers a breakpoint by the format's `breakpoint SRC`, which
// stops at the next state with the line's text. pdb's continue stops only
// at a line event: from another state of the line (its return, say) the
// breakpoint is predicted again.
func (w *walker) toLine(history []debugger.Step, cmd debugger.Command, src string, lineEvent bool) (debugger.Stop, error) {
	// debugger.Session repeats a breakpoint until its line is reached
	// (the text may occur on several lines); bound that for a model.
	if n := repeatsOf(history, cmd); n >= maxBreakRepeats {
		return debugger.Stop{}, fmt.Errorf("engine: gave up: the model did not reach line %d in %d predictions", cmd.Line, n)
	}
	for range maxBreakRepeats {
		st, err := w.one(format.Step{Action: debugger.Breakpoint, Src: src}, cmd.Line)
		switch {
		case err != nil || st.IsExit():
			return st, err
		case st.Src != src:
			return debugger.Stop{}, fmt.Errorf("engine: the model stopped at %q, which is not the breakpoint's line %q", st.Src, src)
		case !lineEvent || st.Event == tracer.EventLine:
			return st, nil
		}
	}
	return debugger.Stop{}, fmt.Errorf("engine: gave up: the model did not reach a line event of %q in %d predictions", src, maxBreakRepeats)
}

// walkResult says how a walk ended.
type walkResult int

const (
	walkStop  walkResult = iota // the stop rule stopped at a predicted state
	walkEnd                     // the model ended the program first
	walkLost                    // the model ended the program where it cannot end (not right after the outermost return)
	walkBound                   // the bound came first
)

// walk answers a forward command by predicting steps one at a time (by:
// step_into, or step_over where no callee can stop the command), at most
// limit of them, until the stop rule every engine shares (debugger.Rollout:
// pdb's rules; the SPEC's for the breakpoint action) stops at one. It
// returns that stop, the exit the model ended the program with, or at the
// bound the last state predicted.
func (w *walker) walk(cmd debugger.Command, by debugger.Action, limit int) (debugger.Stop, walkResult, error) {
	var stops []debugger.Stop
	res, exit := walkEnd, debugger.Stop{}
	next := func() (tracer.State, bool, error) {
		if len(stops) >= max(limit, 1) || w.timeUp() || !w.stepEnd.IsZero() && time.Now().After(w.stepEnd) {
			res = walkBound
			return tracer.State{}, false, nil
		}
		last := w.hist[len(w.hist)-1].Stop
		a := by
		if last.Event == tracer.EventReturn || last.Event == tracer.EventException {
			a = debugger.StepInto // the same next state, and a call after it is placed as a step_into's
		}
		st, err := w.one(format.Step{Action: a}, 0)
		if err != nil {
			return tracer.State{}, false, err
		}
		if st.IsExit() {
			if !(last.Depth <= 0 && (last.Event == tracer.EventReturn || last.Event == tracer.EventException)) {
				res = walkLost
			}
			exit = st
			return tracer.State{}, false, nil
		}
		stops = append(stops, st)
		return st.State, true, nil
	}
	_, k, err := debugger.Rollout(w.b.ix.stackAt(w.hist), cmd, next)
	switch {
	case err != nil:
		return debugger.Stop{}, walkStop, err
	case k < len(stops):
		w.cut(k + 1)
		return stops[k], walkStop, nil
	case res == walkBound && len(stops) > 0:
		return stops[len(stops)-1], res, nil
	case res == walkBound:
		return w.hist[len(w.hist)-1].Stop, res, nil
	}
	return exit, res, nil
}

// reverseContinue walks back by inv_step_into predictions, at most
// MaxRollout of them, until the rule of a reverse continue
// (debugger.ReverseContinue) stops, or the start.
func (w *walker) reverseContinue(breaks []int) (debugger.Stop, []debugger.Step, error) {
	rule := debugger.NewReverseContinue(breaks, nil)
	for n := 0; n < max(w.b.MaxRollout, 1) && !w.timeUp(); n++ {
		st, err := w.one(format.Step{Action: debugger.InvStepInto}, 0)
		if err != nil || st.IsExit() {
			return st, w.path, err
		}
		switch rule.Met(st.State) {
		case 0:
			return st, w.path, nil
		case 1: // the state met before this one
			w.cut(len(w.path) - 1)
			return w.path[len(w.path)-1].Stop, w.path, nil
		}
	}
	return w.hist[len(w.hist)-1].Stop, w.path, nil
}

// stepTo answers a forward jump (step over, step out, a continue with at
// most one breakpoint, the breakpoint action) by walking at most JumpSteps
// step_into predictions; ok is false for other commands, when the bound
// was reached first, when the model ended the program where it cannot end,
// and when a breakpoint's walk ended without reaching its line (whether
// the line is reached at all is the direct prediction's to say).
func (w *walker) stepTo(cmd debugger.Command) (debugger.Stop, bool, error) {
	switch {
	case cmd.Until, cmd.Action == debugger.StepInto, cmd.Action == debugger.Continue && len(cmd.Breaks) > 1:
		return debugger.Stop{}, false, nil
	}
	if w.b.JumpTime > 0 {
		w.stepEnd = time.Now().Add(w.b.JumpTime)
		defer func() { w.stepEnd = time.Time{} }()
	}
	st, res, err := w.walk(cmd, debugger.StepInto, w.b.JumpSteps)
	switch {
	case err != nil:
		return st, false, err
	case res == walkStop:
		return st, true, nil
	case res == walkEnd && cmd.Action != debugger.Breakpoint && (cmd.Action != debugger.Continue || len(cmd.Breaks) == 0):
		return st, true, nil
	}
	return debugger.Stop{}, false, nil
}

// stepOf is the format action a history entry was reached by, when the
// format has one that says exactly where it went.
func stepOf(c debugger.Command, st debugger.Stop) (format.Step, bool) {
	switch {
	case c.Action == "":
		return format.Step{}, false
	case c.Action == debugger.Breakpoint:
		return format.Step{Action: debugger.Breakpoint, Src: c.Src}, c.Src != ""
	case c.Action == debugger.Continue && c.Backward, c.Until:
		return format.Step{}, false
	case c.Action == debugger.Continue && st.IsExit():
		return format.Step{Action: debugger.Continue}, true
	case c.Action == debugger.Continue && len(c.Breaks) > 0:
		// It stopped at the first hit of a breakpoint line: that is
		// exactly `breakpoint SRC` of the line it stopped on.
		return format.Step{Action: debugger.Breakpoint, Src: st.Src}, st.Event == tracer.EventLine
	}
	return format.Step{Action: c.Action}, c.Action.Valid()
}

// segment is the context of a prediction in one direction: the longest
// tail of hist whose steps the format can write in that direction. When
// the tail starts at a stop the history had already visited in that
// direction (time travel: forwards, back, forwards again), the context
// before that visit is joined on. At most maxContextFrames stops are kept;
// first is the history index of the first stop, -1 when older ones were
// dropped.
func segment(hist []debugger.Step, inverse bool) (stops []debugger.Stop, steps []format.Step, first int) {
	stops, steps, first = tail(hist, inverse)
	for depth := 0; first > 0 && depth < 8; depth++ {
		anchor := hist[first].Stop
		j := first - 1
		for j >= 0 && !debugger.SameStop(hist[j].Stop, anchor) {
			j--
		}
		if j < 0 {
			break
		}
		more, moreSteps, f := tail(hist[:j+1], inverse)
		if len(more) < 2 {
			break
		}
		stops = append(more, stops[1:]...)
		steps = append(moreSteps, steps...)
		first = f
	}
	if n := len(stops); n > maxContextFrames {
		stops, steps, first = stops[n-maxContextFrames:], steps[n-maxContextFrames:], -1
	}
	return stops, steps, first
}

// tail is the longest tail of hist whose steps go in one direction.
func tail(hist []debugger.Step, inverse bool) (stops []debugger.Stop, steps []format.Step, first int) {
	n := len(hist)
	i := n - 1
	for i > 0 && n-i < maxContextFrames {
		step, ok := stepOf(hist[i].Command, hist[i].Stop)
		prev := hist[i-1].Stop
		if !ok || step.Action.Inverse() != inverse || prev.IsExit() ||
			(!inverse && (prev.Event == debugger.KindInvLineCall || hist[i].Stop.Event == debugger.KindInvLineCall)) {
			break
		}
		i--
	}
	for k := i; k < n; k++ {
		stops = append(stops, hist[k].Stop)
		if k > i {
			s, _ := stepOf(hist[k].Command, hist[k].Stop)
			steps = append(steps, s)
		}
	}
	return stops, steps, i
}

// atStartLine reports whether st is a line event of the start's line in
// the module (the start itself, or that line again in a module loop).
func (b *Neural) atStartLine(st debugger.Stop) bool {
	return st.Event == tracer.EventLine && st.Function == b.start.Function && st.Lineno == b.start.Lineno
}

// stateOf is the tracer state a stop shows, and whether it is the
// inv_line_call twin of a line.
func stateOf(st debugger.Stop) (tracer.State, bool) {
	s := st.State
	if s.Event == debugger.KindInvLineCall {
		s.Event = tracer.EventLine
		return s, true
	}
	return s, false
}

// prompt writes the model's text for taking step after hist.
func (b *Neural) prompt(hist []debugger.Step, step format.Step) (string, error) {
	inverse := step.Action.Inverse()
	stops, steps, first := segment(hist, inverse)
	steps = append(steps, step)
	var frames []format.Frame
	bl := format.NewBuilder(inverse)
	if !inverse && first == 0 && b.script {
		// A script's trace opens with the module's call event; pdb (and our
		// start) show its first line. Give the model the call as well.
		f, err := bl.Frame(tracer.State{Event: tracer.EventCall, Function: "<module>"}, false, "")
		if err != nil {
			return "", err
		}
		frames = append(frames, f)
		steps = append([]format.Step{{Action: debugger.StepInto}}, steps...)
	}
	for j, st := range stops {
		s, lineCall := stateOf(st)
		var via debugger.Action
		if j > 0 {
			via = steps[len(steps)-len(stops)+j-1].Action
		}
		f, err := bl.Frame(s, lineCall, via)
		if err != nil {
			return "", err
		}
		frames = append(frames, f)
	}
	return format.PromptText(b.source, frames, steps)
}

// predict asks for the frame after step and turns it into a stop.
func (b *Neural) predict(ctx context.Context, hist []debugger.Step, step format.Step, wantLine int) (debugger.Stop, error) {
	prompt, err := b.prompt(hist, step)
	if err != nil {
		return debugger.Stop{}, err
	}
	out, conf, err := b.ask(ctx, prompt)
	if err != nil {
		return debugger.Stop{}, err
	}
	f, err := format.ParsePredicted(out, step.Action.Inverse())
	if err != nil {
		return debugger.Stop{}, fmt.Errorf("engine: the model wrote no valid frame: %w", err)
	}
	st := b.toStop(hist, f, step.Action, wantLine)
	st.Predicted, st.Confidence = true, conf
	return st, nil
}

// toStop places a predicted frame: line, function, depth, complete locals.
func (b *Neural) toStop(hist []debugger.Step, f format.Frame, a debugger.Action, wantLine int) debugger.Stop {
	cur := hist[len(hist)-1].Stop
	if f.Kind.IsExit() {
		st := debugger.Stop{State: tracer.State{Event: debugger.EventExit}, Index: -1}
		switch f.Kind {
		case format.ExitNormal:
			st.Exit = tracer.ExitNormal
		case format.ExitError:
			st.Exit = tracer.ExitError
			for i := len(hist) - 1; i >= 0; i-- { // the uncaught exception, if the history saw it
				if h := hist[i].Stop; h.Event == tracer.EventException {
					st.Arg = h.Arg
					break
				}
			}
		case format.ExitNever:
			st.Exit = tracer.ExitNever
		case format.InvExitEntry:
			st.Exit = debugger.ExitInvEntry
		}
		return st
	}
	s, _ := f.State(nil)
	b.ix.place(&s, cur, stackOf(hist), a, wantLine)
	if f.Kind.HasLocals() {
		s.Locals = format.MergeLocals(prevLocals(hist, s), f)
	}
	st := debugger.Stop{State: s, Index: -1}
	if f.Kind == format.InvLineCall {
		st.Event = debugger.KindInvLineCall
	}
	return st
}

// prevLocals are the latest complete locals of s's frame in hist: what an
// elided frame's shown entries update.
func prevLocals(hist []debugger.Step, s tracer.State) tracer.Locals {
	for i := len(hist) - 1; i >= 0; i-- {
		h := hist[i].Stop
		if h.IsExit() {
			return nil
		}
		if h.Depth == s.Depth && h.Function == s.Function && (h.Event == tracer.EventLine || h.Event == tracer.EventCall || h.Event == debugger.KindInvLineCall) {
			return h.Locals
		}
		if h.Depth < s.Depth {
			return nil
		}
	}
	return nil
}
