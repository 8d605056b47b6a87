package format

import (
	"strings"
	"testing"
)

func seedTexts(f *testing.F) {
	for _, tr := range goldenCases() {
		text, _ := Serialize(tr)
		f.Add(text)
		for k := range tr.Steps {
			c, _ := Completion(tr, k)
			f.Add(c)
		}
	}
	f.Add(`<|line_sep|><|arg_sep|>{"a": "\ud83d`)
}

// FuzzParseTrajectory: never panics; what parses serializes back to the
// same trajectory.
func FuzzParseTrajectory(f *testing.F) {
	seedTexts(f)
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := ParseTrajectory(text)
		if err != nil {
			return
		}
		out, err := Serialize(tr)
		if err != nil {
			t.Fatalf("parsed trajectory does not serialize: %v", err)
		}
		again, err := ParseTrajectory(out)
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		assertSameTrajectory(t, tr, again)
	})
}

// FuzzParseFrame: never panics; ParseFrame agrees with CheckFrame; prefixes
// of a complete frame are never invalid.
func FuzzParseFrame(f *testing.F) {
	seedTexts(f)
	f.Fuzz(func(t *testing.T, text string) {
		st := CheckFrame(text, AnyDirection)
		fr, err := ParseFrame(text)
		if st == Complete && err != nil {
			t.Fatalf("complete frame %q does not parse: %v", text, err)
		}
		if st == Invalid && err == nil {
			t.Fatalf("invalid frame %q parsed as %#v", text, fr)
		}
		if st == Complete {
			for j := 0; j < len(text); j++ {
				if CheckFrame(text[:j], AnyDirection) == Invalid {
					t.Fatalf("prefix %q of complete %q is invalid", text[:j], text)
				}
			}
		}
		if err == nil && !fr.Kind.IsExit() {
			back, err2 := ParseFrame(FrameText(fr))
			if err2 != nil || back.Kind != fr.Kind || back.Src != fr.Src || back.Arg != fr.Arg {
				t.Fatalf("frame %q does not round-trip: %#v %v", text, back, err2)
			}
		}
	})
}

// FuzzParseStep: never panics.
func FuzzParseStep(f *testing.F) {
	f.Add("<|action_sep|><|breakpoint|>    return x")
	f.Add("<|action_sep|><|step_into|>")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseStep(text)
		if err == nil && StepText(s) != text {
			t.Fatalf("%q parsed to %#v, writes back %q", text, s, StepText(s))
		}
	})
}

// FuzzParseCWM: never panics; what parses serializes back to the same text
// when it ended cleanly.
func FuzzParseCWM(f *testing.F) {
	text, _ := SerializeCWM(fixtureSource, 7, CWMFrames(fixtureStates), true)
	f.Add(text)
	f.Add(strings.TrimSuffix(text, TokEndOfText))
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := ParseCWM(text)
		if err != nil {
			return
		}
		out, err := SerializeCWM(tr.Source, tr.EntryLine, tr.Frames, tr.Ended)
		if err != nil {
			return // e.g. the marker line was the last, empty line
		}
		again, err := ParseCWM(out)
		if err != nil {
			t.Fatalf("reparse of %q: %v", out, err)
		}
		if len(again.Frames) != len(tr.Frames) || again.Ended != tr.Ended || again.Source != tr.Source {
			t.Fatalf("CWM round trip differs")
		}
	})
}
