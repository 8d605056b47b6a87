package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/engine"
)

var (
	regOnce sync.Once
	reg     *engine.Registry
)

// testRegistry has the real engine and a scripted "model" that answers
// input prediction.
func testRegistry() *engine.Registry {
	regOnce.Do(func() {
		pred := engine.PredictorFunc(func(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
			if strings.HasSuffix(prompt, "def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|>") {
				return []string{`<|line_sep|><|arg_sep|>{}<|src_sep|>    return g(3)<|action_sep|>`}, nil
			}
			if strings.HasSuffix(prompt, "<|inv_step_call|><|frame_sep|>") {
				return []string{`<|inv_call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'ab'", "n": "2"}<|action_sep|>`}, nil
			}
			return nil, fmt.Errorf("scripted model: no answer")
		})
		reg = engine.NewRegistry(engine.Options{Predictor: pred, Workers: 2, Live: true})
	})
	return reg
}

func TestMain(m *testing.M) {
	code := m.Run()
	if reg != nil {
		reg.Close()
	}
	os.Exit(code)
}

// newServer is NewServer whose workspace is the repository (the tests'
// programs are the engine's fixtures), closed when the test ends.
func newServer(t testing.TB, reg *engine.Registry, def string) *Server {
	t.Helper()
	srv := NewServer(reg, def)
	ws, err := NewWorkspace([]string{".."})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetWorkspace(ws)
	t.Cleanup(srv.Close)
	return srv
}

// connect starts srv on an in-memory transport and returns a client.
func connect(t testing.TB, srv *sdk.Server) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes a tool and decodes its structured answer into out; it
// returns the text content and whether the tool reported an error.
func call(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any, out any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text += tc.Text
		}
	}
	if !res.IsError && out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}
	return text, res.IsError
}

func mustCall(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any, out any) string {
	t.Helper()
	text, isErr := call(t, cs, tool, args, out)
	if isErr {
		t.Fatalf("%s %v: %s", tool, args, text)
	}
	return text
}

func TestExactlyTheseTools(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "real").MCPServer())
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	want := []string{"debug_breakpoint", "debug_context", "debug_continue", "debug_end", "debug_restart", "debug_sessions",
		"debug_source", "debug_start", "debug_step", "evaluate", "predict_input", "predict_output"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestRealEngineSession(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "model").MCPServer())
	prog, _ := filepath.Abs(filepath.Join("..", "engine", "testdata", "calls.py")) // the engine's fixture, shared
	var st Stop
	text := mustCall(t, cs, ToolStart, map[string]any{"program": prog, "engine": "real", "call": "f('ab', 3)"}, &st)
	if st.Session == "" || st.Event != "call" || st.Function != "main" || st.Line != 19 {
		t.Fatalf("start %+v", st)
	}
	if !strings.HasPrefix(text, st.Session+" (real engine) call main:19") {
		t.Errorf("text %q", text)
	}
	id := st.Session
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "into"}, &st)
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "into"}, &st)
	if st.Function != "f" || st.Locals["s"] != "'ab'" || st.Locals["n"] != "3" {
		t.Errorf("into f: %+v", st)
	}
	var bps Breakpoints
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id, "line": 2}, &bps)
	if !slices.Equal(bps.Breakpoints, []Breakpoint{{Line: 2}}) {
		t.Errorf("breakpoints %v", bps)
	}
	if _, isErr := call(t, cs, ToolBreakpoint, map[string]any{"session": id, "line": 4}, nil); !isErr {
		t.Error("a breakpoint on a blank line must be refused")
	}
	mustCall(t, cs, ToolContinue, map[string]any{"session": id}, &st)
	if st.Function != "square" || st.Line != 2 || st.Locals["x"] != "0" {
		t.Errorf("continue: %+v", st)
	}
	var c Context
	text = mustCall(t, cs, ToolContext, map[string]any{"session": id}, &c)
	if c.Location != "square:2" || strings.Join(c.Stack, " ") != "main:20 f:14 total:9 square:2" || c.Locals["x"] != "0" {
		t.Errorf("context %+v", c)
	}
	if !strings.Contains(text, "stack: main:20 > f:14 > total:9 > square:2") || !strings.Contains(text, "locals: x=0") {
		t.Errorf("context text %q", text)
	}
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "out"}, &st)
	if st.Event != "return" || st.Value != "0" {
		t.Errorf("out: %+v", st)
	}
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "back_call"}, &st)
	if st.Event != "call" || st.Function != "square" || st.Locals["x"] != "0" {
		t.Errorf("back_call: %+v", st)
	}
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "back_into"}, &st)
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "back_over"}, &st)
	if st.Function != "total" {
		t.Errorf("back: %+v", st)
	}
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id, "line": 2, "clear": true}, &bps)
	mustCall(t, cs, ToolContinue, map[string]any{"session": id}, &st)
	if st.Event != "exit" || st.Exit != "normal" {
		t.Errorf("end: %+v", st)
	}
	for _, bad := range []struct {
		tool string
		args map[string]any
	}{
		{ToolStep, map[string]any{"session": "nope", "mode": "into"}},
		{ToolStep, map[string]any{"session": id, "mode": "sideways"}},
		{ToolContinue, map[string]any{"session": id}}, // past the end
		{ToolStart, map[string]any{"program": "/no/such/file.py"}},
		{ToolStart, map[string]any{"program": prog, "engine": "gpt"}},
	} {
		if text, isErr := call(t, cs, bad.tool, bad.args, nil); !isErr {
			t.Errorf("%s %v: want a tool error, got %q", bad.tool, bad.args, text)
		}
	}
}

func TestPredictTools(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "model").MCPServer())
	code := "def f(s, n):\n    return s * n\n"
	var p Prediction
	text := mustCall(t, cs, ToolPredictOutput, map[string]any{"code": code, "call": "f('ab', 2)", "engine": "real"}, &p)
	if p.Output != "'abab'" || text != "'abab'" {
		t.Errorf("predict_output %+v %q", p, text)
	}
	text = mustCall(t, cs, ToolPredictInput, map[string]any{"code": code, "function": "f", "output": "'abab'"}, &p)
	if text != "f('ab', 2)  [predicted]" || p.Args["n"] != "2" || p.Engine != "model" || !p.Predicted {
		t.Errorf("predict_input %+v %q", p, text)
	}
	if _, isErr := call(t, cs, ToolPredictInput, map[string]any{"code": code, "function": "f", "output": "'abab'", "engine": "real"}, nil); !isErr {
		t.Error("the real engine cannot predict inputs")
	}
}

// TestFiftyConcurrentSessions runs 50 clients at once, each debugging its
// own program on the real engine to the end, within a time bound.
func TestFiftyConcurrentSessions(t *testing.T) {
	const n = 50
	srv := newServer(t, testRegistry(), "real")
	mcpSrv := srv.MCPServer()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	code := "def g(k):\n    total = 0\n    for i in range(k):\n        total += i\n    return total\n"
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for i := range n {
		cs := connect(t, mcpSrv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolStart, Arguments: map[string]any{"program": code, "engine": "real", "call": fmt.Sprintf("g(%d)", i)}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("client %d start: %v %s", i, err, contentText(res))
				return
			}
			var st Stop
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &st)
			for _, mode := range []string{"into", "into", "over", "over"} {
				if res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolStep, Arguments: map[string]any{"session": st.Session, "mode": mode}}); err != nil || res.IsError {
					errs <- fmt.Errorf("client %d step: %v %v", i, err, res)
					return
				}
			}
			res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolStep, Arguments: map[string]any{"session": st.Session, "mode": "out"}})
			if err != nil || res.IsError {
				errs <- fmt.Errorf("client %d out: %v %v", i, err, res)
				return
			}
			var ret Stop
			b, _ = json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &ret)
			if want := fmt.Sprint(i * (i - 1) / 2); ret.Event != "return" || ret.Value != want {
				errs <- fmt.Errorf("client %d: g(%d) returned %+v, want %s", i, i, ret, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	srv.mu.Lock()
	open := len(srv.sessions)
	srv.mu.Unlock()
	if open != n {
		t.Errorf("%d sessions open, want %d", open, n)
	}
	t.Logf("%d concurrent sessions in %v", n, time.Since(start))
}

func TestSessionsAreBounded(t *testing.T) {
	srv := newServer(t, testRegistry(), "real")
	srv.SetMaxSessions(3)
	cs := connect(t, srv.MCPServer())
	var first Stop
	for i := range 5 {
		var st Stop
		mustCall(t, cs, ToolStart, map[string]any{"program": "x = 1\ny = 2\n", "engine": "real"}, &st)
		if i == 0 {
			first = st
		}
	}
	if len(srv.sessions) != 3 {
		t.Errorf("%d sessions", len(srv.sessions))
	}
	if _, isErr := call(t, cs, ToolContext, map[string]any{"session": first.Session}, nil); !isErr {
		t.Error("the least recently used session should be gone")
	}
	// Live sessions hold a process each: bounded on their own, and closed
	// when evicted or when the server closes.
	srv.SetMaxLive(2)
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "x = 1\ny = 2\n", "engine": "real"}, &st)
	srv.mu.Lock()
	var open []*session
	for _, ss := range srv.sessions {
		open = append(open, ss)
	}
	srv.mu.Unlock()
	if len(open) != 2 {
		t.Errorf("%d live sessions open, want 2", len(open))
	}
	srv.Close()
	for _, ss := range open {
		ss.mu.Lock()
		if !ss.closed {
			t.Error("a session is still open after Close")
		}
		ss.mu.Unlock()
	}
}

func contentText(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestModelEngineSession(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "model").MCPServer())
	code := "def g(k):\n    return k + 1\n"
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": code, "call": "g(3)"}, &st)
	if st.Event != "call" || st.Function != "main" {
		t.Fatalf("start %+v", st)
	}
	text := mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "into"}, &st)
	if st.Event != "line" || st.Line != 6 || st.Function != "main" || text != st.Session+" line main:6 `return g(3)`  [predicted]" || !st.Predicted {
		t.Errorf("predicted step %+v %q", st, text)
	}
	var c Context
	mustCall(t, cs, ToolContext, map[string]any{"session": st.Session}, &c)
	if c.Engine != "model" || c.Location != "main:6" {
		t.Errorf("context %+v", c)
	}
	if _, isErr := call(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "into"}, nil); !isErr {
		t.Error("the scripted model has no answer here: a tool error")
	}
}
