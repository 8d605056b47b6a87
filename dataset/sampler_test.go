package dataset

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// TestPolicyFrequencies: policy A is Table A.1 normalised, policy B is
// half step_into, half step_over; inverse drops breakpoint and continue.
func TestPolicyFrequencies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	check := func(p Policy, inverse bool, want map[debugger.Action]float64) {
		t.Helper()
		got := map[debugger.Action]int{}
		for i := 0; i < n; i++ {
			got[p.draw(r, inverse)]++
		}
		for a, w := range want {
			if f := float64(got[a]) / n; math.Abs(f-w) > 0.005 {
				t.Errorf("policy %s inverse=%v: %s at %.4f, want %.4f", p.Name, inverse, a, f, w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("policy %s inverse=%v drew %v, want only %v", p.Name, inverse, got, want)
		}
	}
	check(PolicyA, false, map[debugger.Action]float64{debugger.StepInto: 0.35 / 0.8, debugger.StepOver: 0.1 / 0.8,
		debugger.StepReturn: 0.2 / 0.8, debugger.Breakpoint: 0.1 / 0.8, debugger.Continue: 0.05 / 0.8})
	check(PolicyB, false, map[debugger.Action]float64{debugger.StepInto: 0.5, debugger.StepOver: 0.5})
	check(PolicyA, true, map[debugger.Action]float64{debugger.InvStepInto: 0.35 / 0.65, debugger.InvStepOver: 0.1 / 0.65,
		debugger.InvStepCall: 0.2 / 0.65})
	check(PolicyB, true, map[debugger.Action]float64{debugger.InvStepInto: 0.5, debugger.InvStepOver: 0.5})
}

// TestSamplerOnRealTraces: trajectories of programs that raise, loop
// forever, or call helpers end in the right exits; deep ones stay in their
// call's scope; the text replays: every frame is the state the debugger's
// action reaches.
func TestSamplerOnRealTraces(t *testing.T) {
	tr := newRealTracer(t)
	cases := []struct {
		name, src, call string
		exit            string
	}{
		{"helper", "def g(x):\n    return x * 2\n\ndef f(n):\n    out = []\n    for i in range(n):\n        out.append(g(i))\n    return out\n", "f(3)", format.Kind("exit_normal").Token()},
		{"raises", "def g(x):\n    raise ValueError(x)\n\ndef f(x):\n    y = x + 1\n    return g(y)\n", "f(1)", format.ExitError.Token()},
		{"caught", "def g(x):\n    raise ValueError(x)\n\ndef f(x):\n    try:\n        g(x)\n    except ValueError:\n        return 1\n", "f(1)", format.ExitNormal.Token()},
		{"forever", "def f(x):\n    while True:\n        x += 1\n", "f(0)", format.ExitNever.Token()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trace, err := tr.TraceLimits(context.Background(), tracer.Program{Source: c.src, Call: c.call}, tracer.Limits{MaxEvents: 300})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			cfg := DefaultSamplerConfig
			cfg.DeepEntryProb = 0.5
			for i := 0; i < 100; i++ {
				s, err := SampleTrajectory(r, trace, cfg)
				if err != nil {
					t.Fatal(err)
				}
				last := s.Trajectory.Frames[len(s.Trajectory.Frames)-1].Kind
				if !s.Trajectory.Inverse() && !s.Deep && last.Token() != c.exit {
					t.Fatalf("forward trajectory ends in %s, want %s:\n%s", last, c.exit, s.Text)
				}
				if s.Trajectory.Inverse() && last != format.InvExitEntry {
					t.Fatalf("inverse trajectory ends in %s", last)
				}
				if c.name == "raises" && s.Deep && s.Entry == "g" && !s.Trajectory.Inverse() && last != format.ExitError {
					t.Fatalf("a deep trajectory in g (which raises) ends in %s:\n%s", last, s.Text)
				}
				if _, err := format.ParseTrajectory(s.Text); err != nil {
					t.Fatal(err)
				}
				replay(t, trace, s)
			}
		})
	}
}

// replay re-applies the recorded actions with the debugger from the
// trajectory's start and checks each frame's kind and line.
func replay(t *testing.T, full *tracer.Trace, s *Sample) {
	t.Helper()
	sub := full
	if s.Deep {
		return // the scope is chosen at random; Scope has its own test
	}
	tree := debugger.NewTree(sub)
	pos := debugger.Initial(sub)
	if s.Trajectory.Inverse() {
		pos = debugger.InverseInitial(sub)
	}
	for k, st := range s.Trajectory.Steps {
		pos = tree.Apply(pos, debugger.Command{Action: st.Action, Src: st.Src})
		f := s.Trajectory.Frames[k+1]
		if f.Kind.IsExit() {
			if pos.Index >= 0 && pos.Index < len(sub.States) {
				t.Fatalf("step %d: frame is %s but the debugger is at %v", k, f.Kind, pos)
			}
			continue
		}
		state, _ := tree.State(pos)
		if f.Src != state.Src || (f.Kind == format.InvLineCall) != pos.LineCall {
			t.Fatalf("step %d: frame %+v, debugger at %v %+v", k, f, pos, state)
		}
	}
}

func TestScope(t *testing.T) {
	tr := newRealTracer(t)
	src := "def g(x):\n    if x > 1:\n        raise ValueError(x)\n    return x\n\ndef f(x):\n    a = g(0)\n    try:\n        g(x)\n    except ValueError:\n        pass\n    return a\n"
	trace, err := tr.Trace(context.Background(), tracer.Program{Source: src, Call: "f(5)"})
	if err != nil {
		t.Fatal(err)
	}
	var gCalls []int
	for i, s := range trace.States {
		if s.Event == tracer.EventCall && s.Function == "g" {
			gCalls = append(gCalls, i)
		}
	}
	if len(gCalls) != 2 {
		t.Fatalf("want 2 calls of g, got %d", len(gCalls))
	}
	ok := Scope(trace, gCalls[0])
	bad := Scope(trace, gCalls[1])
	if ok.Exit.Kind != tracer.ExitNormal || ok.States[0].Depth != 0 || ok.States[len(ok.States)-1].Event != tracer.EventReturn {
		t.Fatalf("g(0) scope: %+v", ok)
	}
	if bad.Exit.Kind != tracer.ExitError || bad.Exit.Error != "ValueError(5)" {
		t.Fatalf("g(5) scope exit %+v, states %+v", bad.Exit, bad.States)
	}
	for _, s := range append(ok.States, bad.States...) {
		if s.Function != "g" {
			t.Fatalf("scope of g holds %s", s.Function)
		}
	}
}

// TestUnwrap: with UnwrapProb 1 every deep trajectory shows the program as
// given (no main wrapper, no call site) and none shows a line the header
// lacks; shallow ones keep the wrapper; with UnwrapProb 0 none is unwrapped.
func TestUnwrap(t *testing.T) {
	tr := newRealTracer(t)
	src := "def g(x):\n    return x * 2\n\ndef f(n):\n    return g(n) + 1\n"
	trace, err := tr.Trace(context.Background(), tracer.Program{Source: src, Call: "f(3)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, prob := range []float64{0, 1} {
		r := rand.New(rand.NewPCG(5, 6))
		cfg := DefaultSamplerConfig
		cfg.DeepEntryProb, cfg.UnwrapProb = 0.5, prob
		deep, unwrapped := 0, 0
		for range 100 {
			s, err := SampleTrajectory(r, trace, cfg)
			if err != nil {
				t.Fatal(err)
			}
			header := s.Trajectory.Source
			if s.Unwrapped {
				unwrapped++
				if header != strings.TrimSuffix(src, "\n") {
					t.Fatalf("unwrapped header %q, want the source as given", header)
				}
			} else if !strings.Contains(header, "def main():\n    return f(3)") {
				t.Fatalf("header %q lost the wrapper", header)
			}
			if s.Deep {
				deep++
			}
			lines := strings.Split(header, "\n")
			for _, f := range s.Trajectory.Frames {
				if !f.Kind.IsExit() && !slices.Contains(lines, f.Src) {
					t.Fatalf("frame source %q is not a line of the header %q", f.Src, header)
				}
			}
		}
		if want := map[float64]int{0: 0, 1: deep}[prob]; unwrapped != want || deep == 0 {
			t.Fatalf("UnwrapProb %v: %d unwrapped of %d deep", prob, unwrapped, deep)
		}
	}
}

// TestBreakpointHit: with BreakpointHitProb 1 a sampled breakpoint runs to
// the exit only from a return with no line left to reach; with 0, as
// before, breakpoints run to the exit from any state.
func TestBreakpointHit(t *testing.T) {
	tr := newRealTracer(t)
	src := "def g(x):\n    y = x * 2\n    return y\n\ndef f(n):\n    s = 0\n    for i in range(n):\n        s += g(i)\n    if s > 100:\n        s = 0\n    return s\n"
	trace, err := tr.Trace(context.Background(), tracer.Program{Source: src, Call: "f(4)"})
	if err != nil {
		t.Fatal(err)
	}
	for _, prob := range []float64{0, 1} {
		r := rand.New(rand.NewPCG(7, 8))
		cfg := DefaultSamplerConfig
		cfg.InverseProb, cfg.BreakpointHitProb = 0, prob
		// early: exits from a state before a return statement, where a
		// line is still ahead in this program
		bps, exits, early := 0, 0, 0
		for range 300 {
			s, err := SampleTrajectory(r, trace, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range s.Trajectory.Steps {
				if st.Action != debugger.Breakpoint {
					continue
				}
				bps++
				f := s.Trajectory.Frames[i+1]
				if f.Kind.IsExit() {
					exits++
					if prev := s.Trajectory.Frames[i]; prev.Kind != format.Return && !strings.HasPrefix(strings.TrimSpace(prev.Src), "return") {
						early++
					}
				} else if f.Src != st.Src {
					t.Fatalf("breakpoint at %q stopped at %q", st.Src, f.Src)
				}
			}
		}
		t.Logf("BreakpointHitProb %v: %d of %d breakpoints reach the exit, %d of them from before a return", prob, exits, bps, early)
		if bps < 50 || prob == 1 && early != 0 || prob == 0 && early < bps/5 {
			t.Fatalf("BreakpointHitProb %v: %d of %d breakpoints reach the exit, %d of them from before a return", prob, exits, bps, early)
		}
	}
}
