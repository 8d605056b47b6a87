package tracer

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// A filtered resume (Pause.Filtered, pdb's continue with breakpoints on a
// long run) records nothing but pauses at a line of Lines, or at any line
// of code starting at one of Starts: there the stack comes as call states
// (Trace.Resumed; co_firstlineno of those at another line in
// Trace.FirstLines), then the line event.
func TestFilteredResume(t *testing.T) {
	src := "def f(x):\n    y = x + 1\n    return y\n\ndef g(x):\n    return f(x)\n\nn = 0\nfor i in range(30000):\n    n = g(n)\nprint('n', n)\n"
	var out strings.Builder
	// about 180,000 events: past the default MaxEvents (100,000)
	r := startLive(t, liveTracer(t), src, Limits{}, func(s string) { out.WriteString(s) })
	ctx := context.Background()
	first := len(r.Trace().States)
	module := r.Trace().States[0].Frame

	// a line breakpoint in f: the first crossing, with the stack
	if err := r.Resume(ctx, Pause{Filtered: true, Lines: []int{2}}); err != nil {
		t.Fatal(err)
	}
	tr := r.Trace()
	after := tr.States[first:]
	type where struct {
		event, function string
		line, depth     int
	}
	var got []where
	for _, s := range after {
		got = append(got, where{s.Event, s.Function, s.Lineno, s.Depth})
	}
	want := []where{{EventCall, "<module>", 10, 0}, {EventCall, "g", 6, 1}, {EventCall, "f", 2, 2}, {EventLine, "f", 2, 2}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("states after the first pause %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(tr.Unrecorded, []int{first}) || !reflect.DeepEqual(tr.Resumed, []int{len(tr.States) - 1}) {
		t.Errorf("unrecorded %v resumed %v, %d states", tr.Unrecorded, tr.Resumed, len(tr.States))
	}
	if after[0].Frame != module {
		t.Errorf("the module frame got a new number %d, was %d", after[0].Frame, module)
	}
	if tr.FirstLines[after[1].Frame] != 5 || tr.FirstLines[after[2].Frame] != 1 {
		t.Errorf("first lines %v: g's must be 5, f's 1", tr.FirstLines)
	}
	if v, _ := after[3].Locals.Get("x"); v != "0" {
		t.Errorf("locals at the pause %v", after[3].Locals)
	}

	// a function breakpoint on g before its first line is known: every
	// line of code starting at line 5, the next call's first
	if err := r.Resume(ctx, Pause{Filtered: true, Starts: []int{5}}); err != nil {
		t.Fatal(err)
	}
	tr = r.Trace()
	last := tr.States[len(tr.States)-1]
	if last.Event != EventLine || last.Function != "g" || last.Lineno != 6 {
		t.Fatalf("paused at %+v, want g's line 6", last)
	}
	if v, _ := last.Locals.Get("x"); v != "1" {
		t.Errorf("g's x = %q, want 1 (the second call)", v)
	}

	// past the loop: the program ran on unrecorded
	if err := r.Resume(ctx, Pause{Filtered: true, Lines: []int{11}}); err != nil {
		t.Fatal(err)
	}
	tr = r.Trace()
	if last := tr.States[len(tr.States)-1]; last.Lineno != 11 || last.Depth != 0 {
		t.Fatalf("paused at %+v, want line 11", last)
	}
	if res, err := r.Eval(ctx, 0, "n", EvalExpr); err != nil || res.Text != "30000" {
		t.Errorf("n at line 11: %+v %v", res, err)
	}
	if len(tr.States) > first+20 {
		t.Errorf("%d states recorded", len(tr.States))
	}
	if err := r.Resume(ctx, Pause{Filtered: true}); err != nil {
		t.Fatal(err)
	}
	if !r.Ended() || r.Trace().Exit.Kind != ExitNormal || out.String() != "n 30000\n" {
		t.Errorf("ended %v exit %+v output %q", r.Ended(), r.Trace().Exit, out.String())
	}
}

// A filtered stretch pauses at the return of a frame of Frames (where a
// teardown begins for the debugger), recorded with the stack.
func TestFilteredResumeReturn(t *testing.T) {
	src := "def f(x):\n    y = x + 1\n    for k in range(1000):\n        y += k\n    return y\n\nv = f(1)\nprint(v)\n"
	r := startLive(t, liveTracer(t), src, Limits{}, nil)
	ctx := context.Background()
	// step into f's first line
	var fFrame int
	for fFrame == 0 {
		if err := r.Resume(ctx, PauseAll); err != nil {
			t.Fatal(err)
		}
		if s := r.Trace().States[len(r.Trace().States)-1]; s.Function == "f" && s.Event == EventLine {
			fFrame = s.Frame
		}
	}
	if err := r.Resume(ctx, Pause{Filtered: true, Frames: []int{fFrame}}); err != nil {
		t.Fatal(err)
	}
	tr := r.Trace()
	last := tr.States[len(tr.States)-1]
	if last.Event != EventReturn || last.Frame != fFrame || last.Arg != "499502" {
		t.Fatalf("paused at %+v, want f's return", last)
	}
}

// A filtered stretch of pdb's next, until and return (Pause.Steps) pauses
// at each line of the stepped frame from StepsFrom on and at its
// exceptions; the frames it calls run unrecorded. A frame found on the
// stack whose caller is exec'd code says so (CallerUntraced), as its call
// event would.
func TestFilteredResumeSteps(t *testing.T) {
	src := `def work(n):
    s = 0
    for k in range(n):
        s += k
    return s

def main():
    a = work(5000)
    for i in range(3):
        a += i
    try:
        work(None)
    except TypeError:
        pass
    return a

v = main()
ns = {"work": work}
exec("w = work(10)", ns)
print(v)
`
	r := startLive(t, liveTracer(t), src, Limits{}, nil)
	ctx := context.Background()
	var main State
	for main.Function != "main" || main.Event != EventLine {
		if err := r.Resume(ctx, PauseAll); err != nil {
			t.Fatal(err)
		}
		main = r.Trace().States[len(r.Trace().States)-1]
	}
	last := func() State { return r.Trace().States[len(r.Trace().States)-1] }
	steps := []struct {
		from        int
		event       string
		line        int
		local, want string
	}{
		{0, EventLine, 9, "a", "12497500"},   // next over work(5000): unrecorded
		{11, EventLine, 11, "a", "12497503"}, // until 11: the loop's lines do not pause
		{0, EventLine, 12, "", ""},
		{0, EventException, 12, "", ""}, // work's TypeError, in main
		{0, EventLine, 13, "", ""},
	}
	for k, step := range steps {
		n := len(r.Trace().States)
		if err := r.Resume(ctx, Pause{Filtered: true, Steps: []int{main.Frame}, StepsFrom: step.from, Frames: []int{main.Frame}}); err != nil {
			t.Fatal(err)
		}
		s := last()
		if s.Event != step.event || s.Lineno != step.line || s.Frame != main.Frame {
			t.Fatalf("step %d: paused at %+v, want %s at line %d in main", k, s, step.event, step.line)
		}
		if v, _ := s.Locals.Get(step.local); step.local != "" && v != step.want {
			t.Errorf("step %d: %s = %q, want %q", k, step.local, v, step.want)
		}
		if added := len(r.Trace().States) - n; added > 3 { // the stack's two call states, the event
			t.Errorf("step %d: %d states recorded", k, added)
		}
	}
	if err := r.Resume(ctx, Pause{Filtered: true, Lines: []int{4}}); err != nil {
		t.Fatal(err)
	}
	tr := r.Trace()
	stack := tr.States[tr.Unrecorded[len(tr.Unrecorded)-1]:]
	if len(stack) != 3 || stack[1].Function != "work" || !stack[1].CallerUntraced || stack[0].CallerUntraced {
		t.Fatalf("the stack found in exec'd code: %+v", stack)
	}
}
