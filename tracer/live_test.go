package tracer

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// liveTracer is a tracer of its own: a live run holds its tracer.
func liveTracer(t *testing.T) *Tracer {
	t.Helper()
	tr, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func startLive(t *testing.T, tt *Tracer, src string, lim Limits, out func(string)) *Run {
	t.Helper()
	r, err := tt.Start(context.Background(), Program{Source: src}, lim, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

const liveProg = `def f(n):
    total = 0
    for i in range(n):
        total += i
    return total

xs = []
for k in range(3):
    xs.append(f(k))
print("done", xs)
`

// Pausing changes nothing in what is recorded: a live run stepped event by
// event, and one resumed with a filter that never pauses, record the same
// trace as a whole run.
func TestLiveTraceEqualsWholeRun(t *testing.T) {
	want := trace(t, Program{Source: liveProg}, Limits{})
	tt := liveTracer(t)
	for _, tc := range []struct {
		name string
		f    Pause
	}{{"step", PauseAll}, {"depth0", Pause{Depth: 0}}, {"never", Pause{Depth: -1}}, {"lines", Pause{Depth: -1, Lines: []int{4}}}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			r := startLive(t, tt, liveProg, Limits{}, func(s string) { out.WriteString(s) })
			pauses := 0
			for !r.Ended() {
				if err := r.Resume(context.Background(), tc.f); err != nil {
					t.Fatal(err)
				}
				pauses++
			}
			got := r.Trace()
			if !reflect.DeepEqual(got.States, want.States) || got.Exit != want.Exit || got.Stdout != want.Stdout {
				t.Fatalf("live trace differs: %d states (want %d), exit %+v (want %+v)", len(got.States), len(want.States), got.Exit, want.Exit)
			}
			if out.String() != want.Stdout {
				t.Errorf("streamed output %q, want %q", out.String(), want.Stdout)
			}
			t.Logf("%d pauses for %d states", pauses, len(got.States))
			if tc.name == "step" && pauses != len(want.States) {
				t.Errorf("stepping paused %d times for %d states", pauses, len(want.States))
			}
			if tc.name == "never" && pauses != 1 {
				t.Errorf("a filter that never pauses paused %d times", pauses)
			}
		})
	}
}

func TestLiveEvalAndExec(t *testing.T) {
	tt := liveTracer(t)
	src := "def g(a):\n    b = a * 2\n    return b\n\nx = g(20)\nprint(x)\n"
	r := startLive(t, tt, src, Limits{}, nil)
	ctx := context.Background()
	// pause at g's line 3 (b = 40 recorded)
	if err := r.Resume(ctx, Pause{Depth: -1, Lines: []int{3}}); err != nil {
		t.Fatal(err)
	}
	st := r.Trace().States
	if last := st[len(st)-1]; last.Lineno != 3 || last.Event != EventLine {
		t.Fatalf("paused at %+v", last)
	}
	for _, tc := range []struct {
		src, mode string
		level     int
		ok        bool
		text      string
	}{
		{"a + b", EvalExpr, 0, true, "60"},
		{"[b] * 2", EvalPretty, 0, true, "[40, 40]"},
		{"nope", EvalExpr, 0, false, "NameError: name 'nope' is not defined"},
		{"1/0", EvalExpr, 0, false, "ZeroDivisionError: division by zero"},
		{"g", EvalExpr, 1, true, "<function g at"},
		{"print('side')", EvalExec, 0, true, "side\n"},
		{"b", EvalExec, 0, true, "40\n"},
		{"b = 7", EvalExec, 0, true, ""},
		{"b", EvalExpr, 0, true, "7"},
	} {
		res, err := r.Eval(ctx, tc.level, tc.src, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if res.OK != tc.ok || !strings.HasPrefix(res.Text, tc.text) {
			t.Errorf("%s %q at level %d: %+v, want ok=%v %q", tc.mode, tc.src, tc.level, res, tc.ok, tc.text)
		}
		if tc.src == "b = 7" {
			if v, _ := res.Locals.Get("b"); v != "7" {
				t.Errorf("locals after the statement: %v", res.Locals)
			}
		}
	}
	// The statement's write stays: g returns 7, and the program prints it.
	for !r.Ended() {
		if err := r.Resume(ctx, Pause{Depth: -1}); err != nil {
			t.Fatal(err)
		}
	}
	if out := r.Trace().Stdout; out != "7\n" {
		t.Errorf("stdout %q after b = 7", out)
	}
	if _, err := r.Eval(ctx, 0, "1", EvalExpr); err == nil {
		t.Error("eval after the end succeeded")
	}
}

func TestLiveInterruptAndTimeout(t *testing.T) {
	tt := liveTracer(t)
	src := "i = 0\nwhile True:\n    i += 1\n"
	r := startLive(t, tt, src, Limits{Timeout: time.Minute, MaxEvents: 1 << 30}, nil)
	ctx := context.Background()
	go func() {
		time.Sleep(300 * time.Millisecond)
		r.Interrupt()
	}()
	if err := r.Resume(ctx, Pause{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if reason, ok := r.Paused(); !ok || reason != PauseInterrupt || r.Ended() {
		t.Fatalf("after Interrupt: reason %q paused %v ended %v", reason, ok, r.Ended())
	}
	n := len(r.Trace().States)
	if n < 100 {
		t.Errorf("only %d states before the interrupt", n)
	}
	res, err := r.Eval(ctx, 0, "i > 10", EvalExpr)
	if err != nil || res.Text != "True" {
		t.Fatalf("eval in the loop: %+v %v", res, err)
	}
	// Timeout: the run pauses itself.
	r2 := startLive(t, liveTracer(t), src, Limits{Timeout: 300 * time.Millisecond, MaxEvents: 1 << 30}, nil)
	if err := r2.Resume(ctx, Pause{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if reason, ok := r2.Paused(); !ok || reason != PauseTimeout {
		t.Fatalf("after the timeout: reason %q paused %v ended %v exit %+v", reason, ok, r2.Ended(), r2.Trace().Exit)
	}
	// Stuck in C code: ended as a timeout.
	r3 := startLive(t, liveTracer(t), "import time\ntime.sleep(60)\n", Limits{Timeout: 200 * time.Millisecond}, nil)
	start := time.Now()
	if err := r3.Resume(ctx, Pause{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if !r3.Ended() || r3.Trace().Exit.Kind != ExitNever || r3.Trace().Exit.Reason != "timeout" {
		t.Fatalf("sleeping program: ended %v exit %+v", r3.Ended(), r3.Trace().Exit)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v to end", d)
	}
}

func TestLivePostMortem(t *testing.T) {
	tt := liveTracer(t)
	src := "def inner(d):\n    k = 'x'\n    return d[k]\n\ndef outer():\n    table = {'y': 1}\n    return inner(table)\n\nouter()\n"
	r := startLive(t, tt, src, Limits{}, nil)
	ctx := context.Background()
	for !r.Ended() {
		if err := r.Resume(ctx, Pause{Depth: -1}); err != nil {
			t.Fatal(err)
		}
	}
	if reason, ok := r.Paused(); !ok || reason != PausePostMortem {
		t.Fatalf("no post-mortem: %q %v", reason, ok)
	}
	tr := r.Trace()
	if tr.Exit.Kind != ExitError || !strings.Contains(tr.Exit.Error, "KeyError") {
		t.Fatalf("exit %+v", tr.Exit)
	}
	for _, want := range []string{"Traceback (most recent call last):", "line 9, in <module>", "line 7, in outer", "line 3, in inner", "    return d[k]", "KeyError: 'x'"} {
		if !strings.Contains(tr.Traceback, want) {
			t.Errorf("traceback lacks %q:\n%s", want, tr.Traceback)
		}
	}
	if strings.Contains(tr.Traceback, "tracer") || strings.Contains(tr.Traceback, "<string>") {
		t.Errorf("traceback shows ndb's frames:\n%s", tr.Traceback)
	}
	for level, want := range map[int]string{0: "'x'", 1: "{'y': 1}"} {
		expr := map[int]string{0: "k", 1: "table"}[level]
		res, err := r.Eval(ctx, level, expr, EvalExpr)
		if err != nil || res.Text != want {
			t.Errorf("post-mortem p %s at level %d: %+v %v", expr, level, res, err)
		}
	}
	// A whole run records the traceback too.
	if whole := trace(t, Program{Source: src}, Limits{}); whole.Traceback != tr.Traceback {
		t.Errorf("whole run's traceback:\n%s\nlive:\n%s", whole.Traceback, tr.Traceback)
	}
}

func TestLiveJump(t *testing.T) {
	tt := liveTracer(t)
	src := "a = 1\na = 2\na = 3\nprint(a)\n"
	r := startLive(t, tt, src, Limits{}, nil)
	ctx := context.Background()
	if err := r.Resume(ctx, PauseAll); err != nil { // from <module>'s call to line 1
		t.Fatal(err)
	}
	if res, _ := r.Eval(ctx, 0, "a", EvalExpr); res.OK {
		t.Errorf("a is set before line 1 ran: %+v", res)
	}
	// paused at line 1's line event: jump over lines 1 and 2
	st := r.Trace().States
	if last := st[len(st)-1]; last.Event != EventLine || last.Lineno != 1 {
		t.Fatalf("first pause at %+v", last)
	}
	res, err := r.Jump(ctx, 3)
	if err != nil || !res.OK {
		t.Fatalf("jump: %+v %v", res, err)
	}
	st = r.Trace().States
	if last := st[len(st)-1]; last.Event != EventLine || last.Lineno != 3 {
		t.Fatalf("after the jump the last state is %+v", last)
	}
	if reason, _ := r.Paused(); reason != PauseJump {
		t.Errorf("reason %q", reason)
	}
	if res, _ := r.Jump(ctx, 99); res.OK || !strings.Contains(res.Text, "Jump failed") {
		t.Errorf("jump to line 99: %+v", res)
	}
	for !r.Ended() {
		if err := r.Resume(ctx, PauseAll); err != nil {
			t.Fatal(err)
		}
	}
	var lines []int
	for _, s := range r.Trace().States {
		if s.Event == EventLine {
			lines = append(lines, s.Lineno)
		}
	}
	if !reflect.DeepEqual(lines, []int{1, 3, 4}) || r.Trace().Stdout != "3\n" {
		t.Errorf("lines %v stdout %q", lines, r.Trace().Stdout)
	}
}

// TestLiveHostile: a program that fights its live run (steals the requests
// on its control pipe, ignores the interrupt signal) confuses only its own
// run, which ends within the time limit and 5 s more; the same tracer then
// runs the next program exactly.
func TestLiveHostile(t *testing.T) {
	want := trace(t, Program{Source: liveProg}, Limits{})
	tt := liveTracer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, src string
	}{
		// A thread reads every descriptor: the control pipe's requests
		// ("go" included) go to it, so the paused program never resumes.
		{"steals requests", `import os, threading
def steal():
    for fd in range(3, 32):
        try:
            while os.read(fd, 1 << 16):
                pass
        except OSError:
            pass
threading.Thread(target=steal, daemon=True).start()
x = 0
while True:
    x += 1
`},
		{"ignores interrupts", "import signal\nsignal.signal(signal.SIGUSR2, signal.SIG_IGN)\nx = 0\nwhile True:\n    x += 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startLive(t, tt, tc.src, Limits{Timeout: 300 * time.Millisecond, MaxEvents: 1 << 30}, nil)
			start := time.Now()
			for i := 0; i < 20 && !r.Ended(); i++ { // each a time limit, if the interrupt worked
				if err := r.Resume(ctx, Pause{Depth: -1}); err != nil {
					break
				}
			}
			if took := time.Since(start); !r.Ended() || took > 20*time.Second {
				t.Errorf("ended %v after %v; exit %+v", r.Ended(), took, r.Trace().Exit)
			}
			t.Logf("exit %+v after %v", r.Trace().Exit, time.Since(start))
			r.Close()
			start = time.Now()
			next := startLive(t, tt, liveProg, Limits{}, nil)
			for !next.Ended() {
				if err := next.Resume(ctx, Pause{Depth: -1}); err != nil {
					t.Fatal(err)
				}
			}
			if got := next.Trace(); !reflect.DeepEqual(got.States, want.States) || got.Exit != want.Exit {
				t.Errorf("the next run: %d states (want %d), exit %+v", len(got.States), len(want.States), got.Exit)
			}
			t.Logf("the next run took %v", time.Since(start))
		})
	}
}

// pausedCPUProg spins in a thread (for at most 10 s) while the main
// thread pauses between c0 and c1.
const pausedCPUProg = `import threading, time
end = time.monotonic() + 10
def spin():
    while time.monotonic() < end:
        pass
th = threading.Thread(target=spin, daemon=True)
th.start()
time.sleep(0.3)
c0 = time.process_time()
x = 1
c1 = time.process_time()
used = round(c1 - c0, 2)
alive = th.is_alive()
`

// TestLivePausedUsesNoCPU: while a live run waits at a stop, a thread of
// the program that spins does not run (issue 30: 7.7 s of CPU in 15 s).
// The program measures its own process CPU across a 3 s pause.
func TestLivePausedUsesNoCPU(t *testing.T) {
	tt := liveTracer(t)
	r := startLive(t, tt, pausedCPUProg, Limits{Timeout: 20 * time.Second}, nil)
	ctx := context.Background()
	if err := r.Resume(ctx, Pause{Depth: -1, Lines: []int{10}}); err != nil {
		t.Fatal(err)
	}
	if s := r.Trace().States; s[len(s)-1].Lineno != 10 {
		t.Fatalf("paused at %+v", s[len(s)-1])
	}
	const pause = 3 * time.Second
	time.Sleep(pause)
	if err := r.Resume(ctx, Pause{Depth: -1, Lines: []int{13}}); err != nil {
		t.Fatal(err)
	}
	s := r.Trace().States
	last := s[len(s)-1]
	used, _ := last.Locals.Get("used")
	t.Logf("CPU of the program across a %v pause: %s s (state %d %v)", pause, used, last.Lineno, last.Locals)
	var u float64
	if _, err := fmt.Sscan(used, &u); err != nil || last.Lineno != 13 {
		t.Fatalf("state %+v", last)
	}
	if u > 0.5 {
		t.Errorf("the paused program used %.2f s of CPU in %v", u, pause)
	}
}

// TestLivePausedChildStopped: a process the program forked (fork allowed:
// a tracer without audit hooks, the kernel layer alone) is stopped while
// the program waits at a stop, and runs again after. The program reads
// its child's CPU time from its own /proc.
func TestLivePausedChildStopped(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: no PID namespace of the program's own")
	}
	tt, err := New(Options{Python: os.Getenv("NDB_PYTHON"), noAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tt.Close() }) // after the run's Close (startLive's cleanup)
	src := `import os, time
def cpu(pid):
    f = open('/proc/%d/stat' % pid).read().rsplit(')', 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf('SC_CLK_TCK')
pid = os.fork()
if pid == 0:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        pass
    os._exit(0)
time.sleep(0.3)
c0 = cpu(pid)
x = 1
used = round(cpu(pid) - c0, 2)
time.sleep(0.5)
after = round(cpu(pid) - c0, 2)
os.kill(pid, 9)
`
	r := startLive(t, tt, src, Limits{Timeout: 20 * time.Second}, nil)
	ctx := context.Background()
	if err := r.Resume(ctx, Pause{Depth: -1, Lines: []int{13}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := r.Resume(ctx, Pause{Depth: -1, Lines: []int{17}}); err != nil {
		t.Fatal(err)
	}
	s := r.Trace().States
	last := s[len(s)-1]
	used, _ := last.Locals.Get("used")
	after, _ := last.Locals.Get("after")
	t.Logf("the child's CPU across a 2 s pause: %s s; 0.5 s after it: %s s", used, after)
	var u, a float64
	if _, err := fmt.Sscan(used+" "+after, &u, &a); err != nil || last.Lineno != 17 {
		t.Fatalf("state %+v", last)
	}
	if u > 0.3 {
		t.Errorf("the program's child used %.2f s of CPU while the program was paused", u)
	}
	if a <= u {
		t.Errorf("the child did not run again after the pause (%.2f s, then %.2f s)", u, a)
	}
}

// TestLiveCPULimit: a live run's CPU is bounded (LiveCPU; it was a day):
// a run stuck in C code for longer ends with exit never/cpu.
func TestLiveCPULimit(t *testing.T) {
	tt := liveTracer(t)
	r := startLive(t, tt, "x = sum(range(10 ** 11))\n", Limits{Timeout: 30 * time.Second, LiveCPU: time.Second}, nil)
	start := time.Now()
	if err := r.Resume(context.Background(), Pause{Depth: -1}); err != nil {
		t.Fatal(err)
	}
	if ex := r.Trace().Exit; !r.Ended() || ex.Kind != ExitNever || ex.Reason != "cpu" {
		t.Errorf("after %v: ended %v, exit %+v, want never/cpu", time.Since(start), r.Ended(), ex)
	}
}

// TestLiveBadRecord: a live program that writes a bad record of its own
// (streamed output past MaxOutput) is ended with the reason, and the
// tracer runs the next program.
func TestLiveBadRecord(t *testing.T) {
	if UnsafeNoSandbox() {
		t.Skip("NDB_UNSAFE_NO_SANDBOX=1: the tests of hostile programs run sandboxed")
	}
	tt := liveTracer(t)
	r := startLive(t, tt, forgeRecords+"send([(\"w\", \"w\" * 2_000_000)])\ny = 2\n", Limits{}, func(string) {})
	if err := r.Resume(context.Background(), Pause{Depth: -1, Lines: []int{100}}); err != nil {
		t.Fatal(err)
	}
	if ex := r.Trace().Exit; !r.Ended() || ex.Reason != "ndb: bad record" || !strings.Contains(ex.Error, "streamed output") {
		t.Fatalf("ended %v, exit %+v", r.Ended(), ex)
	}
	r.Close()
	res, err := tt.Trace(context.Background(), Program{Source: "def f(x):\n    return x + 1\n", Call: "f(1)"})
	if err != nil || res.Exit.Kind != ExitNormal || res.States[len(res.States)-1].Arg != "2" {
		t.Fatalf("the next program: %v %+v", err, res)
	}
}

// An interrupt in an untraced stretch with checkpoints pauses after the
// newest checkpoint recorded its tail (up to CKPT_TAIL events: seconds on
// a loaded machine); the grace for a run that sends nothing after an
// interrupt does not cut that short (shortened here so that a tail's
// recording outlasts it), while a program stuck in C code still ends.
func TestInterruptWaitsForTheTail(t *testing.T) {
	grace := interruptGrace
	t.Cleanup(func() { interruptGrace = grace })
	interruptGrace = 100 * time.Millisecond
	tt := liveTracer(t)
	r := startLive(t, tt, "i = 0\nwhile True:\n    i += 1\n", Limits{Timeout: 500 * time.Millisecond, MaxEvents: 1 << 30}, nil)
	ctx := context.Background()
	if err := r.Resume(ctx, Pause{Untraced: true, CheckpointCPU: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if reason, ok := r.Paused(); !ok || reason != PauseTimeout || r.Ended() {
		t.Fatalf("after the timeout: reason %q paused %v ended %v exit %+v", reason, ok, r.Ended(), r.Trace().Exit)
	}
	if n := len(r.Trace().States); n < 10_000 {
		t.Errorf("%d states: the interrupt did not record a checkpoint's tail", n)
	}
	r2 := startLive(t, liveTracer(t), "import time\ntime.sleep(60)\n", Limits{Timeout: 200 * time.Millisecond}, nil)
	if err := r2.Resume(ctx, Pause{Untraced: true}); err != nil {
		t.Fatal(err)
	}
	if !r2.Ended() || r2.Trace().Exit.Reason != "timeout" {
		t.Fatalf("sleeping program: ended %v exit %+v", r2.Ended(), r2.Trace().Exit)
	}
}
