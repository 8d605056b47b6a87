package tracer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// A live run (docs/tracer.md, "Live runs") is a traced run that pauses: the
// program stops after an event that matches the Pause filter ndb gave it,
// and waits there while ndb reads the trace so far, evaluates expressions
// in its frames (Eval), moves its line (Jump), or resumes it with the next
// filter. The trace is the same as a whole run's: every event is recorded
// whether or not the program pauses after it. Which pause is a debugger
// stop is for the debugger to decide; the filter only has to include every
// event that could be one.
//
// Limits apply as to a whole run, except Timeout: a live run is timed only
// while it runs (Resume), and at Timeout it is interrupted (it pauses at
// its next event, PauseTimeout) rather than ended; only a program that
// then still does not pause (stuck in C code) is ended, exit never/timeout.

// Pause says after which events a live run pauses.
type Pause struct {
	Depth      int      `json:"depth"`                // every event of depth <= Depth (-1: none)
	Frames     []int    `json:"frames,omitempty"`     // every event of these frames
	Lines      []int    `json:"lines,omitempty"`      // line events at these lines
	Funcs      []string `json:"funcs,omitempty"`      // line events in functions of these names
	Exceptions bool     `json:"exceptions,omitempty"` // every exception event
	// Untraced: the program runs on with no tracing at all (pdb's continue
	// with no breakpoint): nothing is recorded and it pauses only when
	// interrupted (Interrupt, the Timeout) or in post-mortem; the filter's
	// other fields are void. Trace.Unrecorded marks where the gap begins.
	Untraced bool `json:"untraced,omitempty"`
	// Filtered: the program runs on unrecorded, as with Untraced, but
	// pauses at a line event at one of Lines, at every line event of code
	// whose co_firstlineno is one of Starts (bdb's function breakpoints
	// before their first line is known), and at the return of a frame of
	// Frames; there it records the stack as after an interrupt (call
	// states, Trace.Resumed), then the event. Only the frames whose code
	// has such a line are traced, and the known frames for their returns
	// (pdb's continue with breakpoints, without the cost of recording;
	// docs/debugger.md, "Long runs"). Depth, Funcs and Exceptions are void.
	Filtered bool  `json:"filtered,omitempty"`
	Starts   []int `json:"starts,omitempty"`
	// Steps, with Filtered, are the frames pdb steps in (a next, until or
	// return: bdb's stopframe): a filtered run also pauses at each of their
	// line events at a line >= StepsFrom and at each of their exception
	// events (stop_here's frames), and traces them wherever they run.
	Steps     []int `json:"steps,omitempty"`
	StepsFrom int   `json:"steps_from,omitempty"`
	// GenExits, with Filtered: also pauses at every StopIteration and
	// GeneratorExit exception event of a program frame (bdb stops there
	// in any frame while it steps over a generator).
	GenExits bool `json:"gen_exits,omitempty"`
	// Budget, if > 0, also pauses once that many more events have been
	// recorded (a long recorded stretch is cut for the debugger to choose
	// again); void with Untraced and Filtered.
	Budget int `json:"budget,omitempty"`
	// CheckpointCPU, with Untraced: the program's CPU time between two
	// checkpoints (FromCheckpoint); 0: 25 ms.
	CheckpointCPU time.Duration `json:"checkpoint_cpu,omitempty"`
}

// PauseAll pauses after the next event (pdb's step).
var PauseAll = Pause{Depth: 1 << 30}

// Why a live run paused: Paused's reason.
const (
	PauseFilter     = ""           // an event the filter asked for
	PauseInterrupt  = "interrupt"  // Interrupt: the first event after it
	PauseTimeout    = "timeout"    // ran Limits.Timeout without a pause: interrupted by the run itself
	PauseJump       = "jump"       // Jump moved the frame (the new line's state is the last)
	PausePostMortem = "postmortem" // the program raised an uncaught exception; its frames stay for Eval
	// pauseEnded: the program ended untraced and its checkpoints wait
	// (FromCheckpoint); the run is Ended, as in post-mortem.
	pauseEnded = "ended"
)

// EvalResult is the answer to Eval: the value's repr (pp: pprint's text;
// a statement: what it printed), or the exception's last line when OK is
// false; after a statement, the frame's locals as they are now.
type EvalResult struct {
	OK     bool
	Text   string
	Locals Locals
}

// Eval modes: pdb's p, pp and ! (a statement, compiled as a line typed
// at the interpreter's prompt).
const (
	EvalExpr   = "p"
	EvalPretty = "pp"
	EvalExec   = "exec"
)

// ErrRunEnded is returned by a Run's requests after its program ended.
var ErrRunEnded = errors.New("tracer: the program has ended")

// Run is one live run. Its methods but Interrupt are not safe for
// concurrent use; Interrupt may be called while Resume runs.
type Run struct {
	t      *Tracer
	tr     *Trace
	dec    *decoder
	lim    Limits
	nonce  string
	reason string // why it paused
	paused bool   // waiting for a request (also in post-mortem)
	ended  bool   // Trace().Exit is final; no more states
	over   bool   // a stop request was sent (trace size)
	closed bool
	typed  atomic.Bool // Input wrote to it (or ended it): Typed
	input  *Input      // the user's typing, when the program reads it
	wmu    sync.Mutex  // writes to the worker (Interrupt runs concurrently)
}

// Start begins a live run of p and runs it to its first pause: the first
// event (Start pauses after it whatever comes next). output, if not nil,
// gets the program's output as it is written (bounded as Trace.Stdout).
// The Tracer is the run's until Close.
func (t *Tracer) Start(ctx context.Context, p Program, lim Limits, output func(string)) (*Run, error) {
	lim = lim.withDefaults()
	if strings.ContainsAny(p.Call, "\r\n") {
		return nil, fmt.Errorf("tracer: call %q must be a single line", p.Call)
	}
	source := TracedSource(p)
	tr := &Trace{Source: source, Call: p.Call, States: []State{}}
	r := &Run{t: t, tr: tr, lim: lim}
	if !utf8.ValidString(source) {
		off := invalidUTF8Offset(source)
		tr.Exit = Exit{Kind: ExitError, Reason: "syntax error",
			Error: fmt.Sprintf("SyntaxError('Non-UTF-8 code starting with %q at byte %d')", source[off:off+1], off)}
		r.ended, r.closed = true, true
		return r, nil
	}
	t.mu.Lock()
	req, line, err := t.request(p, source, lim, true)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	r.nonce = req.Nonce
	if req.Input {
		r.input = p.Context.Input
		r.input.bind(r)
	}
	r.dec = newDecoder(source, tr, lim)
	r.dec.cpuLimit = float64(liveCPUSeconds(lim))
	r.dec.output = output
	if err := r.send(line); err != nil {
		t.kill()
		t.mu.Unlock()
		return nil, err
	}
	if err := r.wait(ctx, func() bool { return r.paused }, lim.Timeout); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Checkpoints is how many checkpoints of its last untraced stretch a run
// that ended kept (0: none; FromCheckpoint needs one).
func (r *Run) Checkpoints() int {
	if !r.ended || !r.paused || r.closed || r.dec == nil || len(r.tr.Unrecorded) == 0 {
		return 0
	}
	return r.dec.checkpoints
}

// PauseCheckpoints is the number of checkpoints a run paused at the end of
// a filtered stretch (Pause.Filtered) kept from it, also after the
// recorded steps that followed (0: none, and after a new stretch;
// FromCheckpoint records the way to the pause again from one).
func (r *Run) PauseCheckpoints() int {
	if r.ended || !r.paused || r.closed || r.dec == nil || len(r.tr.Unrecorded) == 0 {
		return 0
	}
	return r.dec.checkpoints
}

// FromCheckpoint runs the tail of an ended run again, recorded, from the
// newest checkpoint its last untraced stretch kept (docs/debugger.md, "Long
// runs"): the checkpoint counts its events to the end, and a copy of it
// records the last of them (about 100,000) as after an interrupt: a call
// state for each program frame on its stack, then the events, to its own
// exit. The new run's trace is this one's states up to that stretch
// (Unrecorded's last), then the tail (Resumed: its first event); it is
// paused by f (not Untraced) as Resume would be, or ended. This run is
// then over (its Close does nothing): the new one holds the tracer.
//
// A run paused at the end of a filtered stretch (PauseCheckpoints) is
// recorded again the same way up to that pause: the checkpoint counts to
// the first event the stretch's filter pauses at, and the copy records
// from about 100,000 events before it and pauses after it, as the run did.
func (r *Run) FromCheckpoint(ctx context.Context, f Pause) (*Run, error) {
	atPause := r.PauseCheckpoints() > 0
	if r.Checkpoints() == 0 && !atPause {
		return nil, errors.New("tracer: no checkpoint to run from")
	}
	if f.Depth < -1 {
		f.Depth = -1
	}
	gap := r.tr.Unrecorded[len(r.tr.Unrecorded)-1]
	tr := &Trace{Source: r.tr.Source, Call: r.tr.Call, States: append(make([]State, 0, gap+1024), r.tr.States[:gap]...),
		Unrecorded: append([]int{}, r.tr.Unrecorded...)}
	for _, k := range r.tr.Resumed {
		if k < gap {
			tr.Resumed = append(tr.Resumed, k)
		}
	}
	for frame, first := range r.tr.FirstLines {
		if tr.FirstLines == nil {
			tr.FirstLines = map[int]int{}
		}
		tr.FirstLines[frame] = first // frames of the tail keep their numbers
	}
	n := &Run{t: r.t, tr: tr, lim: r.lim, nonce: r.nonce, input: r.input}
	n.typed.Store(r.typed.Load())
	if n.input != nil {
		n.input.pass(r, n) // what the user types now goes to the new run's program
	}
	n.dec = newDecoder(tr.Source, tr, r.lim)
	n.dec.nstates = gap
	n.dec.cpuLimit = r.dec.cpuLimit
	if err := r.request(map[string]any{"op": "checkpoint", "pause": atPause, "depth": f.Depth, "frames": f.Frames,
		"lines": f.Lines, "funcs": f.Funcs, "exceptions": f.Exceptions, "budget": max(f.Budget, 0)}); err != nil {
		return nil, err
	}
	r.closed = true // the new run holds the tracer (t.mu) from here
	return n, n.wait(ctx, func() bool { return n.paused }, r.lim.Timeout)
}

// OutputDigest is the program's output so far, in short, as sent at the
// last pause that ended a filtered stretch with checkpoints, or at the
// pause a run FromCheckpoint made records again ("": none): two runs'
// outputs are the same when their digests are.
func (r *Run) OutputDigest() string {
	if r.dec == nil {
		return ""
	}
	return r.dec.outDigest
}

// ShowOutputOf makes n, a run FromCheckpoint made from r at a pause, pass
// on its output from now on as r did (what it printed on its way there
// was r's output too, shown then).
func (n *Run) ShowOutputOf(r *Run) {
	n.dec.output, n.dec.streamed = r.dec.output, r.dec.streamed
}

// Back ends a run that FromCheckpoint made from r at a pause (whose way
// to the pause was given up: it did not pause where r did) and gives the
// pause back to r, which waits there again, as before, with no
// checkpoints left. This run is then over.
func (n *Run) Back(ctx context.Context, r *Run) error {
	if n.closed || !r.closed || r.ended {
		return errors.New("tracer: not a run made from this one at a pause")
	}
	if !n.ended { // else it has exited: its origin pauses again
		if _, paused := n.Paused(); !paused {
			return errors.New("tracer: the run made at a pause is still running")
		}
		if err := n.request(map[string]any{"op": "abandon"}); err != nil {
			return err
		}
	}
	n.closed = true // r holds the tracer again
	if n.input != nil {
		n.input.pass(n, r)
	}
	if n.typed.Load() {
		r.typed.Store(true)
	}
	r.closed, r.paused = false, false
	r.dec.checkpoints = 0
	return r.wait(ctx, func() bool { return r.paused }, r.lim.Timeout)
}

// Trace is the run's trace so far: its States grow at each Resume, and
// Exit is set once Ended.
func (r *Run) Trace() *Trace { return r.tr }

// Ended reports whether the program has ended (its trace is whole). A run
// in post-mortem has ended and is still Paused.
func (r *Run) Ended() bool { return r.ended }

// Timeout is how long one Resume may run before the run interrupts itself.
func (r *Run) Timeout() time.Duration { return r.lim.Timeout }

// Paused reports whether the program waits for a request, and why it
// paused (PauseFilter, PauseInterrupt, ...). A paused run that has not
// ended waits after the last state of its trace.
func (r *Run) Paused() (reason string, ok bool) { return r.reason, r.paused }

// Resume lets the program run until it pauses by f (or is interrupted, or
// ends). Resume after the end is ErrRunEnded.
func (r *Run) Resume(ctx context.Context, f Pause) error {
	if r.ended {
		return ErrRunEnded
	}
	if !r.paused {
		return errors.New("tracer: resume of a run that is not paused")
	}
	if f.Depth < -1 {
		f.Depth = -1
	}
	if err := r.request(map[string]any{"op": "go", "depth": f.Depth, "frames": f.Frames,
		"lines": f.Lines, "funcs": f.Funcs, "exceptions": f.Exceptions, "untraced": f.Untraced,
		"filtered": f.Filtered && !f.Untraced, "starts": f.Starts, "steps": f.Steps,
		"steps_from": f.StepsFrom, "gen_exits": f.GenExits, "budget": max(f.Budget, 0), "checkpoint_cpu": f.CheckpointCPU.Seconds()}); err != nil {
		return err
	}
	r.paused = false
	if f.Untraced || f.Filtered {
		r.dec.checkpoints = 0 // a filtered stretch's: dropped at a new stretch
	}
	return r.wait(ctx, func() bool { return r.paused }, r.lim.Timeout)
}

// Eval evaluates src (mode EvalExpr, EvalPretty or EvalExec) in the
// level-th program frame of the paused program: 0 is the frame of the last
// state (in post-mortem: the frame the exception came from), 1 its
// caller, and so on. A statement's writes to the frame's locals stay (the
// next states record them); an expression may change the program too.
func (r *Run) Eval(ctx context.Context, level int, src, mode string) (EvalResult, error) {
	if !r.paused {
		return EvalResult{}, ErrRunEnded
	}
	switch mode {
	case EvalExpr, EvalPretty, EvalExec:
	default:
		return EvalResult{}, fmt.Errorf("tracer: eval mode %q", mode)
	}
	return r.ask(ctx, map[string]any{"op": "eval", "src": src, "mode": mode, "level": level})
}

// Jump moves the paused frame to line (pdb's j): only at a line event.
// On success the trace gets a line state for the new line, where the run
// now waits (reason PauseJump); on failure Text says why.
func (r *Run) Jump(ctx context.Context, line int) (EvalResult, error) {
	if !r.paused || r.ended {
		return EvalResult{}, ErrRunEnded
	}
	r.dec.jumps++ // a jump records one more line state
	res, err := r.ask(ctx, map[string]any{"op": "jump", "line": line})
	if err == nil && res.OK {
		r.reason = PauseJump
	}
	return res, err
}

// ask sends a request to the paused program and waits for its answer.
func (r *Run) ask(ctx context.Context, msg map[string]any) (EvalResult, error) {
	if err := r.request(msg); err != nil {
		return EvalResult{}, err
	}
	r.dec.reply = nil
	err := r.wait(ctx, func() bool { return r.dec.reply != nil }, evalTimeout)
	if err != nil {
		return EvalResult{}, err
	}
	if r.dec.reply == nil {
		return EvalResult{}, ErrRunEnded
	}
	res := *r.dec.reply
	r.dec.reply = nil
	r.dec.states() // a jump's new line state
	return res, nil
}

// evalTimeout bounds an answer: tracer.py stops an evaluation after 5 s.
const evalTimeout = 15 * time.Second

// Interrupt asks the running program to pause at its next event (pdb's
// Ctrl-C). Safe to call at any time, from any goroutine.
func (r *Run) Interrupt() {
	if r.nonce != "" {
		r.send(fmt.Appendf(nil, "{\"interrupt\":%q}\n", r.nonce))
	}
}

// Input is a live run's standard input as the user types it (ndb debug's
// terminal, as pdb shares it with the program): set as Context.Input, the
// program's stdin is the read end of a pipe that only the worker writes,
// fed by Write and ended by Close, instead of Context.Stdin. One Input
// serves the runs started with it one after another (a restart gets a
// fresh, open pipe); Write and Close act on the latest. What the program
// has not read stays in the pipe (at most 1 MiB waits in the worker; more
// is dropped). Safe for concurrent use, also while Resume runs.
type Input struct {
	mu     sync.Mutex
	run    *Run
	closed bool // the run's pipe was closed
}

// NewInput returns an Input for Context.Input.
func NewInput() *Input { return &Input{} }

// ErrInputClosed is returned by Input.Write after Close (and before any run).
var ErrInputClosed = errors.New("tracer: the program's input is closed")

func (in *Input) bind(r *Run) {
	in.mu.Lock()
	in.run, in.closed = r, false
	in.mu.Unlock()
}

// pass makes n, a run that continues r's program (FromCheckpoint), the
// one Write and Close act on, if r was; the input's end stays as it was.
func (in *Input) pass(r, n *Run) {
	in.mu.Lock()
	if in.run == r {
		in.run = n
	}
	in.mu.Unlock()
}

// inputChunk bounds one request line to the worker.
const inputChunk = 32 << 10

// Write sends p to the program's stdin.
func (in *Input) Write(p []byte) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.run == nil || in.closed {
		return 0, ErrInputClosed
	}
	for n := 0; n < len(p); {
		k := min(len(p)-n, inputChunk)
		msg, err := json.Marshal(map[string]any{"input": in.run.nonce, "data": p[n : n+k]})
		if err != nil {
			return n, err
		}
		in.run.typed.Store(true)
		if err := in.run.send(append(msg, '\n')); err != nil {
			return n, err
		}
		n += k
	}
	return len(p), nil
}

// Closed reports whether the latest run's stdin was closed (or there is
// no run yet).
func (in *Input) Closed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.run == nil || in.closed
}

// Close ends the program's stdin (end of file, as Ctrl-D at a terminal):
// the program reads what was written before, then EOF. Closing again does
// nothing.
func (in *Input) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.run == nil || in.closed {
		return nil
	}
	in.closed = true
	in.run.typed.Store(true)
	return in.run.send(fmt.Appendf(nil, "{\"input\":%q,\"eof\":true}\n", in.run.nonce))
}

// Typed reports whether Input gave the run anything (typed text, or the
// end of its input): a new run of the program would not read it again.
func (r *Run) Typed() bool { return r.typed.Load() }

// Close ends the program (if it has not ended) and gives the Tracer back.
func (r *Run) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	defer r.t.mu.Unlock()
	if r.t.dead {
		return nil
	}
	// Stop it and read to the worker's end frame, briefly.
	r.send(fmt.Appendf(nil, "{\"stop\":%q}\n", r.nonce))
	done := make(chan struct{})
	go func() {
		for {
			kind, _, err := readFrame(r.t.stdout)
			if err != nil || kind == 'E' {
				break
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		r.t.kill()
		<-done
	}
	return nil
}

func (r *Run) send(line []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	if _, err := r.t.stdin.Write(line); err != nil {
		return fmt.Errorf("tracer: worker gone: %w", err)
	}
	return nil
}

// request passes msg on to the paused child.
func (r *Run) request(msg map[string]any) error {
	b, err := json.Marshal(map[string]any{"live": r.nonce, "msg": msg})
	if err != nil {
		return err
	}
	return r.send(append(b, '\n'))
}

// interruptGrace is how long an interrupted run may send nothing before
// it is taken as stuck where it cannot pause (a long C call); a run that
// sends records meanwhile is on its way to the pause (a checkpoint
// recording its tail, CKPT_TAIL events: seconds on a loaded machine) and
// gets up to interruptWait in all.
var interruptGrace = 5 * time.Second // a var: a test shortens it

const interruptWait = 60 * time.Second

// wait reads the worker's frames until done() holds or the run ends. A
// run that goes on for longer than limit (0: no limit) is interrupted; if
// it still has not paused interruptGrace later (interruptWait while it
// sends records), or ctx ends, it is stopped.
func (r *Run) wait(ctx context.Context, done func() bool, limit time.Duration) error {
	type frame struct {
		kind    byte
		payload []byte
		err     error
	}
	frames := make(chan frame, 1)
	// one frame is read at a time (the next read starts after this one
	// is decoded), so they can share a buffer
	var buf []byte
	read := func() {
		k, p, err := readFrameInto(r.t.stdout, buf)
		if cap(p) > cap(buf) && cap(p) <= 1<<20 {
			buf = p
		}
		frames <- frame{k, p, err}
	}
	var timer <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timer = t.C
	}
	interrupted := false
	var interruptedAt time.Time
	go read()
	for {
		var f frame
		select {
		case f = <-frames:
		case <-timer:
			if !interrupted {
				interrupted, interruptedAt = true, time.Now()
				r.Interrupt()
				timer = time.After(interruptGrace)
				continue
			}
			r.t.kill() // stuck where it cannot pause: ended as a whole run's timeout
			f = <-frames
			r.dec.finish(workerEnd{Timeout: true})
			r.ended, r.paused = true, false
			return nil
		case <-ctx.Done():
			r.t.kill()
			<-frames
			r.ended, r.paused = true, false
			return ctx.Err()
		}
		if f.err != nil {
			r.t.kill()
			r.ended, r.paused = true, false
			return fmt.Errorf("tracer: worker gone: %w", f.err)
		}
		switch f.kind {
		case 'D':
			if interrupted && time.Since(interruptedAt) < interruptWait-interruptGrace {
				timer = time.After(interruptGrace) // on its way: not stuck
			}
			r.dec.feed(f.payload)
			if r.dec.stopNow() && !r.over {
				r.over = true
				if err := r.send(fmt.Appendf(nil, "{\"stop\":%q}\n", r.nonce)); err != nil {
					r.t.kill()
					return err
				}
			}
			if p := r.dec.pause; p != nil && !r.over {
				r.dec.pause = nil
				r.reason, r.paused = *p, true
				if interrupted && r.reason == PauseInterrupt {
					r.reason = PauseTimeout
				}
				r.dec.states()
				if (r.reason == PausePostMortem || r.reason == pauseEnded) && r.dec.exit != nil {
					r.tr.Stdout, r.tr.Exit, r.tr.Traceback = r.dec.stdout, *r.dec.exit, r.dec.traceback
					r.ended = true
				}
			}
			if done() {
				return nil
			}
		case 'E':
			var end workerEnd
			if err := json.Unmarshal(f.payload, &end); err != nil {
				r.t.kill()
				return fmt.Errorf("tracer: bad end frame: %w", err)
			}
			if end.Nonce != r.nonce && end.WorkerError == "" {
				r.t.kill()
				return fmt.Errorf("tracer: end frame of another run (nonce %q, want %q)", end.Nonce, r.nonce)
			}
			if end.WorkerError != "" {
				r.ended, r.paused = true, false
				return fmt.Errorf("tracer: worker: %s", end.WorkerError)
			}
			if interrupted {
				end.Timeout = true
			}
			r.dec.finish(end)
			r.t.last = end
			r.ended, r.paused = true, false
			r.closed = true // the worker is free again
			r.t.mu.Unlock()
			return nil
		default:
			r.t.kill()
			return fmt.Errorf("tracer: unexpected frame %q", f.kind)
		}
		go read()
	}
}
