package tracer

import (
	"context"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"
)

// An untraced resume (Pause.Untraced, pdb's continue with no breakpoint)
// runs the program to its end recording nothing: no event counts against
// MaxEvents, output still streams, and the exit is the whole run's.
func TestUntracedResume(t *testing.T) {
	// about 150,000 events: past the default MaxEvents (100,000)
	src := "def f(x):\n    return x + 1\n\nn = 0\nfor i in range(50000):\n    n = f(n)\nprint('n', n)\n"
	whole := trace(t, Program{Source: src}, Limits{MaxEvents: 1 << 20, MaxTraceBytes: 256 << 20})
	var out strings.Builder
	r := startLive(t, liveTracer(t), src, Limits{}, func(s string) { out.WriteString(s) })
	first := len(r.Trace().States)
	start := time.Now()
	if err := r.Resume(context.Background(), Pause{Untraced: true}); err != nil {
		t.Fatal(err)
	}
	tr := r.Trace()
	if !r.Ended() || tr.Exit != whole.Exit || tr.Stdout != whole.Stdout || out.String() != "n 50000\n" {
		t.Fatalf("ended %v exit %+v (whole %+v) stdout %q streamed %q", r.Ended(), tr.Exit, whole.Exit, tr.Stdout, out.String())
	}
	// past the gap only the end: the module frame's call and return
	// records, the return at the whole run's last line
	if len(tr.States) != first+2 || !reflect.DeepEqual(tr.Unrecorded, []int{first}) {
		t.Fatalf("%d states (first pause: %d), unrecorded %v", len(tr.States), first, tr.Unrecorded)
	}
	if end, want := tr.States[first+1], whole.States[len(whole.States)-1]; end.Event != EventReturn || end.Lineno != want.Lineno || end.Depth != want.Depth {
		t.Errorf("the end %+v, the whole run's %+v", end, want)
	}
	if !reflect.DeepEqual(tr.States[:first], whole.States[:first]) {
		t.Error("the states before the gap differ from the whole run's")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the untraced run took %v", d)
	}
}

// An interrupt in an untraced stretch traces again: each program frame on
// the stack gets a call state (depths from 0), the run pauses at the next
// event with its real frames, and stepping goes on from there.
func TestUntracedInterrupt(t *testing.T) {
	src := "def f(x):\n    y = x + 1\n    return y\n\ni = 0\nwhile True:\n    i = f(i)\n"
	r := startLive(t, liveTracer(t), src, Limits{Timeout: time.Minute}, nil)
	ctx := context.Background()
	first := len(r.Trace().States)
	go func() {
		time.Sleep(300 * time.Millisecond)
		r.Interrupt()
	}()
	if err := r.Resume(ctx, Pause{Untraced: true}); err != nil {
		t.Fatal(err)
	}
	if reason, ok := r.Paused(); !ok || reason != PauseInterrupt || r.Ended() {
		t.Fatalf("after Interrupt: reason %q paused %v ended %v exit %+v", reason, ok, r.Ended(), r.Trace().Exit)
	}
	tr := r.Trace()
	if !reflect.DeepEqual(tr.Unrecorded, []int{first}) {
		t.Fatalf("unrecorded %v, first pause %d", tr.Unrecorded, first)
	}
	after := tr.States[first:]
	if len(after) < 2 || after[0].Event != EventCall || after[0].Depth != 0 || after[0].Function != "<module>" {
		t.Fatalf("%d states after the interrupt, first %+v", len(after), after[0])
	}
	// the call states stand for the stack; the events follow: the one it
	// paused at, or, from the newest checkpoint (interrupt_from_checkpoint),
	// the way it recorded on from there
	if len(tr.Resumed) != 1 || tr.Resumed[0] <= first || tr.Resumed[0] > first+2 {
		t.Errorf("resumed %v, first %d, %d states", tr.Resumed, first, len(tr.States))
	}
	for _, st := range tr.States[first:tr.Resumed[0]] {
		if st.Event != EventCall {
			t.Errorf("a state that stands for the stack: %+v", st)
		}
	}
	if after[0].Frame != tr.States[0].Frame {
		t.Errorf("the module frame got a new number: %d, was %d", after[0].Frame, tr.States[0].Frame)
	}
	res, err := r.Eval(ctx, 0, "i > 100", EvalExpr)
	if err != nil || res.Text != "True" {
		t.Fatalf("eval at the interrupt: %+v %v", res, err)
	}
	for range 10 {
		if err := r.Resume(ctx, PauseAll); err != nil || r.Ended() {
			t.Fatalf("step: %v ended %v", err, r.Ended())
		}
	}
	steps := r.Trace().States[len(tr.States)-10:]
	var calls int
	for _, s := range steps {
		if s.Event == EventCall && s.Function == "f" {
			calls++
			if s.Depth != 1 {
				t.Errorf("call of f at depth %d", s.Depth)
			}
		}
	}
	if calls == 0 {
		t.Errorf("no call of f in 10 steps: %+v", steps)
	}
}

// The gap marker cannot be used to grow the trace: repeated markers with
// no state between them are one gap.
func TestDecodeUnrecorded(t *testing.T) {
	u, v := tup{"u"}, tup{"u", 1}
	tr := decodeRecords(t, u, u,
		tup{0, 1, 1, 0, []any{0, "1"}, []any{"x"}, "f", 0},
		v, v,
		u, u, u,
		tup{1, 2, 1, 0, nil},
		u, v,
		tup{"x", "normal", "", "", 0})
	if !reflect.DeepEqual(tr.Unrecorded, []int{0, 1, 2}) || !reflect.DeepEqual(tr.Resumed, []int{1, 2}) || len(tr.States) != 2 {
		t.Errorf("unrecorded %v, resumed %v, %d states", tr.Unrecorded, tr.Resumed, len(tr.States))
	}
	// any other shape is a bad record
	for _, bad := range []tup{{"u", 2}, {"u", "x"}, {"u", 1, 1}} {
		payload := mw(nil, []any{bad})
		d := newDecoder("x = 1\n", &Trace{}, Limits{})
		d.feed(append(binary.LittleEndian.AppendUint32(nil, uint32(len(payload))), payload...))
		if d.bad == nil {
			t.Errorf("%v decoded", bad)
		}
	}
}

// An interrupt that lands while the untraced program writes output (a
// flush of the record channel in progress) loses none of the call records
// it adds: the run pauses, it does not end by a bad record.
func TestUntracedInterruptWhilePrinting(t *testing.T) {
	src := "def f(i):\n    print(i)\n    return i + 1\n\ni = 0\nwhile True:\n    i = f(i) if i % 7 == 0 else i + 1\n"
	tt := liveTracer(t)
	for k := range 4 {
		var n int
		r := startLive(t, tt, src, Limits{Timeout: time.Minute, MaxOutput: 1 << 30}, func(s string) { n += len(s) })
		go func() {
			time.Sleep(time.Duration(100+50*k) * time.Millisecond)
			r.Interrupt()
		}()
		if err := r.Resume(context.Background(), Pause{Untraced: true}); err != nil {
			t.Fatal(err)
		}
		if reason, ok := r.Paused(); !ok || reason != PauseInterrupt || r.Ended() || n == 0 {
			t.Fatalf("try %d: reason %q paused %v ended %v exit %+v, %d bytes of output", k, reason, ok, r.Ended(), r.Trace().Exit, n)
		}
		r.Close()
	}
}
