package format

import (
	"slices"
	"strings"

	"ndb/debugger"
	"ndb/tracer"
)

// Builder turns the states a trajectory visits, in visiting order, into
// frames, applying the LOCALS rules of SPEC section 5:
//
//   - a frame shows only the locals that changed since the previous frame,
//     plus `"..": ".."` when unchanged entries were left out;
//   - all locals are shown after a scope change: the first frame, a call
//     state, a different Python frame than the previous frame (a step into a
//     call or out of one), a frame after one without locals (return or
//     exception), and after a breakpoint or continue jump;
//   - inverse trajectories show complete locals at call states (covered by
//     the call rule);
//   - ours: when a variable disappeared (del, or a step backwards to before
//     its assignment), all locals are shown, so that merging the shown
//     entries into the previous locals always gives the true locals.
//
// "The same Python frame" compares State.Frame when both states have one
// (traces always do); predicted states without one (Frame 0) compare
// Function and Depth instead.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	inverse    bool
	havePrev   bool
	prev       tracer.State
	prevLocals tracer.Locals
}

func sameFrame(a, b tracer.State) bool {
	if a.Frame != 0 && b.Frame != 0 {
		return a.Frame == b.Frame
	}
	return a.Function == b.Function && a.Depth == b.Depth
}

// NewBuilder returns a Builder for a forward or inverse trajectory.
func NewBuilder(inverse bool) *Builder { return &Builder{inverse: inverse} }

// Frame returns the frame showing s, reached by action via ("" for the
// initial state). lineCall marks the inv_line_call node of the inverse tree.
func (b *Builder) Frame(s tracer.State, lineCall bool, via debugger.Action) (Frame, error) {
	k, err := KindOf(s, b.inverse, lineCall)
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Kind: k, Src: s.Src}
	if !k.HasLocals() {
		f.Arg = s.Arg
		b.havePrev = false
		return f, nil
	}
	full := !b.havePrev || !sameFrame(b.prev, s) || s.Event == tracer.EventCall ||
		via == debugger.Breakpoint || via == debugger.Continue
	if full {
		f.Locals = cloneLocals(s.Locals)
	} else {
		f.Locals, f.Elided, full = diffLocals(b.prevLocals, s.Locals)
		if full {
			f.Locals = cloneLocals(s.Locals)
		}
	}
	b.havePrev, b.prev, b.prevLocals = true, s, s.Locals
	return f, nil
}

// At returns the frame showing position p of tree, reached by action via
// ("" for the first frame), as data sets and measurements write
// trajectories: an exit position gives its exit frame (inv_exit_entry
// before the first state, else ExitKind of the trace's exit), a state its
// frame, inv_line_call when p is that twin.
func (b *Builder) At(tree *debugger.Tree, p debugger.Pos, via debugger.Action) (Frame, error) {
	t := tree.T
	switch {
	case p.Index < 0:
		return b.Exit(InvExitEntry), nil
	case p.Index >= len(t.States):
		k, err := ExitKind(t.Exit)
		if err != nil {
			return Frame{}, err
		}
		return b.Exit(k), nil
	}
	s, _ := tree.State(p)
	return b.state(s, via)
}

// Stop returns the frame showing st, reached by action via: its exit
// frame, or the frame of its state (inv_line_call, in an inverse
// trajectory, when the stop is that twin).
func (b *Builder) Stop(st debugger.Stop, via debugger.Action) (Frame, error) {
	if st.IsExit() {
		k, err := ExitOf(st.Exit)
		if err != nil {
			return Frame{}, err
		}
		return b.Exit(k), nil
	}
	return b.state(st.State, via)
}

// state returns the frame of s, a state as Tree.State and Stop hold it: an
// inv_line_call twin (in an inverse trajectory) shows the line its state
// stands at, whatever that state's own event. Besides a line that made
// calls, the twin can be a call state: CPython resumes a generator with a
// call event at the line it was suspended on, and a `yield from` or a call
// on that line runs with no line event before it (docs/debugger.md, calls
// hanging off a non-line state).
func (b *Builder) state(s tracer.State, via debugger.Action) (Frame, error) {
	lineCall := s.Event == debugger.KindInvLineCall
	if lineCall {
		s.Event = tracer.EventLine
	}
	return b.Frame(s, lineCall && b.inverse, via)
}

// Exit returns the exit frame of kind k and ends the trajectory.
func (b *Builder) Exit(k Kind) Frame {
	b.havePrev = false
	return Frame{Kind: k}
}

// diffLocals returns the entries of cur that are new or changed against
// prev, and whether some were left out. gone reports that a variable of
// prev is missing from cur: the caller then shows all locals.
func diffLocals(prev, cur tracer.Locals) (shown tracer.Locals, left bool, gone bool) {
	old := make(map[string]string, len(prev))
	for _, v := range prev {
		old[v.Name] = v.Value
	}
	for _, v := range cur {
		if pv, ok := old[v.Name]; ok && pv == v.Value {
			left = true
			continue
		}
		shown = append(shown, v)
	}
	present := make(map[string]bool, len(cur))
	for _, v := range cur {
		present[v.Name] = true
	}
	for _, v := range prev {
		if !present[v.Name] {
			return nil, false, true
		}
	}
	return shown, left, false
}

func cloneLocals(l tracer.Locals) tracer.Locals {
	if len(l) == 0 {
		return nil
	}
	return append(tracer.Locals(nil), l...)
}

// LastLocals returns the complete locals of the last of frames (a
// trajectory's, in order), merged from the last frame of its Python frame
// that shows all of them: the format elides only within one Python frame.
// False where frames do not hold that frame or the last has no locals.
func LastLocals(frames []Frame) (tracer.Locals, bool) {
	first := len(frames) - 1
	for first >= 0 && frames[first].Kind.HasLocals() && frames[first].Elided {
		first--
	}
	if first < 0 || !frames[first].Kind.HasLocals() {
		return nil, false
	}
	var locals tracer.Locals
	for _, f := range frames[first:] {
		locals = MergeLocals(locals, f)
	}
	return locals, true
}

// BoundLocalsText is the LOCALS text (`{"k": "v", "..": ".."}`) of the
// line frame that a step (via) within one Python frame reaches from a
// state with complete locals prev, when the step binds name to value and
// changes nothing else: what the Builder writes for it.
func BoundLocalsText(prev tracer.Locals, name, value string, via debugger.Action) (string, bool) {
	return BoundAllLocalsText(prev, []string{name}, []string{value}, via)
}

// BoundAllLocalsText is BoundLocalsText for a step that binds names[i] to
// values[i] (a for loop's tuple of targets).
func BoundAllLocalsText(prev tracer.Locals, names, values []string, via debugger.Action) (string, bool) {
	if len(names) != len(values) {
		return "", false
	}
	bound := make(tracer.Locals, len(names))
	for i, name := range names {
		bound[i] = tracer.Var{Name: name, Value: values[i]}
	}
	return StepLocalsText(prev, MergeLocals(prev, Frame{Locals: bound, Elided: true}), via)
}

// UnboundLocalsText is BoundLocalsText for a step that unbinds name (a
// step back to before its binding): every local but name.
func UnboundLocalsText(prev tracer.Locals, name string, via debugger.Action) (string, bool) {
	next := slices.DeleteFunc(cloneLocals(prev), func(v tracer.Var) bool { return v.Name == name })
	return StepLocalsText(prev, next, via)
}

// StepLocalsText is the LOCALS text of the line frame that a step (via)
// within one Python frame reaches from a state with complete locals prev
// to one with complete locals next: what the Builder writes for it (the
// changes and "..", or every local where one is gone).
func StepLocalsText(prev, next tracer.Locals, via debugger.Action) (string, bool) {
	b := NewBuilder(false)
	if _, err := b.Frame(tracer.State{Event: tracer.EventLine, Src: "?", Locals: prev}, false, ""); err != nil {
		return "", false
	}
	f, err := b.Frame(tracer.State{Event: tracer.EventLine, Src: "?", Locals: next}, false, via)
	if err != nil {
		return "", false
	}
	text := FrameText(f)
	i, j := strings.Index(text, TokArgSep), strings.LastIndex(text, TokSrcSep)
	if i < 0 || j < i {
		return "", false
	}
	return text[i+len(TokArgSep) : j], true
}

// MergeLocals returns the complete locals a frame stands for, given the
// complete locals of the previous frame: the frame's own locals when it
// shows all of them, else prev with the shown entries updated (new names
// are appended, so their order may differ from the frame's f_locals order).
func MergeLocals(prev tracer.Locals, f Frame) tracer.Locals {
	if !f.Elided {
		return cloneLocals(f.Locals)
	}
	out := cloneLocals(prev)
	for _, v := range f.Locals {
		found := false
		for i := range out {
			if out[i].Name == v.Name {
				out[i].Value, found = v.Value, true
				break
			}
		}
		if !found {
			out = append(out, v)
		}
	}
	return out
}
