package debugger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"ndb/tracer"
)

// Full speed between stops (docs/debugger.md, "Long runs"). pdb's continue
// with no breakpoint turns tracing off (pdbSim.tracingOff), and so does the
// live run (tracer.Pause.Untraced): the program runs to its end, or to an
// interrupt, with nothing recorded, and the trace marks the gap
// (Trace.Unrecorded). A reverse command from past such a gap is answered
// exactly by running the program again from its start, recorded (the
// same program, arguments, input and hash seed: the engine's StartRun),
// and checking that this second run is the first one: the same states up
// to the gap, the same output, traceback and exit. The recorded run then
// replaces the first, and the command moves in its trace. Where it is not
// the same (the program reads the time, randomness from the OS, input it
// was typed, or races threads) the command is refused: ErrUnrecordedPast.

// ErrUnrecordedPast is returned by a reverse command whose past was run
// unrecorded and cannot be recorded again exactly.
var ErrUnrecordedPast = errors.New("the program ran unrecorded since the last stop (c with no breakpoint runs at full speed, as pdb does)")

// pastUnrecorded reports whether stop s of the backend's trace comes after
// a stretch the program ran unrecorded.
func (b *TraceBackend) pastUnrecorded(s Stop) bool {
	u := b.tr.T.Unrecorded
	if b.live == nil || len(u) == 0 {
		return false
	}
	return s.IsExit() && s.Exit != ExitInvEntry || s.Index >= u[0]
}

// recordPast makes the past of stop s recorded again when it was run
// unrecorded (see above); a no-op otherwise. On success the backend's
// trace is the new run's: positions up to the first gap are the same, and
// the exit is the new trace's (PosOf s again).
func (b *TraceBackend) recordPast(ctx context.Context, s Stop) error {
	if !b.pastUnrecorded(s) || b.live.tailOf == b.tr {
		return nil // a tail recorded from a checkpoint holds the target (recordTail)
	}
	if b.noPastOf == b.tr {
		return b.noPast
	}
	l := b.live
	want := b.tr.T // the first run's (a failed replay leaves it so)
	if want.Exit.Kind == "" {
		// The program paused after an unrecorded stretch (an interrupt, a
		// breakpoint reached filtered) and goes on: where it is cannot be
		// found again in a new run (no event was counted on the way), so
		// reverse commands move only in what was recorded since (backTo).
		return nil
	}
	if l.run.Typed() {
		b.noPastOf = b.tr
		b.noPast = fmt.Errorf("%w, and the program was given typed input, which a run again would wait for: reverse commands cannot go back past the `c`; restart, or set a breakpoint before continuing", ErrUnrecordedPast)
		return b.noPast
	}
	gap := want.Unrecorded[0]
	if l.args != nil {
		ctx = context.WithValue(ctx, runArgsKey{}, l.args)
	}
	// The worker serves one run at a time: the first run (maybe waiting in
	// post-mortem) is closed; the new one, if it is the same, takes its place.
	l.run.Close()
	run, err := l.start(ctx, func(string) {})
	if err != nil {
		l.err = err
		b.noPastOf = b.tr
		b.noPast = fmt.Errorf("%w; running it again to record it failed: %v", ErrUnrecordedPast, err)
		return b.noPast
	}
	l.mu.Lock()
	l.run = run // Interrupt (Ctrl-C) reaches the replay
	l.mu.Unlock()
	l.replays++
	why, interrupted := "", false
	// Conditions are Python evaluated in the frames: the replay pauses
	// where a breakpoint with one is, to know them in the new trace too.
	conds, filter := map[condKey]condValue{}, condPause(l.bps)
	for why == "" && !run.Ended() {
		if err := run.Resume(ctx, filter); err != nil {
			why = err.Error()
			break
		}
		switch reason, ok := run.Paused(); {
		case !ok || run.Ended():
		case reason == tracer.PauseFilter:
			states := run.Trace().States
			k := len(states) - 1
			for _, bp := range l.bps {
				if bp.Cond != "" && k >= gap && (bp.Func == "" && bp.Line == states[k].Lineno || bp.Func != "" && bp.Func == states[k].Function) {
					if v, _, ok := evalCond(ctx, run, bp.Cond); ok {
						conds[condKey{k, bp.Cond}] = v
					}
				}
			}
		case reason == tracer.PauseTimeout:
			why = fmt.Sprintf("recording it again took longer than the time limit (%v, --timeout)", run.Timeout())
		case reason == tracer.PauseInterrupt:
			why, interrupted = "recording it again was interrupted", true
		}
	}
	got := run.Trace()
	if why == "" {
		why = samePast(want, got, gap)
	}
	if why != "" {
		// The session stays at its stop; the new run is not the first.
		run.Close()
		err := fmt.Errorf("%w, and running it again from its start does not reproduce this run exactly (%s): reverse commands cannot go back past the `c`; restart, or set a breakpoint before continuing", ErrUnrecordedPast, why)
		if !interrupted { // asking again would answer the same
			b.noPastOf, b.noPast = b.tr, err
		}
		return err
	}
	// Conditions evaluated past the gap were evaluated at indexes of the
	// first run's trace.
	maps.DeleteFunc(l.conds, func(k condKey, _ condValue) bool { return k.index >= gap })
	maps.Copy(l.conds, conds)
	clear(l.quiet)
	clear(l.gapPause)
	b.tr = NewTree(got)
	b.tr.more = b.more
	b.cacheSim = nil
	return nil
}

// Back before the first gap. Some reverse targets are known exactly
// whatever ran unrecorded:
//   - rr from the module's code (a top-level state, or the end) and rc
//     with no enabled breakpoint go back to before the start: the
//     module's call is the first state (the call states that stand for
//     the stack after a gap are not calls), and no breakpoint can have
//     been hit in the gap;
//   - rn and rr in a frame that ran nothing in the gaps between the stop
//     and the target: a next's filtered stretch pauses at every event of
//     its frame (quietFrame), so the frame's previous state, and its call,
//     are the last ones recorded before it (acrossQuiet).
// A stop there needs no replay of the whole run: when the target is
// before the first gap, a new run of the program (relive) is taken to
// where that gap began, checked to record the same states up to there,
// and waits there live, as the first run did; forward commands run it on.

// quietFrame is the frame a live run resumed by p runs no event of
// without pausing, when p is filtered: a next's frame (every line from
// the first, its exceptions and its return: tracer.Pause.Steps, Frames).
func quietFrame(p tracer.Pause) (int, bool) {
	if !p.Filtered || len(p.Steps) != 1 || p.StepsFrom > 0 || !slices.Contains(p.Frames, p.Steps[0]) {
		return 0, false
	}
	return p.Steps[0], true
}

// beforeGap is the target of reverse command cmd from s when it is known
// exactly though gaps lie between (see above): ok false otherwise.
// target: where cmd goes from a position in the trace as it is.
func (b *TraceBackend) beforeGap(s Stop, cmd Command, bps []*BreakSpec, target func(Pos) Pos) (q Pos, ok bool) {
	p, ok := b.PosOf(s)
	if !ok || p.LineCall {
		return Pos{}, false
	}
	entry := pdbBeforeStart(b.tr, Pos{}) == EntryExit
	switch {
	case cmd.Action == InvStepCall && entry && (p.Index >= len(b.tr.T.States) || b.tr.Parent(p.Index) < 0):
		return EntryExit, true
	case cmd.Action == Continue && cmd.Reverse() && entry && !cmd.Raised && len(cmd.Breaks) == 0 &&
		!slices.ContainsFunc(bps, func(bp *BreakSpec) bool { return !bp.Disabled }):
		return EntryExit, target(p) == EntryExit
	case cmd.Action == InvStepCall || cmd.Action == InvStepOver:
		if q, ok := b.acrossQuiet(p.Index, cmd.Action == InvStepCall); ok {
			return pdbBeforeStart(b.tr, q), true
		}
	}
	return Pos{}, false
}

// acrossQuiet walks back from state i to its frame's previous state (rn)
// or its call (rr: call true) over at least one gap, each quiet for that
// frame (the frame keeps its number across a filtered stretch); ok false
// when the walk meets a gap that is not, or crosses none (the tree
// answers then).
func (b *TraceBackend) acrossQuiet(i int, call bool) (Pos, bool) {
	t := b.tr.T
	if i <= 0 || i >= len(t.States) || b.live == nil {
		return Pos{}, false
	}
	f, d := t.States[i].Frame, t.States[i].Depth
	crossed := false
	u := t.Unrecorded
	k := sort.SearchInts(u, i+1) - 1 // the last gap at or before state i
	for j := i - 1; j >= 0; j-- {
		if k >= 0 && u[k] == j+1 { // a gap between j and j+1
			if g, ok := b.live.quiet[j+1]; !ok || g != f {
				return Pos{}, false
			}
			crossed = true
			k--
		}
		s := &t.States[j]
		switch {
		case standIn(t, j):
		case s.Depth < d:
			return Pos{}, false
		case s.Frame == f && s.Depth == d && (!call || s.Event == tracer.EventCall):
			return Pos{Index: j}, crossed
		}
	}
	return Pos{}, false
}

// toBeforeGap answers a reverse command after history whose target is
// before a gap and known exactly (beforeGap) by relive: ok true when it
// did (or failed: err), the stop in the new run's trace; false when cmd
// is not such a command (the caller replays, or refuses, as before). When
// the new run is not the same, the program is gone (the first run was
// closed to start it): the error says so, and the session needs a restart.
func (b *TraceBackend) toBeforeGap(ctx context.Context, history []Step, cmd Command, bps []*BreakSpec, target func(Pos) Pos) (st Stop, ok bool, err error) {
	l := b.live
	s := history[len(history)-1].Stop
	if !b.pastUnrecorded(s) || l.changed || l.run.Typed() {
		return Stop{}, false, nil
	}
	q, ok := b.beforeGap(s, cmd, bps, target)
	if !ok {
		return Stop{}, false, nil
	}
	u := b.tr.T.Unrecorded
	upTo := u[sort.SearchInts(u, q.Index+1)] // the first gap after q
	if !b.relivable(upTo) {
		return Stop{}, false, nil
	}
	if err := b.relive(ctx, upTo); err != nil {
		l.run.Close()
		l.err = fmt.Errorf("%w: running the program again to go back before it did not reproduce this run (%v); restart to go on", ErrUnrecordedPast, err)
		return Stop{}, true, l.err
	}
	b.remember(len(history)+1, q, nil)
	return b.StopAt(q), true, nil
}

// relivable reports whether relive can take a new run to the stretch
// that begins at state upTo: each stretch before it ended by the filtered
// pause it went on by (gapPause), not by an interrupt, nor is a continue
// with no breakpoint.
func (b *TraceBackend) relivable(upTo int) bool {
	for _, g := range b.tr.T.Unrecorded {
		if _, ok := b.live.gapPause[g]; g < upTo && !ok {
			return false
		}
	}
	return true
}

// relive replaces the run by a new run of the program, taken to where its
// unrecorded stretch that begins at state upTo began and paused there,
// when it recorded the same states. The stretches before that one are run
// again by the filtered pauses the first run went on by (gapPause: each
// pauses at the same event in a run that is the same; relivable first).
// The new run's output is shown from upTo on; what is known of the first
// run before upTo (conditions, quiet stretches) stays.
func (b *TraceBackend) relive(ctx context.Context, upTo int) error {
	l := b.live
	want := b.tr.T
	var gaps []int
	for _, g := range want.Unrecorded {
		if g < upTo {
			gaps = append(gaps, g)
		}
	}
	if l.args != nil {
		ctx = context.WithValue(ctx, runArgsKey{}, l.args)
	}
	var shown atomic.Bool
	l.run.Close()
	run, err := l.start(ctx, func(out string) {
		if shown.Load() {
			b.write(out)
		}
	})
	if err != nil {
		l.err = err
		return err
	}
	l.mu.Lock()
	l.run = run // Interrupt (Ctrl-C) reaches the new run
	l.mu.Unlock()
	l.relived++
	resume := func(p tracer.Pause) error {
		if err := run.Resume(ctx, p); err != nil {
			return err
		}
		if reason, _ := run.Paused(); reason != tracer.PauseFilter || run.Ended() {
			return fmt.Errorf("the new run paused: %s", reason)
		}
		return nil
	}
	for i, g := range append(gaps, upTo) {
		for n := len(run.Trace().States); n < g; n = len(run.Trace().States) {
			if err := resume(tracer.Pause{Depth: -1, Budget: g - n}); err != nil {
				return err
			}
		}
		if i < len(gaps) {
			if err := resume(l.gapPause[g]); err != nil {
				return err
			}
		}
	}
	got := run.Trace()
	resumed := slices.DeleteFunc(slices.Clone(want.Resumed), func(k int) bool { return k >= upTo })
	if len(got.States) != upTo || !slices.Equal(got.Unrecorded, gaps) || !slices.Equal(got.Resumed, resumed) ||
		!reflect.DeepEqual(got.States, want.States[:upTo]) {
		return errors.New("the new run's states differ")
	}
	shown.Store(true)
	maps.DeleteFunc(l.conds, func(k condKey, _ condValue) bool { return k.index >= upTo })
	maps.DeleteFunc(l.quiet, func(k, _ int) bool { return k >= upTo })
	maps.DeleteFunc(l.gapPause, func(k int, _ tracer.Pause) bool { return k >= upTo })
	l.tailOf = nil
	b.tr = NewTree(got)
	b.tr.more = b.more
	b.cacheSim = nil
	return nil
}

// condPause is the filter a replay runs by: it pauses at the line events
// where a breakpoint with a condition may be hit (its line, or any line
// of its function), and nowhere else.
func condPause(bps []*BreakSpec) tracer.Pause {
	p := tracer.Pause{Depth: -1}
	for _, bp := range bps {
		switch {
		case bp.Cond == "":
		case bp.Func == "":
			p.Lines = append(p.Lines, bp.Line)
		default:
			p.Funcs = append(p.Funcs, bp.Func)
		}
	}
	return p
}

// samePast says how trace got (recorded whole) differs from want (with
// gaps from index gap on): "" when it has want's states before the gap,
// its output, traceback and exit.
func samePast(want, got *tracer.Trace, gap int) string {
	switch {
	case len(got.Unrecorded) > 0:
		return "the new run was not recorded whole"
	case got.Exit.Kind == tracer.ExitNever && got.Exit.Reason != want.Exit.Reason:
		return fmt.Sprintf("the new run was stopped by a limit: %s %s", got.Exit.Reason, got.Exit.Error)
	case got.Exit != want.Exit:
		return fmt.Sprintf("its exit differs: %s %q %q %d, then %s %q %q %d", want.Exit.Kind, want.Exit.Error, want.Exit.Reason, want.Exit.Code,
			got.Exit.Kind, got.Exit.Error, got.Exit.Reason, got.Exit.Code)
	case got.Stdout != want.Stdout:
		return "its output differs"
	case got.Traceback != want.Traceback:
		return "its traceback differs"
	case len(got.States) < gap || !reflect.DeepEqual(got.States[:gap], want.States[:gap]):
		return "its states before the `c` differ (a ! statement or a jump changed the first run, or the program is not deterministic)"
	}
	return ""
}

// backTo checks the target q of a reverse command (after recordPast): in
// a run that was interrupted in an untraced stretch and goes on, only the
// states recorded since that interrupt can be gone back to, not the call
// states that stand for the stack it found, nor anything before the gap.
func (b *TraceBackend) backTo(q Pos) error {
	t := b.tr.T
	if b.live != nil && b.live.tailOf == b.tr && q.Index < resumedAt(t) && !(q.LineCall && q.Index >= 0 && b.tr.lastChild[q.Index] >= resumedAt(t)) {
		// recordTail replays such a command from the start; a caller that
		// did not ask it gets no stop from outside the tail
		return fmt.Errorf("%w: the target is before the part recorded again from a checkpoint", ErrUnrecordedPast)
	}
	if b.live == nil || len(t.Unrecorded) == 0 || t.Exit.Kind != "" {
		return nil
	}
	floor := resumedAt(t)
	if q.LineCall && q.Index >= 0 && q.Index < len(b.tr.end) && b.tr.end[q.Index] >= floor {
		return nil // the session steps on into the calls' last state (Session.Do)
	}
	if q.Index < floor {
		return fmt.Errorf("%w and has not ended: reverse commands go back only to where it paused after that stretch (an interrupt, a breakpoint a long continue reached unrecorded, or the stop of a next, until or return over a long call), not into it; restart (or set a breakpoint before c) to travel back in that part of the run", ErrUnrecordedPast)
	}
	return nil
}

// resumedAt is the first state recorded for an event after t's last
// gap, past the call states sent for the stack at its interrupt
// (Trace.Resumed); the end of the trace if it has none.
func resumedAt(t *tracer.Trace) int {
	g := t.Unrecorded[len(t.Unrecorded)-1]
	if r := t.Resumed; len(r) > 0 && r[len(r)-1] >= g {
		return r[len(r)-1]
	}
	return len(t.States)
}

// Checkpoints (docs/debugger.md, "Long runs"). While a `c` runs untraced
// the program forks a checkpoint every 25 ms of its CPU and keeps the
// newest few (tracer.Run.FromCheckpoint). A reverse command from past
// that stretch, once the program has ended, first runs the newest
// checkpoint to the end and records the last ~100,000 events of it (the
// tail): the trace is then the first run's states up to the `c`, call
// states for the stack the tail began with (Trace.Resumed), and the tail,
// which are the whole run's last states. The command moves in that trace
// when its target is in the tail (at or past Resumed): the tree's reverse
// motions there depend only on the states from the target on, which are
// the whole run's. Otherwise (rr to a frame older than the tail, rc to a
// breakpoint hit before it) the run is recorded again from its start
// (recordPast), and the stop the session is at moves to its place there.

// checkpointCPU is the program's CPU time between two checkpoints of an
// untraced stretch (0: the tracer's, 25 ms); tests make it shorter.
var checkpointCPU time.Duration

// recordTail makes the trace a checkpoint's tail for a reverse command
// from history's last stop when that stop comes after an untraced stretch
// and the tail holds the command's target (target: where the command goes
// from a position, in the trace as it is then); else, if the trace is such
// a tail, it records the run again from its start and returns history
// with its last stop in the new trace. A no-op otherwise. bps: the
// session's breakpoints (a condition needs the replay, which evaluates it).
func (b *TraceBackend) recordTail(ctx context.Context, history []Step, cmd Command, bps []*BreakSpec, target func(Pos) Pos) ([]Step, error) {
	l := b.live
	s := history[len(history)-1].Stop
	if !b.pastUnrecorded(s) || b.noPastOf == b.tr {
		return history, nil
	}
	if l.tailOf != b.tr && b.tr.T.Exit.Kind == "" && b.tailHolds(s, cmd, bps, target) {
		return history, nil // the run, paused after a stretch, recorded the target since
	}
	if l.tailOf != b.tr {
		want := b.tr.T
		if err := b.loadTail(ctx, bps); err != nil || l.tailOf != b.tr {
			return history, err // recordPast replays (or has refused)
		}
		if !s.IsExit() { // a stop at or after the pause the tail ends with: the new trace's last states
			k := len(b.tr.T.States) - (len(want.States) - s.Index)
			s = b.StopAt(Pos{Index: k, LineCall: s.Event == KindInvLineCall})
			history = append(history[:len(history)-1:len(history)-1], Step{Command: history[len(history)-1].Command, Stop: s})
		}
	}
	if b.tailHolds(s, cmd, bps, target) {
		return history, nil
	}
	l.noTail = "the command's target is before the part recorded from the checkpoint"
	tail := b.tr
	l.tailOf = nil
	if err := b.recordPast(ctx, s); err != nil {
		l.tailOf = tail // the session stays in the tail
		return nil, err
	}
	if s.IsExit() {
		return history, nil
	}
	// the tail's states are the new run's last ones
	k := len(b.tr.T.States) - (len(tail.T.States) - s.Index)
	moved := append(history[:len(history)-1:len(history)-1], Step{Command: history[len(history)-1].Command,
		Stop: b.StopAt(Pos{Index: k, LineCall: s.Event == KindInvLineCall})})
	return moved, nil
}

// loadTail replaces the trace by the tail of its newest checkpoint
// (see above); l.noTail says why not when it cannot. A run paused after a
// filtered stretch (at its pause, or at a recorded step since) records the
// way to that pause again instead (tracer.Run.PauseCheckpoints), then the
// steps since (stepsAgain): the program waits where it did.
func (b *TraceBackend) loadTail(ctx context.Context, bps []*BreakSpec) error {
	l := b.live
	want := b.tr.T
	atPause := want.Exit.Kind == "" && l.run.PauseCheckpoints() > 0
	switch {
	case atPause && l.changed:
		l.noTail = "a statement or a jump changed the program since the pause the checkpoints lead to"
	case want.Exit.Kind == "" && !atPause:
		l.noTail = "the program has not ended"
	case !atPause && l.run.Checkpoints() == 0:
		l.noTail = "no checkpoint was taken (a short stretch, a program with threads, or none fit)"
	case slices.ContainsFunc(bps, func(bp *BreakSpec) bool { return bp.Cond != "" }):
		l.noTail = "a breakpoint has a condition (the tail does not evaluate it)"
	case l.run.Typed():
		l.noTail = "the program was given typed input (a run from a checkpoint would not read it again)"
	default:
		l.noTail = ""
	}
	if l.noTail != "" {
		return nil
	}
	gap := want.Unrecorded[len(want.Unrecorded)-1] // the checkpoints' stretch
	from := l.run
	run, err := l.run.FromCheckpoint(ctx, tracer.Pause{Depth: -1})
	if run != nil {
		l.mu.Lock()
		l.run = run // Interrupt (Ctrl-C) reaches the tail
		l.mu.Unlock()
	}
	l.tailRuns++
	if err != nil {
		l.err = err
		return fmt.Errorf("%w; running its end again from a checkpoint failed: %v", ErrUnrecordedPast, err)
	}
	if atPause {
		why := pauseTailDiffers(run, from, want, gap)
		if why == "" {
			why = stepsAgain(ctx, run, want)
		}
		if why != "" {
			// the program that waits at this stop goes on as it was
			if err := run.Back(ctx, from); err != nil {
				l.err = err
				return fmt.Errorf("%w; recording the way to this stop again failed: %v", ErrUnrecordedPast, err)
			}
			l.mu.Lock()
			l.run = from
			l.mu.Unlock()
			l.noTail = "recording the way to this stop again from a checkpoint does not reproduce this run exactly (" + why + ")"
			return nil
		}
		run.ShowOutputOf(from)
	}
	why := ""
	if reason, paused := run.Paused(); !atPause && !run.Ended() {
		if !paused || reason != tracer.PauseTimeout {
			return fmt.Errorf("%w, and recording its end again from a checkpoint was interrupted", ErrUnrecordedPast)
		}
		why = fmt.Sprintf("recording it again took longer than the time limit (%v, --timeout)", run.Timeout())
	}
	got := run.Trace()
	short, none := tailDiffers(want, got, gap)
	if none {
		l.noTail = short
		return nil // recordPast replays
	}
	if why == "" {
		why = short
	}
	if why != "" {
		b.noPastOf = b.tr
		b.noPast = fmt.Errorf("%w, and running its end again from a checkpoint does not reproduce this run exactly (%s): reverse commands cannot go back past the `c`; restart, or set a breakpoint before continuing", ErrUnrecordedPast, why)
		return b.noPast
	}
	maps.DeleteFunc(l.conds, func(k condKey, _ condValue) bool { return k.index >= gap })
	b.tr = NewTree(got)
	b.tr.more = b.more
	b.cacheSim = nil
	l.tailOf = b.tr
	return nil
}

// tailDiffers says how got, recorded from a checkpoint of want's last
// unrecorded stretch (from state gap on), differs from want: "" when it
// holds a tail, and want's states before the stretch, output, traceback
// and exit; none when it recorded no tail at all.
func tailDiffers(want, got *tracer.Trace, gap int) (why string, none bool) {
	if len(got.Resumed) == 0 || got.Resumed[len(got.Resumed)-1] < gap {
		return "the checkpoint recorded no tail", true
	}
	whole := *got
	whole.Unrecorded = nil // the tail's gap is the first run's
	return samePast(want, &whole, gap), false
}

// pauseTailDiffers says how a run FromCheckpoint made from `from` at a
// filtered stretch's pause differs from the way to that pause in want
// (with gaps from index gap on): "" when it paused at the same event
// after the same states before the stretch, with the same output so far.
func pauseTailDiffers(run, from *tracer.Run, want *tracer.Trace, gap int) string {
	reason, paused := run.Paused()
	switch {
	case run.Ended():
		return "the new run did not pause where this one did"
	case !paused || reason != tracer.PauseFilter:
		return "recording it again was interrupted (" + reason + ")"
	}
	got := run.Trace()
	if why, _ := tailDiffers(want, got, gap); why != "" {
		return why
	}
	if d := from.OutputDigest(); d == "" || run.OutputDigest() != d {
		return "its output differs"
	}
	if !got.States[len(got.States)-1].SameEvent(want.States[resumedAt(want)]) {
		return "the new run paused at another event"
	}
	return ""
}

// stepsAgain records, in a run FromCheckpoint made at a filtered
// stretch's pause, the events want recorded since that pause (the steps
// after it), and says how they differ ("" when they do not).
func stepsAgain(ctx context.Context, run *tracer.Run, want *tracer.Trace) string {
	since := want.States[resumedAt(want)+1:]
	if len(since) == 0 {
		return ""
	}
	got := run.Trace()
	from := len(got.States)
	if err := run.Resume(ctx, tracer.Pause{Depth: -1, Budget: len(since)}); err != nil {
		return err.Error()
	}
	if reason, paused := run.Paused(); run.Ended() || !paused || reason != tracer.PauseFilter || len(got.States) != from+len(since) {
		return "the steps since the pause were not recorded again"
	}
	for i, st := range since {
		if !got.States[from+i].SameEvent(st) {
			return "the steps since the pause differ"
		}
	}
	return ""
}

// tailHolds reports whether target(s) is in the recorded tail of the
// trace (at or past Trace.Resumed).
func (b *TraceBackend) tailHolds(s Stop, cmd Command, bps []*BreakSpec, target func(Pos) Pos) bool {
	p, ok := b.PosOf(s)
	if !ok || slices.ContainsFunc(bps, func(bp *BreakSpec) bool { return bp.Cond != "" }) {
		return false
	}
	q := target(p)
	from := resumedAt(b.tr.T)
	if cmd.Action == InvStepInto && q.LineCall && q.Index >= 0 && q.Index < from {
		// a line whose calls the tail ends: Session.Do steps on at once
		// into the last of them, which the tail holds
		return b.tr.lastChild[q.Index] >= from
	}
	return q.Index >= from
}
