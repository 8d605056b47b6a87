package engine

import (
	"fmt"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

// TestStackCallersAtTheirCallingLine: a stop reached by a jump gets its
// callers at the line that calls the next frame's function. A name
// followed by "(" in a string or a comment, or a method of that name, is
// no call (a line scan took line 15's comment, line 16's string and line
// 17's method for calls of main).
func TestStackCallersAtTheirCallingLine(t *testing.T) {
	src := strings.Join([]string{
		"def total(xs):", // 1
		"    acc = 0",
		"    for x in xs:",
		"        acc += x", // 4
		"    return acc",
		"",
		"",
		"def main():", // 8
		"    xs = [1, 2]  # then total(xs)",
		"    label = 'total(xs)'",
		"    t = (1 +",
		"         total(xs))", // 12
		"    return t",
		"",
		"x = 1  # main() below",  // 15
		"print('main() starts')", // 16
		"log.main()",             // 17
		"main()",                 // 18
	}, "\n")
	ix := newSourceIndex(src, nil)
	start := debugger.Step{Stop: debugger.Stop{State: tracer.State{Event: tracer.EventLine, Lineno: 1, Function: "<module>"}}}
	stop := debugger.Step{Stop: debugger.Stop{State: tracer.State{Event: tracer.EventLine, Lineno: 4, Function: "total", Depth: 2}}}
	var got []string
	for _, s := range ix.stackAt([]debugger.Step{start, stop}) {
		got = append(got, fmt.Sprintf("%s:%d", s.Function, s.Lineno))
	}
	if want := "<module>:18 main:12 total:4"; strings.Join(got, " ") != want {
		t.Errorf("stack %v, want %s", got, want)
	}
	for _, tc := range []struct {
		line   int
		callee string
		want   bool
	}{
		{9, "total", false}, {10, "total", false}, {11, "total", true}, {12, "total", true},
		{15, "main", false}, {16, "main", false}, {17, "main", false}, {18, "main", true}, {8, "main", false},
	} {
		if got := ix.callsAt(tc.line, tc.callee); got != tc.want {
			t.Errorf("callsAt(%d, %s) = %v, want %v", tc.line, tc.callee, got, tc.want)
		}
	}
}
