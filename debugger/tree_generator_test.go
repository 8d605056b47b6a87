package debugger_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"ndb/debugger"
	"ndb/format"
	"ndb/tracer"
)

// Generators that delegate: CPython resumes a generator with a `call`
// event at the line it was suspended on, and a `yield from` there resumes
// the inner generator at once, with no `line` event in between. The inner
// generator's states then hang off the outer generator's resumption
// `call`, which gets the inverse tree's inv_line_call twin (docs/debugger.md,
// "Calls hanging off a non-line state"). Before the fix, format.Builder.At
// refused that twin ("inv_line_call needs an inverse line state, got
// call"), so `ndb gen` dropped such programs whole and `ndb eval` skipped
// every inverse trajectory passing through the twin.
var delegatingGenerators = []struct{ name, src string }{
	{"yield from, consumed by for", `def inner():
    yield 1
    yield 2


def outer():
    yield from inner()


for v in outer():
    print(v)
`},
	{"yield from, consumed by next", `def inner(n):
    for i in range(n):
        yield i * 10


def outer():
    got = yield from inner(2)
    yield got


g = outer()
a = next(g)
b = next(g)
c = next(g)
`},
	{"recursive flatten", `def flatten(xs):
    for x in xs:
        if isinstance(x, list):
            yield from flatten(x)
        else:
            yield x


out = list(flatten([1, [2, [3]], 4]))
`},
	{"resumed mid-line by send", `def show(v):
    return v


def gen():
    x = show((yield 1))
    yield x


g = gen()
next(g)
print(g.send(5))
`},
}

var (
	genTracerOnce sync.Once
	genTracer     *tracer.Tracer
	genTracerErr  error
)

func traceScript(t *testing.T, src string) *tracer.Trace {
	t.Helper()
	python, err := tracer.ResolvePython("python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	genTracerOnce.Do(func() { genTracer, genTracerErr = tracer.New(tracer.Options{Python: python}) })
	if genTracerErr != nil {
		t.Fatalf("tracer: %v", genTracerErr)
	}
	tt, err := genTracer.Trace(context.Background(), tracer.Program{Source: src})
	if err != nil {
		t.Fatalf("trace: %v", err)
	}
	return tt
}

// walk applies act from start until an exit, listing every position reached
// (start included, the exit excluded).
func walk(tr *debugger.Tree, start debugger.Pos, act debugger.Action) []debugger.Pos {
	n := len(tr.T.States)
	var out []debugger.Pos
	for p := start; p.Index >= 0 && p.Index < n; p = tr.Apply(p, debugger.Command{Action: act}) {
		out = append(out, p)
		if len(out) > 2*n+2 {
			break
		}
	}
	return out
}

// trajectory writes the positions visited by act, then the exit, as a
// format trajectory.
func trajectory(t *testing.T, tr *debugger.Tree, visits []debugger.Pos, act debugger.Action, exit debugger.Pos) *format.Trajectory {
	t.Helper()
	b := format.NewBuilder(act.Inverse())
	out := &format.Trajectory{Source: tr.T.Source}
	for i, p := range append(slices.Clone(visits), exit) {
		via := act
		if i == 0 {
			via = ""
		} else {
			out.Steps = append(out.Steps, format.Step{Action: act})
		}
		f, err := b.At(tr, p, via)
		if err != nil {
			t.Fatalf("frame at %+v (%s %s:%d): %v", p, tr.Kind(p), tr.T.States[max(p.Index, 0)].Function, tr.T.States[max(p.Index, 0)].Lineno, err)
		}
		out.Frames = append(out.Frames, f)
	}
	return out
}

func roundTrip(t *testing.T, want *format.Trajectory) string {
	t.Helper()
	text, err := format.Serialize(want)
	if err != nil {
		t.Fatalf("serialize: %v", err)
	}
	got, err := format.ParseTrajectory(text)
	if err != nil {
		t.Fatalf("parse back: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\nwant %+v\n got %+v", want, got)
	}
	return text
}

// TestTreeDelegatingGenerators: on CPython's events of generators that
// delegate, the inverse tree visits every state in reverse time order, each
// twin sitting just after (in time) the calls it owns, and the complete
// forward and inverse trajectories serialize and parse back unchanged.
func TestTreeDelegatingGenerators(t *testing.T) {
	for _, c := range delegatingGenerators {
		t.Run(c.name, func(t *testing.T) {
			tt := traceScript(t, c.src)
			if tt.Exit.Kind != tracer.ExitNormal {
				t.Fatalf("fixture exit %+v", tt.Exit)
			}
			tr := debugger.NewTree(tt)
			n := len(tt.States)
			resumed := 0
			for i, s := range tt.States {
				if s.Event != tracer.EventLine && tr.HasChildren(i) {
					resumed++
				}
			}
			if resumed == 0 {
				t.Fatal("fixture has no call hanging off a non-line state: it tests nothing")
			}

			inv := walk(tr, debugger.InverseInitial(tt), debugger.InvStepInto)
			var states []int
			for k, p := range inv {
				if !p.LineCall {
					states = append(states, p.Index)
					continue
				}
				// The twin comes right before its last callee state.
				if k+1 >= len(inv) || inv[k+1].LineCall || tr.Parent(inv[k+1].Index) != p.Index {
					t.Errorf("twin %+v is not followed by one of its callees: %v", p, inv[k:min(k+2, len(inv))])
				}
			}
			for k, i := range states {
				if i != n-1-k {
					t.Fatalf("inv_step_into from the end visits states %v, want %d..0 in turn", states, n-1)
				}
			}
			if len(states) != n {
				t.Fatalf("inv_step_into visits %d of %d states", len(states), n)
			}

			fwd := roundTrip(t, trajectory(t, tr, walk(tr, debugger.Initial(tt), debugger.StepInto), debugger.StepInto, debugger.ExitPos(tt)))
			back := roundTrip(t, trajectory(t, tr, inv, debugger.InvStepInto, debugger.EntryExit))
			if !strings.HasSuffix(fwd, "<|exit_normal|><|trace_end|><|end_of_text|>") || !strings.Contains(back, "<|inv_line_call_sep|>") {
				t.Errorf("trajectories do not end or show no twin:\n%s\n%s", fwd, back)
			}
			// Every action from every inverse position gives a frame.
			for _, p := range inv {
				for _, act := range debugger.InverseActions {
					q := tr.Apply(p, debugger.Command{Action: act})
					if _, err := format.NewBuilder(true).At(tr, q, act); err != nil {
						t.Errorf("%s from %+v to %+v: %v", act, p, q, err)
					}
				}
			}
		})
	}
}

// TestTreeYieldFromTwin pins the inverse tree of the for-loop fixture around
// the second resumption: the outer generator's `return` at line 7, its
// twin (shown as the line it was resumed on, after the inner generator
// yielded), the inner generator's resumed states, then the resumption call.
func TestTreeYieldFromTwin(t *testing.T) {
	tt := traceScript(t, delegatingGenerators[0].src)
	tr := debugger.NewTree(tt)
	// The second resumption: call outer:7, call inner:2, line inner:3,
	// return inner:3, return outer:7 (docs: `ndb trace` of the fixture).
	c := -1
	for i, s := range tt.States {
		if s.Event == tracer.EventCall && s.Function == "outer" && s.Lineno == 7 {
			c = i
			break
		}
	}
	if c < 0 || c+4 >= len(tt.States) {
		t.Fatalf("no resumption of outer at line 7 in %d states", len(tt.States))
	}
	ret := debugger.Pos{Index: c + 4}
	twin := debugger.Pos{Index: c, LineCall: true}
	for _, s := range []struct {
		from debugger.Pos
		act  debugger.Action
		want debugger.Pos
	}{
		{ret, debugger.InvStepInto, twin},
		{twin, debugger.InvStepInto, debugger.Pos{Index: c + 3}},
		{ret, debugger.InvStepOver, debugger.Pos{Index: c}},
		{twin, debugger.InvStepOver, debugger.Pos{Index: c}},
		{debugger.Pos{Index: c + 1}, debugger.InvStepInto, debugger.Pos{Index: c}},
		{twin, debugger.InvStepCall, debugger.Pos{Index: c}},
		{twin, debugger.StepInto, ret},
	} {
		if got := tr.Apply(s.from, debugger.Command{Action: s.act}); got != s.want {
			t.Errorf("%s from %+v = %+v, want %+v", s.act, s.from, got, s.want)
		}
	}
	b := format.NewBuilder(true)
	if _, err := b.At(tr, ret, ""); err != nil {
		t.Fatal(err)
	}
	f, err := b.At(tr, twin, debugger.InvStepInto)
	if err != nil {
		t.Fatalf("twin of the resumption call: %v", err)
	}
	if got, want := format.FrameText(f), "<|inv_line_call_sep|><|src_sep|>    yield from inner()<|arg_sep|>{}<|action_sep|>"; got != want {
		t.Errorf("twin frame %q, want %q", got, want)
	}
}
