package debugger

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"ndb/tracer"
)

// A live trace backend answers from the trace of a run that is still going
// (tracer.Run): the program runs only as far as the commands need, pausing
// at every event that could stop the command being answered (pdbSim.pause),
// so the first stop comes at once, a long or endless program is debugged
// up to where the user stops it, and expressions evaluate in the real
// frames at the stop where the program waits (Session.Eval). Reverse
// commands move in the trace recorded so far; a forward command from the
// past replays the recording up to where the program waits and then runs
// it on. docs/debugger.md, "Live sessions".

// ErrNotLive is returned by Session.Eval and Session.Jump at a stop that
// is not where a live program waits: a stop in the recorded past, a
// whole-run trace, a model's prediction.
var ErrNotLive = errors.New("the program is not waiting here: expressions need the live program at its current stop (step forward to it)")

// StartRun starts a live run of the backend's program; output gets the
// program's output as it is written.
type StartRun func(ctx context.Context, output func(string)) (*tracer.Run, error)

type liveRun struct {
	start StartRun
	close func() error // the engine's cleanup after the last run (its tracer)

	mu  sync.Mutex // run, for Interrupt from other goroutines
	run *tracer.Run

	ctx context.Context // of the command being answered
	err error           // the run failed (a dead worker, a cancelled ctx)

	// A command may resume the run many times (a step out of a loop that
	// calls, a condition that never holds): the time limit and an
	// interrupt hold for the whole command, not for one resume.
	began     time.Time   // of the command being answered
	interrupt atomic.Bool // Interrupt came while the command ran
	forced    string      // why the command's last resume paused at the next event

	out     func(string)
	pending strings.Builder // output before SetOutput, bounded by the tracer's output limit

	// conds are the breakpoint conditions evaluated in this run's frames,
	// by state index and condition: a command that replays the recorded
	// past (a forward command from a stop reached backwards, a reverse
	// continue) finds their values here.
	conds map[condKey]condValue
	// bps are the session's breakpoints as the last command with them
	// gave them (nextWith): a replay evaluates their conditions again.
	bps []*BreakSpec
	// args are the arguments of the last `run ARGS` (nil: the program's own)
	args []string

	// tailOf is the tree made of a tail recorded from a checkpoint
	// (replay.go, recordTail); noTail why the last reverse command past an
	// untraced stretch could not use one; replays counts the runs recorded
	// again from the start (recordPast).
	tailOf   *Tree
	noTail   string
	replays  int
	tailRuns int
	// changed: a statement (!, set) or a jump changed the program at a
	// stop, so a new run of it is not this one (relive)
	changed bool
	relived int // runs started again up to an unrecorded stretch (relive)
	// quiet maps an unrecorded stretch (its index in Trace.Unrecorded's
	// terms) to the frame whose every event in it would have paused the
	// run, so that it ran none there (a next's frame: quietFrame)
	quiet map[int]int
	// gapPause maps an unrecorded stretch to the filtered pause the run
	// went on by there, when it paused by it (not interrupted): a new run
	// resumed by it at the same state pauses at the same event (relive)
	gapPause map[int]tracer.Pause
}

type condKey struct {
	index int
	cond  string
}

type condValue struct {
	ok  bool
	err error
}

// NewLiveBackend starts a live run with start and returns a backend over
// it, before its first stop (Start runs to it). close, if not nil, is
// called by Close after the run is closed.
func NewLiveBackend(ctx context.Context, start StartRun, close func() error) (*TraceBackend, error) {
	b := &TraceBackend{live: &liveRun{start: start, close: close}}
	if err := b.startRun(ctx); err != nil {
		if close != nil {
			close()
		}
		return nil, err
	}
	return b, nil
}

func (b *TraceBackend) startRun(ctx context.Context) error {
	l := b.live
	l.pending.Reset() // a new run's output starts afresh
	l.conds = map[condKey]condValue{}
	l.changed = false
	l.quiet, l.gapPause = map[int]int{}, map[int]tracer.Pause{}
	run, err := l.start(ctx, b.write)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.run = run
	l.mu.Unlock()
	l.err = nil
	b.tr = NewTree(run.Trace())
	b.tr.more = b.more
	b.cacheSim = nil
	return nil
}

// more lets the run go on until it pauses by p (see Tree.more).
func (b *TraceBackend) more(p tracer.Pause) (interrupted, ok bool) {
	l := b.live
	if l.run.Ended() || l.err != nil {
		return false, false
	}
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if l.forced == "" && !l.began.IsZero() {
		if l.interrupt.Swap(false) {
			l.forced = tracer.PauseInterrupt
		} else if lim := l.run.Timeout(); lim > 0 && time.Since(l.began) > lim {
			l.forced = tracer.PauseTimeout
		}
	}
	if l.forced != "" {
		p = tracer.PauseAll
	}
	from := len(b.tr.T.States)
	if err := l.run.Resume(ctx, p); err != nil {
		l.err = err
	}
	b.tr.Grow()
	reason, paused := l.run.Paused()
	if u := b.tr.T.Unrecorded; len(u) > 0 && u[len(u)-1] == from { // a new stretch (replay.go)
		l.tailOf = nil // a tail recorded before holds no stop after it
		if f, ok := quietFrame(p); ok {
			l.quiet[from] = f
		}
		if p.Filtered && paused && reason == tracer.PauseFilter && !l.run.Ended() {
			l.gapPause[from] = p
		}
	}
	interrupted = paused && !l.run.Ended() && (reason == tracer.PauseInterrupt || reason == tracer.PauseTimeout || l.forced != "")
	return interrupted, l.err == nil && !l.run.Ended()
}

// condAt is a breakpoint condition's value at state k of the live run, as
// bdb's effective() evaluates it: eval(cond) in the frame, true when
// truthy; an exception is an error (the breakpoint then stops). It is
// evaluated where the program waits at k (and remembered), else known only
// if it was evaluated there before.
func (b *TraceBackend) condAt(k int, cond string) (ok, known bool, err error) {
	l := b.live
	key := condKey{k, cond}
	if v, found := l.conds[key]; found {
		return v.ok, true, v.err
	}
	if l.err != nil || l.run.Ended() || k != len(b.tr.T.States)-1 {
		return false, false, nil
	}
	if _, paused := l.run.Paused(); !paused {
		return false, false, nil
	}
	ctx := l.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	v, printed, ok := evalCond(ctx, l.run, cond)
	if !ok {
		return false, false, nil
	}
	// what the condition printed comes before the value: it is the
	// program's output, as under pdb
	b.write(printed)
	l.conds[key] = v
	return v.ok, true, v.err
}

// evalCond evaluates a breakpoint condition where run waits, as bdb's
// effective() does: eval(cond) in the frame, true when truthy; an
// exception is an error. printed is what it printed; ok is false when it
// could not be asked.
func evalCond(ctx context.Context, run *tracer.Run, cond string) (v condValue, printed string, ok bool) {
	// The newline ends a comment the condition may carry.
	res, e := run.Eval(ctx, 0, "bool(("+cond+"\n))", tracer.EvalExpr)
	if e != nil {
		return condValue{}, "", false
	}
	text := res.Text
	if i := strings.LastIndexByte(text, '\n'); res.OK && i >= 0 {
		printed, text = text[:i+1], text[i+1:]
	}
	v = condValue{ok: res.OK && text == "True"}
	if !res.OK {
		v.err = fmt.Errorf("condition %q: %s", cond, res.Text)
	}
	return v, printed, true
}

// runToEnd lets a live run go on to its end (or its interrupt, or a limit).
func (b *TraceBackend) runToEnd() {
	if b.live == nil {
		return
	}
	for {
		if interrupted, ok := b.more(tracer.Pause{Depth: -1}); !ok || interrupted {
			return
		}
	}
}

// answering sets the context the run goes on under for one command, and
// returns the check of its result: the run's failure wins over the stop.
func (b *TraceBackend) answering(ctx context.Context) func(Stop, error) (Stop, error) {
	if b.live == nil {
		return func(s Stop, err error) (Stop, error) { return s, err }
	}
	b.live.ctx = ctx
	b.live.began, b.live.forced = time.Now(), ""
	b.live.interrupt.Store(false)
	return func(s Stop, err error) (Stop, error) {
		b.live.ctx, b.live.began = nil, time.Time{}
		if err == nil && b.live.err != nil {
			return Stop{}, b.live.err
		}
		if err == nil && !s.IsExit() && s.Index == b.tr.interruptStop && s.Index == len(b.tr.T.States)-1 {
			if reason, ok := b.live.run.Paused(); ok {
				s.Interrupted = reason
			}
			if s.Interrupted == "" {
				s.Interrupted = b.live.forced
			}
		}
		return s, err
	}
}

func (b *TraceBackend) write(s string) {
	l := b.live
	if l.out != nil {
		l.out(s)
		return
	}
	if l.pending.Len() < 1<<20 {
		l.pending.WriteString(s)
	}
}

// SetOutput implements Streamer: the program's output goes to f as it is
// written (what came before is passed on at once).
func (b *TraceBackend) SetOutput(f func(string)) bool {
	if b.live == nil {
		return false
	}
	b.live.out = f
	if b.live.pending.Len() > 0 && f != nil {
		f(b.live.pending.String())
		b.live.pending.Reset()
	}
	return true
}

// liveAt reports whether the live program waits at stop s: at the last
// state of the trace so far, or in post-mortem at the exit it raised.
func (b *TraceBackend) liveAt(s Stop) bool {
	if b.live == nil || b.live.err != nil {
		return false
	}
	reason, paused := b.live.run.Paused()
	switch {
	case !paused:
		return false
	case b.live.run.Ended():
		return reason == tracer.PausePostMortem && s.IsExit() && s.Exit == tracer.ExitError
	}
	return !s.IsExit() && s.Index >= 0 && s.Index == len(b.tr.T.States)-1 && s.Event != KindInvLineCall
}

// Eval implements Evaluator.
func (b *TraceBackend) Eval(ctx context.Context, at Stop, level int, src, mode string) (tracer.EvalResult, error) {
	if !b.liveAt(at) {
		return tracer.EvalResult{}, ErrNotLive
	}
	if mode == tracer.EvalExec {
		b.live.changed = true
	}
	return b.live.run.Eval(ctx, level, src, mode)
}

// Jump implements Evaluator: pdb's j at the stop where the program waits.
func (b *TraceBackend) Jump(ctx context.Context, history []Step, line int) (Stop, tracer.EvalResult, error) {
	cur := history[len(history)-1].Stop
	if !b.liveAt(cur) || cur.IsExit() {
		return cur, tracer.EvalResult{}, ErrNotLive
	}
	b.live.changed = true
	res, err := b.live.run.Jump(ctx, line)
	if err != nil || !res.OK {
		return cur, res, err
	}
	b.tr.Grow()
	q := Pos{Index: len(b.tr.T.States) - 1}
	// bdb's state is the frame's: the simulation goes on from the new line
	sim := b.cacheSim
	if sim == nil || b.cacheLen != len(history) || b.cachePos != (Pos{Index: cur.Index}) {
		sim = pdbAt(b.tr, q.Index)
	}
	sim.pos = q.Index
	b.remember(len(history)+1, q, sim)
	return b.StopAt(q), res, nil
}

// Interrupt implements Evaluator: the running program pauses at its next
// event, which is a stop (pdb's Ctrl-C). Safe from any goroutine.
func (b *TraceBackend) Interrupt() {
	if b.live == nil {
		return
	}
	b.live.mu.Lock()
	run := b.live.run
	b.live.mu.Unlock()
	b.live.interrupt.Store(true)
	if run != nil {
		run.Interrupt()
	}
}

// runArgsKey carries a restart's arguments to the engine's StartRun.
type runArgsKey struct{}

// RunArgs are the program arguments (sys.argv[1:]) a StartRun must run
// the program with, when a restart asked for them (pdb's `run ARGS`);
// false: the program's own.
func RunArgs(ctx context.Context) ([]string, bool) {
	a, ok := ctx.Value(runArgsKey{}).([]string)
	return a, ok
}

// RestartWith implements ArgsRestarter: the program starts again with
// args as sys.argv[1:], and later restarts keep them (pdb's sys.argv).
func (b *TraceBackend) RestartWith(ctx context.Context, args []string) (Stop, error) {
	if b.live == nil {
		return Stop{}, errors.New("restart with arguments needs a live session of the real engine (a recorded trace is one run)")
	}
	b.live.args = append([]string{}, args...)
	return b.Restart(ctx)
}

// Restart implements Restarter: the program starts again in a new run.
func (b *TraceBackend) Restart(ctx context.Context) (Stop, error) {
	if b.live == nil {
		return b.Start(ctx)
	}
	if b.live.args != nil {
		ctx = context.WithValue(ctx, runArgsKey{}, b.live.args)
	}
	b.live.run.Close()
	if err := b.startRun(ctx); err != nil {
		return Stop{}, err
	}
	return b.Start(ctx)
}

// Close ends the live run (and the engine's resources for it).
func (b *TraceBackend) Close() error {
	if b.live == nil || b.live.run == nil {
		return nil
	}
	err := b.live.run.Close()
	if b.live.close != nil {
		err = errors.Join(err, b.live.close())
		b.live.close = nil
	}
	return err
}

// WithRunArgs is p with the arguments of ctx's restart (RunArgs), if any:
// what a StartRun runs. A program without a Context gets one (its folder
// is then the file's: Path must name it).
func WithRunArgs(ctx context.Context, p tracer.Program) tracer.Program {
	args, ok := RunArgs(ctx)
	if !ok {
		return p
	}
	c := tracer.Context{}
	if p.Context != nil {
		c = *p.Context
	}
	c.Args = args
	p.Context = &c
	return p
}

// RandomHashSeed is a PYTHONHASHSEED drawn at random: a live session's
// (tracer.Options.HashSeed), so that hash() and the order of sets of
// strings vary between sessions as between runs of python3, while the
// session's restarts keep its seed (as restarts under one pdb do) and its
// recorded trace answers reverse commands without a re-run.
func RandomHashSeed() string {
	return strconv.FormatUint(uint64(rand.Uint32()), 10)
}
