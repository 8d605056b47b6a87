package debugger

import (
	"fmt"
	"strings"

	"ndb/tracer"
)

// Kinds of a position beyond the four trace events (SPEC sections 2 and 5).
const (
	KindInvLineCall  = "inv_line_call"  // the inverse tree's duplicate of a line that made calls
	KindExitNormal   = "exit_normal"    // forward exit: the entry returned
	KindExitError    = "exit_error"     // forward exit: an uncaught exception
	KindExitNever    = "exit_never"     // forward exit: a limit stopped the run
	KindInvExitEntry = "inv_exit_entry" // backward exit: stepped back beyond the entry
)

// ExitInvEntry is the Exit of a Stop that stepped back beyond the entry:
// the position's kind (format.ExitOf reads both).
const ExitInvEntry = KindInvExitEntry

// BeforeStart is the Stop of a step back beyond the entry.
func BeforeStart() Stop {
	return Stop{State: tracer.State{Event: EventExit}, Exit: ExitInvEntry, Index: -1}
}

// Pos is a position in a trace's forward or inverse tree. Index is the state's
// index in Trace.States; LineCall selects the inverse tree's inv_line_call
// duplicate of that state (the node holding its callees' states, reversed).
// Index == len(States) is the forward exit and Index == -1 is inv_exit_entry.
type Pos struct {
	Index    int  `json:"index"`
	LineCall bool `json:"line_call,omitempty"`
}

// EntryExit is the position of inv_exit_entry, before the first state.
var EntryExit = Pos{Index: -1}

// ExitPos is the position of trace t's forward exit state.
func ExitPos(t *tracer.Trace) Pos { return Pos{Index: len(t.States)} }

// Tree indexes one trace as the SPEC's state tree: the parent of a state is
// the nearest earlier state of smaller depth (normally the caller's line
// that made the call), and siblings are the states sharing a parent, in
// order. The inverse tree is derived from the same arrays: reversed sibling
// order, and every state with children gets an inv_line_call duplicate that
// owns those children. A Tree is read-only after NewTree and safe for
// concurrent use, unless it grows (a live run's trace: see Grow).
type Tree struct {
	T         *tracer.Trace
	parent    []int // -1 for top-level states
	prev      []int // previous sibling, -1 if none
	next      []int // next sibling, -1 if none
	lastChild []int // -1 if none
	end       []int // last index of the state's subtree (itself if a leaf)
	lastRoot  int   // last top-level state, -1 for an empty trace
	open      []int // states whose subtree may still grow, outermost first

	// more, for a live run's trace, lets the program run on until it
	// pauses by the filter (or is interrupted, or ends) and grows the tree;
	// ok is false when no state can come any more.
	more func(tracer.Pause) (interrupted, ok bool)
	// interruptStop is the last state a simulation stopped at because the
	// live run was interrupted there (-1: none).
	interruptStop int
}

// NewTree builds the index of t in O(len(States)). Odd shapes are accepted:
// a depth that jumps by more than one hangs off the nearest shallower state,
// a call that follows a call, return or exception state hangs off that state
// (it then gets an inv_line_call duplicate like a line does), and a level
// left open by a truncated trace simply ends where the trace ends.
func NewTree(t *tracer.Trace) *Tree {
	n := len(t.States)
	tr := &Tree{T: t, parent: make([]int, 0, n), prev: make([]int, 0, n), next: make([]int, 0, n),
		lastChild: make([]int, 0, n), end: make([]int, 0, n), lastRoot: -1, interruptStop: -1}
	tr.Grow()
	return tr
}

// Grow indexes the states appended to T.States since the last call (a
// live run's trace grows at every pause). The subtrees still open end, for
// now, at the last state: their past is what the tree knows.
func (tr *Tree) Grow() {
	states := tr.T.States
	n := len(states)
	for i := len(tr.parent); i < n; i++ {
		s := &states[i]
		tr.next, tr.lastChild, tr.end = append(tr.next, -1), append(tr.lastChild, -1), append(tr.end, i)
		for len(tr.open) > 0 && states[tr.open[len(tr.open)-1]].Depth >= s.Depth {
			tr.end[tr.open[len(tr.open)-1]] = i - 1
			tr.open = tr.open[:len(tr.open)-1]
		}
		p := -1
		if len(tr.open) > 0 {
			p = tr.open[len(tr.open)-1]
		}
		tr.parent = append(tr.parent, p)
		if p >= 0 {
			tr.prev = append(tr.prev, tr.lastChild[p])
			tr.lastChild[p] = i
		} else {
			tr.prev = append(tr.prev, tr.lastRoot)
			tr.lastRoot = i
		}
		if tr.prev[i] >= 0 {
			tr.next[tr.prev[i]] = i
		}
		tr.open = append(tr.open, i)
	}
	for _, a := range tr.open {
		tr.end[a] = n - 1
	}
}

// Parent returns the index of state i's parent, -1 at the top level (and
// for an index outside the trace).
func (tr *Tree) Parent(i int) int {
	if i < 0 || i >= len(tr.parent) {
		return -1
	}
	return tr.parent[i]
}

// HasChildren reports whether state i made calls (has an inv_line_call twin).
func (tr *Tree) HasChildren(i int) bool {
	return i >= 0 && i < len(tr.lastChild) && tr.lastChild[i] >= 0
}

// Node is one node of a materialised forward or inverse tree.
type Node struct {
	Pos      Pos
	Kind     string // call, line, return, exception or inv_line_call
	Children []*Node
}

// Forward returns the forward tree: a root (Pos EntryExit, Kind "root")
// whose children are the top-level states, each state holding the states of
// the calls it made.
func (tr *Tree) Forward() *Node {
	nodes := make([]*Node, len(tr.T.States))
	root := &Node{Pos: EntryExit, Kind: "root"}
	for i, s := range tr.T.States {
		nodes[i] = &Node{Pos: Pos{Index: i}, Kind: s.Event}
		if p := tr.parent[i]; p >= 0 {
			nodes[p].Children = append(nodes[p].Children, nodes[i])
		} else {
			root.Children = append(root.Children, nodes[i])
		}
	}
	return root
}

// Inverse returns the inverse tree: every level in reverse order, and each
// state with children preceded (in that reversed order) by its
// inv_line_call twin, which holds the callees' states reversed. The plain
// copy of such a state has no children. Its pre-order is the order in which
// repeated inv_step_into visits positions.
//
// The state that makes calls is normally a line (SPEC 2), but not always:
// CPython resumes a generator with a call event at the line it was
// suspended on, and a `yield from` (or a call) there runs with no line
// event before it. That resumption call gets the twin as a line does, and
// the format shows the twin as an inv_line_call frame of its line
// (format.Builder), so a backward step can still enter or skip the calls.
func (tr *Tree) Inverse() *Node {
	var level func(last int) []*Node
	level = func(last int) []*Node {
		var out []*Node
		for i := last; i >= 0; i = tr.prev[i] {
			if tr.lastChild[i] >= 0 {
				out = append(out, &Node{Pos: Pos{Index: i, LineCall: true}, Kind: KindInvLineCall,
					Children: level(tr.lastChild[i])})
			}
			out = append(out, &Node{Pos: Pos{Index: i}, Kind: tr.T.States[i].Event})
		}
		return out
	}
	return &Node{Pos: ExitPos(tr.T), Kind: "root", Children: level(tr.lastRoot)}
}

// Kind names what is at p: a trace event, inv_line_call, or an exit kind
// (exit_normal, exit_error, exit_never, inv_exit_entry).
func (tr *Tree) Kind(p Pos) string {
	switch {
	case p.Index < 0:
		return KindInvExitEntry
	case p.Index >= len(tr.T.States):
		return "exit_" + exitKind(tr.T)
	case p.LineCall:
		return KindInvLineCall
	}
	return tr.T.States[p.Index].Event
}

// State returns the state at p. At an inv_line_call position it is the
// line's own state with Event "inv_line_call"; at an exit it has Event
// "exit" and no location, and ok is false.
func (tr *Tree) State(p Pos) (s tracer.State, ok bool) {
	if p.Index < 0 || p.Index >= len(tr.T.States) {
		return tracer.State{Event: "exit"}, false
	}
	s = tr.T.States[p.Index]
	if p.LineCall {
		s.Event = KindInvLineCall
	}
	return s, true
}

func exitKind(t *tracer.Trace) string {
	if t.Exit.Kind == "" {
		return tracer.ExitNormal
	}
	return t.Exit.Kind
}

// Initial is where a SPEC trajectory starts: the first state (main's call
// for a --call trace, the module's first event for a script).
func Initial(t *tracer.Trace) Pos {
	if len(t.States) == 0 {
		return ExitPos(t)
	}
	return Pos{Index: 0}
}

// InverseInitial is where an inverse trajectory starts: the last state.
func InverseInitial(t *tracer.Trace) Pos {
	if len(t.States) == 0 {
		return EntryExit
	}
	return Pos{Index: len(t.States) - 1}
}

// Apply is the SPEC action c.Action (with c.Src or c.Line for a breakpoint)
// taken at p in trace t. It builds the trace's Tree each time (O(states));
// callers that take many actions on one trace should use NewTree(t).Apply.
func Apply(t *tracer.Trace, p Pos, c Command) Pos { return NewTree(t).Apply(p, c) }

// Apply is the SPEC action c.Action taken at p: a pure function of the
// trace. Unknown actions leave p unchanged. Forward actions at an
// inv_line_call position act from the moment after that line's calls;
// forward actions at inv_exit_entry act from before the first state; every
// action at an exit of its own direction stays there.
func (tr *Tree) Apply(p Pos, c Command) Pos {
	n := len(tr.T.States)
	exit := Pos{Index: n}
	if p.Index >= n && !c.Action.Inverse() {
		return exit
	}
	if p.Index < 0 && c.Action.Inverse() {
		return EntryExit
	}
	if p.Index >= n { // inverse action from the forward exit
		if tr.lastRoot < 0 {
			return EntryExit
		}
		switch c.Action {
		case InvStepInto:
			return tr.revFirst(tr.lastRoot)
		case InvStepOver:
			return Pos{Index: tr.lastRoot}
		case InvStepCall:
			return tr.callOfLevel(tr.lastRoot)
		}
		return p
	}
	if p.Index < 0 { // forward action from before the entry
		switch c.Action {
		case Continue:
			return exit
		case Breakpoint:
			return tr.findSrc(0, c)
		}
		if n == 0 {
			return exit
		}
		return Pos{Index: 0}
	}
	i := p.Index
	switch c.Action {
	case StepInto:
		if p.LineCall {
			return clampExit(tr.end[i]+1, n)
		}
		return clampExit(i+1, n)
	case StepOver:
		return clampExit(tr.end[i]+1, n)
	case StepReturn:
		return tr.stepReturn(i)
	case Breakpoint:
		from := i + 1
		if p.LineCall {
			from = tr.end[i] + 1
		}
		return tr.findSrc(from, c)
	case Continue:
		return exit
	case InvStepInto:
		if p.LineCall && tr.lastChild[i] >= 0 {
			return tr.revFirst(tr.lastChild[i])
		}
		return tr.back(i, true)
	case InvStepOver:
		if p.LineCall {
			return Pos{Index: i}
		}
		return tr.back(i, false)
	case InvStepCall:
		if p.LineCall {
			return tr.callOfLevel(i)
		}
		if tr.T.States[i].Event == tracer.EventCall {
			if tr.parent[i] < 0 {
				return EntryExit
			}
			return tr.callOfLevel(tr.parent[i])
		}
		return tr.callOfLevel(i)
	}
	return p
}

func clampExit(i, n int) Pos {
	if i >= n {
		return Pos{Index: n}
	}
	return Pos{Index: i}
}

// revFirst is how a sibling is first met walking a level backwards: its
// inv_line_call twin if it made calls, else itself.
func (tr *Tree) revFirst(i int) Pos {
	if tr.lastChild[i] >= 0 {
		return Pos{Index: i, LineCall: true}
	}
	return Pos{Index: i}
}

// back is the inverse tree's next node after the childless node i: its
// reversed next sibling (through the twin when into), else the parent's
// plain node, else inv_exit_entry.
func (tr *Tree) back(i int, into bool) Pos {
	if pr := tr.prev[i]; pr >= 0 {
		if into {
			return tr.revFirst(pr)
		}
		return Pos{Index: pr}
	}
	if p := tr.parent[i]; p >= 0 {
		return Pos{Index: p}
	}
	return EntryExit
}

// callOfLevel walks back from i (inclusive) along its level to a call state.
// A level without one (a trace cut at its start) yields its first state, or
// inv_exit_entry at the top.
func (tr *Tree) callOfLevel(i int) Pos {
	first := i
	for k := i; k >= 0; k = tr.prev[k] {
		if tr.T.States[k].Event == tracer.EventCall {
			return Pos{Index: k}
		}
		first = k
	}
	if tr.parent[first] < 0 {
		return EntryExit
	}
	return Pos{Index: first}
}

// stepReturn finds the return (or the level-closing exception) among i's
// later siblings; without one it goes one level up like step_over.
func (tr *Tree) stepReturn(i int) Pos {
	n := len(tr.T.States)
	last := i
	for k := tr.next[i]; k >= 0; k = tr.next[k] {
		ev := tr.T.States[k].Event
		if ev == tracer.EventReturn || (ev == tracer.EventException && tr.next[k] < 0) {
			return Pos{Index: k}
		}
		last = k
	}
	return clampExit(tr.end[last]+1, n)
}

// findSrc is the first state at or after from whose line is the breakpoint's:
// by number when c.Line > 0, else by source text. A breakpoint with neither
// is a continue.
func (tr *Tree) findSrc(from int, c Command) Pos {
	n := len(tr.T.States)
	if c.Line <= 0 && c.Src == "" {
		return Pos{Index: n}
	}
	for k := from; k < n; k++ {
		s := &tr.T.States[k]
		if c.Line > 0 {
			if s.Lineno == c.Line {
				return Pos{Index: k}
			}
		} else if s.Src == c.Src {
			return Pos{Index: k}
		}
	}
	return Pos{Index: n}
}

// SourceLines splits source into lines as line numbers count them (index
// 0 is line 1), without line terminators.
func SourceLines(source string) []string {
	lines := strings.Split(source, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// CheckBreakLine reports why line n of source cannot hold a breakpoint, as
// pdb's checkline does: past the end, blank, a comment, or a line starting
// with a triple-quoted string. It returns "" when the line is accepted.
func CheckBreakLine(source string, n int) string {
	lines := SourceLines(source)
	if n < 1 || n > len(lines) {
		return "End of file"
	}
	l := strings.TrimSpace(lines[n-1])
	if l == "" || l[0] == '#' || strings.HasPrefix(l, `"""`) || strings.HasPrefix(l, "'''") {
		return "Blank or comment"
	}
	return ""
}

// BreakpointLines lists the lines of source that accept a breakpoint (see
// CheckBreakLine), in order: the candidates for a sampled breakpoint.
func BreakpointLines(source string) []int {
	var out []int
	for n := range SourceLines(source) {
		if CheckBreakLine(source, n+1) == "" {
			out = append(out, n+1)
		}
	}
	return out
}

// Scope is the trace of one activation: the call state at index i, the
// states until that frame's return (its callees included), with depths
// made relative to the call. Deep traces start at a call sampled from the
// stack this way (SPEC 4). Its exit is normal, error (the frame ended by
// an uncaught exception: its last own state before the return is an
// exception) or never (the trace ends inside the activation).
func Scope(t *tracer.Trace, i int) (*tracer.Trace, error) {
	if i < 0 || i >= len(t.States) || t.States[i].Event != tracer.EventCall {
		return nil, fmt.Errorf("scope: state %d is not a call", i)
	}
	call := t.States[i]
	out := &tracer.Trace{Source: t.Source, Call: t.Call, Exit: tracer.Exit{Kind: tracer.ExitNever, Reason: "scope cut by the trace's end"}}
	lastOwn := -1
	for k := i; k < len(t.States); k++ {
		s := t.States[k]
		if s.Depth < call.Depth {
			break
		}
		s.Depth -= call.Depth
		out.States = append(out.States, s)
		if s.Frame == call.Frame && s.Depth == 0 {
			if s.Event == tracer.EventReturn && k > i {
				out.Exit = tracer.Exit{Kind: tracer.ExitNormal}
				if lastOwn >= 0 && t.States[lastOwn].Event == tracer.EventException {
					out.Exit = tracer.Exit{Kind: tracer.ExitError, Error: t.States[lastOwn].Arg}
				}
				return out, nil
			}
			lastOwn = k
		}
	}
	return out, nil
}
