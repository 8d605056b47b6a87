// Package dataset turns programs into training trajectories (SPEC section 4):
// program sources (MBPP+, MBPP, HumanEval, synthetic, folders of scripts),
// the action-policy sampler, and the sharded, resumable `ndb gen` job.
package dataset

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// Policy is a categorical distribution over forward actions.
type Policy struct {
	Name    string
	Weights map[debugger.Action]float64
}

// The two policies of SPEC section 4 (the paper's Table A.1). Policy A's
// weights sum to 0.8 as printed; sampling normalises them.
var (
	PolicyA = Policy{Name: "A", Weights: map[debugger.Action]float64{
		debugger.StepInto: 0.35, debugger.StepOver: 0.10, debugger.StepReturn: 0.20,
		debugger.Breakpoint: 0.10, debugger.Continue: 0.05}}
	PolicyB = Policy{Name: "B", Weights: map[debugger.Action]float64{
		debugger.StepInto: 0.5, debugger.StepOver: 0.5}}
)

// inverseOf maps a forward action to the inverse action sampled in its
// place: the step actions mirror each other and step_return ("to the end of
// this call") mirrors inv_step_call ("to its start"). breakpoint and
// continue have no inverse: their weight is dropped and the rest
// renormalised.
var inverseOf = map[debugger.Action]debugger.Action{
	debugger.StepInto: debugger.InvStepInto, debugger.StepOver: debugger.InvStepOver,
	debugger.StepReturn: debugger.InvStepCall,
}

// draw picks an action of p (mapped to its inverse when inverse is set).
func (p Policy) draw(r *rand.Rand, inverse bool) debugger.Action {
	order := debugger.ForwardActions // fixed order: map iteration would break determinism
	total := 0.0
	for _, a := range order {
		if inverse && inverseOf[a] == "" {
			continue
		}
		total += p.Weights[a]
	}
	x := r.Float64() * total
	var last debugger.Action
	for _, a := range order {
		if inverse && inverseOf[a] == "" {
			continue
		}
		w := p.Weights[a]
		if w <= 0 {
			continue
		}
		last = a
		if x < w {
			break
		}
		x -= w
	}
	if inverse {
		return inverseOf[last]
	}
	return last
}

// SamplerConfig bounds the trajectories.
type SamplerConfig struct {
	// MaxSteps is the number of sampled actions after which the trajectory
	// is finished the short way: continue forwards, repeated inv_step_call
	// backwards (which climbs one call per step to inv_exit_entry).
	MaxSteps int
	// MaxChars finishes the trajectory the same way once its text reaches
	// this many characters (source included).
	MaxChars int
	// DeepEntryProb is the probability of starting at a call sampled from
	// the trace's calls below the entry instead of at the entry.
	DeepEntryProb float64
	// InverseProb is the probability that a trajectory is inverse.
	InverseProb float64
	// UnwrapProb is the probability that a deep trajectory of a program
	// traced with a call (tracer.WrapCall) shows the program without the
	// wrapper: no main, so no call site with the arguments, as CruxEval's
	// input prediction and a session on a bare function show it. Zero
	// draws nothing, so older data sets regenerate unchanged.
	UnwrapProb float64
	// BreakpointHitProb is the probability that a breakpoint is set on a
	// line the run still reaches (as a user sets one) instead of on any
	// breakpoint-able line, of which most are never reached again (about
	// two in three breakpoints then land on the exit). Zero draws nothing,
	// so older data sets regenerate unchanged.
	BreakpointHitProb float64
}

// DefaultSamplerConfig is what `ndb gen` uses unless told otherwise.
var DefaultSamplerConfig = SamplerConfig{MaxSteps: 64, MaxChars: 12000, DeepEntryProb: 0.2, InverseProb: 0.5}

// Sample is one sampled trajectory and how it was drawn.
type Sample struct {
	Trajectory *format.Trajectory
	Text       string
	Policy     string // A or B
	Entry      string // function whose call the trajectory starts at
	Deep       bool   // started at a call below the entry
	Unwrapped  bool   // shown without the main wrapper (SamplerConfig.UnwrapProb)
	Forced     int    // actions taken to finish after a budget ran out
}

// Direction is "inverse" or "forward".
func (s *Sample) Direction() string {
	if s.Trajectory.Inverse() {
		return "inverse"
	}
	return "forward"
}

// Actions lists the action names in order.
func (s *Sample) Actions() []string {
	out := make([]string, len(s.Trajectory.Steps))
	for i, st := range s.Trajectory.Steps {
		out[i] = string(st.Action)
	}
	return out
}

// SampleTrajectory draws one trajectory from trace t: a policy (A or B,
// 50/50), a direction, an entry, then actions until an exit. Breakpoint lines
// are drawn from the program's breakpoint-able lines (pdb's rule), so some
// are never reached: the breakpoint then lands on the exit, like continue.
func SampleTrajectory(r *rand.Rand, t *tracer.Trace, cfg SamplerConfig) (*Sample, error) {
	if len(t.States) == 0 {
		return nil, fmt.Errorf("dataset: empty trace")
	}
	policy := PolicyA
	if r.IntN(2) == 1 {
		policy = PolicyB
	}
	inverse := r.Float64() < cfg.InverseProb
	sub, deep := t, false
	if r.Float64() < cfg.DeepEntryProb {
		if calls := deepCalls(t); len(calls) > 0 {
			sub, deep = Scope(t, calls[r.IntN(len(calls))]), true
		}
	}
	s := &Sample{Policy: policy.Name, Deep: deep, Entry: sub.States[0].Function}
	if deep && cfg.UnwrapProb > 0 && r.Float64() < cfg.UnwrapProb {
		if src, ok := unwrapped(sub); ok {
			sub.Source, s.Unwrapped = src, true
		}
	}
	tree := debugger.NewTree(sub)
	bpLines := debugger.SourceLines(sub.Source)
	bpCandidates := debugger.BreakpointLines(sub.Source)

	b := format.NewBuilder(inverse)
	tr := &format.Trajectory{Source: sub.Source}
	chars := len(sub.Source)
	pos := debugger.Initial(sub)
	if inverse {
		pos = debugger.InverseInitial(sub)
	}
	add := func(p debugger.Pos, via debugger.Action) error {
		f, err := b.At(tree, p, via)
		if err != nil {
			return err
		}
		tr.Frames = append(tr.Frames, f)
		chars += len(format.FrameText(f)) + 16
		return nil
	}
	if err := add(pos, ""); err != nil {
		return nil, err
	}
	for steps := 0; !tr.Frames[len(tr.Frames)-1].Kind.IsExit(); steps++ {
		if steps > 10*cfg.MaxSteps+len(sub.States)+16 {
			return nil, fmt.Errorf("dataset: trajectory did not end (debugger loop at %v)", pos)
		}
		var cmd debugger.Command
		if steps >= cfg.MaxSteps || chars >= cfg.MaxChars {
			s.Forced++
			cmd.Action = debugger.Continue
			if inverse {
				cmd.Action = debugger.InvStepCall
			}
		} else {
			cmd.Action = policy.draw(r, inverse)
			if cmd.Action == debugger.Breakpoint {
				if len(bpCandidates) == 0 {
					cmd.Action = debugger.Continue
				} else {
					n := bpCandidates[r.IntN(len(bpCandidates))]
					if cfg.BreakpointHitProb > 0 && r.Float64() < cfg.BreakpointHitProb {
						if ahead := linesAhead(sub, pos.Index, bpCandidates); len(ahead) > 0 {
							n = ahead[r.IntN(len(ahead))]
						}
					}
					cmd.Src, cmd.Line = bpLines[n-1], 0
				}
			}
		}
		next := tree.Apply(pos, cmd)
		if next == pos && inverse && cmd.Action != debugger.InvStepOver {
			// A level without a call state (a trace cut short) can hold
			// inv_step_call in place: step back one state instead.
			cmd = debugger.Command{Action: debugger.InvStepOver}
			next = tree.Apply(pos, cmd)
		}
		if next == pos {
			return nil, fmt.Errorf("dataset: %s did not move from %v", cmd.Action, pos)
		}
		tr.Steps = append(tr.Steps, format.Step{Action: cmd.Action, Src: cmd.Src})
		chars += len(cmd.Src) + 32
		if err := add(next, cmd.Action); err != nil {
			return nil, err
		}
		pos = next
	}
	text, err := format.Serialize(tr)
	if err != nil {
		return nil, err
	}
	s.Trajectory, s.Text = tr, text
	return s, nil
}

// linesAhead are the lines of candidates that a line event after state
// index from reaches, each once, in order of first reach.
func linesAhead(t *tracer.Trace, from int, candidates []int) []int {
	ok := make(map[int]bool, len(candidates))
	for _, n := range candidates {
		ok[n] = true
	}
	var out []int
	for _, st := range t.States[max(from+1, 0):] {
		if st.Event == tracer.EventLine && ok[st.Lineno] {
			out = append(out, st.Lineno)
			ok[st.Lineno] = false
		}
	}
	return out
}

// unwrapped is the source of a deep scope without tracer.WrapCall's main
// wrapper, if the source has one and no state of the scope is in main (the
// wrapper's lines must not be shown by any frame). The text is the program
// as given, without the newline WrapCall ensures.
func unwrapped(sub *tracer.Trace) (string, bool) {
	// WrapCall ends the source with a newline before the wrapper.
	wrapper := "\n" + tracer.WrapperHead
	i := strings.LastIndex(sub.Source, wrapper)
	if i < 0 || strings.Count(sub.Source[i+len(wrapper):], "\n") != 1 {
		return "", false
	}
	for _, st := range sub.States {
		if st.Function == "main" {
			return "", false
		}
	}
	return sub.Source[:i], true
}

// deepCalls lists the call states below the entry: the starts a deep
// trajectory may take.
func deepCalls(t *tracer.Trace) []int {
	var out []int
	for i, s := range t.States {
		if i > 0 && s.Event == tracer.EventCall && s.Depth > t.States[0].Depth {
			out = append(out, i)
		}
	}
	return out
}

// Scope returns the trace of the call whose call state is States[c]: its
// states (and those of everything it calls) with depths counted from it,
// ending in the exit the call had: normal if it returned, error if an
// exception left it, and the trace's own exit if the trace ended inside it.
func Scope(t *tracer.Trace, c int) *tracer.Trace {
	d, frame := t.States[c].Depth, t.States[c].Frame
	end := c + 1
	for end < len(t.States) {
		s := t.States[end]
		if s.Depth < d || (s.Depth == d && (s.Frame != frame || s.Event == tracer.EventCall)) {
			break
		}
		end++
	}
	states := make([]tracer.State, end-c)
	for i := range states {
		states[i] = t.States[c+i]
		states[i].Depth -= d
	}
	sub := &tracer.Trace{Source: t.Source, States: states, Exit: tracer.Exit{Kind: tracer.ExitNormal}}
	last := states[len(states)-1]
	switch {
	case end == len(t.States) && t.Exit.Kind != tracer.ExitNormal:
		sub.Exit = t.Exit
	case last.Event == tracer.EventException:
		sub.Exit = tracer.Exit{Kind: tracer.ExitError, Error: last.Arg}
	case last.Event == tracer.EventReturn && len(states) > 1 && states[len(states)-2].Event == tracer.EventException &&
		states[len(states)-2].Frame == last.Frame:
		// settrace reports an exception leaving a frame as exception then return.
		sub.Exit = tracer.Exit{Kind: tracer.ExitError, Error: states[len(states)-2].Arg}
	case last.Event != tracer.EventReturn:
		sub.Exit = tracer.Exit{Kind: tracer.ExitNever, Reason: "scope cut"}
	}
	return sub
}
