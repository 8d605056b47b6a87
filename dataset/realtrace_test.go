package dataset

import (
	"context"
	"math/rand/v2"
	"testing"

	"ndb/format"
	"ndb/tracer"
)

// TestRealTraceSample traces a fixture program with the real tracer and
// checks that sampled trajectories parse back and end in the right exit.
func TestRealTraceSample(t *testing.T) {
	tr := newRealTracer(t)
	prog := tracer.Program{Source: "def g(x):\n    return x * 2\n\ndef f(n):\n    out = []\n    for i in range(n):\n        out.append(g(i))\n    return out\n", Call: "f(3)"}
	trace, err := tr.Trace(context.Background(), prog)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 200; i++ {
		s, err := SampleTrajectory(r, trace, DefaultSamplerConfig)
		if err != nil {
			t.Fatal(err)
		}
		back, err := format.ParseTrajectory(s.Text)
		if err != nil {
			t.Fatalf("%v\n%s", err, s.Text)
		}
		if i < 2 {
			t.Logf("%s", s.Text)
		}
		last := back.Frames[len(back.Frames)-1].Kind
		if s.Trajectory.Inverse() != (last == format.InvExitEntry) {
			t.Fatalf("exit %s in a %s trajectory", last, s.Direction())
		}
	}
}
