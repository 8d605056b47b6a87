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
	stdout  string
	bad     error
}

type frameState struct {
	function string
	gen      bool
	keys     []string
	values   []string
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
	if d.bad != nil {
		return
	}
	v, err := unmarshalPy(b)
	if err != nil {
		d.bad = err
		return
	}
	recs, ok := v.([]any)
	if !ok {
		d.bad = fmt.Errorf("record chunk is not a list")
		return
	}
	for _, r := range recs {
		rec, ok := r.([]any)
		if !ok || len(rec) == 0 {
			d.bad = fmt.Errorf("bad record %v", r)
			return
		}
		if err := d.record(rec); err != nil {
			d.bad = err
			return
		}
	}
}

func (d *decoder) src(lineno int) string {
	if lineno >= 1 && lineno <= len(d.lines) {
		return d.lines[lineno-1]
	}
	return ""
}

func asInt(v any) (int, bool)       { n, ok := v.(int); return n, ok }
func asString(v any) (string, bool) { s, ok := v.(string); return s, ok }

func (d *decoder) record(r []any) error {
	if tag, ok := r[0].(string); ok {
		switch tag {
		case "o":
			if len(r) < 3 {
				return fmt.Errorf("bad output record")
			}
			out, ok1 := asString(r[1])
			truncated, ok2 := r[2].(bool)
			if !ok1 || !ok2 {
				return fmt.Errorf("bad output record")
			}
			if truncated {
				out += OutputCutMarker
			}
			d.stdout = out
		case "x":
			if len(r) < 5 {
				return fmt.Errorf("bad exit record")
			}
			var e Exit
			var ok [4]bool
			e.Kind, ok[0] = asString(r[1])
			e.Error, ok[1] = asString(r[2])
			e.Reason, ok[2] = asString(r[3])
			e.Code, ok[3] = asInt(r[4])
			if ok != [4]bool{true, true, true, true} {
				return fmt.Errorf("bad exit record")
			}
			d.exit = &e
		default:
			return fmt.Errorf("unknown record %q", tag)
		}
		return nil
	}
	if len(r) < 5 {
		return fmt.Errorf("bad event record")
	}
	ev, ok1 := asInt(r[0])
	lineno, ok2 := asInt(r[1])
	frame, ok3 := asInt(r[2])
	depth, ok4 := asInt(r[3])
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return fmt.Errorf("bad event record")
	}
	st := State{Lineno: lineno, Depth: depth, Frame: frame, Src: d.src(lineno)}
	fs := d.frames[frame]
	switch ev {
	case 0, 1:
		if ev == 0 {
			if len(r) < 8 {
				return fmt.Errorf("bad call record")
			}
			if fs == nil {
				fs = &frameState{}
				d.frames[frame] = fs
			}
			fs.function, _ = asString(r[6])
			gen, _ := asInt(r[7])
			fs.gen = gen != 0
			st.Event = EventCall
		} else {
			if len(r) < 5 {
				return fmt.Errorf("bad line record")
			}
			st.Event = EventLine
		}
		if fs == nil {
			return fmt.Errorf("line event of unknown frame %d", frame)
		}
		// call: (0, lineno, frame, depth, changes, keys, name, gen);
		// line: (1, lineno, frame, depth, changes[, keys]). keys (the full
		// ordered key list) come only when they changed; changes are
		// (index, repr) pairs, or None when nothing changed.
		var keysField any
		if len(r) > 5 {
			keysField = r[5]
		}
		if keysField != nil {
			keys, ok := keysField.([]any)
			if !ok {
				return fmt.Errorf("bad keys")
			}
			fs.keys = make([]string, len(keys))
			for i, k := range keys {
				if fs.keys[i], ok = asString(k); !ok {
					return fmt.Errorf("bad key")
				}
			}
			fs.values = make([]string, len(keys))
		}
		if r[4] != nil {
			changes, ok := r[4].([]any)
			if !ok || len(changes)%2 != 0 {
				return fmt.Errorf("bad locals delta")
			}
			for i := 0; i < len(changes); i += 2 {
				idx, ok1 := asInt(changes[i])
				val, ok2 := asString(changes[i+1])
				if !ok1 || !ok2 || idx < 0 || idx >= len(fs.values) {
					return fmt.Errorf("bad locals change")
				}
				fs.values[idx] = val
			}
		}
		st.Locals = make(Locals, len(fs.keys))
		for i, k := range fs.keys {
			st.Locals[i] = Var{Name: k, Value: fs.values[i]}
		}
	case 2, 3:
		if fs == nil {
			return fmt.Errorf("event of unknown frame %d", frame)
		}
		var ok bool
		if st.Arg, ok = asString(r[4]); !ok {
			return fmt.Errorf("bad arg")
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
	d.tr.States = append(d.tr.States, st)
	return nil
}

// finish sets the Exit from the child's exit record or, when the child died
// without one, from how the worker saw it end.
func (d *decoder) finish(end workerEnd) {
	tr := d.tr
	tr.Stdout = d.stdout
	switch {
	case d.exit != nil:
		tr.Exit = *d.exit
	case end.Timeout:
		tr.Exit = Exit{Kind: ExitNever, Reason: "timeout"}
	case end.Killed:
		tr.Exit = Exit{Kind: ExitError, Reason: "ndb: the program closed the tracer's stream and was stopped"}
	case end.TooBig:
		tr.Exit = Exit{Kind: ExitNever, Reason: "trace size"}
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
