package eval

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"ndb/dataset"
	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// Sampling next-state cases: trajectories drawn from the programs' traces
// with the training policy and cut after an action, and horizon examples
// (step actions, then one jump).

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
