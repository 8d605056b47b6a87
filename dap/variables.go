package dap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	godap "github.com/google/go-dap"

	"ndb/debugger"
)

// The stack, scopes and variables of the stop, and setVariable.

// frames is the stack innermost first, as DAP lists it. At an exit it is
// one frame that says so, at the last line the program ran (a client
// shows nothing useful for a stopped thread without frames).
func (c *conn) frames() []debugger.Stop {
	if c.sess == nil {
		return nil
	}
	if pm, ok := c.postMortem(); ok {
		out := make([]debugger.Stop, len(pm.Frames))
		for i, f := range pm.Frames {
			out[len(out)-1-i] = f
		}
		return out
	}
	if cur := c.sess.Current(); cur.IsExit() {
		line := 1
		if last, ok := c.sess.LastRun(); ok && last.Lineno > 0 {
			line = last.Lineno
		}
		pseudo := cur
		pseudo.Lineno = line
		return []debugger.Stop{pseudo}
	}
	stack := c.sess.Stack()
	out := make([]debugger.Stop, len(stack))
	for i, s := range stack {
		out[len(stack)-1-i] = debugger.Stop{State: s}
	}
	if len(out) > 0 {
		out[0] = c.sess.Current() // the current stop, with its own event
	}
	return out
}

// postMortem is the post-mortem of an uncaught exception's exit when the
// session stops there (the uncaught filter) and the run has its frames.
func (c *conn) postMortem() (debugger.PostMortem, bool) {
	if !c.uncaught || c.args.NoDebug || c.args.TerminateAtEnd {
		return debugger.PostMortem{}, false
	}
	pm, ok := c.sess.PostMortem()
	return pm, ok && len(pm.Frames) > 0
}

func (c *conn) source(line int) *godap.Source {
	if c.args.Call != "" && line > c.fileLines {
		return &godap.Source{Name: "<ndb main>", SourceReference: wrapperRef, PresentationHint: "deemphasize"}
	}
	return &godap.Source{Name: filepath.Base(c.args.Program), Path: c.args.Program}
}

func (c *conn) onStackTrace(r *godap.StackTraceRequest) error {
	fs := c.frames()
	_, pm := c.postMortem()
	out := make([]godap.StackFrame, 0, len(fs))
	for i, f := range fs {
		name := f.Function
		switch {
		case pm: // the traceback's frames, each where the exception passed
		case f.Event == debugger.EventExit:
			name = "<" + strings.ToLower(describe(f, "")) + ">"
		case f.Event == "call":
			name += " --Call--"
		case f.Event == "return":
			name += " --Return--"
		case f.Event == "exception":
			name += " --Exception--"
		}
		out = append(out, godap.StackFrame{Id: i + 1, Name: name, Line: max(f.Lineno, 1), Column: 1, Source: c.source(f.Lineno)})
	}
	start := min(max(r.Arguments.StartFrame, 0), len(out))
	out = out[start:]
	if n := r.Arguments.Levels; n > 0 && n < len(out) {
		out = out[:n]
	}
	c.send(&godap.StackTraceResponse{Response: c.response(r), Body: godap.StackTraceResponseBody{StackFrames: out, TotalFrames: len(fs)}})
	return nil
}

func (c *conn) onScopes(r *godap.ScopesRequest) error {
	fs := c.frames()
	id := r.Arguments.FrameId
	if id < 1 || id > len(fs) {
		return fmt.Errorf("no frame %d", id)
	}
	if len(c.vars) >= maxRefs {
		c.vars = map[int]varsRef{} // a client that never moves: start over
	}
	ref := len(c.vars) + 1
	c.vars[ref] = varsRef{frame: id}
	scopes := []godap.Scope{{Name: "Locals", PresentationHint: "locals", VariablesReference: ref, NamedVariables: len(fs[id-1].Locals)}}
	if id == 1 && (fs[0].Event == "return" || fs[0].Event == "exception") {
		ref2 := len(c.vars) + 1
		c.vars[ref2] = varsRef{frame: id, retval: true}
		name := "Return value"
		if fs[0].Event == "exception" {
			name = "Exception"
		}
		scopes = append([]godap.Scope{{Name: name, VariablesReference: ref2, NamedVariables: 1}}, scopes...)
	}
	if id == 1 && fs[0].Predicted {
		ref3 := len(c.vars) + 1
		c.vars[ref3] = varsRef{frame: id, prediction: true}
		scopes = append(scopes, godap.Scope{Name: "Prediction", VariablesReference: ref3, NamedVariables: len(predictionVars(fs[0]))})
	}
	c.send(&godap.ScopesResponse{Response: c.response(r), Body: godap.ScopesResponseBody{Scopes: scopes}})
	return nil
}

func (c *conn) onVariables(r *godap.VariablesRequest) error {
	v, ok := c.vars[r.Arguments.VariablesReference]
	fs := c.frames()
	if !ok || v.frame > len(fs) {
		return fmt.Errorf("no variables %d (they expire when the program moves)", r.Arguments.VariablesReference)
	}
	var out []godap.Variable
	switch {
	case v.frame == 0: // a container's elements
		kids, _ := children(v.value)
		for _, k := range kids {
			out = append(out, c.variable(k.name, k.value, ""))
		}
	case v.prediction:
		out = predictionVars(fs[v.frame-1])
	case v.retval:
		f := fs[v.frame-1]
		name := "__return__"
		if f.Event == "exception" {
			name = "__exception__"
		}
		out = append(out, c.variable(name, f.Arg, name))
	default:
		for _, l := range fs[v.frame-1].Locals {
			out = append(out, c.variable(l.Name, l.Value, l.Name))
		}
	}
	if start := r.Arguments.Start; start > 0 || r.Arguments.Count > 0 {
		start = min(max(start, 0), len(out))
		out = out[start:]
		if n := r.Arguments.Count; n > 0 && n < len(out) {
			out = out[:n]
		}
	}
	if out == nil {
		out = []godap.Variable{}
	}
	c.send(&godap.VariablesResponse{Response: c.response(r), Body: godap.VariablesResponseBody{Variables: out}})
	return nil
}

// maxRefs bounds the variablesReferences of one stop.
const maxRefs = 1 << 16

// variable is a variable whose value, when it is a container, expands:
// its variablesReference (> 0) lists the elements read from its repr.
func (c *conn) variable(name, value, evalName string) godap.Variable {
	v := godap.Variable{Name: name, Value: value, EvaluateName: evalName}
	if kids, ok := children(value); ok && len(c.vars) < maxRefs {
		ref := len(c.vars) + 1
		c.vars[ref] = varsRef{value: value}
		v.VariablesReference = ref
		if isIndexed(kids) {
			v.IndexedVariables = len(kids)
		} else {
			v.NamedVariables = len(kids)
		}
	}
	return v
}

// isIndexed reports whether children are numbered 0, 1, ... (a list, a
// tuple, a set) rather than named.
func isIndexed(kids []child) bool {
	for i, k := range kids {
		if k.name != strconv.Itoa(i) && k.name != "..." {
			return false
		}
	}
	return true
}

func (c *conn) onSource(r *godap.SourceRequest) error {
	ref := r.Arguments.SourceReference
	if r.Arguments.Source != nil && r.Arguments.Source.SourceReference != 0 {
		ref = r.Arguments.Source.SourceReference
	}
	if c.sess == nil || ref != wrapperRef {
		return fmt.Errorf("no source %d", ref)
	}
	c.send(&godap.SourceResponse{Response: c.response(r), Body: godap.SourceResponseBody{Content: c.sess.Source(), MimeType: "text/x-python"}})
	return nil
}

// onSetVariable sets a local of the current frame (Session.SetVariable):
// in the live program (the real engine) to the value of an expression, as
// pdb's !NAME = VALUE, but with the name and the expression kept apart, so
// that a value holding a statement is refused; on a model engine it edits
// the stop (as the console's set NAME = VALUE: the next prediction
// continues from the edit).
func (c *conn) onSetVariable(ctx context.Context, r *godap.SetVariableRequest) error {
	if c.sess == nil {
		return errors.New("not launched")
	}
	v, ok := c.vars[r.Arguments.VariablesReference]
	if !ok || v.frame != 1 || v.retval || v.prediction {
		return errors.New("setVariable: only the current frame's locals can be set")
	}
	if c.closed && !c.sess.Predicted() {
		return errors.New("setVariable: the session has ended")
	}
	val, err := c.sess.SetVariable(ctx, 0, r.Arguments.Name, r.Arguments.Value)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(r.Arguments.Name)
	nv := c.variable(name, val, "")
	c.send(&godap.SetVariableResponse{Response: c.response(r), Body: godap.SetVariableResponseBody{Value: val,
		VariablesReference: nv.VariablesReference, NamedVariables: nv.NamedVariables, IndexedVariables: nv.IndexedVariables}})
	return nil
}

// predictionVars are the variables of a predicted stop's Prediction scope.
func predictionVars(st debugger.Stop) []godap.Variable {
	out := []godap.Variable{{Name: "predicted", Value: "True"}}
	if c := st.Confidence; c != nil {
		out = append(out,
			godap.Variable{Name: "confidence", Value: fmt.Sprintf("%.4g", c.Mean)},
			godap.Variable{Name: "confidence_min", Value: fmt.Sprintf("%.4g", c.Min)},
			godap.Variable{Name: "tokens", Value: fmt.Sprint(c.Tokens)})
	}
	return out
}
