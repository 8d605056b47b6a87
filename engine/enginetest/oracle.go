package enginetest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/tracer"
)

// Oracle is a perfect model of ndb's format for one program: it answers
// each prompt with the true state, read from the program's real trace. It
// finds where the prompt's trajectory lies in the trace (the first
// position from which the prompt's frames, rebuilt by format.Builder,
// follow by the SPEC's actions, debugger.Tree.Apply) and writes the frame
// of the asked action's target as format.Builder writes it. A prompt that
// is nowhere in the trace (the engine asked from a state the program never
// reaches) is an error. With it a model engine's stops can only differ
// from the real engine's by the engine's own rules.
type Oracle struct {
	tr *debugger.Tree

	mu    sync.Mutex
	Asked int // predictions answered
}

// NewOracle answers from trace t (as the real engine traced the program).
func NewOracle(t *tracer.Trace) *Oracle { return &Oracle{tr: debugger.NewTree(t)} }

// Predict implements engine.Predictor.
func (o *Oracle) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	frames, steps, err := splitPrompt(prompt)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	inverse := steps[len(steps)-1].Action.Inverse()
	for _, p := range o.positions() {
		text, ok := o.replay(p, frames, steps, inverse)
		if ok {
			o.Asked++
			return []string{text}, nil
		}
	}
	return nil, fmt.Errorf("oracle: the prompt is nowhere in the trace: ...%s", prompt[max(0, len(prompt)-300):])
}

// positions are the trace's positions in the forward and inverse trees.
func (o *Oracle) positions() []debugger.Pos {
	var out []debugger.Pos
	for i := range o.tr.T.States {
		out = append(out, debugger.Pos{Index: i})
		if o.tr.HasChildren(i) {
			out = append(out, debugger.Pos{Index: i, LineCall: true})
		}
	}
	return out
}

// replay checks that the prompt's frames follow from p by its steps and
// returns the frame of the last step's target.
func (o *Oracle) replay(p debugger.Pos, frames []string, steps []format.Step, inverse bool) (string, bool) {
	b := format.NewBuilder(inverse)
	var via debugger.Action
	for i, want := range frames {
		text, ok := o.frame(b, p, via, inverse)
		if !ok || text != want {
			return "", false
		}
		via = steps[i].Action
		p = o.tr.Apply(p, debugger.Command{Action: via, Src: steps[i].Src})
	}
	text, ok := o.frame(b, p, via, inverse)
	return text, ok
}

// frame is the text of the state at p as the engine's prompt writes it:
// predicted states have no frame ids, and a script's module call is shown
// bare (the engine's start is its first line).
func (o *Oracle) frame(b *format.Builder, p debugger.Pos, via debugger.Action, inverse bool) (string, bool) {
	s, ok := o.tr.State(p)
	if !ok {
		k := format.InvExitEntry
		if p.Index >= 0 {
			var err error
			if k, err = format.ExitKind(o.tr.T.Exit); err != nil {
				return "", false
			}
		}
		return format.FrameText(format.Frame{Kind: k}), true
	}
	lineCall := s.Event == debugger.KindInvLineCall
	if lineCall {
		s.Event = tracer.EventLine
	}
	s.Frame = 0
	if p.Index == 0 && o.tr.T.Call == "" && s.Event == tracer.EventCall {
		s = tracer.State{Event: tracer.EventCall, Function: "<module>"}
	}
	f, err := b.Frame(s, lineCall && inverse, via)
	if err != nil {
		return "", false
	}
	return format.FrameText(f), true
}

// splitPrompt reads a prompt (format.PromptText) into its frames' texts
// and its steps, the last step being the one asked for.
func splitPrompt(prompt string) (frames []string, steps []format.Step, err error) {
	source, err := format.HeaderSource(prompt)
	if err != nil {
		return nil, nil, err
	}
	rest := strings.TrimPrefix(prompt[len(format.TokBeginOfText+format.TokTraceContextStart+source):], format.TokFrameSep)
	if !strings.HasSuffix(rest, format.TokFrameSep) {
		return nil, nil, fmt.Errorf("the prompt does not end with %s", format.TokFrameSep)
	}
	for _, piece := range strings.Split(strings.TrimSuffix(rest, format.TokFrameSep), format.TokFrameSep) {
		i := strings.LastIndex(piece, format.TokActionSep)
		if i < 0 {
			return nil, nil, fmt.Errorf("a frame without an action: %q", piece)
		}
		step, err := format.ParseStep(piece[i:])
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, piece[:i+len(format.TokActionSep)])
		steps = append(steps, step)
	}
	if len(frames) == 0 {
		return nil, nil, fmt.Errorf("the prompt has no frame")
	}
	return frames, steps, nil
}

// CWMOracle is a perfect CWM: the prompt must be exactly the CWM text of
// the trace's first n frames (from the engine's start: main's call, or a
// script's first line), and the answer is frame n, or <|end_of_text|>
// after the last one.
type CWMOracle struct {
	source string
	entry  int
	states []tracer.State

	mu    sync.Mutex
	Asked int
}

// NewCWMOracle answers from trace t; entry is the line the engine's trace
// starts at (its start stop's line).
func NewCWMOracle(t *tracer.Trace, entry int) *CWMOracle {
	states := t.States
	if t.Call == "" && len(states) > 0 && states[0].Event == tracer.EventCall {
		states = states[1:] // a script's rollout starts at its first line
	}
	return &CWMOracle{source: t.Source, entry: entry, states: states}
}

// Predict implements engine.Predictor.
func (o *CWMOracle) Predict(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := strings.Count(prompt, format.TokFrameSep) - 1
	frames := format.CWMFrames(o.states)
	if n < 1 || n > len(frames) {
		return nil, fmt.Errorf("cwm oracle: a prompt of %d frames for a trace of %d", n, len(frames))
	}
	want, err := format.SerializeCWM(o.source, o.entry, frames[:n], false)
	if err != nil {
		return nil, err
	}
	if prompt != want {
		return nil, fmt.Errorf("cwm oracle: the prompt of %d frames is not the trace's CWM text:\n%q\nwant\n%q", n, prompt, want)
	}
	o.Asked++
	if n == len(frames) {
		return []string{format.TokEndOfText}, nil
	}
	text, err := format.CWMFrameText(frames[n])
	return []string{text}, err
}
