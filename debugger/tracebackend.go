package debugger

import (
	"context"
	"fmt"
	"slices"

	"ndb/tracer"
)

// TraceBackend is the `real` engine's Backend: it answers from one recorded
// trace. Forward commands follow pdb exactly (the bdb simulation of pdb.go:
// StepInto = s, StepOver = n, StepOver+Until = unt, StepReturn = r,
// Continue = c with Command.Breaks as pdb's line breakpoints; Breakpoint is
// the SPEC action by text or line). Inverse commands move in the inverse
// tree. A forward command after a backward one continues as pdb would had
// it reached that state by single steps. A TraceBackend is not safe for
// concurrent use (one per session).
type TraceBackend struct {
	tr *Tree
	// cache: the simulation after the last answer, valid when the next
	// history ends where that answer stopped.
	cacheLen int
	cachePos Pos
	cacheSim *pdbSim
	// live, when the trace is a live run's (live.go)
	live *liveRun
	// noPast is why the past of tree noPastOf, run unrecorded, could not
	// be recorded again (replay.go)
	noPast   error
	noPastOf *Tree
}

// NewTraceBackend returns a backend over t.
func NewTraceBackend(t *tracer.Trace) *TraceBackend {
	return &TraceBackend{tr: NewTree(t)}
}

// Tree returns the backend's index of its trace.
func (b *TraceBackend) Tree() *Tree { return b.tr }

// Source is the traced source (with main's wrapper for a --call program).
func (b *TraceBackend) Source() string { return b.tr.T.Source }

// Stdout is what the traced program printed (bounded by the tracer's
// limit); it implements Outputter.
func (b *TraceBackend) Stdout() string { return b.tr.T.Stdout }

// The capabilities the trace backend declares (capabilities.go); the
// methods of Evaluator, Jumper, Interrupter, Streamer and the restarters
// are in live.go.
var (
	_ Inspector     = (*TraceBackend)(nil)
	_ Outputter     = (*TraceBackend)(nil)
	_ Recording     = (*TraceBackend)(nil)
	_ LiveRunner    = (*TraceBackend)(nil)
	_ Evaluator     = (*TraceBackend)(nil)
	_ Jumper        = (*TraceBackend)(nil)
	_ Interrupter   = (*TraceBackend)(nil)
	_ Streamer      = (*TraceBackend)(nil)
	_ Restarter     = (*TraceBackend)(nil)
	_ ArgsRestarter = (*TraceBackend)(nil)
)

// IsLive implements LiveRunner: the trace is a live run's (live.go).
func (b *TraceBackend) IsLive() bool { return b.live != nil }

// LiveAt implements LiveRunner: the live program waits at s.
func (b *TraceBackend) LiveAt(s Stop) bool { return b.liveAt(s) }

// RunArgs implements LiveRunner: the arguments of the last RestartWith.
func (b *TraceBackend) RunArgs() []string {
	if b.live == nil {
		return nil
	}
	return slices.Clone(b.live.args)
}

// Start returns pdb's first stop (see pdbStart).
func (b *TraceBackend) Start(ctx context.Context) (Stop, error) {
	done := b.answering(ctx)
	sim := pdbStart(b.tr)
	b.remember(1, Pos{Index: sim.pos}, sim)
	return done(b.StopAt(Pos{Index: sim.pos}), nil)
}

// StopAt is the Stop for position p of the backend's trace.
func (b *TraceBackend) StopAt(p Pos) Stop { return StopAt(b.tr, p) }

// StopAt is the Stop for position p of tr's trace.
func StopAt(tr *Tree, p Pos) Stop {
	switch {
	case p.Index < 0:
		return BeforeStart()
	case p.Index >= len(tr.T.States):
		detail := tr.T.Exit.Error
		if detail == "" {
			detail = tr.T.Exit.Reason
		}
		return Stop{State: tracer.State{Event: EventExit, Arg: detail}, Exit: exitKind(tr.T), Index: -1}
	}
	s, _ := tr.State(p)
	return Stop{State: s, Index: p.Index}
}

// PosOf is the position a Stop of this trace stands for; false for a stop
// that has no position (a predicted one).
func (b *TraceBackend) PosOf(s Stop) (Pos, bool) {
	if s.IsExit() {
		if s.Exit == ExitInvEntry {
			return EntryExit, true
		}
		return ExitPos(b.tr.T), true
	}
	if s.Index < 0 || s.Index >= len(b.tr.T.States) {
		return Pos{}, false
	}
	return Pos{Index: s.Index, LineCall: s.Event == KindInvLineCall}, true
}

func (b *TraceBackend) remember(n int, p Pos, sim *pdbSim) {
	b.cacheLen, b.cachePos, b.cacheSim = n, p, sim
}

// Next answers cmd after history (see Backend).
func (b *TraceBackend) Next(ctx context.Context, history []Step, cmd Command) (Stop, error) {
	return b.answering(ctx)(b.next(ctx, history, cmd))
}

func (b *TraceBackend) next(ctx context.Context, history []Step, cmd Command) (Stop, error) {
	if len(history) == 0 {
		return Stop{}, fmt.Errorf("trace backend: empty history")
	}
	if err := ctx.Err(); err != nil {
		return Stop{}, err
	}
	last := history[len(history)-1]
	inverse := cmd.Reverse()
	if inverse {
		target := func(p Pos) Pos {
			if cmd.Action == Continue {
				return b.reverseContinue(p, cmd.Breaks)
			}
			return pdbBeforeStart(b.tr, b.tr.Apply(p, cmd))
		}
		if st, ok, err := b.toBeforeGap(ctx, history, cmd, nil, target); ok { // replay.go
			return st, err
		}
		var err error
		history, err = b.recordTail(ctx, history, cmd, nil, target) // replay.go
		if err != nil {
			return Stop{}, err
		}
		last = history[len(history)-1]
		if err := b.recordPast(ctx, last.Stop); err != nil {
			return Stop{}, err
		}
	}
	p, ok := b.PosOf(last.Stop)
	if !ok {
		return Stop{}, fmt.Errorf("trace backend: cannot continue from a stop that is not in the trace")
	}
	if inverse {
		var q Pos
		if cmd.Action == Continue {
			q = b.reverseContinue(p, cmd.Breaks)
		} else {
			q = pdbBeforeStart(b.tr, b.tr.Apply(p, cmd))
		}
		if err := b.backTo(q); err != nil {
			return Stop{}, err
		}
		b.remember(len(history)+1, q, nil)
		return b.StopAt(q), nil
	}
	if p.Index >= len(b.tr.T.States) {
		return b.StopAt(p), nil
	}
	if p.Index < 0 { // forward from before the entry: start again
		sim := pdbStart(b.tr)
		q := Pos{Index: sim.pos}
		b.remember(len(history)+1, q, sim)
		return b.StopAt(q), nil
	}
	if cmd.Action == Breakpoint {
		b.runToEnd() // the SPEC action reads the trace ahead
		q := b.tr.Apply(p, cmd)
		b.remember(len(history)+1, q, nil)
		return b.StopAt(q), nil
	}
	breaks := make(map[int]bool, len(cmd.Breaks))
	for _, l := range cmd.Breaks {
		breaks[l] = true
	}
	return b.runPdb(history, p, cmd, breaks, nil)
}

// runPdb answers a forward pdb command (step, next, until, return,
// continue) from p by the bdb simulation, stopping at the lines of breaks
// (bps: the session's breakpoints with conditions, tbreak and functions,
// or nil), and remembers the simulation for the next command.
func (b *TraceBackend) runPdb(history []Step, p Pos, cmd Command, breaks map[int]bool, bps []*BreakSpec) (Stop, error) {
	var pc pdbCmd
	switch cmd.Action {
	case StepInto:
		pc = pdbStep
	case StepOver:
		pc = pdbNext
		if cmd.Until {
			pc = pdbUntil
		}
	case StepReturn:
		pc = pdbReturn
	case Continue:
		pc = pdbContinue
	default:
		return Stop{}, fmt.Errorf("trace backend: unknown action %q", cmd.Action)
	}
	var sim *pdbSim
	if b.cacheSim != nil && b.cacheLen == len(history) && b.cachePos == p {
		sim = b.cacheSim // owned from here on: the cache is replaced below
	} else {
		if p.LineCall { // after the line's calls: the last state of its subtree
			p = Pos{Index: b.tr.end[p.Index]}
		}
		sim = pdbAt(b.tr, p.Index)
	}
	untilLine := 0
	if pc == pdbUntil {
		untilLine = cmd.Line
	}
	sim.bps, sim.raised = bps, cmd.Raised && pc == pdbContinue
	q := Pos{Index: sim.do(pc, breaks, untilLine)}
	sim.bps, sim.raised = nil, false
	b.remember(len(history)+1, q, sim)
	return b.StopAt(q), nil
}

// reverseContinue is the latest line event before p on a breakpoint line.
func (b *TraceBackend) reverseContinue(p Pos, breaks []int) Pos {
	return b.reverseContinueWith(p, NewReverseContinue(breaks, nil))
}

// Stack implements Inspector: the ancestors of the stop's state.
func (b *TraceBackend) Stack(s Stop) []tracer.State {
	p, ok := b.PosOf(s)
	if !ok || p.Index < 0 || p.Index >= len(b.tr.T.States) {
		return nil
	}
	var rev []tracer.State
	for i := p.Index; i >= 0; i = b.tr.parent[i] {
		rev = append(rev, b.tr.T.States[i])
	}
	out := make([]tracer.State, len(rev))
	for i, st := range rev {
		out[len(rev)-1-i] = st
	}
	return out
}

// CallOf implements Inspector: the call state of the stop's activation.
func (b *TraceBackend) CallOf(s Stop) (tracer.State, bool) {
	p, ok := b.PosOf(s)
	if !ok || p.Index < 0 || p.Index >= len(b.tr.T.States) {
		return tracer.State{}, false
	}
	if b.tr.T.States[p.Index].Event == tracer.EventCall {
		return b.tr.T.States[p.Index], true
	}
	q := b.tr.callOfLevel(p.Index)
	if q.Index < 0 {
		return tracer.State{}, false
	}
	st := b.tr.T.States[q.Index]
	return st, st.Event == tracer.EventCall
}
