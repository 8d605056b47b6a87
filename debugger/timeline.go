package debugger

import "ndb/tracer"

// Recall answers cmd at the end of history from the history alone, when
// the stops already seen decide it, and reports whether they do. A program
// runs the same way every time, so a step taken again from a stop seen
// before reaches the stop it reached then; and the state tree (SPEC
// section 3, Tree.Apply) undoes some steps exactly:
//
//   - step_into from a line or call to the state after it in the same
//     frame, or into the call it makes: inv_step_into goes back to it; and
//     a plain (not inv_line_call) stop inv_step_into reached steps forward
//     to where it came from;
//   - step_over to the next state of the same frame, from a line where
//     the frame does not suspend (a generator's resumption is a new call):
//     inv_step_over goes back to it, and the other way round; where the
//     first stop makes no call (a call event, or a line text.NoCalls
//     names), the step_into pair too;
//   - inv_step_call from a line goes back to the call event of its frame,
//     where the history shows which stop that is: the call a step into the
//     frame started from, carried along steps within the frame;
//   - steps into a call and back out to the frame that made it are a step
//     over the call (overCalls).
//
// A model engine asked these again would predict them again, and may
// disagree with itself (a backward prompt does not show the forward steps
// before it). Stops are one state when their history entries are: an
// entry reached by a recalled step is the same state only if it still
// shows what was recalled (set edits a stop: what follows it is not known).
// Forward answers are line and call events (and returns, for step_into):
// pdb's next passes over a generator's return and its step and next over
// the StopIteration of a yield from, which the tree's actions do not.
func Recall(history []Step, cmd Command, text StepText) (Stop, bool) {
	want, ok := recallAction(cmd)
	if !ok || len(history) == 0 {
		return Stop{}, false
	}
	t := timeline{facts: map[move]int{}, callOf: map[int]int{}, text: text}
	id := t.add(history[0].Stop)
	level := t.overCalls(nil, -1, id) // along steps into: the latest stop at each depth, deeper ones since
	for _, h := range history[1:] {
		from := id
		if h.Command.Action != StepInto || !plainStop(t.stops[from]) {
			level = level[:0]
		}
		a, _ := recallAction(h.Command) // "": no fact
		q, known := t.facts[move{from, a}]
		switch {
		case known && !SameStop(t.stops[q], h.Stop):
			id = t.add(h.Stop) // edited (set): not where the step went
			continue
		case known:
			id = q
		default:
			id = t.add(h.Stop)
		}
		t.learn(from, h.Command, id)
		level = t.overCalls(level, from, id)
	}
	q, ok := t.facts[move{id, want}]
	if !ok {
		return Stop{}, false
	}
	return t.stops[q], true
}

// recallAction is the action a command takes when its target depends on
// the stop alone: not an until, and not a next that a breakpoint in a
// callee may stop.
func recallAction(c Command) (Action, bool) {
	switch {
	case c.Action == StepInto, c.Action == InvStepInto, c.Action == InvStepOver, c.Action == InvStepCall:
		return c.Action, true
	case c.Action == StepOver && !c.Until && len(c.Breaks) == 0:
		return StepOver, true
	}
	return "", false
}

// StepText is what a program's text tells Recall of a stop's line; nil
// tells nothing.
type StepText struct {
	// NoCalls: the line surely calls none of the program's code.
	NoCalls func(Stop) bool
	// Suspends: the frame may suspend on the line (a generator's or a
	// coroutine's). A real stop says so itself (State.Gen).
	Suspends func(Stop) bool
	// NoSuspends: no frame of the program suspends, so none is closed
	// between two states pdb's step shows (a suspended generator dropped
	// as a frame ends runs its close, which step passes over).
	NoSuspends bool
}

// noCalls: the stop is a fresh call (a generator resumed by yield from
// goes on into the resumed one) or its line calls nothing.
func (x StepText) noCalls(s Stop) bool {
	if s.Event == tracer.EventCall {
		return !x.suspends(s)
	}
	return x.NoCalls != nil && x.NoCalls(s)
}

func (x StepText) suspends(s Stop) bool { return s.Gen || x.Suspends != nil && x.Suspends(s) }

// timeline numbers the distinct states of a history (stops) and what is
// known of the steps between them (facts).
type timeline struct {
	stops  []Stop
	facts  map[move]int
	callOf map[int]int // a line's state: the call event of its frame (inv_step_call)
	text   StepText
}

type move struct {
	from int
	a    Action
}

func (t *timeline) add(s Stop) int {
	t.stops = append(t.stops, s)
	return len(t.stops) - 1
}

// learn records what the step c from state p to state q shows.
func (t *timeline) learn(p int, c Command, q int) {
	P, Q := t.stops[p], t.stops[q]
	if !plainStop(P) || !plainStop(Q) {
		return
	}
	sameFrame := P.Depth == Q.Depth && P.Function == Q.Function
	opens := func(s Stop) bool { return s.Event == tracer.EventLine || s.Event == tracer.EventCall }
	fact := func(from int, a Action, to int) {
		// forward answers only where pdb's next and step go as the tree's
		// actions do (Recall)
		if ev := t.stops[to].Event; a == StepOver && ev != tracer.EventLine ||
			a == StepInto && !opens(t.stops[to]) && ev != tracer.EventReturn {
			return
		}
		t.facts[move{from, a}] = to
	}
	t.frameCall(p, c, q, sameFrame)
	switch c.Action {
	case StepInto:
		fact(p, StepInto, q)
		if opens(P) && (sameFrame || Q.Event == tracer.EventCall && Q.Depth == P.Depth+1) {
			fact(q, InvStepInto, p)
		}
	case StepOver:
		if c.Until {
			return
		}
		if len(c.Breaks) == 0 {
			fact(p, StepOver, q)
		}
		if opens(P) && sameFrame && !t.text.suspends(P) {
			fact(q, InvStepOver, p)
			if t.text.noCalls(P) {
				fact(p, StepInto, q)
				fact(q, InvStepInto, p)
			}
		}
	case InvStepInto:
		fact(p, InvStepInto, q)
		if Q.Event != tracer.EventReturn || !t.text.suspends(P) {
			// pdb's step from a return passes over a generator's call
			// that closes it (GeneratorExit as its caller's frame ends)
			fact(q, StepInto, p)
		}
	case InvStepOver:
		fact(p, InvStepOver, q)
		if sameFrame && opens(Q) {
			fact(q, StepOver, p)
			if t.text.noCalls(Q) {
				fact(q, StepInto, p)
				fact(p, InvStepInto, q)
			}
		}
	}
}

// overCalls learns, from steps into that went from a stop p into the calls
// it made and came back to its frame at q (every stop between them deeper),
// that q is one step over p: inv_step_over from q goes back to p (the tree's
// previous state of q's level), and step_over from p reaches q, where a
// single step_over would (learn's rules: a line or call event, a frame
// that does not suspend); and, where the calls' last state r (q's
// predecessor) is a return and no frame of the program suspends, that
// inv_step_into from q goes to p's inv_line_call twin and from there to r.
// level holds the latest stop at each depth of the steps into so far; it
// returns level with q in it.
func (t *timeline) overCalls(level []int, r, q int) []int {
	Q := t.stops[q]
	if !plainStop(Q) || Q.Depth < 0 {
		return level[:0]
	}
	d := Q.Depth
	if d < len(level) && level[d] >= 0 {
		p := level[d]
		P, R := t.stops[p], t.stops[r]
		if P.Function == Q.Function && (P.Event == tracer.EventLine || P.Event == tracer.EventCall) {
			t.learn(p, Command{Action: StepOver}, q)
			if P.Event == tracer.EventLine && t.text.NoSuspends && R.Event == tracer.EventReturn && R.Depth == d+1 {
				twin := P
				twin.Event = KindInvLineCall
				tw := t.add(twin)
				t.facts[move{q, InvStepInto}] = tw
				t.facts[move{tw, InvStepInto}] = r
			}
		}
	}
	for len(level) <= d {
		level = append(level, -1)
	}
	level = level[:d+1]
	level[d] = q
	return level
}

// frameCall learns, from the step c between states p and q, the call event
// of their frame: a step into a fresh frame's first line starts from its
// call; a step within one frame between line events keeps it (never
// across a generator's or coroutine's suspension, after which the frame's
// call is its resumption); inv_step_call reaches it. Where it is known,
// inv_step_call from a line goes back to it.
func (t *timeline) frameCall(p int, c Command, q int, sameFrame bool) {
	P, Q := t.stops[p], t.stops[q]
	line := func(s Stop) bool { return s.Event == tracer.EventLine && !t.text.suspends(s) }
	switch {
	case c.Action == InvStepCall && P.Event == tracer.EventLine && Q.Event == tracer.EventCall:
		t.callOf[p] = q
	case !sameFrame || c.Until || len(c.Breaks) > 0:
		return
	case (c.Action == StepInto || c.Action == StepOver) && P.Event == tracer.EventCall && line(Q) && !t.text.suspends(P):
		t.callOf[q] = p
	case c.Action == StepInto || c.Action == StepOver || c.Action == InvStepInto || c.Action == InvStepOver:
		if !line(P) || !line(Q) {
			return
		}
		if k, ok := t.callOf[p]; ok {
			t.callOf[q] = k
		} else if k, ok := t.callOf[q]; ok {
			t.callOf[p] = k
		}
	}
	for _, r := range []int{p, q} {
		if k, ok := t.callOf[r]; ok {
			t.facts[move{r, InvStepCall}] = k
		}
	}
}

// plainStop is a state of the trace itself: not an exit, not the inverse
// tree's inv_line_call twin of a line.
func plainStop(s Stop) bool { return !s.IsExit() && s.Event != KindInvLineCall }

// SameStop reports whether two stops show the same state: the same trace
// position where both have one, else the same event, place and values.
func SameStop(a, b Stop) bool {
	if a.Index >= 0 && b.Index >= 0 {
		return a.Index == b.Index && a.Event == b.Event
	}
	if a.Event != b.Event || a.Lineno != b.Lineno || a.Function != b.Function || a.Depth != b.Depth ||
		a.Src != b.Src || a.Arg != b.Arg || len(a.Locals) != len(b.Locals) || a.IsExit() || b.IsExit() {
		return false
	}
	for i := range a.Locals {
		if a.Locals[i] != b.Locals[i] {
			return false
		}
	}
	return true
}
