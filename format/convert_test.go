package format

import (
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

// TestParsePredicted: a predicted frame is read with or without its
// terminator and a leading <|frame_sep|>; a frame of the other direction
// and text that is no frame are errors.
func TestParsePredicted(t *testing.T) {
	line := `<|line_sep|><|arg_sep|>{"n": "2"}<|src_sep|>    result = []`
	for _, c := range []struct {
		name, text string
		inverse    bool
		want       Kind // "" = an error
		errHas     string
	}{
		{"whole", line + TokActionSep, false, Line, ""},
		{"cut before action_sep", line, false, Line, ""},
		{"after frame_sep", TokFrameSep + line + TokActionSep, false, Line, ""},
		{"exit, whole", TokExitNormal + TokTraceEnd + TokEndOfText, false, ExitNormal, ""},
		{"exit, cut", TokExitError, false, ExitError, ""},
		{"exit, cut before end_of_text", TokExitNever + TokTraceEnd, false, ExitNever, ""},
		{"inverse exit", TokInvExitEntry, true, InvExitEntry, ""},
		{"return value, cut", strings.TrimSuffix(FrameText(Frame{Kind: Return, Src: "    return result", Arg: "[1, 2]"}), TokActionSep), false, Return, ""},
		{"forward frame for a backward step", line, true, "", "does not fit a backward step"},
		{"backward frame for a forward step", TokInvExitEntry, false, "", "does not fit a forward step"},
		{"no frame", "hello", false, "", "format:"},
		{"empty", "", false, "", "format:"},
		{"text after the frame", line + TokActionSep + "x", false, "", "format:"},
	} {
		f, err := ParsePredicted(c.text, c.inverse)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: %q parsed as %#v, want an error", c.name, c.text, f)
		case c.want == "" && !strings.Contains(err.Error(), c.errHas):
			t.Errorf("%s: error %q lacks %q", c.name, err, c.errHas)
		case c.want == "" && f.Kind != "":
			t.Errorf("%s: an error with a frame %#v", c.name, f)
		case c.want != "" && (err != nil || f.Kind != c.want):
			t.Errorf("%s: %q gives %q, %v; want %q", c.name, c.text, f.Kind, err, c.want)
		}
	}
}

// FuzzParsePredicted: never panics; a frame it reads fits the direction
// asked for and is read again from the text FrameText writes of it.
func FuzzParsePredicted(f *testing.F) {
	seedTexts(f)
	f.Add(TokInvExitEntry)
	f.Fuzz(func(t *testing.T, text string) {
		for _, inverse := range []bool{false, true} {
			fr, err := ParsePredicted(text, inverse)
			if err != nil {
				continue
			}
			if fr.Kind.Inverse() != inverse {
				t.Fatalf("%q read as %s for inverse=%v", text, fr.Kind, inverse)
			}
			back, err := ParsePredicted(FrameText(fr), inverse)
			if err != nil || back.Kind != fr.Kind || back.Src != fr.Src || back.Arg != fr.Arg || len(back.Locals) != len(fr.Locals) {
				t.Fatalf("%q: %#v does not read back: %#v %v", text, fr, back, err)
			}
		}
	})
}

// TestExitOf: every exit kind comes back from its ExitName, a trace that
// recorded no exit ended normally (as debugger.Tree reads it), and an
// unknown exit is an error.
func TestExitOf(t *testing.T) {
	for _, k := range []Kind{ExitNormal, ExitError, ExitNever, InvExitEntry} {
		if got, err := ExitOf(k.ExitName()); err != nil || got != k {
			t.Errorf("ExitOf(%q) = %q, %v; want %q", k.ExitName(), got, err, k)
		}
	}
	if got, err := ExitOf(debugger.ExitInvEntry); err != nil || got != InvExitEntry {
		t.Errorf("ExitOf(debugger.ExitInvEntry) = %q, %v", got, err)
	}
	for name, want := range map[string]Kind{"": ExitNormal, tracer.ExitError: ExitError} {
		if got, err := ExitKind(tracer.Exit{Kind: name}); err != nil || got != want {
			t.Errorf("ExitKind(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, bad := range []string{"killed", "exit_normal", "Normal"} {
		if got, err := ExitOf(bad); err == nil {
			t.Errorf("ExitOf(%q) = %q, want an error", bad, got)
		}
	}
}

// TestBuilderAtAndStop: the frame at every position of the fixture's
// forward and inverse trees (Builder.At, as data sets write them) is the
// frame of the stop there (Builder.Stop, as measurements write a backend's
// answer), and both are the frames the hand-made golden trajectories hold
// for the positions they visit.
func TestBuilderAtAndStop(t *testing.T) {
	for _, exit := range []tracer.Exit{{Kind: tracer.ExitNormal}, {Kind: tracer.ExitError, Error: "ValueError: x"}, {}} {
		tree := debugger.NewTree(&tracer.Trace{Source: fixtureSource, States: fixtureStates, Exit: exit})
		for _, inverse := range []bool{false, true} {
			var positions []debugger.Pos
			for i := -1; i <= len(fixtureStates); i++ {
				positions = append(positions, debugger.Pos{Index: i})
				if inverse && i >= 0 && i < len(fixtureStates) && fixtureStates[i].Event == tracer.EventLine {
					positions = append(positions, debugger.Pos{Index: i, LineCall: true})
				}
			}
			for _, p := range positions {
				if !inverse && p.Index < 0 {
					continue
				}
				at, err := NewBuilder(inverse).At(tree, p, "")
				if err != nil {
					t.Fatalf("At(%v, inverse %v): %v", p, inverse, err)
				}
				st, err := NewBuilder(inverse).Stop(debugger.StopAt(tree, p), "")
				if err != nil {
					t.Fatalf("Stop(%v, inverse %v): %v", p, inverse, err)
				}
				if FrameText(at) != FrameText(st) {
					t.Errorf("%v inverse %v: At %q, Stop %q", p, inverse, FrameText(at), FrameText(st))
				}
				want := ExitNormal
				if exit.Kind == tracer.ExitError {
					want = ExitError
				}
				if p.Index == len(fixtureStates) && at.Kind != want {
					t.Errorf("exit %q gives %s, want %s", exit.Kind, at.Kind, want)
				}
			}
		}
	}
	// The golden forward trajectory, rebuilt from tree positions.
	tree := debugger.NewTree(&tracer.Trace{Source: fixtureSource, States: fixtureStates, Exit: tracer.Exit{Kind: tracer.ExitNormal}})
	golden := build(fixtureSource, fixtureStates, false, []visit{{state: 0}, {state: 1, via: debugger.StepInto}, {state: 2, via: debugger.StepInto}, {state: 10, via: debugger.StepReturn}}, debugger.StepReturn, ExitNormal)
	b := NewBuilder(false)
	for i, p := range []debugger.Pos{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 10}, debugger.ExitPos(tree.T)} {
		via := debugger.Action("")
		if i > 0 {
			via = golden.Steps[i-1].Action
		}
		f, err := b.At(tree, p, via)
		if err != nil || FrameText(f) != FrameText(golden.Frames[i]) {
			t.Errorf("frame %d at %v: %q %v, want %q", i, p, FrameText(f), err, FrameText(golden.Frames[i]))
		}
	}
	// A trace whose exit the format cannot write is an error, not a frame.
	bad := debugger.NewTree(&tracer.Trace{Source: fixtureSource, States: fixtureStates, Exit: tracer.Exit{Kind: "killed"}})
	if f, err := NewBuilder(false).At(bad, debugger.ExitPos(bad.T), ""); err == nil {
		t.Errorf("exit killed gives %#v", f)
	}
}
