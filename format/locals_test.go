package format

import (
	"slices"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

// TestLastLocals: the last frame's complete locals come from the last
// frame of its Python frame that shows all of them, merged on; none where
// the frames do not hold one.
func TestLastLocals(t *testing.T) {
	full := Frame{Kind: Line, Src: "a", Locals: vars("x", "1", "y", "2")}
	diff := Frame{Kind: Line, Src: "b", Locals: vars("y", "3"), Elided: true}
	ret := Frame{Kind: Return, Src: "c", Arg: "4"}
	for _, tc := range []struct {
		name   string
		frames []Frame
		want   tracer.Locals
		ok     bool
	}{
		{"merged", []Frame{full, diff}, vars("x", "1", "y", "3"), true},
		{"a full frame last", []Frame{diff, full}, vars("x", "1", "y", "2"), true},
		{"elided back to the start", []Frame{diff, diff}, nil, false},
		{"after a frame without locals", []Frame{ret, diff}, nil, false},
		{"a frame without locals last", []Frame{full, ret}, nil, false},
		{"none", nil, nil, false},
	} {
		got, ok := LastLocals(tc.frames)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TestBoundLocalsText: a step that binds one name shows it, with ".."
// for the rest, as the Builder writes the step's frame.
func TestBoundLocalsText(t *testing.T) {
	for _, tc := range []struct {
		prev        tracer.Locals
		name, value string
		want        string
	}{
		{vars("x", "1"), "y", "None", `{"y": "None", "..": ".."}`},
		{vars("x", "1"), "x", "2", `{"x": "2"}`},
		{vars("x", "1", "y", "None"), "y", "None", `{"..": ".."}`},
		{nil, "y", "[]", `{"y": "[]"}`},
	} {
		got, ok := BoundLocalsText(tc.prev, tc.name, tc.value, debugger.StepOver)
		if !ok || got != tc.want {
			t.Errorf("%v, %s = %s: %q (%v), want %q", tc.prev, tc.name, tc.value, got, ok, tc.want)
		}
	}
}
