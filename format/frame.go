package format

import (
	"fmt"
	"strings"

	"ndb/debugger"
	"ndb/tracer"
)

// Kind is the kind of a frame: a state seen forwards or backwards, or an exit.
type Kind string

// Frame kinds. The inv_* kinds appear only in inverse trajectories.
const (
	Call         Kind = "call"
	Line         Kind = "line"
	Return       Kind = "return"
	Exception    Kind = "exception" // ours
	InvCall      Kind = "inv_call"
	InvLine      Kind = "inv_line"
	InvReturn    Kind = "inv_return"
	InvLineCall  Kind = "inv_line_call" // ours: a line that made a call, with the callee below it
	InvException Kind = "inv_exception" // ours
	ExitNormal   Kind = "exit_normal"
	ExitError    Kind = "exit_error" // ours
	ExitNever    Kind = "exit_never" // ours
	InvExitEntry Kind = "inv_exit_entry"
)

// kindInfo is the static description of a kind: its token and shape.
type kindInfo struct {
	tok     string
	locals  bool // LOCALS follow (call, line, ...); else VALUE (return, exception)
	srcLast bool // layout <|arg_sep|>LOCALS<|src_sep|>SRC (forward line) instead of SRC first
	inverse bool
	exit    bool
	event   string // tracer event of the state this frame shows
}

var kinds = map[Kind]kindInfo{
	Call:         {tok: TokCallSep, locals: true, event: tracer.EventCall},
	Line:         {tok: TokLineSep, locals: true, srcLast: true, event: tracer.EventLine},
	Return:       {tok: TokReturnSep, event: tracer.EventReturn},
	Exception:    {tok: TokExceptionSep, event: tracer.EventException},
	InvCall:      {tok: TokInvCallSep, locals: true, inverse: true, event: tracer.EventCall},
	InvLine:      {tok: TokInvLineSep, locals: true, inverse: true, event: tracer.EventLine},
	InvReturn:    {tok: TokInvReturnSep, inverse: true, event: tracer.EventReturn},
	InvLineCall:  {tok: TokInvLineCallSep, locals: true, inverse: true, event: tracer.EventLine},
	InvException: {tok: TokInvExceptionSep, inverse: true, event: tracer.EventException},
	ExitNormal:   {tok: TokExitNormal, exit: true},
	ExitError:    {tok: TokExitError, exit: true},
	ExitNever:    {tok: TokExitNever, exit: true},
	InvExitEntry: {tok: TokInvExitEntry, exit: true, inverse: true},
}

var kindByToken = func() map[string]Kind {
	m := map[string]Kind{}
	for k, in := range kinds {
		m[in.tok] = k
	}
	return m
}()

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { _, ok := kinds[k]; return ok }

// Inverse reports whether k belongs to inverse trajectories.
func (k Kind) Inverse() bool { return kinds[k].inverse }

// IsExit reports whether k is an exit (the last frame of a trajectory).
func (k Kind) IsExit() bool { return kinds[k].exit }

// HasLocals reports whether frames of kind k carry LOCALS (else a VALUE).
func (k Kind) HasLocals() bool { return kinds[k].locals }

// Event is the tracer event a frame of kind k shows ("" for exits).
func (k Kind) Event() string { return kinds[k].event }

// Token is the special token that opens a frame of kind k.
func (k Kind) Token() string { return kinds[k].tok }

// KindOf returns the frame kind that shows state s: forwards, or backwards
// (inverse); lineCall selects inv_line_call for the duplicated line node of
// the inverse tree.
func KindOf(s tracer.State, inverse, lineCall bool) (Kind, error) {
	switch {
	case lineCall && (!inverse || s.Event != tracer.EventLine):
		return "", fmt.Errorf("format: inv_line_call needs an inverse line state, got %s", s.Event)
	case lineCall:
		return InvLineCall, nil
	}
	fw := map[string]Kind{tracer.EventCall: Call, tracer.EventLine: Line, tracer.EventReturn: Return, tracer.EventException: Exception}
	inv := map[string]Kind{tracer.EventCall: InvCall, tracer.EventLine: InvLine, tracer.EventReturn: InvReturn, tracer.EventException: InvException}
	m := fw
	if inverse {
		m = inv
	}
	k, ok := m[s.Event]
	if !ok {
		return "", fmt.Errorf("format: unknown event %q", s.Event)
	}
	return k, nil
}

// ExitKind returns the exit frame kind of a trace's exit (ExitOf its kind).
func ExitKind(e tracer.Exit) (Kind, error) { return ExitOf(e.Kind) }

// ExitOf returns the exit frame kind of an exit name, the inverse of
// ExitName: a tracer exit kind (a trace that recorded none ended normally,
// as debugger.Tree reads it) or inv_exit_entry, as debugger.Stop.Exit
// holds them. It is the one conversion from an exit to the format's.
func ExitOf(name string) (Kind, error) {
	if name == "" {
		return ExitNormal, nil
	}
	for _, k := range []Kind{ExitNormal, ExitError, ExitNever, InvExitEntry} {
		if k.ExitName() == name {
			return k, nil
		}
	}
	return "", fmt.Errorf("format: unknown exit %q", name)
}

// ExitName returns the exit an exit kind stands for: tracer.ExitNormal,
// ExitError or ExitNever for the forward exits, "inv_exit_entry" for the
// inverse one, "" for a state kind.
func (k Kind) ExitName() string {
	switch k {
	case ExitNormal:
		return tracer.ExitNormal
	case ExitError:
		return tracer.ExitError
	case ExitNever:
		return tracer.ExitNever
	case InvExitEntry:
		return string(InvExitEntry)
	}
	return ""
}

// CutMarker ends a value whose repr the tracer cut at its limit.
const CutMarker = tracer.CutMarker

// Frame is one state as the model sees it.
//
// For kinds with locals, Locals holds the entries shown in the text (only
// the changed ones when Elided is set, which writes the `"..": ".."`
// entry); Arg is empty. For return and exception kinds Arg is the repr and
// Locals is nil. Exit frames have only Kind.
type Frame struct {
	Kind   Kind
	Src    string
	Locals tracer.Locals
	Elided bool
	Arg    string
}

// Step is one action: its name and, for a breakpoint, the source line.
type Step struct {
	Action debugger.Action
	Src    string // breakpoint only
}

// Trajectory is a training example: the source, the initial frame, then one
// Step and resulting Frame at a time, ending in an exit frame.
// len(Steps) == len(Frames)-1; Steps[i] leads from Frames[i] to Frames[i+1].
type Trajectory struct {
	Source string
	Frames []Frame
	Steps  []Step
}

// Inverse reports whether t walks backwards in time.
func (t *Trajectory) Inverse() bool {
	return len(t.Frames) > 0 && t.Frames[0].Kind.Inverse()
}

// Validate checks the structural rules every serializable trajectory obeys.
func (t *Trajectory) Validate() error {
	if len(t.Frames) < 2 {
		return fmt.Errorf("format: a trajectory needs an initial frame and an exit, got %d frames", len(t.Frames))
	}
	if len(t.Steps) != len(t.Frames)-1 {
		return fmt.Errorf("format: %d frames need %d steps, got %d", len(t.Frames), len(t.Frames)-1, len(t.Steps))
	}
	if ContainsSpecialToken(t.Source) {
		return fmt.Errorf("format: source contains a special token")
	}
	inverse := t.Inverse()
	for i, f := range t.Frames {
		if err := f.validate(); err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		if f.Kind.Inverse() != inverse {
			return fmt.Errorf("format: frame %d (%s) mixes directions", i, f.Kind)
		}
		if last := i == len(t.Frames)-1; f.Kind.IsExit() != last {
			if last {
				return fmt.Errorf("format: the last frame must be an exit, got %s", f.Kind)
			}
			return fmt.Errorf("format: exit frame %d before the end", i)
		}
	}
	for i, s := range t.Steps {
		if err := s.validate(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if s.Action.Inverse() != inverse {
			return fmt.Errorf("format: step %d (%s) mixes directions", i, s.Action)
		}
	}
	return nil
}

func (f Frame) validate() error {
	info, ok := kinds[f.Kind]
	switch {
	case !ok:
		return fmt.Errorf("format: unknown frame kind %q", f.Kind)
	case info.exit:
		if f.Src != "" || f.Locals != nil || f.Elided || f.Arg != "" {
			return fmt.Errorf("format: exit frame %s carries data", f.Kind)
		}
		return nil
	case !info.locals && (f.Locals != nil || f.Elided):
		return fmt.Errorf("format: %s frame has locals", f.Kind)
	case info.locals && f.Arg != "":
		return fmt.Errorf("format: %s frame has a value", f.Kind)
	case ContainsSpecialToken(f.Src) || ContainsSpecialToken(f.Arg):
		return fmt.Errorf("format: %s frame text contains a special token", f.Kind)
	case strings.ContainsAny(f.Src, "\n\r"):
		return fmt.Errorf("format: %s frame source line contains a line break", f.Kind)
	}
	for _, v := range f.Locals {
		if v.Name == elided || ContainsSpecialToken(v.Name) || ContainsSpecialToken(v.Value) {
			return fmt.Errorf("format: local %q cannot be written", v.Name)
		}
	}
	return nil
}

func (s Step) validate() error {
	if !s.Action.Valid() {
		return fmt.Errorf("format: unknown action %q", s.Action)
	}
	if s.Action != debugger.Breakpoint && s.Src != "" {
		return fmt.Errorf("format: %s has a source line", s.Action)
	}
	if ContainsSpecialToken(s.Src) || strings.ContainsAny(s.Src, "\n\r") {
		return fmt.Errorf("format: breakpoint line contains a special token or a line break")
	}
	return nil
}

// elided is the key (and value) of the entry that marks left-out locals.
const elided = ".."
