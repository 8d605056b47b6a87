package debugger

import (
	"context"
	"reflect"
	"testing"
)

// recordingWrapper is a backend of its own type that offers the trace
// backend's capabilities by embedding it (as an engine's backend that
// records a run would): the session must find them by interface.
type recordingWrapper struct{ *TraceBackend }

// TestCapabilitiesAreDeclared: a session asks its backend for what it can
// do through interfaces, so a backend of another type that implements
// them (recordingWrapper) gets the same frames, post-mortem, exit note and
// last line run as the trace backend itself. (Before, the session asserted
// the concrete *TraceBackend and answered such a backend as if it had
// recorded nothing.)
func TestCapabilitiesAreDeclared(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	src := "import sys\n\ndef f(n):\n    if n > 1:\n        raise KeyError(n)\n    return n\n\ndef g():\n    f(1)\n    f(2)\n\ng()\n"
	exitSrc := "x = 1\nimport sys\nsys.exit(3)\n"
	type answers struct {
		Frames       [][]Stop
		PostMortem   PostMortem
		PMOK         bool
		LastRun      Stop
		LastOK       bool
		Note         string
		NoteOK       bool
		LiveConds    bool
		Live         bool
		RunArgs      []string
		Output, OutK any
	}
	run := func(b Backend) answers {
		t.Helper()
		s, err := NewSession(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		var a answers
		a.LiveConds, a.Live, a.RunArgs = s.LiveConditions(), s.Live(), s.RunArgs()
		for range 8 {
			a.Frames = append(a.Frames, s.Frames())
			if st, err := s.Do(ctx, Command{Action: StepInto}); err != nil || st.IsExit() {
				break
			}
		}
		if !s.Current().IsExit() {
			if _, err := s.Do(ctx, Command{Action: Continue}); err != nil {
				t.Fatal(err)
			}
		}
		a.PostMortem, a.PMOK = s.PostMortem()
		a.LastRun, a.LastOK = s.LastRun()
		a.Note, a.NoteOK = s.ExitNote()
		a.Output, a.OutK = s.Output()
		return a
	}
	for _, prog := range []string{src, exitSrc} {
		tr := traceFixture(t, python, prog, "")
		want, got := run(NewTraceBackend(tr)), run(recordingWrapper{NewTraceBackend(tr)})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("a wrapped trace backend answers\n%+v\nthe trace backend\n%+v", got, want)
		}
		if prog == src && (!want.PMOK || len(want.PostMortem.Frames) != 3 || len(want.Frames) != 8 || len(want.Frames[7]) < 2) {
			t.Errorf("the fixture has no post-mortem or no caller frames: %+v", want)
		}
		if prog == exitSrc && (!want.NoteOK || want.Note != "The program exited via sys.exit(). Exit status: 3") {
			t.Errorf("exit note %q %v", want.Note, want.NoteOK)
		}
	}
}
