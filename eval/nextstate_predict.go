package eval

import (
	"context"
	"errors"
	"strings"

	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/tracer"
)

// The two routes of a next-state prediction: by prompt (the cut
// trajectory's training text to a format predictor: model, openai) and by
// backend (the engine's debugger backend given the true history of stops:
// the real engine, or an engine that answers jumps by steps).

// predictByPrompt sends the exact training text of the cut trajectory.
func predictByPrompt(ctx context.Context, opts NextStateOptions, ex *Example, want format.Frame, n uint64) (format.Frame, bool, error) {
	// The trajectory's text up to the cut (horizon trajectories end there,
	// so not format.Prompt, which wants a whole trajectory).
	prompt, err := format.PromptText(ex.Traj.Source, ex.Traj.Frames[:ex.Cut+1], ex.Traj.Steps[:ex.Cut+1])
	if err != nil {
		return format.Frame{}, false, err
	}
	// The greedy frame as the engine's backends ask for it (PredictScored:
	// ndb's model reranks an unsure one), so the score is the users'.
	outs, err := engine.PredictScored(ctx, opts.Predictor, prompt, 1, engine.Draw{})
	if err != nil {
		return format.Frame{}, false, err
	}
	if len(outs) == 0 {
		return format.Frame{}, false, errors.New("the predictor returned nothing")
	}
	pred, perr := format.ParsePredicted(outs[0].Text, ex.Inverse)
	anyExact := false
	if opts.K > 1 {
		draw := engine.Draw{Temperature: 0.6, TopP: 0.95, Seed: opts.Seed*7919 + n + 1}
		samples, err := opts.Predictor.Predict(ctx, prompt, opts.K, draw)
		if err != nil {
			return pred, false, err
		}
		for _, s := range samples {
			if f, err := format.ParsePredicted(s, ex.Inverse); err == nil && CompareFrames(f, want).Exact {
				anyExact = true
				break
			}
		}
	}
	if perr != nil {
		return format.Frame{}, anyExact, perr
	}
	return pred, anyExact, nil
}

var errNoReplay = errors.New("the trajectory does not replay on the tree")

// predictByBackend asks the engine's backend, given the true history of
// stops, for the stop after the cut's action, and writes it as a frame.
func predictByBackend(ctx context.Context, opts NextStateOptions, ex *Example, backends map[*tracer.Trace]debugger.Backend) (format.Frame, error) {
	tree := debugger.NewTree(ex.trace)
	if ex.pos == nil {
		pos, ok := replay(tree, ex.Traj)
		if !ok {
			return format.Frame{}, errNoReplay
		}
		ex.pos = pos
	}
	b := backends[ex.trace]
	if b == nil {
		var err error
		prog := tracer.Program{Source: ex.trace.Source}
		// A call program's trace holds WrapCall's text: take it apart so
		// the engine wraps it again identically.
		if i := strings.LastIndex(prog.Source, tracer.WrapperHead); i >= 0 && ex.trace.States[0].Function == "main" {
			prog = tracer.Program{Source: prog.Source[:i], Call: strings.TrimSuffix(prog.Source[i+len(tracer.WrapperHead):], "\n")}
		}
		if b, err = opts.Engine.Open(ctx, prog); err != nil {
			return format.Frame{}, err
		}
		backends[ex.trace] = b
	}
	var hist []debugger.Step
	for k := 0; k <= ex.Cut; k++ {
		var cmd debugger.Command
		if k > 0 {
			s := ex.Traj.Steps[k-1]
			cmd = debugger.Command{Action: s.Action, Src: s.Src}
		}
		hist = append(hist, debugger.Step{Command: cmd, Stop: debugger.StopAt(tree, ex.pos[k])})
	}
	step := ex.Traj.Steps[ex.Cut]
	cmd := debugger.Command{Action: step.Action, Src: step.Src}
	var st debugger.Stop
	if tb, ok := b.(*debugger.TraceBackend); ok && !opts.PDBSemantics {
		// The real engine's own trace, stepped by the SPEC's actions (the
		// tree), as the data is: Next would answer pdb's commands, whose
		// stepping through generators differs (bdb's rules).
		p, ok := tb.PosOf(hist[len(hist)-1].Stop)
		if !ok {
			return format.Frame{}, errNoReplay
		}
		st = tb.StopAt(tb.Tree().Apply(p, cmd))
	} else {
		var err error
		if st, err = b.Next(ctx, hist, cmd); err != nil {
			return format.Frame{}, err
		}
	}
	// The frame the prediction shows, after the true frames before it.
	bl := format.NewBuilder(ex.Inverse)
	for k := 0; k <= ex.Cut; k++ {
		var via debugger.Action
		if k > 0 {
			via = ex.Traj.Steps[k-1].Action
		}
		if _, err := bl.At(tree, ex.pos[k], via); err != nil {
			return format.Frame{}, err
		}
	}
	return bl.Stop(st, step.Action)
}

// replay finds the positions of t's frames by applying its steps on the
// tree from the start; false if they differ from its frames.
func replay(tree *debugger.Tree, t *format.Trajectory) ([]debugger.Pos, bool) {
	p := debugger.Initial(tree.T)
	if t.Inverse() {
		p = debugger.InverseInitial(tree.T)
	}
	b := format.NewBuilder(t.Inverse())
	pos := []debugger.Pos{p}
	f, err := b.At(tree, p, "")
	if err != nil || format.FrameText(f) != format.FrameText(t.Frames[0]) {
		return nil, false
	}
	for k, s := range t.Steps {
		p = tree.Apply(p, debugger.Command{Action: s.Action, Src: s.Src})
		f, err := b.At(tree, p, s.Action)
		if err != nil || format.FrameText(f) != format.FrameText(t.Frames[k+1]) {
			return nil, false
		}
		pos = append(pos, p)
	}
	return pos, true
}
