package debugger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"ndb/tracer"
)

// This file replays CPython's bdb state machine (Lib/bdb.py, 3.11) over a
// recorded trace, so that pdb's s/n/r/unt/c stop exactly where pdb stops.
// The trace holds every event of the program's own frames; bdb sees only
// some of them: a frame whose call event returned None has no f_trace and
// its line/return/exception events are never dispatched, and after a
// continue with no breakpoints tracing is off altogether. The simulation
// keeps exactly that state: stopframe, returnframe, stoplineno, the set of
// frames with f_trace, and whether tracing is on.
//
// Every module but the program's is treated as skipped (pdb's skip=), so
// only program frames can stop; a program frame's f_back is taken to be the
// nearest program frame below it (library Python frames in between are not
// in the trace; see docs/debugger.md).

// Sentinel frame ids: no frame (None) and the runner frame below the entry
// (bdb's botframe, which never stops).
const (
	frameNone = -1 << 62
	frameBot  = frameNone + 1
	// frameOpaque stands for a caller that is not a program frame and is
	// not in the trace: the frame of code run from a string (exec, eval,
	// doctest's examples) between a program line and the program function
	// that code calls. pdb skips it (its module is not the program's), so
	// it never stops and never matches a traced frame.
	frameOpaque = frameNone + 2
)

// pdbCmd is one of pdb's moving commands.
type pdbCmd int

const (
	pdbStep pdbCmd = iota
	pdbNext
	pdbReturn
	pdbUntil
	pdbContinue
)

// pdbSim is bdb's state between two stops of one trace.
type pdbSim struct {
	tr          *Tree
	stopframe   int
	returnframe int
	stoplineno  int
	traced      map[int]bool // frames whose f_trace is set
	tracingOff  bool         // sys.settrace(None) was called by set_continue
	gen         map[int]bool // frames that run generators/coroutines
	pinned      map[int]bool // frames kept alive by an exception pdb stopped at (see pinException)
	pos         int          // index of the current stop; len(States) at the end
	bps         []*BreakSpec // the session's breakpoints (nil: Command.Breaks, plain lines)
	breaks      map[int]bool // the lines of the command being run
	raised      bool         // Command.Raised: a continue that also stops at every exception event
	firstLine   map[int]int  // frame -> its code's co_firstlineno (the line of its first call event)
	firstState  map[int]int  // frame -> the index of its first state
	scanned     int          // states read into gen and firstLine
	chains      []*pinChain  // exceptions pdb stopped at, followed as far as the trace goes
	interrupt   int          // a live run was interrupted after this state: stop there (-1: none)
	cmdFrom     int          // the first state of the command being run
	cmdPauses   int          // how many times the live run paused for it
	// bdb does not see the finalizers that run when the previous stop's
	// frame (lastStop) or a pinned frame returns (see run): teardown holds
	// while the states read are such a teardown's, of teardownFrame.
	lastStop      int
	teardown      bool
	teardownFrame int
}

// liveRecordStates: a live run's continue with breakpoints records every
// event while the trace is shorter than this, so that reverse commands
// travel in it; past it the run goes on filtered (tracer.Pause.Filtered:
// unrecorded, pausing only where a breakpoint may stop). A variable for
// the tests.
var liveRecordStates = 50_000

// liveStepStates: a next, until, return or continue on a long run
// records this many events of its own before it goes on filtered, so that
// one over a short call, or to a breakpoint a little further, keeps its
// way for reverse commands; or fewer, when it has paused liveStepPauses
// times meanwhile (an until or return pauses at every event of its frame
// while it records). A variable for the tests.
var liveStepStates = 10_000

const liveStepPauses = 200

// filterRecheck is how many events a continue records, when it cannot go
// on filtered yet (a teardown or a pinned exception is being followed),
// before it asks again.
const filterRecheck = 1000

func newPdbSim(tr *Tree) *pdbSim {
	return &pdbSim{tr: tr, stopframe: frameNone, returnframe: frameNone,
		traced: map[int]bool{}, gen: map[int]bool{}, pinned: map[int]bool{}, firstLine: map[int]int{},
		firstState: map[int]int{}, interrupt: -1, lastStop: frameNone}
}

// scan reads the states not yet seen into gen and firstLine (the trace of
// a live run grows).
func (sim *pdbSim) scan() {
	states := sim.tr.T.States
	for ; sim.scanned < len(states); sim.scanned++ {
		s := &states[sim.scanned]
		if s.Gen {
			sim.gen[s.Frame] = true
		}
		if _, ok := sim.firstState[s.Frame]; !ok {
			sim.firstState[s.Frame] = sim.scanned
		}
		if _, ok := sim.firstLine[s.Frame]; !ok && s.Event == tracer.EventCall {
			first, ok := sim.tr.T.FirstLines[s.Frame] // a frame found running
			if !ok {
				first = s.Lineno
			}
			sim.firstLine[s.Frame] = first
		}
	}
}

// isGen reports whether frame runs a generator or coroutine.
func (sim *pdbSim) isGen(frame int) bool {
	sim.scan()
	return sim.gen[frame]
}

// frameFirstLine is co_firstlineno of frame's code: the line of the frame's
// first call event.
func (sim *pdbSim) frameFirstLine(frame int) int {
	sim.scan()
	return sim.firstLine[frame]
}

// have reports whether state k exists, letting a live run go on until it
// does (or ends). The run pauses at every state that could stop the
// command (pause); an interrupt makes its last state a stop.
func (sim *pdbSim) have(k int) bool {
	for k >= len(sim.tr.T.States) {
		if sim.tr.more == nil {
			return false
		}
		sim.cmdPauses++
		interrupted, ok := sim.tr.more(sim.pause())
		if interrupted {
			sim.interrupt = len(sim.tr.T.States) - 1
		}
		if !ok {
			return k < len(sim.tr.T.States)
		}
	}
	return true
}

// pause is the filter a live run pauses by while this simulation runs: every
// event of stopframe and returnframe (the only frames stop_here and
// dispatch_return stop in), line events at breakpoint lines or in functions
// with a breakpoint, and exceptions when a generator is stepped over (bdb's
// StopIteration/GeneratorExit stop in its caller). pdb's step stops
// anywhere: every event.
func (sim *pdbSim) pause() tracer.Pause {
	p := tracer.Pause{Depth: -1}
	if sim.tracingOff { // set_continue's sys.settrace(None): nothing recorded (tracebackend.go, recordPast)
		p.Untraced = true
		p.CheckpointCPU = checkpointCPU // replay.go, recordTail
		return p
	}
	if sim.stopframe == frameNone {
		return tracer.PauseAll
	}
	if sim.raised { // every exception event may stop: nothing is filtered
		p.Exceptions = true
	} else if sim.filtering() {
		// a long run goes on unrecorded and pauses only where bdb may
		// stop (breakHere and stopHere decide)
		n := len(sim.tr.T.States)
		need := liveRecordStates - n
		if sim.cmdPauses < liveStepPauses {
			need = max(need, liveStepStates-(n-sim.cmdFrom))
		}
		if need <= 0 && sim.filterable() {
			return sim.filteredPause()
		}
		p.Budget = max(need, filterRecheck)
	}
	for _, f := range []int{sim.stopframe, sim.returnframe} {
		if f > frameOpaque {
			p.Frames = append(p.Frames, f)
		}
	}
	p.Exceptions = p.Exceptions || sim.isGen(sim.stopframe)
	for l := range sim.breaks {
		p.Lines = append(p.Lines, l)
	}
	for _, b := range sim.bps {
		if b.Func != "" {
			p.Funcs = append(p.Funcs, b.Func)
		}
	}
	return p
}

// filtering reports whether the command being run can go on filtered
// (unrecorded, tracer.Pause.Filtered) on a long run: a continue with
// breakpoints, or a next, until or return (stepping over a generator, bdb
// also stops at StopIteration and GeneratorExit in any frame: the filter
// pauses there too, GenExits).
func (sim *pdbSim) filtering() bool {
	if sim.tracingOff || sim.raised || sim.stopframe == frameNone {
		return false
	}
	return sim.continuing() || sim.stopframe != frameBot
}

// filteredPause is where a filtered run pauses: bdb's break_here
// candidates (candidates), the returns that begin a teardown
// (teardownFrames), and stop_here's and dispatch_return's frames: every
// line event of stopframe from stoplineno on and its exceptions (Steps),
// the returns of stopframe and returnframe (Frames).
func (sim *pdbSim) filteredPause() tracer.Pause {
	p := tracer.Pause{Depth: -1, Filtered: true}
	p.Lines, p.Starts = sim.candidates()
	p.Frames = sim.teardownFrames()
	for _, f := range []int{sim.stopframe, sim.returnframe} {
		if f > frameOpaque && !slices.Contains(p.Frames, f) {
			p.Frames = append(p.Frames, f)
		}
	}
	if sim.stopframe > frameOpaque && sim.stoplineno != -1 {
		p.Steps, p.StepsFrom = []int{sim.stopframe}, sim.stoplineno
	}
	p.GenExits = sim.isGen(sim.stopframe)
	p.CheckpointCPU = checkpointCPU // replay.go, recordTail: the way to its pause
	return p
}

// continuing reports whether the command being run is a continue with
// breakpoints (set_continue: stopframe is botframe, no stop line).
func (sim *pdbSim) continuing() bool {
	return !sim.tracingOff && sim.stopframe == frameBot && sim.returnframe == frameNone &&
		sim.stoplineno == -1 && len(sim.breaks) > 0
}

// filterable reports whether a continue can go on unrecorded from the end
// of the trace: no teardown being followed, no interrupt to stop at, and
// every exception pdb stopped at followed to where it was caught (isPinned
// needs each state of that way).
func (sim *pdbSim) filterable() bool {
	if sim.teardown || sim.interrupt >= 0 {
		return false
	}
	sim.isPinned(frameNone, len(sim.tr.T.States)-1)
	for _, c := range sim.chains {
		if !c.done {
			return false
		}
	}
	return true
}

// candidates are where a filtered run pauses for breakHere to decide:
// the line events a breakpoint is at (effective counts a hit there). A
// line breakpoint is at its line; a function breakpoint at the first line
// its function runs (funcFirst), and before that is known at every line
// of code starting at its line (co_firstlineno).
func (sim *pdbSim) candidates() (lines, starts []int) {
	if sim.bps == nil {
		for l := range sim.breaks {
			lines = append(lines, l)
		}
		return lines, nil
	}
	for _, b := range sim.bps {
		switch {
		case b.Disabled || b.done:
		case b.Func == "":
			lines = append(lines, b.Line)
		case b.funcFirst != 0:
			lines = append(lines, b.funcFirst)
		default:
			starts = append(starts, b.Line)
		}
	}
	return lines, starts
}

// teardownFrames are the frames whose return begins a teardown (run):
// a filtered run pauses there, so that what follows is recorded.
func (sim *pdbSim) teardownFrames() []int {
	var fs []int
	if sim.lastStop > frameOpaque {
		fs = append(fs, sim.lastStop)
	}
	for f := range sim.pinned {
		if f > frameOpaque && f != sim.lastStop {
			fs = append(fs, f)
		}
	}
	return fs
}

// breakHere is bdb's break_here for line event k: a breakpoint at the
// line, or a function breakpoint at the frame's co_firstlineno whose
// function is at its first executable line, chosen by effective (hits,
// ignore counts, conditions); a temporary breakpoint that stops with its
// condition true is marked done (cleared after the command).
func (sim *pdbSim) breakHere(k int, breaks map[int]bool) bool {
	s := &sim.tr.T.States[k]
	if sim.bps == nil {
		return breaks[s.Lineno]
	}
	line := s.Lineno
	if !breaks[line] {
		line = sim.frameFirstLine(s.Frame)
		if line == 0 || !breaks[line] {
			return false
		}
	}
	at := func(b *BreakSpec) bool {
		if b.Line != line {
			return false
		}
		if b.Func == "" {
			return b.Line == s.Lineno
		}
		if s.Function != b.Func { // bdb's checkfuncname
			return false
		}
		if b.funcFirst == 0 {
			b.funcFirst = s.Lineno
		}
		return b.funcFirst == s.Lineno
	}
	bp, flag := effective(sim.bps, at, func(b *BreakSpec) (bool, error) { return b.evalAt(k, s.Locals) })
	if bp == nil {
		return false
	}
	if flag && bp.Temp {
		bp.done = true
	}
	return true
}

// effective is bdb's effective(): the first enabled breakpoint of bps
// that is at the place (at) and stops. Each one reached counts a hit; an
// ignore count is spent on a hit whose condition holds; a condition that
// cannot be evaluated stops whatever the ignore count, and flag is then
// false (a temporary breakpoint is kept, as a hint to the user).
func effective(bps []*BreakSpec, at func(*BreakSpec) bool, cond func(*BreakSpec) (bool, error)) (bp *BreakSpec, flag bool) {
	for _, b := range bps {
		if b.Disabled || b.done || !at(b) {
			continue
		}
		b.Hits++
		if b.Cond != "" {
			ok, err := cond(b)
			if err != nil {
				return b, false
			}
			if !ok {
				continue
			}
		}
		if b.Ignore > 0 {
			b.Ignore--
			continue
		}
		return b, true
	}
	return nil, false
}

// evalAt evaluates b's condition at state k with these locals: in the
// live frame (a Python expression, pdb's eval) when the program waits at
// k or the live run evaluated it there before, else over the reprs
// (Condition); an error means it could not be evaluated (bdb then stops).
func (b *BreakSpec) evalAt(k int, locals tracer.Locals) (bool, error) {
	if b.live != nil && k >= 0 {
		if ok, known, err := b.live(k, b.Cond); known {
			return ok, err
		}
	}
	if b.cond == nil {
		return true, fmt.Errorf("condition %q: the program does not wait at this state, and it is not of a form ndb evaluates over the recorded values (%s)", b.Cond, ConditionHelp)
	}
	return b.cond.Eval(locals)
}

// pdbStart runs a fresh debugger to its first stop: the first line event of
// a script's module (as `python -m pdb` does) or main's call event for a
// --call trace (as pdb stops on entering a function it steps into).
func pdbStart(tr *Tree) *pdbSim {
	sim := newPdbSim(tr)
	from := 0
	states := tr.T.States
	if tr.T.Call == "" && len(states) > 0 && states[0].Event == tracer.EventCall {
		// bdb's first dispatch_call only records botframe and traces the frame.
		sim.traced[states[0].Frame] = true
		from = 1
	}
	sim.pos = sim.run(from, nil, frameNone)
	if states = tr.T.States; sim.pos < len(states) && states[sim.pos].Event == tracer.EventException {
		sim.pinException(sim.pos)
	}
	return sim
}

// pdbAt is a debugger stopped at state i as if it had got there by single
// steps: every frame entered so far is traced.
func pdbAt(tr *Tree, i int) *pdbSim {
	sim := newPdbSim(tr)
	for k := 0; k <= i && k < len(tr.T.States); k++ {
		sim.traced[tr.T.States[k].Frame] = true
	}
	sim.pos = i
	return sim
}

// fback is the frame id of the caller of the frame that produced state i:
// the nearest program frame below it, or frameOpaque when the frame's
// direct caller is not a program frame (the call state's CallerUntraced:
// code from an exec/eval/doctest string, a sibling module calling back).
// The trace has only program frames; pdb's f_back is then that untraced
// frame, which matters for `r` at the --Return-- (pdb runs on to the next
// breakpoint instead of stopping in the parent's frame) and for `s` there
// (set_step gives that frame, not the parent's, its trace function).
func (sim *pdbSim) fback(i int) int {
	p := sim.tr.parent[i]
	if p < 0 {
		return frameBot
	}
	states := sim.tr.T.States
	frame := states[i].Frame
	// the activation's call state: its states are consecutive siblings
	for k := i; k >= 0 && states[k].Frame == frame; k = sim.tr.prev[k] {
		if states[k].Event == tracer.EventCall {
			if states[k].CallerUntraced {
				return frameOpaque
			}
			break
		}
	}
	return states[p].Frame
}

func (sim *pdbSim) setStopinfo(stopframe, returnframe, stoplineno int) {
	sim.stopframe, sim.returnframe, sim.stoplineno = stopframe, returnframe, stoplineno
}

// do applies cmd at the current stop and runs to the next one, returning
// its index (len(States) when the program ends first). breaks are the line
// breakpoints in effect; untilLine is `until N`'s line (0: the next line).
func (sim *pdbSim) do(cmd pdbCmd, breaks map[int]bool, untilLine int) int {
	if n := len(sim.tr.T.States); sim.pos >= n {
		return n
	}
	i := sim.pos
	s := sim.tr.T.States[i]
	cur := s.Frame
	switch cmd {
	case pdbStep:
		if s.Event == tracer.EventReturn { // set_step restores the caller's f_trace (bpo-13183)
			if fb := sim.fback(i); fb != frameBot {
				sim.traced[fb] = true
			}
		}
		sim.setStopinfo(frameNone, frameNone, 0)
	case pdbNext:
		sim.setStopinfo(cur, frameNone, 0)
	case pdbUntil:
		if untilLine <= 0 {
			untilLine = s.Lineno + 1
		}
		sim.setStopinfo(cur, cur, untilLine)
	case pdbReturn:
		if s.Gen {
			sim.setStopinfo(cur, frameNone, -1)
		} else {
			sim.setStopinfo(sim.fback(i), cur, 0)
		}
	case pdbContinue:
		sim.setStopinfo(frameBot, frameNone, -1)
		if len(breaks) == 0 && !sim.raised {
			sim.tracingOff = true
		}
	}
	// dispatch_return, after user_return: a next/until issued at a return
	// stop becomes a step.
	if s.Event == tracer.EventReturn && sim.stopframe == cur && sim.stoplineno != -1 {
		sim.setStopinfo(frameNone, frameNone, 0)
	}
	sim.pos = sim.run(i+1, breaks, cur)
	if sim.pos < len(sim.tr.T.States) && sim.tr.T.States[sim.pos].Event == tracer.EventException {
		sim.pinException(sim.pos)
	}
	return sim.pos
}

// pinException records the frames an exception that pdb stopped at keeps
// alive. pdb's user_exception stores it in the frame's locals
// (__exception__), which makes a cycle exception -> traceback -> frame ->
// locals -> exception: every frame the exception propagates into stays
// alive until a cyclic garbage collection, so none of their teardowns runs
// finalizers. (An internal StopIteration has no traceback: no cycle.) The
// frames it propagates into are found as the trace goes on (isPinned).
func (sim *pdbSim) pinException(k int) {
	s := &sim.tr.T.States[k]
	if internalStopIteration(s) {
		return
	}
	sim.pinned[s.Frame] = true
	sim.chains = append(sim.chains, &pinChain{arg: s.Arg, frame: s.Frame, j: k + 1})
}

// pinChain follows one pinned exception: the frame it is in, and the next
// state to look at.
type pinChain struct {
	arg   string
	frame int
	j     int
	done  bool
}

// isPinned reports whether frame is pinned as far as states up to k show:
// a frame is pinned when the exception it was in returned from it and,
// at once, was raised in the (shallower) frame below.
func (sim *pdbSim) isPinned(frame, k int) bool {
	states := sim.tr.T.States
	for _, c := range sim.chains {
		for ; !c.done && c.j <= k && c.j < len(states); c.j++ {
			if states[c.j].Frame != c.frame {
				continue
			}
			// The frame's next own event: a return means the exception left it.
			if states[c.j].Event != tracer.EventReturn {
				c.done = true
				break
			}
			if c.j+1 >= len(states) || c.j+1 > k {
				break // what follows is not known yet
			}
			next := &states[c.j+1]
			if next.Event != tracer.EventException || next.Arg != c.arg || next.Depth >= states[c.j].Depth {
				c.done = true
				break
			}
			c.frame = next.Frame
			sim.pinned[c.frame] = true
			c.j++
		}
	}
	return sim.pinned[frame]
}

// stopHere is bdb's stop_here for state i.
func (sim *pdbSim) stopHere(s *tracer.State) bool {
	if s.Frame == sim.stopframe {
		if sim.stoplineno == -1 {
			return false
		}
		return s.Lineno >= sim.stoplineno
	}
	return sim.stopframe == frameNone
}

// run dispatches events from index from on and returns the first stop.
// lastStop is the frame of the previous stop: pdb keeps that frame's
// locals dict (curframe_locals) until the next stop, so the objects it
// holds outlive the frame, and their finalizers (an unfinished generator's
// close, __del__) run later inside pdb, where nothing is traced. Their
// events right after that frame's return are therefore not dispatched.
func (sim *pdbSim) run(from int, breaks map[int]bool, lastStop int) int {
	sim.breaks = breaks
	sim.cmdFrom, sim.cmdPauses = from, 0
	stepping := func() bool { return sim.stopframe != frameNone }
	states := sim.tr.T.States
	// A stop at that frame's own return event starts its teardown at once.
	// The frame that returned is not among the objects its locals keep
	// alive: an explicit close of that same generator right after its
	// yield (g.close() on the line that resumed it) is no finalizer, and
	// pdb stops in it as usual.
	sim.lastStop = lastStop
	sim.teardown = from > 0 && from <= len(states) && states[from-1].Event == tracer.EventReturn &&
		(lastStop != frameNone && states[from-1].Frame == lastStop || sim.isPinned(states[from-1].Frame, from-1))
	sim.teardownFrame = frameNone
	if sim.teardown {
		sim.teardownFrame = states[from-1].Frame
	}
	defer func() { sim.teardown = false }()
	for k := from; sim.have(k); k++ {
		states = sim.tr.T.States
		s := &states[k]
		if k == sim.interrupt { // pdb's Ctrl-C: set_step, then the next event stops
			sim.interrupt = -1
			sim.tr.interruptStop = k
			sim.tracingOff = false
			sim.traced[s.Frame] = true
			sim.setStopinfo(frameNone, frameNone, 0)
			return k
		}
		if sim.tracingOff {
			continue
		}
		if sim.standIn(k) {
			// no event: bdb's dispatch_call ran, unseen, for a frame
			// entered (or a generator resumed) in the unrecorded stretch;
			// a frame known before keeps its f_trace
			sim.scan()
			if first := sim.firstState[s.Frame]; (first == k || s.Gen) && (sim.stopHere(s) || len(breaks) > 0 || sim.raised) {
				sim.traced[s.Frame] = true
			}
			continue
		}
		if sim.teardown {
			if end := sim.finalizerEnd(k); end >= 0 && s.Frame != sim.teardownFrame {
				k = end
				continue
			}
			sim.teardown = false
		}
		if s.Event == tracer.EventReturn && (s.Frame == lastStop && lastStop != frameNone || sim.isPinned(s.Frame, k)) {
			sim.teardown, sim.teardownFrame = true, s.Frame
		}
		switch s.Event {
		case tracer.EventCall:
			if !(sim.stopHere(s) || len(breaks) > 0 || sim.raised) {
				continue // dispatch_call returns None: f_trace unchanged
			}
			sim.traced[s.Frame] = true
			if stepping() && s.Gen {
				continue
			}
			if sim.stopHere(s) { // pdb's user_call checks stop_here again
				return k
			}
		case tracer.EventLine:
			if sim.traced[s.Frame] && (sim.stopHere(s) || sim.breakHere(k, breaks)) {
				return k
			}
		case tracer.EventReturn:
			if !sim.traced[s.Frame] {
				continue
			}
			if sim.stopHere(s) || s.Frame == sim.returnframe {
				if stepping() && s.Gen {
					continue
				}
				return k
			}
		case tracer.EventException:
			if !sim.traced[s.Frame] {
				continue
			}
			if sim.raised && !(s.Gen && internalStopIteration(s)) {
				return k // Command.Raised: ndb's own stop, after pdb's dispatch
			}
			if sim.stopHere(s) {
				if !(s.Gen && internalStopIteration(s)) {
					return k
				}
			} else if stepping() && s.Frame != sim.stopframe && sim.isGen(sim.stopframe) {
				if t := excType(s.Arg); t == "StopIteration" || t == "GeneratorExit" {
					return k
				}
			}
		}
	}
	return len(sim.tr.T.States)
}

// standIn reports whether state k is a call state standing for a frame
// found on the stack after an unrecorded stretch (the states from a gap of
// Trace.Unrecorded up to its Trace.Resumed): no event.
func (sim *pdbSim) standIn(k int) bool { return standIn(sim.tr.T, k) }

// standIn reports whether state k of t stands for a frame found on the
// stack after an unrecorded stretch (pdbSim.standIn).
func standIn(t *tracer.Trace, k int) bool {
	i := sort.SearchInts(t.Unrecorded, k+1) - 1 // the last gap at or before k
	if i < 0 {
		return false
	}
	j := sort.SearchInts(t.Resumed, t.Unrecorded[i])
	if j == len(t.Resumed) {
		return false
	}
	r := t.Resumed[j]
	return k < r && (i+1 == len(t.Unrecorded) || t.Unrecorded[i+1] > r)
}

// finalizerEnd recognises a finalizer starting at state k: the close of an
// unfinished generator (its resumption call, then GeneratorExit thrown in
// it) or a __del__ call. It returns the index of the finalizer's last
// state (the frame's return), or -1.
func (sim *pdbSim) finalizerEnd(k int) int {
	s := sim.tr.T.States[k]
	if s.Event != tracer.EventCall {
		return -1
	}
	isClose := s.Gen && sim.have(k+1) && sim.tr.T.States[k+1].Frame == s.Frame &&
		sim.tr.T.States[k+1].Event == tracer.EventException && excType(sim.tr.T.States[k+1].Arg) == "GeneratorExit"
	if !isClose && s.Function != "__del__" {
		return -1
	}
	for j := k + 1; sim.have(j); j++ {
		if sim.tr.T.States[j].Frame == s.Frame && sim.tr.T.States[j].Event == tracer.EventReturn {
			return j
		}
	}
	return len(sim.tr.T.States) - 1
}

// excType is the class name at the front of an exception's repr.
func excType(repr string) string {
	if i := strings.IndexByte(repr, '('); i > 0 {
		return repr[:i]
	}
	return repr
}

// internalStopIteration guesses bdb's "StopIteration with no traceback":
// the interpreter reports one when a generator driven by a for loop or a
// `yield from`/`await` finishes with a value, and when an `async for`
// (statement or comprehension: the comprehension's coroutine at each
// item, its caller when the comprehension ends) or an `async with` awaits.
// The trace keeps no traceback, so the statement's text decides.
func internalStopIteration(s *tracer.State) bool {
	if excType(s.Arg) != "StopIteration" {
		return false
	}
	src := strings.TrimSpace(s.Src)
	return strings.Contains(src, "yield from") || strings.Contains(src, "await ") ||
		strings.HasPrefix(src, "for ") || strings.Contains(src, "async for ") ||
		strings.HasPrefix(src, "async with ")
}

// breakpointBackend is a backend that runs pdb's own breakpoint logic over
// the session's breakpoints (the trace backend): the session hands it
// breakpoints with conditions, tbreak and function breakpoints.
type breakpointBackend interface {
	nextWith(ctx context.Context, history []Step, cmd Command, bps []*BreakSpec) (Stop, error)
}

// nextWith is Next with the session's breakpoints: pdb's commands run the
// bdb simulation with break_here over bps; a reverse continue goes back to
// the latest earlier line where one of them would stop (conditions
// evaluated, temporary ones kept); other commands are Next's.
func (b *TraceBackend) nextWith(ctx context.Context, history []Step, cmd Command, bps []*BreakSpec) (Stop, error) {
	done := b.answering(ctx)
	if b.live != nil { // conditions are evaluated in the live frames while the command runs
		b.live.bps = bps
		for _, bp := range bps {
			bp.live = b.condAt
		}
		defer func() {
			for _, bp := range bps {
				bp.live = nil
			}
		}()
	}
	return done(b.nextWithBreaks(ctx, history, cmd, bps))
}

func (b *TraceBackend) nextWithBreaks(ctx context.Context, history []Step, cmd Command, bps []*BreakSpec) (Stop, error) {
	if len(history) == 0 {
		return Stop{}, fmt.Errorf("trace backend: empty history")
	}
	p, ok := b.PosOf(history[len(history)-1].Stop)
	n := len(b.tr.T.States)
	if ok && p.Index < 0 && cmd.Action == Continue && !cmd.Reverse() {
		// c from before the start: the program starts again, and goes on
		// from its first stop unless a breakpoint holds it there (as the
		// session's loop over the other engines' stops does)
		start, err := b.next(ctx, history, cmd)
		if err != nil || start.IsExit() || start.Event != tracer.EventLine || breakOn(bps, start.Lineno) {
			return start, err
		}
		history = append(history[:len(history):len(history)], Step{Command: cmd, Stop: start})
		p, _ = b.PosOf(start)
	}
	if !ok || cmd.Action == Breakpoint || p.Index < 0 || p.Index >= n && !cmd.Reverse() {
		return b.next(ctx, history, cmd)
	}
	if err := ctx.Err(); err != nil {
		return Stop{}, err
	}
	if cmd.Reverse() {
		target := func(p Pos) Pos {
			if cmd.Action == Continue {
				return b.reverseContinueWith(p, NewReverseContinue(nil, bps))
			}
			return pdbBeforeStart(b.tr, b.tr.Apply(p, cmd))
		}
		if st, ok, err := b.toBeforeGap(ctx, history, cmd, bps, target); ok { // replay.go
			return st, err
		}
		history, err := b.recordTail(ctx, history, cmd, bps, target)
		if err != nil {
			return Stop{}, err
		}
		if cmd.Action != Continue {
			return b.next(ctx, history, cmd)
		}
		if err := b.recordPast(ctx, history[len(history)-1].Stop); err != nil { // replay.go
			return Stop{}, err
		}
		p, _ = b.PosOf(history[len(history)-1].Stop)
		q := b.reverseContinueWith(p, NewReverseContinue(nil, bps))
		if err := b.backTo(q); err != nil {
			return Stop{}, err
		}
		b.remember(len(history)+1, q, nil)
		return b.StopAt(q), nil
	}
	breaks := make(map[int]bool, len(bps))
	for _, bp := range bps {
		breaks[bp.Line] = true
	}
	return b.runPdb(history, p, cmd, breaks, bps)
}

// breakOn reports whether an enabled breakpoint of bps is on line.
func breakOn(bps []*BreakSpec, line int) bool {
	return slices.ContainsFunc(bps, func(bp *BreakSpec) bool { return bp.Line == line && !bp.Disabled })
}

// reverseContinueWith is where a reverse continue from p stops by rule r
// (ReverseContinue): the trace's states walked back from just before p.
func (b *TraceBackend) reverseContinueWith(p Pos, r *ReverseContinue) Pos {
	from := p.Index - 1
	if p.LineCall {
		from = p.Index // the line itself is in the past of its twin
	}
	states := b.tr.T.States
	for k := min(from, len(states)-1); k >= 0; k-- {
		r.at = k
		if back := r.Met(states[k]); back >= 0 {
			return Pos{Index: k + back}
		}
	}
	return EntryExit
}

// pdbBeforeStart is q, or inv_exit_entry where q is a script's module
// call: pdb's first stop is the module's first line, and that call has no
// line a user (or a model) could be shown, so a reverse command that would
// reach it is before the start, on every engine.
func pdbBeforeStart(tr *Tree, q Pos) Pos {
	if q.Index == 0 && !q.LineCall && tr.T.Call == "" && len(tr.T.States) > 0 && tr.T.States[0].Event == tracer.EventCall {
		return EntryExit
	}
	return q
}

// pdbCmdOf is the pdb command a forward Command stands for (false for the
// SPEC's breakpoint action and inverse commands), and `until N`'s line.
func pdbCmdOf(cmd Command) (pc pdbCmd, untilLine int, ok bool) {
	switch cmd.Action {
	case StepInto:
		return pdbStep, 0, true
	case StepOver:
		if cmd.Until {
			return pdbUntil, cmd.Line, true
		}
		return pdbNext, 0, true
	case StepReturn:
		return pdbReturn, 0, true
	case Continue:
		return pdbContinue, 0, !cmd.Backward
	}
	return 0, 0, false
}

// Rollout is where a forward command stops over states that come one at a
// time, as a model engine predicts them by step_into: the one rule every
// engine's forward commands follow. pdb's commands (s, n, unt, r, c with
// cmd.Breaks as line breakpoints) run the same bdb simulation as the trace
// backend, started as if the current stop had been reached by single steps
// (every frame of the stack traced); the SPEC's breakpoint action stops at
// the first state of its line (Tree.Apply's rule).
//
// past is the call stack at the current stop, outermost first, each
// caller as its latest state (the line that made the call), the current
// stop last. next returns the state after the last one, false when the
// program ends there (or the caller's bound on predictions is reached).
// Predicted states carry no frame ids: Rollout tells activations apart by
// depth and call events and writes the ids into the states it returns.
// It returns the states next gave and the index among them of the stop,
// len(states) when the program ended before one.
func Rollout(past []tracer.State, cmd Command, next func() (tracer.State, bool, error)) (states []tracer.State, stop int, err error) {
	if len(past) == 0 {
		return nil, 0, errors.New("rollout: no current stop")
	}
	t := &tracer.Trace{States: slices.Clone(past)}
	ids := frameIDs{}
	for i := range t.States {
		t.States[i].Frame = ids.of(&t.States[i])
	}
	n0 := len(t.States)
	tr := NewTree(t)
	pull := func() bool {
		if err != nil {
			return false
		}
		s, ok, e := next()
		if e != nil {
			err = e
			return false
		}
		if !ok {
			return false
		}
		s.Frame = ids.of(&s)
		t.States = append(t.States, s)
		tr.Grow()
		return true
	}
	pc, untilLine, isPdb := pdbCmdOf(cmd)
	switch {
	case isPdb:
		tr.more = func(tracer.Pause) (bool, bool) { return false, pull() }
		sim := pdbAt(tr, n0-1)
		sim.raised = cmd.Raised && pc == pdbContinue
		breaks := make(map[int]bool, len(cmd.Breaks))
		for _, l := range cmd.Breaks {
			breaks[l] = true
		}
		stop = sim.do(pc, breaks, untilLine)
	case cmd.Action == Breakpoint:
		stop = -1
		for k := n0; stop < 0 && (k < len(t.States) || pull()); k++ {
			if s := &t.States[k]; cmd.Line > 0 && s.Lineno == cmd.Line || cmd.Line <= 0 && s.Src == cmd.Src {
				stop = k
			}
		}
		if stop < 0 {
			stop = len(t.States)
		}
	default:
		return nil, 0, fmt.Errorf("rollout: %s is not a forward command", cmd.Action)
	}
	if err != nil {
		return nil, 0, err
	}
	return t.States[n0:], stop - n0, nil
}

// frameIDs gives predicted states frame ids: a call opens a new activation
// at its depth, any other event belongs to the activation open at its
// depth (a new one if none is: a stack seen from the middle).
type frameIDs struct {
	open []int // activation id by depth
	last int
}

func (f *frameIDs) of(s *tracer.State) int {
	d := max(s.Depth, 0)
	if s.Event == tracer.EventCall || d >= len(f.open) || f.open[d] == 0 {
		f.last++
		for len(f.open) <= d {
			f.open = append(f.open, 0)
		}
		f.open[d] = f.last
	}
	f.open = f.open[:d+1]
	return f.open[d]
}

// ReverseContinue is the rule of a reverse continue, the one every engine
// and the session follow: walking back in time from the current stop, it
// stops at the latest line event where a breakpoint would stop a forward
// run (Met is given each state in turn). With bps (the session's
// breakpoints) that is a line breakpoint whose condition holds or cannot
// be evaluated, or a function breakpoint at the first line event of an
// activation of its function (known when that activation's call is met,
// right after); temporary breakpoints are not cleared going back. Without
// bps, a line event on one of the lines.
type ReverseContinue struct {
	lines map[int]bool
	bps   []*BreakSpec
	later *tracer.State // the state met just before (later in time), if any
	// at is the trace index of the state Met is given, when the caller
	// walks a trace (a live run's condition values are known by index);
	// -1 otherwise.
	at int
}

// NewReverseContinue is the rule for breakpoints at lines (bps nil) or bps.
func NewReverseContinue(lines []int, bps []*BreakSpec) *ReverseContinue {
	r := &ReverseContinue{lines: map[int]bool{}, bps: bps, at: -1}
	for _, l := range lines {
		r.lines[l] = true
	}
	for _, b := range bps {
		if !b.Disabled {
			r.lines[b.Line] = true
		}
	}
	return r
}

// Met takes the next state going back in time (an inv_line_call twin is
// not a line event: its line comes later in the walk) and says where to
// stop: 0 at s, 1 at the state met just before it, -1 not yet.
func (r *ReverseContinue) Met(s tracer.State) int {
	later := r.later
	r.later = &s
	if s.Event == tracer.EventCall && later != nil && later.Event == tracer.EventLine &&
		later.Function == s.Function && later.Depth == s.Depth && later.Frame == s.Frame {
		for _, b := range r.bps {
			if b.Func == s.Function && b.Line == s.Lineno && !b.Disabled && b.holds(r.at+1, later.Locals) {
				return 1
			}
		}
	}
	if s.Event != tracer.EventLine || !r.lines[s.Lineno] {
		return -1
	}
	if r.bps == nil {
		return 0
	}
	for _, b := range r.bps {
		if b.Func == "" && b.Line == s.Lineno && !b.Disabled && b.holds(r.at, s.Locals) {
			return 0
		}
	}
	return -1
}

// holds is bdb's condition check at state k (-1: unknown) without its
// side effects (no hit counted, no ignore count spent, a temporary
// breakpoint not marked): no condition, one that holds, or one that cannot
// be evaluated (pdb then stops).
func (b *BreakSpec) holds(k int, locals tracer.Locals) bool {
	if b.Cond == "" {
		return true
	}
	ok, err := b.evalAt(k, locals)
	return ok || err != nil
}
