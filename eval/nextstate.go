package eval

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"time"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/tracer"
)

// Example is one next-state example: a trajectory cut right after step Cut;
// the model writes Traj.Frames[Cut+1].
type Example struct {
	Program string
	Source  string // the source it was drawn for (CollectSources); "" for one source
	Action  string
	Inverse bool
	Cut     int
	Traj    *format.Trajectory
	// Horizon examples: Steps step actions, then the jump at Cut; Skipped is
	// the fraction of the trace's states the jump passes over.
	Horizon bool
	Steps   int
	Skipped float64

	group int // trajectory number: examples of one trajectory run in order (prompt cache)
	trace *tracer.Trace
	pos   []debugger.Pos // positions of Traj.Frames (backend route)
}

// NextStateOptions configure CollectExamples and RunNextState.
type NextStateOptions struct {
	N         int    // examples per action (default 800)
	HorizonN  int    // horizon examples in all (0: none)
	Horizons  []int  // step actions before the final jump (default 0,1,2,4,8,16)
	PerTrace  int    // trajectories sampled per trace and pass (default 4)
	MaxPasses int    // passes over the programs (default 10)
	Seed      uint64 // everything random derives from it
	Sampler   dataset.SamplerConfig

	Real *engine.RealEngine // traces the programs
	// Predictor (model, openai) predicts from the exact training text of
	// the cut trajectory; without it, Engine's backends predict from the
	// true history of stops (real, cwm).
	Predictor engine.Predictor
	Engine    engine.Engine
	K         int // exact match@k with this many samples (temperature 0.6, top-p 0.95); 0: off
	// PDBSemantics makes the real engine answer through its pdb session
	// semantics (debugger.TraceBackend.Next) instead of the SPEC's tree.
	PDBSemantics bool
	// ForwardOnly draws no inverse trajectories or jumps (engines whose
	// format has no inverse: cwm).
	ForwardOnly bool
	Progress    func(done, total int)
	// TraceFilter, when set, leaves out the programs whose trace it drops
	// (the rule ndb gen applies to the source: thealgorithms drops runs out
	// of bounds), so the held-out programs are those training could see.
	TraceFilter dataset.TraceFilter
	// Dump, when set, receives one JSON line per example (action, the
	// prompt, the true and the predicted frame, exact or not): the
	// material for reading a model's errors.
	Dump io.Writer
}

func (o *NextStateOptions) defaults() {
	if o.N <= 0 {
		o.N = 800
	}
	if len(o.Horizons) == 0 {
		o.Horizons = []int{0, 1, 2, 4, 8, 16}
	}
	if o.PerTrace <= 0 {
		o.PerTrace = 4
	}
	if o.MaxPasses <= 0 {
		o.MaxPasses = 10
	}
	if o.Sampler.MaxSteps == 0 {
		o.Sampler = dataset.DefaultSamplerConfig
		// Trajectories start at the entry, so every engine (and the
		// real engine's replay) can follow them.
		o.Sampler.DeepEntryProb = 0
	}
	if o.ForwardOnly {
		o.Sampler.InverseProb = 0
	}
}

// AllActions lists the eight actions in SPEC order.
func AllActions() []string {
	var out []string
	for _, a := range append(append([]debugger.Action(nil), debugger.ForwardActions...), debugger.InverseActions...) {
		out = append(out, string(a))
	}
	return out
}

// ErrCWMNextState says next-state exact match is not measured for the cwm
// engine: its backend only continues its own rollout from the entry, so it
// cannot be given the true history of a cut trajectory.
var ErrCWMNextState = errors.New("eval: next-state is not measured for the cwm engine: its backend only continues its own frame-by-frame rollout, it cannot be teacher-forced with a true history (use cruxeval --task output)")

// RunNextState predicts every example and scores it.
func RunNextState(ctx context.Context, exs []*Example, opts NextStateOptions) (*NextStateReport, error) {
	opts.defaults()
	if opts.Predictor == nil && opts.Engine == nil {
		return nil, errors.New("eval: next-state needs a predictor or an engine")
	}
	if opts.Predictor == nil && opts.Engine.Name() == engine.CWMName {
		return nil, ErrCWMNextState
	}
	start := time.Now()
	rep := &NextStateReport{PerAction: map[string]*Score{}, Forward: &Score{}, Inverse: &Score{},
		HorizonBins: map[string][]*Score{}, HorizonSteps: map[string]map[int]*Score{}, K: opts.K, Examples: len(exs)}
	if opts.Engine != nil {
		rep.Engine = opts.Engine.Name()
	}
	// Run each trajectory's examples together, in order: consecutive
	// prompts then share their prefix and the predictor's cache.
	order := append([]*Example(nil), exs...)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].group != order[j].group {
			return order[i].group < order[j].group
		}
		return order[i].Cut < order[j].Cut
	})
	backends := map[*tracer.Trace]debugger.Backend{}
	programs := map[string]map[string]bool{} // source -> program ids
	for _, ex := range exs {
		if ex.Source != "" {
			ss := rep.sourceScores(ex.Source)
			ss.Examples++
			if programs[ex.Source] == nil {
				programs[ex.Source] = map[string]bool{}
			}
			programs[ex.Source][ex.Program] = true
			ss.Programs = len(programs[ex.Source])
		}
	}
	for i, ex := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		want := ex.Traj.Frames[ex.Cut+1]
		var pred format.Frame
		var err error
		anyExact := false
		if opts.Predictor != nil {
			pred, anyExact, err = predictByPrompt(ctx, opts, ex, want, uint64(i))
		} else {
			pred, err = predictByBackend(ctx, opts, ex, backends)
			if errors.Is(err, errNoReplay) {
				rep.Dropped++
				continue
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.Errors++
			if msg := err.Error(); len(rep.ErrorSamples) < 5 && !slices.Contains(rep.ErrorSamples, msg) {
				rep.ErrorSamples = append(rep.ErrorSamples, msg)
			}
			pred = format.Frame{} // wrong in every field
		}
		m := CompareFrames(pred, want)
		if opts.Dump != nil {
			if err := dumpExample(opts.Dump, ex, pred, want, m); err != nil {
				return nil, err
			}
		}
		rep.add(ex, m, anyExact, opts.K > 1 && opts.Predictor != nil)
		if opts.Progress != nil {
			opts.Progress(i+1, len(order))
		}
	}
	for a, s := range rep.PerAction {
		if debugger.Action(a).Inverse() {
			rep.Inverse.Merge(s)
		} else {
			rep.Forward.Merge(s)
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}
