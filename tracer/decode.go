package tracer

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"unicode/utf8"
	"unsafe"
)

// decoder turns the child's record stream (chunks of marshal lists of
// records, see tracer.py) into States. Locals arrive as deltas per frame:
// the key list when it changed, then (index, repr) pairs of changed values.
//
// Everything in the stream comes from the traced program's process, which
// can write its own records into its pipe: every length and count is
// checked here, before anything is allocated for it (docs/tracer.md, "The
// record channel"). A record that breaks a bound sets bad, which ends the
// run (the caller asks the worker to stop it) with an error exit naming
// the record; one that only overflows MaxTraceBytes sets over (exit never,
// trace size), as a legitimate trace that large does.
type decoder struct {
	tr     *Trace
	lines  []string
	frames map[int]*frameState
	exit   *Exit
	block  []State   // states being decoded
	blocks [][]State // full blocks before it
	stdout string
	bad    error

	// the chunk being received: its length header (hdr[:nhdr]) or its body
	hdr   [4]byte
	nhdr  int
	body  []byte // nil between chunks; else cap is the chunk's length
	spare []byte // a body buffer to reuse (at most 4 MiB)

	// bounds of what the child may legitimately send (Limits)
	maxEvents int     // states, plus one per Jump (jumps)
	maxOutput int     // characters of stdout, and of streamed output in all
	maxRepr   int     // characters of a repr (ReprLimit + CutMarker)
	nstates   int     // states decoded
	jumps     int     // jumps asked for (live.go): each adds a state
	streamed  int     // characters of "w" output so far
	gotOutput bool    // the "o" record came (once per run)
	chunkMax  int64   // bytes of one chunk
	cpuLimit  float64 // the program's RLIMIT_CPU, seconds (0: unknown)
	gcAt      int64   // size at which to collect garbage next (gcStart, then every gcStep)

	// live runs (live.go)
	output    func(string) // streamed program output ("w" records)
	traceback string       // "t": the uncaught exception's traceback
	pause     *string      // "p": the child paused, with this reason
	reply     *EvalResult  // "r": the answer to an eval or jump
	// "k": checkpoints the run kept (taken while it ran untraced)
	checkpoints int
	// "h": the output's digest at the last filtered pause that sent one
	outDigest string

	// MaxTraceBytes: size counts every kept state as its JSON line roughly
	// costs, and at least as much as its memory in ndb (stateBytes, the
	// source line, the arg, varBytes + name + value per local), plus the
	// frame's key and value arrays when its key list changes, so that both
	// ndb's memory and `ndb trace --json` output stay bounded. Past limit,
	// states are dropped and the run is stopped (over).
	limit   int64
	size    int64
	over    bool
	overMsg string // why, when not the trace's size itself
}

// Bounds of the record stream (see decoder). evalChars and maxMessage
// mirror tracer.py (EVAL_CHARS, and the cut of its own failure messages).
const (
	maxChunkBytes = 64 << 20 // one chunk (a flush of at most 4096 records)
	evalChars     = 1 << 20  // an evaluation's text, a traceback
	maxMessage    = 16 << 10 // an exit's reason, characters
	maxLineno     = 1<<31 - 1
	minReprBound  = 64 // a placeholder (<repr timed out>) fits even a tiny ReprLimit
	gcStart       = 48 << 20
	gcStep        = 24 << 20
	stateBytes    = int64(unsafe.Sizeof(State{}))
	varBytes      = int64(unsafe.Sizeof(Var{}))
	keyBytes      = 2 * int64(unsafe.Sizeof("")) // a frame's key and value slots
)

type frameState struct {
	function string
	gen      bool
	keys     []string
	values   []string
	locals   Locals // the last Locals built for this frame
	lbytes   int64  // the size of locals (see decoder.size)
}

// newDecoder decodes one run of source under lim (zero fields: defaults).
func newDecoder(source string, tr *Trace, lim Limits) *decoder {
	lim = lim.withDefaults()
	d := &decoder{tr: tr, lines: strings.Split(source, "\n"), frames: map[int]*frameState{},
		maxEvents: lim.MaxEvents, maxOutput: lim.MaxOutput, maxRepr: max(lim.ReprLimit, minReprBound) + len(CutMarker),
		limit: lim.MaxTraceBytes, gcAt: gcStart}
	// A chunk larger than the budget (with room for stdout, which is not
	// part of it) could only hold more than the trace may keep.
	d.chunkMax = min(maxChunkBytes, d.limit+4*int64(d.maxOutput)+1<<20)
	return d
}

// feed takes the next bytes of the stream. Chunks may arrive split
// anywhere; a chunk is buffered (at most chunkMax bytes) only when it
// does not arrive whole.
func (d *decoder) feed(data []byte) {
	for len(data) > 0 {
		if d.bad != nil || d.over {
			d.body = nil
			return
		}
		if d.body == nil {
			// the 4-byte little-endian length of the next chunk
			var n int64
			if d.nhdr == 0 && len(data) >= 4 {
				n = int64(binary.LittleEndian.Uint32(data))
				data = data[4:]
			} else {
				k := copy(d.hdr[d.nhdr:], data)
				d.nhdr += k
				data = data[k:]
				if d.nhdr < 4 {
					return
				}
				d.nhdr = 0
				n = int64(binary.LittleEndian.Uint32(d.hdr[:]))
			}
			if n > d.chunkMax {
				d.over = true
				d.overMsg = fmt.Sprintf("ndb: the program sent a record chunk of %d bytes, more than this run's trace may hold (%d bytes); it was stopped", n, d.chunkMax)
				return
			}
			if int64(len(data)) >= n { // the whole chunk is here: no copy
				d.chunk(data[:n])
				data = data[n:]
				continue
			}
			if int64(cap(d.spare)) >= n && n <= 4<<20 {
				d.body = d.spare[:0:n] // a buffer of an earlier chunk
			} else {
				d.body = make([]byte, 0, n)
			}
		}
		k := min(cap(d.body)-len(d.body), len(data))
		d.body = append(d.body, data[:k]...)
		data = data[k:]
		if len(d.body) == cap(d.body) {
			b := d.body
			d.body = nil
			d.chunk(b) // keeps no reference to b (strings are copies)
			if cap(b) <= 4<<20 && cap(b) > cap(d.spare) {
				d.spare = b[:0]
			}
		}
	}
}

func (d *decoder) chunk(b []byte) {
	if d.bad != nil || d.over {
		return
	}
	r := &marshalReader{b: b}
	n, err := r.seq()
	for k := 0; err == nil && k < n && !d.over; k++ {
		err = d.record(r)
	}
	if d.over {
		return
	}
	if err == nil && r.i != len(b) {
		err = fmt.Errorf("marshal: %d trailing bytes", len(b)-r.i)
	}
	if err != nil {
		d.bad = err
	}
}

// stopNow reports whether the run must be stopped: its trace is full or
// the program sent a bad record.
func (d *decoder) stopNow() bool { return d.over || d.bad != nil }

// fits reports whether n more bytes stay within MaxTraceBytes; if not, the
// trace is over.
func (d *decoder) fits(n int64) bool {
	if d.limit > 0 && d.size+n > d.limit {
		d.over = true
		return false
	}
	return true
}

// text reads a str of at most max characters (what is read was already
// bounded in bytes by the chunk; the characters are counted only when the
// bytes could exceed them).
func (d *decoder) text(r *marshalReader, what string, max int) (string, error) {
	s, err := r.strMax(4 * max) // UTF-8: at most 4 bytes a character
	if tl, ok := err.(errTooLong); ok {
		return "", fmt.Errorf("%s of %d bytes (at most %d characters)", what, tl.n, max)
	}
	if err != nil {
		return "", err
	}
	if len(s) > max {
		if n := utf8.RuneCountInString(s); n > max {
			return "", fmt.Errorf("%s of %d characters (at most %d)", what, n, max)
		}
	}
	return s, nil
}

func (d *decoder) src(lineno int) string {
	if lineno >= 1 && lineno <= len(d.lines) {
		return d.lines[lineno-1]
	}
	return ""
}

// record reads one record (shapes in tracer.py's header):
//
//	call      (0, lineno, frame, depth, changes, keys, name, gen[, untraced])
//	line      (1, lineno, frame, depth, changes[, keys])
//	return    (2, lineno, frame, depth, repr[, changes[, keys]])
//	exception (3, lineno, frame, depth, repr[, changes[, keys]])
//	("o", stdout, truncated), ("x", kind, error, reason, code)
//	live runs: ("w", text), ("t", traceback), ("p", reason), ("r", ok, text, locals), ("u"[, 1]), ("k", n)
//
// keys (the frame's full ordered key list) come only when they changed;
// changes are [index, repr, ...] of changed values, or None. A return or
// exception record without changes (an older worker's shape) has no locals.
func (d *decoder) record(r *marshalReader) error {
	nf, err := r.seq()
	if err != nil {
		return err
	}
	if nf == 0 {
		return fmt.Errorf("empty record")
	}
	if r.kind() != 'i' {
		return d.tagged(r, nf)
	}
	if nf < 5 {
		return fmt.Errorf("bad event record")
	}
	var head [4]int // event, lineno, frame, depth
	for k := range head {
		if head[k], err = r.int(); err != nil {
			return err
		}
	}
	ev, lineno, frame, depth := head[0], head[1], head[2], head[3]
	// A line number past the source is legitimate (code the program
	// compiles under its own file name); a negative one, a depth below 0
	// or deeper than the states so far (each frame below had its call
	// state), a frame number below 1, are not.
	switch {
	case lineno < 0 || lineno > maxLineno:
		return fmt.Errorf("bad line number %d", lineno)
	case depth < 0 || depth > d.nstates:
		return fmt.Errorf("bad depth %d after %d states", depth, d.nstates)
	case frame < 1 || frame > maxLineno:
		return fmt.Errorf("bad frame number %d", frame)
	case d.nstates >= d.maxEvents+d.jumps:
		return fmt.Errorf("more states than MaxEvents (%d)", d.maxEvents)
	}
	st := State{Lineno: lineno, Depth: depth, Frame: frame, Src: d.src(lineno)}
	fs := d.frames[frame]
	switch ev {
	case 0, 1:
		if ev == 0 {
			if nf < 8 || nf > 10 { // 9: with the untraced-caller flag; 10: and co_firstlineno
				return fmt.Errorf("bad call record")
			}
			if fs == nil {
				fs = &frameState{}
				d.frames[frame] = fs
			}
			st.Event = EventCall
		} else {
			if nf != 5 && nf != 6 {
				return fmt.Errorf("bad line record")
			}
			st.Event = EventLine
		}
		if fs == nil {
			return fmt.Errorf("line event of unknown frame %d", frame)
		}
		if err := d.readLocals(r, fs, nf > 5, ev == 0, &st); err != nil {
			return err
		}
		if ev == 0 && nf >= 9 {
			u, err := r.int()
			if err != nil {
				return err
			}
			st.CallerUntraced = u != 0
		}
		if ev == 0 && nf == 10 {
			first, err := r.int()
			if err != nil {
				return err
			}
			if first < 0 || first > maxLineno {
				return fmt.Errorf("bad first line %d", first)
			}
			if !d.over {
				if d.tr.FirstLines == nil {
					d.tr.FirstLines = map[int]int{}
				}
				d.tr.FirstLines[frame] = first
			}
		}
	case 2, 3:
		if fs == nil {
			return fmt.Errorf("event of unknown frame %d", frame)
		}
		if nf != 5 && nf != 6 && nf != 7 {
			return fmt.Errorf("bad return or exception record")
		}
		if st.Arg, err = d.text(r, "a repr", d.maxRepr); err != nil {
			return err
		}
		if nf > 5 { // the frame's locals (older records have none)
			if err := d.readLocals(r, fs, nf > 6, false, &st); err != nil {
				return err
			}
		}
		if ev == 2 {
			st.Event = EventReturn
		} else {
			st.Event = EventException
		}
	default:
		return fmt.Errorf("unknown event %d", ev)
	}
	if d.over {
		return nil
	}
	st.Function = fs.function
	st.Gen = fs.gen
	cost := stateBytes + int64(len(st.Src)+len(st.Arg)+len(st.Function))
	if st.Locals != nil {
		cost += fs.lbytes
	}
	if !d.fits(cost) {
		return nil
	}
	d.size += cost
	if d.size >= d.gcAt {
		// A big trace: collect now rather than let the heap grow to twice
		// what is live before the collector's own turn (ndb stayed near 400
		// MB for a 256 MiB trace; docs/tracer.md, "The record channel").
		runtime.GC()
		d.gcAt = d.size + gcStep
	}
	if len(d.block) == cap(d.block) {
		// fixed-size blocks joined once at the end: no copying on growth
		if d.block != nil {
			d.blocks = append(d.blocks, d.block)
		}
		d.block = make([]State, 0, stateBlock)
	}
	d.block = append(d.block, st)
	d.nstates++
	return nil
}

// tagged reads a record of nf fields whose first is a str tag.
func (d *decoder) tagged(r *marshalReader, nf int) error {
	tag, err := r.str()
	if err != nil {
		return err
	}
	switch {
	case tag == "o" && nf == 3:
		if d.gotOutput {
			return fmt.Errorf("a second output record")
		}
		d.gotOutput = true
		out, err := d.text(r, "output", d.maxOutput)
		if err != nil {
			return err
		}
		truncated, err := r.bool()
		if err != nil {
			return err
		}
		if truncated {
			out += OutputCutMarker
		}
		d.stdout = out
	case tag == "w" && nf == 2:
		text, err := d.text(r, "streamed output", d.maxOutput-d.streamed)
		if err != nil {
			return fmt.Errorf("%w: more than MaxOutput (%d) in all", err, d.maxOutput)
		}
		d.streamed += utf8.RuneCountInString(text)
		if d.output != nil {
			d.output(text)
		}
	case tag == "u" && (nf == 1 || nf == 2):
		// ("u",) a gap, ("u", 1) tracing again after one; at most one of
		// each per state: the program cannot grow the lists past the
		// states it sent
		list := &d.tr.Unrecorded
		if nf == 2 {
			if v, err := r.int(); err != nil || v != 1 {
				return fmt.Errorf("bad untraced record")
			}
			list = &d.tr.Resumed
		}
		if u := *list; len(u) == 0 || u[len(u)-1] < d.nstates {
			*list = append(*list, d.nstates)
		}
	case tag == "k" && nf == 2:
		// ("k", n): the run ended untraced with n checkpoints, or paused
		// after a filtered stretch that kept n (live.go,
		// FromCheckpoint)
		n, err := r.int()
		if err != nil || n < 1 {
			return fmt.Errorf("bad checkpoints record")
		}
		d.checkpoints = n
	case tag == "h" && nf == 2:
		// ("h", digest): the output so far, in short, at a filtered
		// stretch's pause (live.go, OutputDigest)
		v, err := r.str()
		if err != nil || len(v) > 64 {
			return fmt.Errorf("bad output digest record")
		}
		d.outDigest = v
	case tag == "t" && nf == 2:
		if d.traceback, err = d.text(r, "a traceback", evalChars); err != nil {
			return err
		}
	case tag == "p" && nf == 2:
		reason, err := r.str()
		if err != nil {
			return err
		}
		switch reason {
		case PauseFilter, PauseInterrupt, PauseJump, PausePostMortem, pauseEnded:
		default:
			return fmt.Errorf("unknown pause reason %q", reason)
		}
		d.pause = &reason
	case tag == "r" && nf == 4:
		var res EvalResult
		if res.OK, err = r.bool(); err != nil {
			return err
		}
		if res.Text, err = d.text(r, "an evaluation's text", evalChars+len(CutMarker)); err != nil {
			return err
		}
		if !r.none() {
			n, err := r.seq()
			if err != nil {
				return err
			}
			if n%2 != 0 {
				return fmt.Errorf("bad eval locals")
			}
			// transient (the next state records them), but bounded as if kept
			if d.limit > 0 && d.size+int64(n/2)*varBytes > d.limit {
				return fmt.Errorf("eval locals: %d variables do not fit MaxTraceBytes", n/2)
			}
			res.Locals = make(Locals, 0, n/2)
			for k := 0; k < n; k += 2 {
				name, err := r.str()
				if err != nil {
					return err
				}
				val, err := d.text(r, "a repr", d.maxRepr)
				if err != nil {
					return err
				}
				res.Locals = append(res.Locals, Var{Name: name, Value: val})
			}
		}
		d.reply = &res
	case tag == "x" && nf == 5:
		if d.exit != nil {
			return fmt.Errorf("a second exit record")
		}
		var e Exit
		if e.Kind, err = r.str(); err != nil {
			return err
		}
		switch e.Kind {
		case ExitNormal, ExitError, ExitNever:
		default:
			return fmt.Errorf("unknown exit kind %q", e.Kind)
		}
		if e.Error, err = d.text(r, "an exit's error", max(d.maxRepr, maxMessage)); err != nil {
			return err
		}
		if e.Reason, err = d.text(r, "an exit's reason", maxMessage); err != nil {
			return err
		}
		if e.Code, err = r.int(); err != nil {
			return err
		}
		d.exit = &e
	default:
		return fmt.Errorf("unknown record %q with %d fields", tag, nf)
	}
	return nil
}

// readLocals reads a locals delta (changes, then keys when hasKeys; for a
// call record also its name and gen fields, which sit between the keys and
// the end) into fs and sets st.Locals to the frame's full locals. Counts
// are checked against MaxTraceBytes before anything is allocated for them.
func (d *decoder) readLocals(r *marshalReader, fs *frameState, hasKeys, call bool, st *State) error {
	var err error
	// changes come before keys in the record but index the new keys:
	// remember where they are and apply them after the keys.
	changesAt := r.i
	nchanges := 0
	if !r.none() {
		if nchanges, err = r.seq(); err != nil {
			return err
		}
		if nchanges%2 != 0 {
			return fmt.Errorf("bad locals delta")
		}
		for k := 0; k < nchanges; k += 2 { // check and skip; read below
			if _, err = r.int(); err != nil {
				return err
			}
			if err = r.skipStr(); err != nil {
				return err
			}
		}
	}
	newKeys := false
	if hasKeys && !r.none() {
		n, err := r.seq()
		if err != nil {
			return err
		}
		// the key and value arrays, then the state's Locals
		need := int64(n) * (keyBytes + varBytes)
		if !d.fits(need) {
			return nil
		}
		d.size += int64(n) * keyBytes
		keys := make([]string, n)
		for k := range keys {
			if keys[k], err = r.str(); err != nil {
				return err
			}
		}
		fs.keys = keys
		fs.values = make([]string, n)
		fs.locals = nil
		newKeys = true
	}
	if call {
		if fs.function, err = r.str(); err != nil {
			return err
		}
		gen, err := r.int()
		if err != nil {
			return err
		}
		fs.gen = gen != 0
	}
	if nchanges > 0 {
		if nchanges/2 > len(fs.values) {
			return fmt.Errorf("%d locals changed of %d", nchanges/2, len(fs.values))
		}
		end := r.i
		r.i = changesAt
		r.seq()
		for k := 0; k < nchanges; k += 2 {
			idx, _ := r.int()
			val, err := d.text(r, "a repr", d.maxRepr)
			if err != nil {
				return err
			}
			if idx < 0 || idx >= len(fs.values) {
				return fmt.Errorf("bad locals change")
			}
			fs.values[idx] = val
		}
		r.i = end
	}
	if nchanges == 0 && !newKeys && fs.locals != nil {
		st.Locals = fs.locals // unchanged: states share one read-only slice
	} else {
		if !d.fits(int64(len(fs.keys)) * varBytes) {
			return nil
		}
		st.Locals = make(Locals, len(fs.keys))
		var lb int64
		for i, k := range fs.keys {
			st.Locals[i] = Var{Name: k, Value: fs.values[i]}
			lb += int64(len(k)+len(fs.values[i])) + varBytes
		}
		fs.locals = st.Locals
		fs.lbytes = lb
	}
	return nil
}

const stateBlock = 4096

// states joins the decoded blocks into Trace.States.
func (d *decoder) states() {
	n := len(d.block)
	for _, b := range d.blocks {
		n += len(b)
	}
	if n == 0 {
		return
	}
	if len(d.blocks) == 0 {
		d.tr.States = append(d.tr.States, d.block...)
	} else {
		out := make([]State, 0, len(d.tr.States)+n)
		out = append(out, d.tr.States...)
		for _, b := range d.blocks {
			out = append(out, b...)
		}
		d.tr.States = append(out, d.block...)
	}
	// A live run joins at every pause: the block's unused room serves the
	// next states (what was joined is copied out).
	d.blocks, d.block = nil, d.block[len(d.block):]
}

// finish sets the Exit from the child's exit record or, when the child died
// without one, from how the worker saw it end.
func (d *decoder) finish(end workerEnd) {
	d.states()
	tr := d.tr
	tr.Stdout = d.stdout
	tr.Traceback = d.traceback
	switch {
	case d.bad != nil:
		// whatever the program claims about its end
		tr.Exit = Exit{Kind: ExitError, Reason: "ndb: bad record",
			Error: "ndb: the program sent a bad record and was stopped: " + d.bad.Error()}
	case d.over && d.overMsg != "":
		tr.Exit = Exit{Kind: ExitNever, Reason: "trace size", Error: d.overMsg}
	case d.over:
		tr.Exit = Exit{Kind: ExitNever, Reason: "trace size",
			Error: fmt.Sprintf("ndb: the trace reached MaxTraceBytes (%d bytes) and was stopped; raise the limit to keep more", d.limit)}
	case d.exit != nil:
		tr.Exit = *d.exit
	case end.Timeout:
		tr.Exit = Exit{Kind: ExitNever, Reason: "timeout"}
	case end.Killed:
		tr.Exit = Exit{Kind: ExitError, Reason: "ndb: the program closed the tracer's stream and was stopped"}
	case end.TooBig:
		tr.Exit = Exit{Kind: ExitNever, Reason: "trace size",
			Error: fmt.Sprintf("ndb: the record stream reached MaxTraceBytes (%d bytes) and was stopped; raise the limit to keep more", d.limit)}
	case end.Signal == int(syscall.SIGXCPU),
		// The program is PID 1 of its namespace, which ignores SIGXCPU:
		// the hard limit's SIGKILL ends it, with its CPU at the limit.
		end.Signal == int(syscall.SIGKILL) && d.cpuLimit > 0 && end.CPU >= d.cpuLimit-0.05:
		tr.Exit = Exit{Kind: ExitNever, Reason: "cpu"}
	case end.Signal == int(syscall.SIGKILL):
		// not killed by the worker (that is a timeout): the kernel's OOM killer
		tr.Exit = Exit{Kind: ExitNever, Reason: "memory", Error: "killed by SIGKILL"}
	case end.Signal != 0:
		tr.Exit = Exit{Kind: ExitError, Reason: "signal", Error: "killed by " + signalName(end.Signal)}
	default:
		code := 0
		if end.Code != nil {
			code = *end.Code
		}
		tr.Exit = Exit{Kind: ExitError, Reason: "ndb: the tracer's stream ended early", Code: code,
			Error: fmt.Sprintf("process ended with status %d and no exit record", code)}
	}
}

func signalName(sig int) string {
	name := syscall.Signal(sig).String()
	names := map[int]string{int(syscall.SIGSEGV): "SIGSEGV", int(syscall.SIGABRT): "SIGABRT",
		int(syscall.SIGBUS): "SIGBUS", int(syscall.SIGFPE): "SIGFPE", int(syscall.SIGILL): "SIGILL",
		int(syscall.SIGTERM): "SIGTERM"}
	if n, ok := names[sig]; ok {
		return n
	}
	return fmt.Sprintf("signal %d (%s)", sig, name)
}
