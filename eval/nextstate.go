package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/engine"
	"ndb/format"
	"ndb/model/train"
	"ndb/tracer"
)

// NamedProgram is a held-out program with a stable id.
type NamedProgram struct {
	ID      string
	Program tracer.Program
}

// HeldOut keeps the items of src that training never saw: those whose
// program id falls in the validation split of docs/training.md
// (train.ProgramHash(id) % 100 < valPercent), so every input of a held-out
// function is held out too. Items the source skips are left out.
//
// An unbounded source (synthetic) is scanned from item 0 for its held-out
// items, up to limit of them (UnboundedHeldOut when limit is 0): with the
// training's seed these are exactly the programs its split kept out, with
// another seed they are fresh programs anyway.
func HeldOut(src dataset.Source, valPercent int, limit int) ([]NamedProgram, error) {
	n := src.Len()
	if n < 0 {
		if limit <= 0 {
			limit = UnboundedHeldOut
		}
		if valPercent <= 0 {
			return nil, fmt.Errorf("eval: source %s has no held-out program at %d%%", src.Name(), valPercent)
		}
		n = 1000 * limit // bound the scan (valPercent >= 1 needs about 100*limit items)
	}
	var out []NamedProgram
	for i := 0; i < n; i++ {
		it, skip := src.Item(i)
		if skip != "" {
			continue
		}
		if train.ProgramHash(it.ID)%100 < uint64(valPercent) {
			out = append(out, NamedProgram{ID: it.ID, Program: it.Program})
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: source %s has no held-out program at %d%%", src.Name(), valPercent)
	}
	return out, nil
}

// UnboundedHeldOut is how many held-out programs HeldOut takes from an
// unbounded source (synthetic) when no limit is given.
const UnboundedHeldOut = 400

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

// CollectExamples traces the programs and samples trajectories (the
// training policy, SPEC 4) until every action has opts.N cut points, one
// per action and trajectory, or opts.MaxPasses passes are done; then the
// horizon examples. The same programs and seed give the same examples.
func CollectExamples(ctx context.Context, progs []NamedProgram, opts NextStateOptions) ([]*Example, error) {
	opts.defaults()
	if opts.Real == nil {
		return nil, errors.New("eval: next-state needs a real engine to trace the programs")
	}
	need := map[string]int{}
	for _, a := range AllActions() {
		if !opts.ForwardOnly || !debugger.Action(a).Inverse() {
			need[a] = opts.N
		}
	}
	horizonLeft := opts.HorizonN
	traces := map[int]*tracer.Trace{}
	failed := map[int]bool{}
	var out []*Example
	group := 0
	full := func() bool {
		for _, n := range need {
			if n > 0 {
				return false
			}
		}
		return horizonLeft <= 0
	}
	for pass := 0; pass < opts.MaxPasses && !full(); pass++ {
		order := rand.New(rand.NewPCG(opts.Seed, uint64(pass))).Perm(len(progs))
		for _, pi := range order {
			if full() {
				break
			}
			if failed[pi] {
				continue
			}
			tr := traces[pi]
			if tr == nil {
				var err error
				if tr, err = opts.Real.Trace(ctx, progs[pi].Program); err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					failed[pi] = true
					continue
				}
				if len(tr.States) == 0 {
					failed[pi] = true
					continue
				}
				if opts.TraceFilter != nil && opts.TraceFilter.DropTrace(dataset.Item{ID: progs[pi].ID, Program: progs[pi].Program}, tr) != "" {
					failed[pi] = true
					continue
				}
				traces[pi] = tr
			}
			r := rand.New(rand.NewPCG(opts.Seed^0x9e3779b97f4a7c15, uint64(pass)<<32|uint64(pi)))
			for range opts.PerTrace {
				s, err := dataset.SampleTrajectory(r, tr, opts.Sampler)
				if err != nil {
					continue
				}
				group++
				cuts := dataset.CutPoints(s.Trajectory)
				for _, a := range AllActions() {
					ks := cuts[a]
					if len(ks) == 0 || need[a] <= 0 {
						continue
					}
					need[a]--
					out = append(out, &Example{Program: progs[pi].ID, Action: a, Inverse: s.Trajectory.Inverse(),
						Cut: ks[r.IntN(len(ks))], Traj: s.Trajectory, group: group, trace: tr})
				}
			}
			if horizonLeft > 0 {
				if ex := horizonExample(r, tr, opts.Horizons, opts.ForwardOnly); ex != nil {
					group++
					ex.Program, ex.group, ex.trace = progs[pi].ID, group, tr
					out = append(out, ex)
					horizonLeft--
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("eval: no example could be drawn from the programs (did they all fail to trace?)")
	}
	return out, nil
}

// jumps are the final actions of horizon examples.
var jumps = []debugger.Action{debugger.StepReturn, debugger.Breakpoint, debugger.Continue, debugger.InvStepCall}

// horizonExample walks h step actions (policy B's step_into/step_over, or
// their inverses) from the start, then takes one jump, and records the
// fraction of the trace's states the jump skips. nil if the walk ends
// before the jump.
func horizonExample(r *rand.Rand, tr *tracer.Trace, horizons []int, forwardOnly bool) *Example {
	h := horizons[r.IntN(len(horizons))]
	js := jumps
	if forwardOnly {
		js = jumps[:3]
	}
	jump := js[r.IntN(len(js))]
	inverse := jump.Inverse()
	tree := debugger.NewTree(tr)
	b := format.NewBuilder(inverse)
	t := &format.Trajectory{Source: tr.Source}
	pos := debugger.Initial(tr)
	if inverse {
		pos = debugger.InverseInitial(tr)
	}
	f, err := b.At(tree, pos, "")
	if err != nil {
		return nil
	}
	t.Frames = append(t.Frames, f)
	var positions []debugger.Pos
	positions = append(positions, pos)
	for i := 0; i <= h; i++ {
		cmd := debugger.Command{Action: debugger.StepInto}
		if r.IntN(2) == 1 {
			cmd.Action = debugger.StepOver
		}
		if inverse {
			cmd.Action = map[debugger.Action]debugger.Action{debugger.StepInto: debugger.InvStepInto, debugger.StepOver: debugger.InvStepOver}[cmd.Action]
		}
		if i == h {
			cmd = debugger.Command{Action: jump}
			if jump == debugger.Breakpoint {
				lines := debugger.BreakpointLines(tr.Source)
				if len(lines) == 0 {
					return nil
				}
				cmd.Src = debugger.SourceLines(tr.Source)[lines[r.IntN(len(lines))]-1]
			}
		}
		next := tree.Apply(pos, cmd)
		if f, err = b.At(tree, next, cmd.Action); err != nil {
			return nil
		}
		t.Frames = append(t.Frames, f)
		t.Steps = append(t.Steps, format.Step{Action: cmd.Action, Src: cmd.Src})
		positions = append(positions, next)
		if i < h && f.Kind.IsExit() {
			return nil
		}
		if i == h {
			skipped := next.Index - pos.Index
			if skipped < 0 {
				skipped = -skipped
			}
			frac := float64(skipped-1) / float64(len(tr.States))
			frac = min(max(frac, 0), 1)
			return &Example{Action: string(jump), Inverse: inverse, Cut: h, Traj: t, Horizon: true, Steps: h,
				Skipped: frac, pos: positions}
		}
		pos = next
	}
	return nil
}

// NextStateReport holds the scores of a run.
type NextStateReport struct {
	Engine    string            `json:"engine"`
	PerAction map[string]*Score `json:"-"`
	Forward   *Score            `json:"-"`
	Inverse   *Score            `json:"-"`
	// Horizon: by jump action, scores per bin of the fraction of states
	// skipped (10 bins of 0.1) and per number of inserted steps.
	HorizonBins  map[string][]*Score       `json:"-"`
	HorizonSteps map[string]map[int]*Score `json:"-"`
	// Sources: per source (CollectSources), the same scores; nil when the
	// examples carry no source.
	Sources      map[string]*SourceScores `json:"-"`
	Dropped      int                      `json:"dropped"`                 // examples the engine's route could not follow
	Errors       int                      `json:"errors"`                  // predictions that failed (counted as wrong)
	ErrorSamples []string                 `json:"error_samples,omitempty"` // the first distinct failure messages
	K            int                      `json:"k,omitempty"`
	Seconds      float64                  `json:"seconds"`
	Examples     int                      `json:"examples"`
}

// SourceScores are one source's scores in a multi-source run.
type SourceScores struct {
	Programs  int
	Examples  int
	PerAction map[string]*Score
	Forward   *Score
	Inverse   *Score
	Horizon   *Score // every horizon example pooled (nil: none)
}

// SourcePrograms are the held-out programs of one source.
type SourcePrograms struct {
	Source   string
	Programs []NamedProgram
	Filter   dataset.TraceFilter // the source's trace rule, if it has one (NextStateOptions.TraceFilter)
}

// CollectSources draws opts.N examples per action from each source's
// programs (CollectExamples, the same seed per source) and tags them with
// their source, so that RunNextState reports each source besides the
// overall. Trajectory groups are renumbered to stay distinct.
func CollectSources(ctx context.Context, sets []SourcePrograms, opts NextStateOptions) ([]*Example, error) {
	var out []*Example
	group := 0
	for _, set := range sets {
		opts.TraceFilter = set.Filter
		exs, err := CollectExamples(ctx, set.Programs, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.Source, err)
		}
		top := 0
		for _, ex := range exs {
			ex.Source = set.Source
			top = max(top, ex.group)
			ex.group += group
		}
		group += top
		out = append(out, exs...)
	}
	return out, nil
}

// sourceScores returns the scores of source name, made on first use.
func (r *NextStateReport) sourceScores(name string) *SourceScores {
	if r.Sources == nil {
		r.Sources = map[string]*SourceScores{}
	}
	s := r.Sources[name]
	if s == nil {
		s = &SourceScores{PerAction: map[string]*Score{}, Forward: &Score{}, Inverse: &Score{}}
		r.Sources[name] = s
	}
	return s
}

// ErrCWMNextState says next-state exact match is not measured for the cwm
// engine: its backend only continues its own rollout from the entry, so it
// cannot be given the true history of a cut trajectory.
var ErrCWMNextState = errors.New("eval: next-state is not measured for the cwm engine: its backend only continues its own frame-by-frame rollout, it cannot be teacher-forced with a true history (use cruxeval --task output)")

// HorizonBinCount is the number of bins of the horizon curves.
const HorizonBinCount = 10

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
		if ex.Source != "" {
			rep.Sources[ex.Source].add(ex, m, anyExact, opts.K > 1 && opts.Predictor != nil)
		}
		if ex.Horizon {
			bins := rep.HorizonBins[ex.Action]
			if bins == nil {
				for range HorizonBinCount {
					bins = append(bins, &Score{})
				}
				rep.HorizonBins[ex.Action] = bins
			}
			bin := min(int(ex.Skipped*HorizonBinCount), HorizonBinCount-1)
			bins[bin].Add(m)
			if rep.HorizonSteps[ex.Action] == nil {
				rep.HorizonSteps[ex.Action] = map[int]*Score{}
			}
			s := rep.HorizonSteps[ex.Action][ex.Steps]
			if s == nil {
				s = &Score{}
				rep.HorizonSteps[ex.Action][ex.Steps] = s
			}
			s.Add(m)
			if opts.K > 1 && opts.Predictor != nil {
				bins[bin].AddK(anyExact)
				s.AddK(anyExact)
			}
		} else {
			s := rep.PerAction[ex.Action]
			if s == nil {
				s = &Score{}
				rep.PerAction[ex.Action] = s
			}
			s.Add(m)
			if opts.K > 1 && opts.Predictor != nil {
				s.AddK(anyExact)
			}
		}
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

// add counts one scored example of this source.
func (s *SourceScores) add(ex *Example, m Match, anyExact, withK bool) {
	var sc []*Score
	if ex.Horizon {
		if s.Horizon == nil {
			s.Horizon = &Score{}
		}
		sc = []*Score{s.Horizon}
	} else {
		a := s.PerAction[ex.Action]
		if a == nil {
			a = &Score{}
			s.PerAction[ex.Action] = a
		}
		dir := s.Forward
		if debugger.Action(ex.Action).Inverse() {
			dir = s.Inverse
		}
		sc = []*Score{a, dir}
	}
	for _, x := range sc {
		x.Add(m)
		if withK {
			x.AddK(anyExact)
		}
	}
}

// dumpExample writes one example as a JSON line for NextStateOptions.Dump.
func dumpExample(w io.Writer, ex *Example, pred, want format.Frame, m Match) error {
	prompt, err := format.PromptText(ex.Traj.Source, ex.Traj.Frames[:ex.Cut+1], ex.Traj.Steps[:ex.Cut+1])
	if err != nil {
		return err
	}
	predText := ""
	if pred.Kind.Valid() {
		predText = format.FrameText(pred)
	}
	line, err := json.Marshal(map[string]any{"action": ex.Action, "horizon": ex.Horizon, "exact": m.Exact,
		"fields": m.Fields, "prompt": prompt, "want": format.FrameText(want), "pred": predText})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

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
