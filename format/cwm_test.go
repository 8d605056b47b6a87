package format

import (
	"reflect"
	"strings"
	"testing"
)

func TestCWMGolden(t *testing.T) {
	frames := CWMFrames(fixtureStates[2:11]) // the call of f to its return
	text, err := SerializeCWM(fixtureSource, 1, frames, true)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cwm.golden", strings.ReplaceAll(text, TokFrameSep, TokFrameSep+"\n")+"\n")
	back, err := ParseCWM(text)
	if err != nil {
		t.Fatal(err)
	}
	if back.Source != fixtureSource || back.EntryLine != 1 || !back.Ended || !reflect.DeepEqual(back.Frames, frames) {
		t.Fatalf("CWM round trip differs: %#v", back)
	}
	// Merging ".." values recovers every state's locals.
	var prev = fixtureStates[2].Locals
	for i, f := range back.Frames {
		s := fixtureStates[2+i]
		if f.Event != "call" && f.Event != "line" {
			continue
		}
		got := MergeCWMLocals(prev, f)
		if !reflect.DeepEqual(got, s.Locals) {
			t.Fatalf("frame %d: merged %v want %v", i, got, s.Locals)
		}
		prev = got
	}
	if !strings.Contains(text, "def f(n): "+CWMMarker+"\n") {
		t.Fatal("entry line is not marked")
	}
}

func TestCWMBad(t *testing.T) {
	for _, s := range []string{"", TokBeginOfText + TokTraceContextStart + "x" + TokFrameSep,
		TokBeginOfText + TokTraceContextStart + "x # << START_OF_TRACE" + TokFrameSep + "<|line_sep|>{}<|action_sep|>x"} {
		if _, err := ParseCWM(s); err == nil {
			t.Errorf("ParseCWM accepted %q", s)
		}
	}
	if _, err := CWMPrompt("a\n", 5); err == nil {
		t.Error("entry line outside the source accepted")
	}
}
