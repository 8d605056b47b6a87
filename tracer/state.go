// Package tracer runs CPython programs under sys.settrace, safely, and records
// every event of the program's own code. Its types (State, Trace) are the
// ground truth every other layer of ndb reads.
package tracer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
)

// Var is one local variable: its name and the repr() of its value.
type Var struct {
	Name  string
	Value string
}

// Locals is an ordered set of variables. Order matters: the model's text
// writes them in this order, so it is the frame's own order (f_locals order).
// It marshals as a JSON object whose keys keep that order.
type Locals []Var

// Get returns the repr of name and whether it is present.
func (l Locals) Get(name string) (string, bool) {
	for _, v := range l {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

// All yields each name and repr, in order.
func (l Locals) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, v := range l {
			if !yield(v.Name, v.Value) {
				return
			}
		}
	}
}

// MarshalJSON writes the locals as a JSON object in order, '<' and '>'
// unescaped. One buffer and one encoder for all of them: a trace's JSON
// lines call this for every state, and garbage per value made ndb trace's
// heap grow by half a gigabyte on a large trace.
func (l Locals) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	n := 2
	for _, v := range l {
		n += len(v.Name) + len(v.Value) + 6
	}
	b.Grow(n)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, v := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(v.Name); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		if err := enc.Encode(v.Value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object of strings, keeping key order.
func (l *Locals) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		if tok == nil { // JSON null
			*l = nil
			return nil
		}
		return fmt.Errorf("locals: want a JSON object, got %v", tok)
	}
	out := Locals{}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		k, ok := kt.(string)
		if !ok {
			return fmt.Errorf("locals: bad key %v", kt)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("locals: value of %q: %w", k, err)
		}
		out = append(out, Var{Name: k, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	*l = out
	return nil
}

// Events of a State.
const (
	EventCall      = "call"
	EventLine      = "line"
	EventReturn    = "return"
	EventException = "exception"
)

// State is one trace event of the program's own code (SPEC section 1).
type State struct {
	Event    string `json:"event"`            // call, line, return, exception
	Lineno   int    `json:"lineno"`           // 1-based line in Trace.Source
	Function string `json:"function"`         // code name: f, <module>, <listcomp>, ...
	Depth    int    `json:"depth"`            // program frames below this one; the entry frame is 0
	Src      string `json:"src"`              // source line text with indentation, no newline
	Locals   Locals `json:"locals,omitempty"` // repr of every local (older traces: none at return and exception)
	Arg      string `json:"arg,omitempty"`    // return: repr of the value; exception: repr of the exception
	Frame    int    `json:"frame"`            // id of the frame object, unique within one trace (generators keep theirs across resumptions)
	Gen      bool   `json:"gen,omitempty"`    // the frame runs a generator or coroutine (bdb treats those specially)
	// CallerUntraced (call states only): a program frame is below this one
	// (Depth > 0) but the frame's direct caller is not a program frame: code
	// from an exec/eval/doctest string or another module calling back in.
	// The parent state is then not the real caller (pdb's f_back).
	CallerUntraced bool `json:"caller_untraced,omitempty"`
}

// SameEvent reports whether s and o are the same event in two runs of one
// program: every field but the frame number (a run recorded again from a
// checkpoint numbers the frames it first sees anew).
func (s State) SameEvent(o State) bool {
	s.Frame, o.Frame = 0, 0
	return reflect.DeepEqual(s, o)
}

// Exit kinds (SPEC section 1).
const (
	ExitNormal = "normal" // the entry returned or the script ended
	ExitError  = "error"  // an uncaught exception
	ExitNever  = "never"  // a limit stopped it: treated as an infinite loop
)

// Exit is how a traced run ended.
type Exit struct {
	Kind   string `json:"exit"`             // normal, error, never
	Error  string `json:"error,omitempty"`  // error: repr of the uncaught exception (e.g. "ZeroDivisionError('division by zero')")
	Reason string `json:"reason,omitempty"` // never: which limit ("events", "timeout", "memory", ...); error: extra detail such as "syntax error"
	Code   int    `json:"code,omitempty"`   // process exit status for sys.exit/os._exit
}

// Program is what to run: a script, or a call of a function it defines.
type Program struct {
	Path   string // for messages; may be empty (data sets put an id here)
	Source string // Python source, decoded text
	Call   string // entry call such as f(1, "a"); empty for a whole script
	// Context, when set, runs the program as `python PATH ARGS` runs it
	// (docs/tracer.md, "Program context"); Path must then name an existing
	// file. Nil: the program runs in an empty scratch folder as "<program>".
	Context *Context `json:",omitempty"`
}

// Context is what a program run from a file gets, as Python gives it: its
// code compiled under the file's name (so __file__, tracebacks and syntax
// errors name it). For a script (Call empty) also: its folder visible
// read-only at its real path, as working directory and sys.path[0],
// sys.argv = [Path] + Args, and Stdin. With Call only the file name
// applies (Args, Stdin and Writable must be empty).
type Context struct {
	Args  []string // sys.argv[1:]
	Stdin []byte   // the program's standard input; nil: empty (EOF at once)
	// Input, when set, is a live run's standard input instead of Stdin:
	// what the user types (live.go, Input); whole runs ignore it.
	Input *Input `json:"-"`
	// Writable gives the program a writable copy of its folder (in its
	// scratch tmpfs, mounted at the folder's path) instead of the folder
	// itself read-only; nothing it writes reaches the host.
	Writable bool
}

// Trace is one recorded execution.
//
// For a Program with Call, Source is the program's source followed by
//
//	def main():
//	    return CALL
//
// and the trace starts at main's call event (SPEC section 5), so line numbers
// in States refer to Source as stored here.
type Trace struct {
	Source string  `json:"source"`
	Call   string  `json:"call,omitempty"`
	States []State `json:"states"`
	Exit   Exit    `json:"exit"`
	Stdout string  `json:"stdout,omitempty"` // what the program printed, bounded
	// Traceback is Python's traceback of an uncaught exception (exit
	// error), from the first program frame on, as `python FILE` prints it.
	Traceback string `json:"traceback,omitempty"`
	// Unrecorded, for a live run, holds where it went on untraced
	// (Pause.Untraced): for each value i, the program ran unrecorded after
	// States[i-1]; States[i:] come after the gap (when it was interrupted)
	// and Exit after the last one. Increasing; empty for a whole run.
	Unrecorded []int `json:"unrecorded,omitempty"`
	// Resumed holds, for each interrupt in such a stretch, the index of
	// the first state recorded for an event after it: the states from the
	// gap up to it are call states standing for the stack it found.
	Resumed []int `json:"resumed,omitempty"`
	// FirstLines holds, for a frame whose first state is a call state
	// at another line than its code's co_firstlineno (a stack found after
	// an unrecorded stretch, a generator first seen when resumed), that
	// co_firstlineno: pdb places function breakpoints by it.
	FirstLines map[int]int `json:"first_lines,omitempty"`
}
