package synthtext

import (
	"math/rand/v2"
	"strings"
	"testing"

	"ndb/format"
)

// TestParses checks the fixture against the format's own parser.
func TestParses(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for id := 0; id < 40; id++ {
		text, _ := Trajectory(rng, id)
		if _, err := format.ParseTrajectory(text); err != nil {
			t.Fatalf("program %d: %v\n%s", id, err, text)
		}
		for _, p := range Prompts(text) {
			rest := text[len(p):]
			end := len(rest)
			if i := strings.Index(rest, format.TokFrameSep); i >= 0 {
				end = i
			}
			// The completion: the frame up to the next action's token.
			frame := rest[:end]
			if i := strings.Index(frame, format.TokActionSep); i >= 0 {
				frame = frame[:i+len(format.TokActionSep)]
			}
			if st := format.CheckFrame(frame, format.AnyDirection); st != format.Complete {
				t.Fatalf("program %d: frame %q is %v", id, frame, st)
			}
		}
	}
	if got := len(Prompts(Inverse(3, 2))); got != 6 {
		t.Fatalf("inverse trajectory has %d prompts, want 6", got)
	}
}
