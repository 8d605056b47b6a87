package dap

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	godap "github.com/google/go-dap"

	"ndb/engine"
)

// failer is the part of testing.T a client needs; goFailer implements it
// for clients on other goroutines.
type failer interface {
	Helper()
	Fatalf(format string, args ...any)
}

// goFailer records a failure and ends the calling goroutine.
type goFailer struct {
	mu   sync.Mutex
	msgs []string
}

func (g *goFailer) Helper() {}

func (g *goFailer) Fatalf(format string, args ...any) {
	g.mu.Lock()
	g.msgs = append(g.msgs, fmt.Sprintf(format, args...))
	g.mu.Unlock()
	runtime.Goexit()
}

// client is a typed DAP client over a real connection.
type client struct {
	t    failer
	conn net.Conn
	r    *bufio.Reader
	seq  int

	token string // added to launch arguments given as a map
}

func (c *client) send(command string, args any) int {
	c.t.Helper()
	c.seq++
	m := map[string]any{"seq": c.seq, "type": "request", "command": command}
	// The token goes with initialize (a listener accepts nothing else
	// before it) and launch, as launch.json sends it.
	if a, ok := args.(map[string]any); ok && (command == "launch" || command == "initialize") && c.token != "" {
		if _, has := a["token"]; !has {
			a["token"] = c.token
		}
	}
	if args != nil {
		m["arguments"] = args
	}
	b, _ := json.Marshal(m)
	if err := godap.WriteBaseMessage(c.conn, b); err != nil {
		c.t.Fatalf("%v", err)
	}
	return c.seq
}

// read returns the next message, failing after 20 seconds.
func (c *client) read() godap.Message {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	m, err := godap.ReadProtocolMessage(c.r)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

// call sends a request and returns its response and the events that came
// before it.
func (c *client) call(command string, args any) (godap.ResponseMessage, []godap.EventMessage) {
	c.t.Helper()
	seq := c.send(command, args)
	var evs []godap.EventMessage
	for {
		switch m := c.read().(type) {
		case godap.ResponseMessage:
			if m.GetResponse().RequestSeq != seq {
				c.t.Fatalf("response to %d, want %d", m.GetResponse().RequestSeq, seq)
			}
			return m, evs
		case godap.EventMessage:
			evs = append(evs, m)
		}
	}
}

// ok calls and requires success.
func (c *client) ok(command string, args any) godap.ResponseMessage {
	c.t.Helper()
	r, _ := c.call(command, args)
	if !r.GetResponse().Success {
		c.t.Fatalf("%s failed: %s", command, r.GetResponse().Message)
	}
	return r
}

// waitEvent reads until an event called name.
func (c *client) waitEvent(name string) godap.EventMessage {
	c.t.Helper()
	for {
		if e, ok := c.read().(godap.EventMessage); ok && e.GetEvent().Event == name {
			return e
		}
	}
}

// stopped moves and returns the stopped event's reason and the top frame.
func (c *client) move(command string) (string, godap.StackFrame) {
	c.t.Helper()
	c.ok(command, map[string]any{"threadId": 1})
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	return e.Body.Reason, c.top()
}

func (c *client) top() godap.StackFrame {
	c.t.Helper()
	st := c.ok("stackTrace", map[string]any{"threadId": 1}).(*godap.StackTraceResponse)
	if len(st.Body.StackFrames) == 0 {
		return godap.StackFrame{}
	}
	return st.Body.StackFrames[0]
}

func (c *client) locals(frame int) map[string]string {
	c.t.Helper()
	sc := c.ok("scopes", map[string]any{"frameId": frame}).(*godap.ScopesResponse)
	ref := 0
	for _, s := range sc.Body.Scopes {
		if s.Name == "Locals" {
			ref = s.VariablesReference
		}
	}
	vs := c.ok("variables", map[string]any{"variablesReference": ref}).(*godap.VariablesResponse)
	out := map[string]string{}
	for _, v := range vs.Body.Variables {
		out[v.Name] = v.Value
	}
	return out
}

// startServer listens on a loopback port and returns a connected client.
func startServer(t *testing.T, reg *engine.Registry) (*client, func()) {
	t.Helper()
	srv := NewServer(reg, nil)
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- srv.Listen(ctx, "127.0.0.1:0", false, func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, conn: conn, r: bufio.NewReader(conn), token: srv.Token()}
	return c, func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// program is the engine package's calls.py fixture, shared by the front
// ends' tests rather than copied.
func program(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "engine", "testdata", "calls.py"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	regOnce sync.Once
	realReg *engine.Registry
)

func sharedReal() *engine.Registry {
	regOnce.Do(func() { realReg = engine.NewRegistry(engine.Options{Workers: 2, Live: true}) })
	return realReg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if realReg != nil {
		realReg.Close()
	}
	os.Exit(code)
}

func initialize(t *testing.T, c *client) {
	r, evs := c.call("initialize", map[string]any{"adapterID": "ndb", "clientID": "test", "linesStartAt1": true})
	ir, ok := r.(*godap.InitializeResponse)
	if !ok || !ir.Success || !ir.Body.SupportsStepBack || !ir.Body.SupportsConfigurationDoneRequest {
		t.Fatalf("initialize: %+v", r)
	}
	if len(evs) == 0 {
		c.waitEvent("initialized")
	}
}

// TestRealEngineSession is a VS Code-style session on the real engine:
// breakpoints, stepping both ways, stack, scopes, variables, evaluate.
func TestRealEngineSession(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	bp := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)},
		"breakpoints": []map[string]any{{"line": 2}, {"line": 4}}}).(*godap.SetBreakpointsResponse)
	if len(bp.Body.Breakpoints) != 2 || !bp.Body.Breakpoints[0].Verified || bp.Body.Breakpoints[1].Verified {
		t.Fatalf("breakpoints %+v (line 4 is blank)", bp.Body.Breakpoints)
	}
	other := c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": "/elsewhere/other.py"},
		"lines": []int{2}}).(*godap.SetBreakpointsResponse)
	if len(other.Body.Breakpoints) != 1 || other.Body.Breakpoints[0].Verified {
		t.Errorf("a breakpoint in another file must be unverified: %+v", other.Body.Breakpoints)
	}
	c.ok("setExceptionBreakpoints", map[string]any{"filters": []string{}})
	c.ok("configurationDone", nil)
	e := c.waitEvent("stopped").(*godap.StoppedEvent)
	if e.Body.Reason != "breakpoint" {
		t.Errorf("reason %q", e.Body.Reason)
	}
	th := c.ok("threads", nil).(*godap.ThreadsResponse)
	if len(th.Body.Threads) != 1 {
		t.Errorf("threads %+v", th.Body.Threads)
	}
	st := c.ok("stackTrace", map[string]any{"threadId": 1}).(*godap.StackTraceResponse)
	var names []string
	for _, f := range st.Body.StackFrames {
		names = append(names, fmt.Sprintf("%s:%d", f.Name, f.Line))
	}
	if got := strings.Join(names, " "); got != "square:2 total:9 f:14 main:20" {
		t.Errorf("stack %q", got)
	}
	if st.Body.StackFrames[3].Source.SourceReference != wrapperRef {
		t.Errorf("main's frame should point at the wrapper source: %+v", st.Body.StackFrames[3].Source)
	}
	if src := c.ok("source", map[string]any{"sourceReference": wrapperRef}).(*godap.SourceResponse); !strings.Contains(src.Body.Content, "def main():\n    return f('ab', 3)") {
		t.Errorf("wrapper source %q", src.Body.Content)
	}
	if l := c.locals(1); l["x"] != "0" {
		t.Errorf("square's locals %v", l)
	}
	if l := c.locals(3); l["s"] != "'ab'" || l["n"] != "3" {
		t.Errorf("f's locals %v", l)
	}
	ev := c.ok("evaluate", map[string]any{"expression": "x", "frameId": 1}).(*godap.EvaluateResponse)
	if ev.Body.Result != "0" {
		t.Errorf("evaluate x = %q", ev.Body.Result)
	}
	if r, _ := c.call("evaluate", map[string]any{"expression": "nope", "frameId": 1}); r.GetResponse().Success {
		t.Error("evaluating an unknown name must fail")
	}
	steps := []struct {
		cmd, reason string
		line        int
		fn          string
	}{
		{"next", "step", 3, "square"},
		{"next", "step", 3, "square --Return--"},
		{"stepBack", "step", 3, "square"},
		{"stepBack", "step", 2, "square"},
		{"continue", "breakpoint", 2, "square"},
		{"stepOut", "step", 3, "square --Return--"},
		{"stepIn", "step", 8, "total"},
		{"reverseContinue", "breakpoint", 2, "square"},
		{"reverseContinue", "breakpoint", 2, "square"},
		{"reverseContinue", "entry", 19, "main --Call--"}, // no earlier hit: the first stop, with its frame
		{"stepIn", "step", 20, "main"},
	}
	for i, s := range steps {
		reason, top := c.move(s.cmd)
		if reason != s.reason || top.Line != s.line && s.line != 0 || top.Name != s.fn {
			t.Fatalf("step %d %s: reason %q at %s:%d, want %q at %s:%d", i, s.cmd, reason, top.Name, top.Line, s.reason, s.fn, s.line)
		}
		if s.cmd == "stepOut" {
			// issue 20: the Variables pane after Step Out lists the frame's
			// locals (the --Return-- stop has them), next to the return value.
			if l := c.locals(1); l["x"] != "1" || l["y"] != "1" {
				t.Errorf("Locals at %s after stepOut: %v, want x=1, y=1", top.Name, l)
			}
			sc := c.ok("scopes", map[string]any{"frameId": 1}).(*godap.ScopesResponse)
			if len(sc.Body.Scopes) < 2 || sc.Body.Scopes[0].Name != "Return value" || sc.Body.Scopes[1].Name != "Locals" || sc.Body.Scopes[1].NamedVariables == 0 {
				t.Errorf("scopes after stepOut: %+v", sc.Body.Scopes)
			}
		}
	}
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "breakpoints": []any{}})
	// The end is a stop (reason exit) with one frame, so that reverse
	// commands still work.
	if reason, top := c.move("continue"); reason != "exit" || top.Name != "<program ended>" || top.Line != 20 {
		t.Errorf("at the end: reason %q, top %+v", reason, top)
	}
	if reason, top := c.move("stepBack"); reason != "step" || top.Name != "main --Return--" {
		t.Errorf("step back from the end: reason %q, top %+v", reason, top)
	}
	c.ok("pause", map[string]any{"threadId": 1}) // nothing runs: nothing to interrupt (TestPause)
	if r, _ := c.call("fooBar", map[string]any{}); r.GetResponse().Success {
		t.Error("an unknown request must be answered with an error")
	}
	c.ok("disconnect", nil)
}

// TestModelEngineSession drives the model engine (a scripted predictor in
// place of the network) and the neural console commands.
func TestModelEngineSession(t *testing.T) {
	answers := map[string]string{
		"<|step_into|><|frame_sep|>":     `<|line_sep|><|arg_sep|>{}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
		"<|step_over|><|frame_sep|>":     `<|return_sep|><|src_sep|>    return f('ab', 3)<|arg_sep|>"'abab14'"<|action_sep|>`,
		"<|inv_step_over|><|frame_sep|>": `<|inv_call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|>`,
	}
	var mu sync.Mutex
	samples := 0
	pred := engine.PredictorFunc(func(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(prompt, "<|breakpoint|>") {
			panic("the scripted model has no breakpoints")
		}
		if d.Temperature > 0 {
			samples++
			return []string{`<|exit_error|><|trace_end|><|end_of_text|>`}, nil
		}
		for suffix, a := range answers {
			if strings.HasSuffix(prompt, suffix) {
				return []string{a}, nil
			}
		}
		return nil, fmt.Errorf("no scripted answer")
	})
	reg := engine.NewRegistry(engine.Options{Predictor: pred, Workers: 1})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "model", "call": "f('ab', 3)", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	if e := c.waitEvent("stopped").(*godap.StoppedEvent); e.Body.Reason != "entry" {
		t.Errorf("reason %q", e.Body.Reason)
	}
	if top := c.top(); top.Name != "main --Call--" || top.Line != 19 {
		t.Errorf("entry %+v", top)
	}
	if _, top := c.move("stepIn"); top.Line != 20 || top.Name != "main" {
		t.Errorf("stepIn %+v", top)
	}
	if _, top := c.move("next"); top.Name != "main --Return--" {
		t.Errorf("next %+v", top)
	}
	ev := c.ok("evaluate", map[string]any{"expression": "__return__", "frameId": 1}).(*godap.EvaluateResponse)
	if ev.Body.Result != "'abab14'" {
		t.Errorf("predicted return value %q", ev.Body.Result)
	}
	// The console's neural commands.
	c.ok("evaluate", map[string]any{"expression": "back", "context": "repl"})
	c.waitEvent("stopped")
	if top := c.top(); top.Line != 20 {
		t.Errorf("after back: %+v", top)
	}
	c.ok("evaluate", map[string]any{"expression": "set s = 'zz'", "context": "repl"})
	c.waitEvent("stopped")
	if l := c.locals(1); l["s"] != "'zz'" {
		t.Errorf("after set: %v", l)
	}
	c.ok("evaluate", map[string]any{"expression": "back", "context": "repl"})
	c.waitEvent("stopped")
	c.move("stepIn")
	v := c.ok("evaluate", map[string]any{"expression": "verify", "context": "repl"}).(*godap.EvaluateResponse)
	if !strings.Contains(v.Body.Result, "all 2 stops match the real program") {
		t.Errorf("verify: %s", v.Body.Result)
	}
	c.ok("evaluate", map[string]any{"expression": "resample", "context": "repl"})
	if e := c.waitEvent("stopped").(*godap.StoppedEvent); e.Body.Reason != "exit" {
		t.Errorf("resample to the end: %+v", e.Body)
	}
	if samples != 1 {
		t.Errorf("%d samples", samples)
	}
	// A panic inside a request is an error response; the server lives on.
	c.ok("evaluate", map[string]any{"expression": "back", "context": "repl"})
	c.waitEvent("stopped")
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{2}})
	// A model's prediction cannot be paused, so its continue is answered
	// after it ran: the panic is its error response (no stopped event),
	// and the session stays put.
	if r, evs := c.call("continue", map[string]any{"threadId": 1}); r.GetResponse().Success ||
		!strings.Contains(r.GetResponse().Message, "internal error") || hasStopped(evs) {
		t.Errorf("continue into a panicking model: %+v, events %v", r.GetResponse(), evs)
	}
	if top := c.top(); top.Line != 19 {
		t.Errorf("after a failed prediction: %+v", top)
	}
	c.ok("disconnect", nil)
}

func TestLoopbackOnly(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", "localhost:4711", "[::1]:9"} {
		if err := CheckLoopback(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	for _, a := range []string{"0.0.0.0:4711", ":4711", "10.1.2.3:80", "example.com:80", "nonsense"} {
		if err := CheckLoopback(a); err == nil {
			t.Errorf("%s: want a refusal", a)
		}
	}
	srv := NewServer(sharedReal(), nil)
	if err := srv.Listen(context.Background(), "0.0.0.0:0", false, nil); err == nil {
		t.Error("Listen on 0.0.0.0 without allowRemote must fail")
	}
}

// TestStdioPipe serves one session over a pipe, as `ndb dap` does on stdio.
func TestStdioPipe(t *testing.T) {
	a, b := net.Pipe()
	srv := NewServer(sharedReal(), nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), a, a); a.Close() }()
	c := &client{t: t, conn: b, r: bufio.NewReader(b)}
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	if top := c.top(); top.Name != "<module>" || top.Line != 1 {
		t.Errorf("script start %+v", top)
	}
	c.ok("disconnect", nil)
	if err := <-done; err != nil {
		t.Error(err)
	}
	b.Close()
}

// TestFiftyConcurrentConnections: 50 DAP clients at once on one loopback
// server, each running the real engine to a breakpoint and to the end.
func TestFiftyConcurrentConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("50 sessions")
	}
	srv := NewServer(sharedReal(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrc := make(chan net.Addr, 1)
	go srv.Listen(ctx, "127.0.0.1:0", false, func(a net.Addr) { addrc <- a })
	addr := (<-addrc).String()
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan string, 4*n)
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer conn.Close()
			// t.Fatal cannot run off the test goroutine: record failures
			// and report them here.
			sub := &goFailer{}
			c := &client{t: sub, conn: conn, r: bufio.NewReader(conn), token: srv.Token()}
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.ok("initialize", map[string]any{"adapterID": "ndb"})
				c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": fmt.Sprintf("f('x', %d)", i%5+1)})
				c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)}, "lines": []int{15}})
				c.ok("configurationDone", nil)
				c.waitEvent("stopped")
				if l := c.locals(1); l["t"] != fmt.Sprint(map[int]int{1: 0, 2: 1, 3: 5, 4: 14, 5: 30}[i%5+1]) {
					errs <- fmt.Sprintf("client %d: locals %v", i, l)
				}
				c.ok("continue", map[string]any{"threadId": 1})
				c.waitEvent("stopped") // at the end
				c.ok("disconnect", nil)
			}()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				errs <- fmt.Sprintf("client %d: timed out", i)
			}
			for _, m := range sub.msgs {
				errs <- fmt.Sprintf("client %d: %s", i, m)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("%d concurrent DAP sessions in %v", n, time.Since(start))
}

// TestProgramThatNeverStarts: a launch without arguments asks for the
// program; a program with a syntax error ends at configurationDone with
// the SyntaxError on the console, exited and terminated (it was reported
// as a stop "before the start" with "the program has exited"), and a
// later step says where the session is: after the end.
func TestProgramThatNeverStarts(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	if r, _ := c.call("launch", map[string]any{}); r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, `"program"`) {
		t.Errorf("launch without arguments: %+v", r.GetResponse())
	}
	bad := filepath.Join(t.TempDir(), "bad.py")
	if err := os.WriteFile(bad, []byte("def f(:\n    pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok("launch", map[string]any{"program": bad, "engine": "real"})
	c.ok("configurationDone", nil)
	var console string
	for done := false; !done; {
		switch e := c.read().(type) {
		case *godap.OutputEvent:
			console += e.Body.Output
		case *godap.StoppedEvent:
			t.Fatalf("stopped at a program that never started: %+v", e.Body)
		case *godap.ExitedEvent:
			if e.Body.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", e.Body.ExitCode)
			}
		case *godap.TerminatedEvent:
			done = true
		}
	}
	if !strings.Contains(console, "SyntaxError") {
		t.Errorf("console %q does not show the syntax error", console)
	}
	// After terminated nothing moves and no event follows.
	if r, evs := c.call("continue", map[string]any{"threadId": 1}); r.GetResponse().Success || len(evs) > 0 {
		t.Errorf("continue after terminated: %+v, events %v", r.GetResponse(), evs)
	}
	c.ok("disconnect", nil)

	// What a real program printed reaches the console when it ends.
	c2, stop2 := startServer(t, sharedReal())
	defer stop2()
	initialize(t, c2)
	hello := filepath.Join(t.TempDir(), "hello.py")
	if err := os.WriteFile(hello, []byte("print('hello, ndb')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c2.ok("launch", map[string]any{"program": hello, "engine": "real"})
	c2.ok("configurationDone", nil)
	stdout := ""
	for {
		e := c2.read()
		if o, ok := e.(*godap.OutputEvent); ok && o.Body.Category == "stdout" {
			stdout += o.Body.Output // as it is written: print writes the text, then the newline
		}
		if _, ok := e.(*godap.StoppedEvent); ok {
			break
		}
	}
	if stdout != "hello, ndb\n" {
		t.Errorf("stdout before the stop at the end: %q", stdout)
	}
	c2.ok("disconnect", nil)
}
