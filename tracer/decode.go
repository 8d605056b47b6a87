package tracer

import (
	"encoding/binary"
	"fmt"
	"strings"
	"syscall"
)

// decoder turns the child's record stream (lines of JSON arrays of records,
// see tracer.py) into States. Locals arrive as deltas per frame: the key list
// when it changed, then (index, repr) pairs of changed values.
type decoder struct {
	tr      *Trace
	lines   []string
	pending []byte
	frames  map[int]*frameState
	exit    *Exit
	block   []State   // states being decoded
	blocks  [][]State // full blocks before it
	stdout  string
	bad     error

	// live runs (live.go)
	output    func(string) // streamed program output ("w" records)
	traceback string       // "t": the uncaught exception's traceback
	pause     *string      // "p": the child paused, with this reason
	reply     *EvalResult  // "r": the answer to an eval or jump

	// MaxTraceBytes: size counts every kept state as its JSON line roughly
	// costs (src, locals, arg and 64 bytes of fields), so that both ndb's
	// memory and `ndb trace --json` output stay bounded. Past limit, states
	// are dropped and the run is stopped (over).
	limit int64
	size  int64
	over  bool
}

type frameState struct {
	function string
	gen      bool
	keys     []string
	values   []string
	locals   Locals // the last Locals built for this frame
	lbytes   int64  // the size of locals (see decoder.size)
}

func newDecoder(source string, tr *Trace) *decoder {
	return &decoder{tr: tr, lines: strings.Split(source, "\n"), frames: map[int]*frameState{}}
}

func (d *decoder) feed(data []byte) {
	if len(d.pending) > 0 {
		d.pending = append(d.pending, data...)
		data = d.pending
	}
	for len(data) >= 4 {
		n := int(binary.LittleEndian.Uint32(data))
		if len(data) < 4+n {
			break // a partial chunk: wait for more (dropped if the child died)
		}
		d.chunk(data[4 : 4+n])
		data = data[4+n:]
	}
	// keep only the incomplete rest, in a buffer of our own
	d.pending = append(d.pending[:0:0], data...)
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

func (d *decoder) src(lineno int) string {
	if lineno >= 1 && lineno <= len(d.lines) {
		return d.lines[lineno-1]
	}
	return ""
}

// record reads one record (shapes in tracer.py's header):
//
//	call      (0, lineno, frame, depth, changes, keys, name, gen)
//	line      (1, lineno, frame, depth, changes[, keys])
//	return    (2, lineno, frame, depth, repr[, changes[, keys]])
//	exception (3, lineno, frame, depth, repr[, changes[, keys]])
//	("o", stdout, truncated), ("x", kind, error, reason, code)
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
		tag, err := r.str()
		if err != nil {
			return err
		}
		switch {
		case tag == "o" && nf == 3:
			out, err := r.str()
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
			text, err := r.str()
			if err != nil {
				return err
			}
			if d.output != nil {
				d.output(text)
			}
		case tag == "t" && nf == 2:
			if d.traceback, err = r.str(); err != nil {
				return err
			}
		case tag == "p" && nf == 2:
			reason, err := r.str()
			if err != nil {
				return err
			}
			d.pause = &reason
		case tag == "r" && nf == 4:
			var res EvalResult
			if res.OK, err = r.bool(); err != nil {
				return err
			}
			if res.Text, err = r.str(); err != nil {
				return err
			}
			if !r.none() {
				kv, err := r.strs()
				if err != nil {
					return err
				}
				if len(kv)%2 != 0 {
					return fmt.Errorf("bad eval locals")
				}
				res.Locals = Locals{}
				for k := 0; k < len(kv); k += 2 {
					res.Locals = append(res.Locals, Var{Name: kv[k], Value: kv[k+1]})
				}
			}
			d.reply = &res
		case tag == "x" && nf == 5:
			var e Exit
			if e.Kind, err = r.str(); err != nil {
				return err
			}
			if e.Error, err = r.str(); err != nil {
				return err
			}
			if e.Reason, err = r.str(); err != nil {
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
	if nf < 5 {
		return fmt.Errorf("bad event record")
	}
	var head [4]int // event, lineno, frame, depth
	for k := range head {
		if head[k], err = r.int(); err != nil {
			return err
		}
	}
	ev, frame := head[0], head[2]
	st := State{Lineno: head[1], Depth: head[3], Frame: frame, Src: d.src(head[1])}
	fs := d.frames[frame]
	switch ev {
	case 0, 1:
		if ev == 0 {
			if nf != 8 && nf != 9 { // 9: with the untraced-caller flag
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
		if ev == 0 && nf == 9 {
			u, err := r.int()
			if err != nil {
				return err
			}
			st.CallerUntraced = u != 0
		}
	case 2, 3:
		if fs == nil {
			return fmt.Errorf("event of unknown frame %d", frame)
		}
		if nf != 5 && nf != 6 && nf != 7 {
			return fmt.Errorf("bad return or exception record")
		}
		if st.Arg, err = r.str(); err != nil {
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
	st.Function = fs.function
	st.Gen = fs.gen
	cost := int64(64 + len(st.Src) + len(st.Arg) + len(st.Function))
	if st.Locals != nil {
		cost += fs.lbytes
	}
	if d.limit > 0 && d.size+cost > d.limit {
		d.over = true
		return nil
	}
	d.size += cost
	if len(d.block) == cap(d.block) {
		// fixed-size blocks joined once at the end: no copying on growth
		if d.block != nil {
			d.blocks = append(d.blocks, d.block)
		}
		d.block = make([]State, 0, stateBlock)
	}
	d.block = append(d.block, st)
	return nil
}

// readLocals reads a locals delta (changes, then keys when hasKeys; for a
// call record also its name and gen fields, which sit between the keys and
// the end) into fs and sets st.Locals to the frame's full locals.
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
		for k := 0; k < nchanges; k += 2 { // skip; read again below
			if _, err = r.int(); err != nil {
				return err
			}
			if _, err = r.str(); err != nil {
				return err
			}
		}
	}
	newKeys := false
	if hasKeys && !r.none() {
		keys, err := r.strs()
		if err != nil {
			return err
		}
		fs.keys = keys
		fs.values = make([]string, len(keys))
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
		end := r.i
		r.i = changesAt
		r.seq()
		for k := 0; k < nchanges; k += 2 {
			idx, _ := r.int()
			val, _ := r.str()
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
		st.Locals = make(Locals, len(fs.keys))
		var lb int64
		for i, k := range fs.keys {
			st.Locals[i] = Var{Name: k, Value: fs.values[i]}
			lb += int64(len(k) + len(fs.values[i]) + 8)
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
	case end.Signal == int(syscall.SIGXCPU):
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
	if d.bad != nil && tr.Exit.Kind == ExitNormal {
		tr.Exit = Exit{Kind: ExitError, Reason: "ndb: " + d.bad.Error()}
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
