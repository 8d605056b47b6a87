package dap

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"ndb/engine"
	"ndb/tracer"
)

// The real engine's sessions are live: the program waits at the stop, so
// pause, evaluate and setVariable work on it (docs/dap.md).

const endless = `n = 0
while True:
    n += 1
`

// launchRunning launches prog on the real engine with no breakpoint, so
// that configurationDone starts a run to the end (endless: one that runs
// until it is paused).
func launchRunning(t *testing.T, c *client, prog string) {
	t.Helper()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	if r, evs := c.call("configurationDone", nil); !r.GetResponse().Success || hasStopped(evs) {
		t.Fatalf("configurationDone: %+v, events %v", r.GetResponse(), evs)
	}
}

func hasStopped(evs []godap.EventMessage) bool {
	for _, e := range evs {
		if e.GetEvent().Event == "stopped" {
			return true
		}
	}
	return false
}

// pause pauses the running program and returns the stopped event.
func pause(t *testing.T, c *client) *godap.StoppedEvent {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let it run
	c.ok("pause", map[string]any{"threadId": 1})
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if e.Body.Reason != "pause" || e.Body.Description != "Paused" {
		t.Fatalf("after pause: %+v", e.Body)
	}
	return e
}

func evaluate(c *client, expr, context string, frame int) (string, bool, string) {
	r, _ := c.call("evaluate", map[string]any{"expression": expr, "context": context, "frameId": frame})
	if !r.GetResponse().Success {
		return "", false, r.GetResponse().Message
	}
	return r.(*godap.EvaluateResponse).Body.Result, true, ""
}

// TestPause pauses a continue that runs an endless loop (the request is
// read while the worker runs it), evaluates and changes the loop's
// variable there, and pauses it again.
func TestPause(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	launchRunning(t, c, writeProgram(t, "endless.py", endless))
	pause(t, c)
	if top := c.top(); top.Name != "<module>" || top.Line < 2 || top.Line > 3 {
		t.Errorf("paused at %+v", top)
	}
	if got, ok, msg := evaluate(c, "n > 0", "watch", 1); !ok || got != "True" {
		t.Errorf("n > 0 = %q (%s)", got, msg)
	}
	if got, ok, msg := evaluate(c, "n = -10**9", "repl", 1); !ok || got != "" {
		t.Errorf("a statement in the console: %q (%s)", got, msg)
	}
	// continue is answered before it runs; the stop comes after pause.
	if r, evs := c.call("continue", map[string]any{"threadId": 1}); !r.GetResponse().Success || hasStopped(evs) {
		t.Fatalf("continue: %+v, events %v", r.GetResponse(), evs)
	}
	pause(t, c)
	if got, _, msg := evaluate(c, "n < 0", "watch", 1); got != "True" {
		t.Errorf("the run went on from n = -10**9: n < 0 is %q (%s)", got, msg)
	}
	// A step is a stop of its own, not a pause.
	if reason, _ := c.move("next"); reason != "step" {
		t.Errorf("next after pause: reason %q", reason)
	}
	// Disconnect while it runs: the run is interrupted and closed.
	c.ok("continue", map[string]any{"threadId": 1})
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	c.ok("disconnect", nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("disconnect while running took %v", d)
	}
}

// TestTimeLimit: a command that runs longer than the engine's time limit
// is interrupted by it: a pause that says so.
func TestTimeLimit(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Workers: 1, Live: true, Limits: tracer.Limits{Timeout: time.Second}})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	launchRunning(t, c, writeProgram(t, "endless.py", endless))
	var console string
	for {
		m := c.read()
		if o, ok := m.(*godap.OutputEvent); ok {
			console += o.Body.Output
		}
		if e, ok := m.(*godap.StoppedEvent); ok {
			if e.Body.Reason != "pause" || !strings.Contains(e.Body.Description, "time limit") {
				t.Errorf("stopped %+v, want a pause by the time limit", e.Body)
			}
			break
		}
	}
	if !strings.Contains(console, "interrupted by the time limit") {
		t.Errorf("console %q", console)
	}
	if got, _, msg := evaluate(c, "n > 0", "hover", 1); got != "True" {
		t.Errorf("n > 0 after the time limit: %q (%s)", got, msg)
	}
	c.ok("disconnect", nil)
}

// TestLiveEvaluate evaluates in the frames of the stop (frameId: 1 the
// innermost), as pdb's p and !, and falls back to the recorded locals
// where the program does not wait.
func TestLiveEvaluate(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{2}})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped") // square:2, total:9, f:14, main:20
	cases := []struct {
		expr, context string
		frame         int
		want          string // the result, or "!" + the error
	}{
		{"x * 10 + 1", "watch", 1, "1"},
		{"s * 2", "hover", 3, "'abab'"},
		{"[n, acc, i]", "watch", 2, "[3, 0, 0]"},
		{"nope", "watch", 1, "!NameError: name 'nope' is not defined"},
		{"1/0", "repl", 1, "!ZeroDivisionError: division by zero"},
		{"x = ", "repl", 1, "!SyntaxError"},
		{"z = 41", "watch", 1, "!SyntaxError"}, // only the console runs statements
		{"z = 41", "repl", 1, ""},
		{"print(z + 1)", "repl", 1, "42"}, // as pdb runs a line: what it printed (None is not shown)
		{"for k in range(3): print(k)", "repl", 1, "0\n1\n2"},
		{"s", "repl", 3, "'ab'"},
	}
	for _, tc := range cases {
		got, ok, msg := evaluate(c, tc.expr, tc.context, tc.frame)
		switch {
		case strings.HasPrefix(tc.want, "!") && (ok || !strings.HasPrefix(msg, tc.want[1:])):
			t.Errorf("evaluate %q (%s, frame %d): %q, error %q, want the error %q", tc.expr, tc.context, tc.frame, got, msg, tc.want[1:])
		case !strings.HasPrefix(tc.want, "!") && (!ok || got != tc.want):
			t.Errorf("evaluate %q (%s, frame %d): %q, error %q, want %q", tc.expr, tc.context, tc.frame, got, msg, tc.want)
		}
	}
	// A container's result expands.
	r := c.ok("evaluate", map[string]any{"expression": "[x, [1, 2]]", "frameId": 1, "context": "watch"}).(*godap.EvaluateResponse)
	if r.Body.VariablesReference == 0 || r.Body.IndexedVariables != 2 {
		t.Errorf("a list result: %+v", r.Body)
	}
	// Stepped back, the program waits elsewhere: recorded names only.
	c.move("stepBack")
	if got, ok, msg := evaluate(c, "x", "watch", 1); !ok || got != "0" { // square --Call--
		t.Errorf("a recorded local in the past: %q (%s) at %+v", got, msg, c.top())
	}
	if _, ok, msg := evaluate(c, "x + 1", "watch", 1); ok || !strings.Contains(msg, "not waiting here") {
		t.Errorf("an expression in the past: %q", msg)
	}
	c.ok("disconnect", nil)
}

// TestStreamedOutput: what the program prints is an output event as it is
// written, before the next stop, not only at the end; restart runs it anew.
func TestStreamedOutput(t *testing.T) {
	prog := writeProgram(t, "prints.py", "print('one')\nx = 1\nprint('two')\n")
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{2}})
	c.ok("configurationDone", nil)
	stdoutUntilStop := func() string {
		out := ""
		for {
			switch e := c.read().(type) {
			case *godap.OutputEvent:
				if e.Body.Category == "stdout" {
					out += e.Body.Output
				}
			case *godap.StoppedEvent:
				return out
			}
		}
	}
	if out := stdoutUntilStop(); out != "one\n" {
		t.Errorf("stdout before the breakpoint: %q", out)
	}
	c.ok("continue", map[string]any{"threadId": 1})
	if out := stdoutUntilStop(); out != "two\n" {
		t.Errorf("stdout before the end: %q (not again at the end)", out)
	}
	// restart runs the program anew, to the same breakpoint, live again.
	c.ok("restart", nil)
	if out := stdoutUntilStop(); out != "one\n" {
		t.Errorf("stdout after restart: %q", out)
	}
	if top := c.top(); top.Line != 2 {
		t.Errorf("after restart: %+v", top)
	}
	if got, _, msg := evaluate(c, "x", "watch", 1); !strings.HasPrefix(msg, "NameError") {
		t.Errorf("x before line 2 ran: %q %q", got, msg)
	}
	c.ok("disconnect", nil)
}

// TestPostMortem: at an uncaught exception the stack is the traceback's,
// innermost first, evaluate runs in its frames, and exceptionInfo has
// Python's traceback.
func TestPostMortem(t *testing.T) {
	prog := writeProgram(t, "keyerror.py", `def g(d):
    return d['x']


def f():
    d = {'y': 1}
    return g(d)


f()
`)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setExceptionBreakpoints", map[string]any{"filters": []string{"uncaught"}})
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("configurationDone", nil)
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if e.Body.Reason != "exception" || e.Body.Description != "Paused on uncaught exception" {
		t.Errorf("stopped %+v", e.Body)
	}
	st := c.ok("stackTrace", map[string]any{"threadId": 1}).(*godap.StackTraceResponse)
	var frames []string
	for _, f := range st.Body.StackFrames {
		frames = append(frames, f.Name+":"+strconv.Itoa(f.Line))
	}
	if got := strings.Join(frames, " "); got != "g:2 f:7 <module>:10" {
		t.Errorf("post-mortem stack %q", got)
	}
	for _, tc := range []struct {
		expr  string
		frame int
		want  string
	}{{"d", 1, "{'y': 1}"}, {"list(d)", 2, "['y']"}, {"f.__name__", 3, "'f'"}} {
		if got, _, msg := evaluate(c, tc.expr, "repl", tc.frame); got != tc.want {
			t.Errorf("evaluate %q in frame %d: %q (%s), want %q", tc.expr, tc.frame, got, msg, tc.want)
		}
	}
	info := c.ok("exceptionInfo", map[string]any{"threadId": 1}).(*godap.ExceptionInfoResponse).Body
	if info.ExceptionId != "KeyError" || info.Details == nil || !strings.Contains(info.Details.StackTrace, "return d['x']") ||
		!strings.HasSuffix(info.Details.StackTrace, "KeyError: 'x'\n") {
		t.Errorf("exceptionInfo %+v %+v", info, info.Details)
	}
	c.ok("disconnect", nil)
}

// TestConnectionEndsWhileRunning: a client that goes away while its
// program runs ends the session (the run is closed), on stdio too.
func TestConnectionEndsWhileRunning(t *testing.T) {
	a, b := net.Pipe()
	srv := NewServer(sharedReal(), nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), a, a); a.Close() }()
	c := &client{t: t, conn: b, r: bufio.NewReader(b)}
	launchRunning(t, c, writeProgram(t, "endless.py", endless))
	time.Sleep(200 * time.Millisecond)
	b.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not end after the client went away while the program ran")
	}
}

// TestConsoleMatchesPdb: the debug console runs a line as pdb runs one
// that is not a command; each answer (or error) is what python3 -m pdb
// prints for the same line at the same stop (an error without pdb's "*** ").
func TestConsoleMatchesPdb(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	prog := writeProgram(t, "sq.py", `def square(x):
    y = x * x
    return y


def total(n):
    acc = 0
    for i in range(n):
        acc += square(i)
    return acc


print(total(3))
`)
	lines := []string{"x * 10 + 1", "nope", "1/0", "z = 41", "print(z + 1)", "for k in range(3): print(k)",
		"[x, 'a']", "x = 5", "x", "None", "def", "import math; math.sqrt(16)"}
	cmd := exec.Command(python, "-m", "pdb", prog)
	cmd.Dir = filepath.Dir(prog)
	cmd.Stdin = strings.NewReader("b 2\nc\n" + strings.Join(lines, "\n") + "\nq\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m pdb: %v\n%s", err, out)
	}
	segs := strings.Split(string(out), "(Pdb) ")
	if len(segs) < 3+len(lines) {
		t.Fatalf("pdb's output: %q", out)
	}
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{2}})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	for i, line := range lines {
		want := strings.TrimSuffix(segs[3+i], "\n")
		got, ok, msg := evaluate(c, line, "repl", 1)
		if !ok {
			got = "*** " + msg
		}
		if got != want {
			t.Errorf("%q: ndb %q, pdb %q", line, got, want)
		}
	}
}
