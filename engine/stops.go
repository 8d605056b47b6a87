package engine

import (
	"slices"

	"ndb/debugger"
	"ndb/tracer"
)

// The call stack of a model engine's stop. A model answers a jump (a
// continue to a breakpoint, a step over) with the state it lands on, not
// the states on the way, so the history alone leaves the callers of a stop
// deep in the program stale or missing (`total:4`, `<module>:1` where the
// program is in `total` called from `main` line 10, called from line 15).
// The source's static call graph fills them in: each caller at the line
// of its function that calls the next frame's function.

// stackAt is the call stack at the last stop of history, outermost first,
// each caller as its latest state (the line that made the call), the stop
// itself last (an inv_line_call twin shown as its line).
func (ix *sourceIndex) stackAt(history []debugger.Step) []tracer.State {
	var stack []tracer.State
	for _, h := range history {
		st := h.Stop
		if st.IsExit() {
			stack = stack[:0]
			continue
		}
		s, _ := stateOf(st)
		if s.Depth < 0 {
			continue
		}
		stack = ix.push(stack, s)
	}
	return stack
}

// push puts s on stack (index = depth): the frames below s's depth stay,
// a gap above them is filled with the static call path to s's function,
// and a caller whose line does not call the next frame's function is moved
// to the line of its function that does.
func (ix *sourceIndex) push(stack []tracer.State, s tracer.State) []tracer.State {
	d := s.Depth
	out := slices.Clone(stack[:min(len(stack), d)])
	if len(out) < d && len(out) > 0 {
		top := len(out) - 1
		if path, ok := ix.callPath(out[top].Function, s.Function, d-top); ok {
			for _, fn := range path[1 : len(path)-1] {
				out = append(out, tracer.State{Event: tracer.EventLine, Function: fn, Depth: len(out)})
			}
		}
	}
	if len(out) == d { // every caller known: each at its call of the next frame's function
		for k := d - 1; k >= 0; k-- {
			callee := s.Function
			if k+1 < d {
				callee = out[k+1].Function
			}
			c := &out[k]
			if ix.callsAt(c.Lineno, callee) {
				continue
			}
			if l := ix.callSite(c.Function, callee, c.Lineno); l > 0 {
				c.Event, c.Lineno, c.Src, c.Arg = tracer.EventLine, l, ix.line(l), ""
			}
		}
	}
	return append(out, s)
}

// callPath is a chain of functions from `from` to `to` of exactly n calls
// in the static call graph (path[0] = from, path[n] = to); false if none.
func (ix *sourceIndex) callPath(from, to string, n int) ([]string, bool) {
	if n <= 0 || n > 64 {
		return nil, n == 0 && from == to
	}
	// layer[k]: function -> the one before it on some chain of k calls from `from`
	layers := []map[string]string{{from: ""}}
	for k := 1; k <= n; k++ {
		next := map[string]string{}
		for f := range layers[k-1] {
			for g := range ix.calls[f] {
				if _, seen := next[g]; !seen || f < next[g] { // deterministic: the least name
					next[g] = f
				}
			}
		}
		if len(next) == 0 {
			return nil, false
		}
		layers = append(layers, next)
	}
	if _, ok := layers[n][to]; !ok {
		return nil, false
	}
	path := make([]string, n+1)
	path[n] = to
	for k := n; k > 0; k-- {
		path[k-1] = layers[k][path[k]]
	}
	return path, true
}

// callsAt reports whether the statement line n is part of calls function
// name.
func (ix *sourceIndex) callsAt(n int, name string) bool { return ix.px.CallsOn(n, name) }

// callSite is the line in function caller where it calls callee (the
// call's own line in a statement over several lines): the first at or
// after line from, else the first; 0 if none.
func (ix *sourceIndex) callSite(caller, callee string, from int) int {
	first := 0
	for n := 1; n <= len(ix.lines); n++ {
		if ix.scope[n-1] != caller {
			continue
		}
		l := ix.px.CallLine(n, callee)
		if l == 0 {
			continue
		}
		if l >= from {
			return l
		}
		if first == 0 {
			first = l
		}
	}
	return first
}

// StackOf implements debugger.StackTeller: the stack the history and the
// source's call graph imply (stackAt).
func (b *Neural) StackOf(history []debugger.Step) []tracer.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ix.stackAt(b.paths.expand(history))
}

// notedPaths remembers, by history index, the predictions that answered
// each command of a Neural session. The context of later predictions
// shows them instead of the command (the format's action for a command
// answered by pdb's rules, or by several predictions, would not say where
// it went), and the stack is read from them.
type notedPaths struct {
	m map[int]notedPath
}

type notedPath struct {
	from  debugger.Stop   // the stop the command was given at
	steps []debugger.Step // the predictions, the answer last
}

// note records the predictions that answered the command after history.
func (p *notedPaths) note(history, steps []debugger.Step, answer debugger.Stop) {
	if p.m == nil {
		p.m = map[int]notedPath{}
	}
	n := len(history)
	if len(steps) == 0 || !samePlace(steps[len(steps)-1].Stop, answer) {
		delete(p.m, n)
		return
	}
	p.m[n] = notedPath{from: history[n-1].Stop, steps: slices.Clone(steps)}
}

// stepped reports whether the command of history entry i was answered by
// step_into predictions alone (a stepped jump: its states are known).
func (p *notedPaths) stepped(i int) bool {
	np, ok := p.m[i]
	return ok && !slices.ContainsFunc(np.steps, func(s debugger.Step) bool { return s.Command.Action != debugger.StepInto })
}

// expand is history with each noted entry replaced by its predictions (the
// entry's own stop last: it may have been edited by set); a new slice.
func (p *notedPaths) expand(history []debugger.Step) []debugger.Step {
	out := make([]debugger.Step, 0, len(history))
	for i, h := range history {
		np, ok := p.m[i]
		if !ok || i == 0 || !debugger.SameStop(history[i-1].Stop, np.from) || !samePlace(np.steps[len(np.steps)-1].Stop, h.Stop) {
			out = append(out, h)
			continue
		}
		out = append(out, np.steps[:len(np.steps)-1]...)
		last := np.steps[len(np.steps)-1]
		last.Stop = h.Stop
		out = append(out, last)
	}
	return out
}

// samePlace reports whether two stops are at the same place (the values
// aside).
func samePlace(a, b debugger.Stop) bool {
	return a.Event == b.Event && a.Lineno == b.Lineno && a.Function == b.Function && a.Depth == b.Depth &&
		a.Src == b.Src && a.Exit == b.Exit && a.Arg == b.Arg
}
