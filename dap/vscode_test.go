package dap

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"ndb/debugger"
	"ndb/engine"
	"ndb/tracer"
)

// writeProgram writes a Python file into a temporary folder.
func writeProgram(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const loopProgram = `def f(xs):
    total = 0
    for i in range(len(xs)):
        total += xs[i]
    return total


nums = [3, [1, 2], 'a,b']
d = {'k': (1, 2), 'z': None}
r = f([5, 6, 7, 8, 9])
print(r)
`

// dial connects a client to a listening server without a token.
func dial(t *testing.T, network, addr string) *client {
	t.Helper()
	conn, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// closed reports whether the server closed the connection.
func closed(c *client) bool {
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := c.r.ReadByte()
	return err != nil
}

// TestListenToken: a TCP connection must present the token; before it
// only initialize passes (answered, its initialized event held back until
// the token); anything else, or a wrong token, is an error response and
// the connection is closed. The token works in initialize or launch.
func TestListenToken(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	tok := c.token
	if len(tok) != 32 {
		t.Fatalf("token %q, want 32 hex digits", tok)
	}
	addr := c.conn.RemoteAddr().String()

	// Before the token: initialize is answered; setBreakpoints (accepted
	// before, as configuration) and evaluate close the connection.
	for _, cmd := range []string{"setBreakpoints", "evaluate", "configurationDone", "threads", "disconnect"} {
		a := dial(t, "tcp", addr)
		r, evs := a.call("initialize", map[string]any{"adapterID": "ndb"})
		if !r.GetResponse().Success || len(evs) > 0 {
			t.Fatalf("initialize without the token: %+v, events %v", r.GetResponse(), evs)
		}
		args := map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{2}, "expression": "x"}
		if r, _ := a.call(cmd, args); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "token") {
			t.Errorf("%s before the token: %+v", cmd, r.GetResponse())
		}
		if !closed(a) {
			t.Errorf("the connection stays open after %s without the token", cmd)
		}
	}
	// launch without a token, and with a wrong one.
	for _, args := range []map[string]any{{"program": program(t)}, {"program": program(t), "token": "nope"}, {"program": program(t), "token": 5}} {
		b := dial(t, "tcp", addr)
		r, _ := b.call("launch", args)
		if r.GetResponse().Success {
			t.Errorf("launch %v succeeded", args)
		}
		if !closed(b) {
			t.Errorf("launch %v: connection still open", args)
		}
	}
	// The token in launch (VS Code's debugServer): initialized comes after
	// launch, then configuration passes.
	e := dial(t, "tcp", addr)
	if _, evs := e.call("initialize", map[string]any{"adapterID": "ndb"}); len(evs) > 0 {
		t.Errorf("events before the token: %v", evs)
	}
	// (initialized follows the request being answered when the token
	// came: it may come just before the launch response.)
	r, evs := e.call("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)", "token": tok})
	if !r.GetResponse().Success {
		t.Fatalf("launch with the token: %+v", r.GetResponse())
	}
	if !slices.ContainsFunc(evs, func(e godap.EventMessage) bool { return e.GetEvent().Event == "initialized" }) {
		e.waitEvent("initialized")
	}
	e.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{2}})
	e.ok("configurationDone", nil)
	e.waitEvent("stopped")
	if top := e.top(); top.Name != "square" || top.Line != 2 {
		t.Errorf("stopped at %+v, want square:2", top)
	}
	e.ok("disconnect", nil)
	// The right token, given in initialize's arguments, also works.
	d := dial(t, "tcp", addr)
	d.ok("initialize", map[string]any{"adapterID": "ndb", "token": tok})
	d.waitEvent("initialized")
	d.ok("launch", map[string]any{"program": program(t), "engine": "real", "stopOnEntry": true})
	d.ok("configurationDone", nil)
	d.waitEvent("stopped")
	d.ok("disconnect", nil)
}

// TestUnixSocket: --listen unix:PATH makes a 0600 socket and needs no token.
func TestUnixSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ndb.sock")
	srv := NewServer(sharedReal(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Listen(ctx, UnixPrefix+path, false, func(a net.Addr) { ready <- a }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v %v, want a socket of mode 0600", fi.Mode(), err)
	}
	c := dial(t, "unix", path)
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	c.ok("disconnect", nil)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// TestConfigurationDoneBeforeLaunch: the order of @vscode/debugadapter-
// testsupport (configurationDone, then launch) runs to the breakpoint.
func TestConfigurationDoneBeforeLaunch(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{2}})
	c.ok("configurationDone", nil)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if top := c.top(); e.Body.Reason != "breakpoint" || top.Name != "square" || top.Line != 2 {
		t.Errorf("stopped %q at %+v", e.Body.Reason, top)
	}
	c.ok("disconnect", nil)
}

// TestBreakpointsOfTwoFilesBeforeLaunch: breakpoints of another file set
// before launch neither replace the program's nor land in it.
func TestBreakpointsOfTwoFilesBeforeLaunch(t *testing.T) {
	other := writeProgram(t, "other.py", "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\n")
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	mine := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{9}}).(*godap.SetBreakpointsResponse)
	theirs := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": other}, "lines": []int{2}}).(*godap.SetBreakpointsResponse)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	_, evs := c.call("configurationDone", nil)
	var changed []godap.Breakpoint
	for i := 0; ; i++ {
		var m godap.Message
		if i < len(evs) {
			m = evs[i]
		} else {
			m = c.read()
		}
		if b, ok := m.(*godap.BreakpointEvent); ok {
			changed = append(changed, b.Body.Breakpoint)
		}
		if e, ok := m.(*godap.StoppedEvent); ok {
			if e.Body.Reason != "breakpoint" {
				t.Errorf("reason %q", e.Body.Reason)
			}
			break
		}
	}
	if top := c.top(); top.Name != "total" || top.Line != 9 {
		t.Errorf("stopped at %+v, want total:9 (line 2 is the other file's)", top)
	}
	if len(changed) != 1 || changed[0].Id != theirs.Body.Breakpoints[0].Id || changed[0].Verified || changed[0].Id == mine.Body.Breakpoints[0].Id {
		t.Errorf("breakpoint events %+v: want the other file's unverified", changed)
	}
	c.ok("disconnect", nil)
}

// TestNoEventsAfterTerminated: after terminated, requests that move fail
// and no output or stopped event follows.
func TestNoEventsAfterTerminated(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	c.ok("terminate", nil)
	c.waitEvent("terminated")
	for _, cmd := range []string{"next", "continue", "reverseContinue", "stepBack"} {
		r, evs := c.call(cmd, map[string]any{"threadId": 1})
		if r.GetResponse().Success || len(evs) != 0 {
			t.Errorf("%s after terminated: %+v, events %d", cmd, r.GetResponse(), len(evs))
		}
	}
	if _, evs := c.call("evaluate", map[string]any{"expression": "back", "context": "repl"}); len(evs) != 0 {
		t.Errorf("events after terminated: %v", evs)
	}
	c.ok("disconnect", nil)
}

// TestHumanDescriptions: stopped.description reads as a person would say it.
func TestHumanDescriptions(t *testing.T) {
	st := func(ev, fn string) debugger.Stop {
		return debugger.Stop{State: tracer.State{Event: ev, Function: fn}}
	}
	for _, c := range []struct {
		st     debugger.Stop
		reason string
		want   string
	}{
		{st("line", "f"), "step", "Paused on step"},
		{st("line", "f"), "breakpoint", "Paused on breakpoint"},
		{st("call", "f"), "entry", "Paused on entry"},
		{st("call", "f"), "step", "Called f"},
		{st("return", "f"), "step", "Returned from f"},
		{st("exception", "f"), "exception", "Paused on exception in f"},
		{debugger.Stop{State: tracer.State{Event: "exit"}, Exit: "normal"}, "exit", "Program ended"},
		{debugger.Stop{State: tracer.State{Event: "exit"}, Exit: "error"}, "exit", "Program ended with an uncaught exception"},
	} {
		if got := describe(c.st, c.reason); got != c.want {
			t.Errorf("describe(%s %s, %s) = %q, want %q", c.st.Event, c.st.Function, c.reason, got, c.want)
		}
	}
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{3}})
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	c.ok("configurationDone", nil)
	if e := c.waitEvent("stopped").(*godap.StoppedEvent); e.Body.Description != "Paused on breakpoint" {
		t.Errorf("description %q", e.Body.Description)
	}
	c.ok("next", map[string]any{"threadId": 1})
	if e := c.waitEvent("stopped").(*godap.StoppedEvent); e.Body.Description != "Returned from square" {
		t.Errorf("description %q", e.Body.Description)
	}
	c.ok("disconnect", nil)
}

// TestExpandableVariables: lists, dicts and tuples expand into their
// elements, read from the repr.
func TestExpandableVariables(t *testing.T) {
	prog := writeProgram(t, "loop.py", loopProgram)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{10}})
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	sc := c.ok("scopes", map[string]any{"frameId": 1}).(*godap.ScopesResponse)
	vars := c.ok("variables", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference}).(*godap.VariablesResponse)
	byName := map[string]godap.Variable{}
	for _, v := range vars.Body.Variables {
		byName[v.Name] = v
	}
	expand := func(v godap.Variable) map[string]godap.Variable {
		t.Helper()
		if v.VariablesReference == 0 {
			t.Fatalf("%s = %s is not expandable", v.Name, v.Value)
		}
		r := c.ok("variables", map[string]any{"variablesReference": v.VariablesReference}).(*godap.VariablesResponse)
		out := map[string]godap.Variable{}
		for _, k := range r.Body.Variables {
			out[k.Name] = k
		}
		return out
	}
	nums := expand(byName["nums"])
	if byName["nums"].IndexedVariables != 3 || nums["0"].Value != "3" || nums["2"].Value != "'a,b'" || nums["0"].VariablesReference != 0 {
		t.Errorf("nums: %+v -> %+v", byName["nums"], nums)
	}
	if inner := expand(nums["1"]); inner["1"].Value != "2" {
		t.Errorf("nums[1]: %+v", inner)
	}
	d := expand(byName["d"])
	if d["'k'"].Value != "(1, 2)" || d["'z'"].Value != "None" || byName["d"].NamedVariables != 2 {
		t.Errorf("d: %+v", d)
	}
	if k := expand(d["'k'"]); k["0"].Value != "1" || k["1"].Value != "2" {
		t.Errorf("d['k']: %+v", k)
	}
	c.ok("disconnect", nil)
}

func TestChildren(t *testing.T) {
	for _, c := range []struct {
		repr string
		want string // name=value; ... or "-" for not expandable
	}{
		{"1", "-"},
		{"'[1, 2]'", "-"},
		{"[]", "-"},
		{"<__main__.A object at 0x7f>", "-"},
		{"[1, 'a, b', [2, 3]]", "0=1; 1='a, b'; 2=[2, 3]"},
		{"(1,)", "0=1"},
		{"{'a': 1, 'b': {'c': [1, 2]}}", "'a'=1; 'b'={'c': [1, 2]}"},
		{"{1, 2}", "0=1; 1=2"},
		{"Point(x=1, y='a=b')", "x=1; y='a=b'"},
		{"deque([1, 2])", "0=1; 1=2"},
		{"defaultdict(<class 'int'>, {'a': 1})", "0=<class 'int'>; 1={'a': 1}"},
		{"{'a': 1, 'b': [1, 2, ...", "'a'=1; ...='b': [1, 2, ..."},
		{`["it's", "x\"]"]`, `0="it's"; 1="x\"]"`},
	} {
		kids, ok := children(c.repr)
		got := "-"
		if ok {
			var parts []string
			for _, k := range kids {
				parts = append(parts, k.name+"="+k.value)
			}
			got = strings.Join(parts, "; ")
		}
		if got != c.want {
			t.Errorf("children(%s) = %s, want %s", c.repr, got, c.want)
		}
	}
}

// TestConditionalBreakpoints: a condition is the session's to judge, as
// the terminal's: a Python expression set before launch holds on the live
// real engine, and continue and reverse continue honour conditions.
func TestConditionalBreakpoints(t *testing.T) {
	prog := writeProgram(t, "loop.py", loopProgram)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	bp := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog},
		"breakpoints": []map[string]any{{"line": 4, "condition": "i == 3 and len(xs) > 2"}}}).(*godap.SetBreakpointsResponse)
	if b := bp.Body.Breakpoints; !b[0].Verified {
		t.Errorf("breakpoints %+v", b)
	}
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	if l := c.locals(1); l["i"] != "3" || l["total"] != "18" {
		t.Errorf("stopped with %v, want i=3", l)
	}
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog},
		"breakpoints": []map[string]any{{"line": 4, "condition": "total < 5"}}})
	if reason, _ := c.move("reverseContinue"); reason != "breakpoint" {
		t.Errorf("reverse continue: %q", reason)
	}
	if l := c.locals(1); l["i"] != "0" {
		t.Errorf("reverse continue to total < 5 stopped with %v, want i=0 (total=0)", l)
	}
	// Steps pass conditional breakpoints.
	c.move("next")
	c.move("next")
	if l := c.locals(1); l["i"] != "1" {
		t.Errorf("after two steps %v", l)
	}
	if reason, top := c.move("continue"); reason != "exit" {
		t.Errorf("continue with no true condition left: %q %+v", reason, top)
	}
	c.ok("disconnect", nil)
}

// TestNoDebug: noDebug runs to the end without stopping, breakpoints or not.
func TestNoDebug(t *testing.T) {
	prog := writeProgram(t, "loop.py", loopProgram)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{4}})
	c.ok("launch", map[string]any{"program": prog, "engine": "real", "noDebug": true, "stopOnEntry": true})
	c.ok("configurationDone", nil)
	out := ""
	for done := false; !done; {
		switch e := c.read().(type) {
		case *godap.StoppedEvent:
			t.Fatalf("stopped with noDebug: %+v", e.Body)
		case *godap.OutputEvent:
			out += e.Body.Output
		case *godap.TerminatedEvent:
			done = true
		}
	}
	if !strings.Contains(out, "35\n") {
		t.Errorf("output %q", out)
	}
	c.ok("disconnect", nil)
}

const raisesProgram = `def check(v):
    if v > 2:
        raise ValueError("too big")
    return v


out = []
for v in [1, 3]:
    try:
        out.append(check(v))
    except ValueError:
        out.append(-1)
raise KeyError('end')
`

// TestExceptionFilters: "raised" stops where exceptions are raised (and
// pass through frames), "uncaught" makes the end by an exception an
// exception stop; an unknown filter is unverified.
func TestExceptionFilters(t *testing.T) {
	prog := writeProgram(t, "raises.py", raisesProgram)
	c, stop := startServer(t, sharedReal())
	defer stop()
	r, _ := c.call("initialize", map[string]any{"adapterID": "ndb"})
	if f := r.(*godap.InitializeResponse).Body.ExceptionBreakpointFilters; len(f) != 2 || f[0].Filter != "raised" || f[1].Filter != "uncaught" {
		t.Fatalf("filters %+v", f)
	}
	eb := c.ok("setExceptionBreakpoints", map[string]any{"filters": []string{"raised", "uncaught", "nope"}}).(*godap.SetExceptionBreakpointsResponse)
	if b := eb.Body.Breakpoints; len(b) != 3 || !b[0].Verified || !b[1].Verified || b[2].Verified {
		t.Errorf("exception breakpoints %+v", b)
	}
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("configurationDone", nil)
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if top := c.top(); e.Body.Reason != "exception" || top.Name != "check --Exception--" || top.Line != 3 {
		t.Fatalf("first stop %q at %+v", e.Body.Reason, top)
	}
	var where []string
	for range 3 {
		reason, top := c.move("continue")
		where = append(where, fmt.Sprintf("%s %s:%d", reason, top.Name, top.Line))
	}
	// The uncaught exception's stop is a post-mortem: the stack is the
	// traceback's (here one frame), where expressions evaluate.
	want := []string{"exception <module> --Exception--:10", "exception <module> --Exception--:13", "exception <module>:13"}
	if strings.Join(where, ", ") != strings.Join(want, ", ") {
		t.Errorf("stops %q, want %q", where, want)
	}
	if ev := c.ok("evaluate", map[string]any{"expression": "out", "frameId": 1, "context": "watch"}).(*godap.EvaluateResponse); ev.Body.Result != "[1, -1]" {
		t.Errorf("evaluate out at the post-mortem: %q", ev.Body.Result)
	}
	info := c.ok("exceptionInfo", map[string]any{"threadId": 1}).(*godap.ExceptionInfoResponse).Body
	if info.ExceptionId != "KeyError" || info.Description != "KeyError: 'end'" || info.BreakMode != "unhandled" ||
		info.Details == nil || !strings.HasPrefix(info.Details.StackTrace, "Traceback (most recent call last):") {
		t.Errorf("exceptionInfo %+v %+v", info, info.Details)
	}
	if reason, top := c.move("stepBack"); reason != "step" || top.Line != 13 {
		t.Errorf("step back from the post-mortem stop: %q %+v", reason, top)
	}
	c.ok("disconnect", nil)

	// Without filters, continue runs to the end.
	c2, stop2 := startServer(t, sharedReal())
	defer stop2()
	initialize(t, c2)
	c2.ok("setExceptionBreakpoints", map[string]any{"filters": []string{}})
	c2.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c2.ok("configurationDone", nil)
	if e := c2.waitEvent("stopped").(*godap.StoppedEvent); e.Body.Reason != "exit" || e.Body.Description != "Program ended with an uncaught exception" {
		t.Errorf("without filters: %+v", e.Body)
	}
	c2.ok("disconnect", nil)
}

// TestSetVariable: a model engine's local can be set (the next prediction
// continues from it); on the real engine the live program runs NAME = VALUE
// in the frame, and the run goes on with the new value.
func TestSetVariable(t *testing.T) {
	pred := engine.PredictorFunc(func(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
		if strings.HasSuffix(prompt, "<|step_into|><|frame_sep|>") {
			return []string{`<|line_sep|><|arg_sep|>{"s": "'ab'"}<|src_sep|>    return f('ab', 3)<|action_sep|>`}, nil
		}
		return nil, fmt.Errorf("no scripted answer")
	})
	reg := engine.NewRegistry(engine.Options{Predictor: pred, Workers: 1, Live: true})
	defer reg.Close()
	set := func(c *client, name, value string) godap.ResponseMessage {
		sc := c.ok("scopes", map[string]any{"frameId": 1}).(*godap.ScopesResponse)
		r, _ := c.call("setVariable", map[string]any{"variablesReference": sc.Body.Scopes[0].VariablesReference, "name": name, "value": value})
		return r
	}
	for _, eng := range []string{"model", "real"} {
		c, stop := startServer(t, reg)
		initialize(t, c)
		c.ok("launch", map[string]any{"program": program(t), "engine": eng, "call": "f('ab', 3)", "stopOnEntry": true})
		c.ok("configurationDone", nil)
		c.waitEvent("stopped")
		c.move("stepIn")
		if eng == "model" {
			r := set(c, "s", "[1, 2]")
			if !r.GetResponse().Success {
				t.Fatalf("model engine: %s", r.GetResponse().Message)
			}
			if b := r.(*godap.SetVariableResponse).Body; b.Value != "[1, 2]" || b.VariablesReference == 0 {
				t.Errorf("setVariable answer %+v", b)
			}
			if l := c.locals(1); l["s"] != "[1, 2]" {
				t.Errorf("locals after setVariable: %v", l)
			}
			// The value is one expression over the predicted values.
			if r := set(c, "t", "s * 2"); !r.GetResponse().Success || r.(*godap.SetVariableResponse).Body.Value != "[1, 2, 1, 2]" {
				t.Errorf("set t = s * 2: %+v", r)
			}
			if r := set(c, "s", "5; import os"); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "one Python expression") {
				t.Errorf("set s = 5; import os: %+v", r.GetResponse())
			}
			if l := c.locals(1); l["s"] != "[1, 2]" {
				t.Errorf("locals after a refused set: %v", l)
			}
		} else {
			c.move("stepIn")
			if _, top := c.move("stepIn"); top.Name != "f" || top.Line != 14 {
				t.Fatalf("at %+v, want f:14", top)
			}
			r := set(c, "n", "1")
			if !r.GetResponse().Success || r.(*godap.SetVariableResponse).Body.Value != "1" {
				t.Fatalf("real engine: setVariable n = 1: %+v", r)
			}
			if l := c.locals(1); l["n"] != "1" {
				t.Errorf("locals after setVariable: %v", l)
			}
			c.move("next") // t = total(n) with n = 1
			if l := c.locals(1); l["t"] != "0" {
				t.Errorf("after setting n = 1, t = total(n) gave %v, want 0 (total(3) is 5)", l)
			}
			if r := set(c, "n", "1 +"); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "SyntaxError") {
				t.Errorf("a value that does not compile: %+v", r.GetResponse())
			}
			// The name and the value never make one line of source: a value
			// with a statement is refused and nothing runs.
			for _, bad := range [][2]string{{"n", "5; import os"}, {"n", "5\nimport os"}, {"n = 5; import os; n", "1"}} {
				if r := set(c, bad[0], bad[1]); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "one Python expression") && !strings.Contains(r.GetResponse().Message, "not a variable name") {
					t.Errorf("set %q = %q: %+v", bad[0], bad[1], r.GetResponse())
				}
			}
			if l := c.locals(1); l["n"] != "1" || l["os"] != "" {
				t.Errorf("locals after the refused sets: %v, want n = 1 and no os", l)
			}
			c.move("stepBack") // the recorded past: the live program waits elsewhere
			if r := set(c, "n", "2"); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "not waiting here") {
				t.Errorf("setVariable in the past: %+v", r.GetResponse())
			}
		}
		c.ok("disconnect", nil)
		stop()
	}
}

// TestFunctionBreakpoints: set before launch, a function breakpoint
// resolves at launch (a breakpoint event) to the def line, as pdb's
// `b total`, and stops at the first line the function runs;
// it coexists with line breakpoints.
func TestFunctionBreakpoints(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	fb := c.ok("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "total"}, {"name": "missing"}}}).(*godap.SetFunctionBreakpointsResponse)
	if len(fb.Body.Breakpoints) != 2 || fb.Body.Breakpoints[0].Verified {
		t.Fatalf("before launch: %+v", fb.Body.Breakpoints)
	}
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{16}})
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	_, evs := c.call("configurationDone", nil)
	got := map[int]godap.Breakpoint{}
	for _, e := range evs {
		if b, ok := e.(*godap.BreakpointEvent); ok {
			got[b.Body.Breakpoint.Id] = b.Body.Breakpoint
		}
	}
	if b := got[fb.Body.Breakpoints[0].Id]; !b.Verified || b.Line != 6 {
		t.Errorf("total resolved to %+v, want its def line 6, as pdb's b total", b)
	}
	if b := got[fb.Body.Breakpoints[1].Id]; b.Verified || !strings.Contains(b.Message, "no function") {
		t.Errorf("missing resolved to %+v", b)
	}
	c.waitEvent("stopped")
	if top := c.top(); top.Name != "total" || top.Line != 7 {
		t.Errorf("stopped at %+v, want total:7", top)
	}
	if _, top := c.move("continue"); top.Name != "f" || top.Line != 16 {
		t.Errorf("then %+v, want the line breakpoint f:16", top)
	}
	// Cleared after launch: only the line breakpoint's hits remain.
	fb = c.ok("setFunctionBreakpoints", map[string]any{"breakpoints": []any{}}).(*godap.SetFunctionBreakpointsResponse)
	if reason, _ := c.move("reverseContinue"); reason != "entry" {
		t.Errorf("reverse continue with only f:16 behind... reason %q", reason)
	}
	c.ok("disconnect", nil)
}

// TestRaisedFilterKeepsPdbBreakpoints: with the raised filter a continue
// stops at every exception event and at breakpoints by the session's one
// rule: a Python condition evaluated in the frame (DAP's own check took any
// condition it could not read as a stop, at i == 0) and hit counts as pdb
// keeps them.
func TestRaisedFilterKeepsPdbBreakpoints(t *testing.T) {
	prog := writeProgram(t, "caught.py", `def check(v):
    if v < 0:
        raise ValueError(v)
    return v

xs = [1, -1, 2]
for i in range(3):
    try:
        check(xs[i])
    except ValueError:
        pass
print('done')
`)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("setExceptionBreakpoints", map[string]any{"filters": []string{"raised"}})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog},
		"breakpoints": []map[string]any{{"line": 9, "condition": "i == 2 and len(xs) > 0"}}})
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	c.ok("configurationDone", nil)
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	top := c.top()
	where := []string{fmt.Sprintf("%s %s:%d", e.Body.Reason, top.Name, top.Line)}
	for range 3 {
		reason, top := c.move("continue")
		where = append(where, fmt.Sprintf("%s %s:%d", reason, top.Name, top.Line))
		if l := c.locals(1); reason == "breakpoint" && l["i"] != "2" {
			t.Errorf("the breakpoint stopped with %v, want i=2", l)
		}
	}
	want := []string{"exception check --Exception--:3", "exception <module> --Exception--:9", "breakpoint <module>:9", "exit <program ended>:12"}
	if strings.Join(where, ", ") != strings.Join(want, ", ") {
		t.Errorf("stops %q, want %q", where, want)
	}
	c.ok("disconnect", nil)
}
