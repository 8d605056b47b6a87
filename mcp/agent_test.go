package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// script reads its arguments and stdin; scale's lines are 3-5, the print 12.
const script = `import sys

def scale(x, k):
    y = x * k
    return y

def main():
    total = 0
    for i, a in enumerate(sys.argv[1:]):
        total += scale(int(a), i)
    line = sys.stdin.readline().strip()
    print(line, total)

main()
`

// writeScript writes script into a fresh folder and returns a server whose
// workspace is that folder, and the script's path.
func writeScript(t *testing.T) (*Server, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "prog.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := NewServer(testRegistry(), "real")
	ws, err := NewWorkspace([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetWorkspace(ws)
	t.Cleanup(srv.Close)
	return srv, path
}

// TestAgentTools: one call reaches a breakpoint with the full context;
// conditional, function and temporary breakpoints go through the session's
// breakpoint API; continue both ways, restart, the source view, listing
// and ending sessions.
func TestAgentTools(t *testing.T) {
	srv, path := writeScript(t)
	cs := connect(t, srv.MCPServer())
	args := []any{"3", "4", "5"}

	var st Stop
	text := mustCall(t, cs, ToolStart, map[string]any{"program": path, "args": args, "stdin": "hello\n",
		"breakpoints": []any{map[string]any{"line": 4, "condition": "k == 2"}}}, &st)
	if st.Function != "scale" || st.Line != 4 || st.Locals["x"] != "5" || st.Locals["k"] != "2" ||
		strings.Join(st.Stack, " ") != "<module>:14 main:10 scale:4" {
		t.Fatalf("debug_start to a conditional breakpoint: %+v", st)
	}
	if !strings.Contains(text, "stack: <module>:14 > main:10 > scale:4") || !strings.Contains(text, "breakpoints: 4 if k == 2") {
		t.Errorf("start text %q", text)
	}
	var ev Evaluation
	if mustCall(t, cs, ToolEvaluate, map[string]any{"session": st.Session, "code": "x * k"}, &ev); ev.Result != "10" {
		t.Errorf("evaluate at the breakpoint: %+v", ev)
	}
	id := st.Session

	// A function breakpoint (temporary) and a line breakpoint, from the start.
	st = Stop{}
	mustCall(t, cs, ToolStart, map[string]any{"program": path, "args": args, "stdin": "hello\n",
		"breakpoints": []any{map[string]any{"function": "scale", "temporary": true}, map[string]any{"line": 12}}}, &st)
	if st.Function != "scale" || st.Line != 4 || st.Locals["k"] != "0" {
		t.Fatalf("start to a function breakpoint: %+v", st)
	}
	id2 := st.Session
	var bps Breakpoints
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id2}, &bps)
	if !slices.Equal(bps.Breakpoints, []Breakpoint{{Line: 12}}) {
		t.Errorf("the temporary breakpoint stays after it stopped: %+v", bps)
	}
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2}, &st)
	if st.Line != 12 || st.Locals["total"] != "14" || st.Locals["line"] != "'hello'" {
		t.Errorf("continue to line 12: %+v", st)
	}
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2}, &st)
	if st.Exit != "normal" || st.Output != "hello 14\n" {
		t.Errorf("continue to the end: %+v", st)
	}
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2, "reverse": true}, &st)
	if st.Line != 12 || st.Function != "main" {
		t.Errorf("reverse continue: %+v", st)
	}
	mustCall(t, cs, ToolRestart, map[string]any{"session": id2}, &st)
	if st.Line != 12 || st.Locals["total"] != "14" {
		t.Errorf("restart to the breakpoint: %+v", st)
	}
	mustCall(t, cs, ToolRestart, map[string]any{"session": id2, "stop_on_entry": true}, &st)
	if st.Function != "<module>" || st.Line != 1 {
		t.Errorf("restart on entry: %+v", st)
	}
	// Breakpoints set later, of each kind.
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id2, "function": "scale", "condition": "x == 4"}, &bps)
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id2, "line": 12, "clear": true}, &bps)
	if !slices.Equal(bps.Breakpoints, []Breakpoint{{Line: 3, Function: "scale", Condition: "x == 4"}}) {
		t.Errorf("breakpoints %+v", bps)
	}
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2}, &st)
	if st.Function != "scale" || st.Locals["x"] != "4" {
		t.Errorf("continue to a conditional function breakpoint: %+v", st)
	}

	// Run to a line (a temporary breakpoint), then clear every breakpoint.
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2, "to_line": 12}, &st)
	if st.Line != 12 || st.Locals["total"] != "14" {
		t.Errorf("continue to_line 12: %+v", st)
	}
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id2, "clear": true}, &bps)
	if len(bps.Breakpoints) != 0 {
		t.Errorf("after clearing all: %+v", bps)
	}
	mustCall(t, cs, ToolRestart, map[string]any{"session": id2}, &st)
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id2, "function": "scale", "condition": "x == 4"}, &bps)
	mustCall(t, cs, ToolContinue, map[string]any{"session": id2}, &st)

	var src SourceView
	text = mustCall(t, cs, ToolSource, map[string]any{"session": id2, "context": 1}, &src)
	if src.First != 3 || src.Current != 4 || len(src.Lines) != 3 || text != "   3 B  def scale(x, k):\n   4 ->     y = x * k\n   5        return y" {
		t.Errorf("source view %+v\n%s", src, text)
	}
	if _, isErr := call(t, cs, ToolSource, map[string]any{"session": id2, "line": 99}, nil); !isErr {
		t.Error("a line past the end must be refused")
	}

	var list SessionList
	text = mustCall(t, cs, ToolSessions, map[string]any{}, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].Session != id || list.Sessions[1].Location != "scale:4" ||
		list.Sessions[0].Program != path && !strings.HasSuffix(list.Sessions[0].Program, "prog.py") {
		t.Errorf("sessions %+v\n%s", list, text)
	}
	var ended Ended
	mustCall(t, cs, ToolEnd, map[string]any{"session": id}, &ended)
	if !ended.Ended {
		t.Errorf("end %+v", ended)
	}
	for _, bad := range []struct {
		tool string
		args map[string]any
	}{
		{ToolContext, map[string]any{"session": id}}, // ended
		{ToolEnd, map[string]any{"session": id}},
		{ToolStart, map[string]any{"program": path, "breakpoints": []any{map[string]any{"function": "nope"}}}},
		{ToolStart, map[string]any{"program": path, "breakpoints": []any{map[string]any{"line": 2}}}}, // blank line
		{ToolStart, map[string]any{"program": "x = 1\n", "args": []any{"a"}}},                         // args need a file
		{ToolStart, map[string]any{"program": path, "call": "scale(1, 2)", "stdin": "x"}},
		{ToolStart, map[string]any{"program": path, "engine": "gpt"}}, // not in the enum
		{ToolStep, map[string]any{"session": id2, "mode": "sideways"}},
		{ToolBreakpoint, map[string]any{"session": id2, "line": 4, "function": "scale"}},
	} {
		if text, isErr := call(t, cs, bad.tool, bad.args, nil); !isErr {
			t.Errorf("%s %v: want a tool error, got %q", bad.tool, bad.args, text)
		}
	}
	list = SessionList{}
	if mustCall(t, cs, ToolSessions, map[string]any{}, &list); len(list.Sessions) != 1 {
		t.Errorf("after debug_end and refused starts: %+v", list)
	}
}

// TestSchemas: no nullable type arrays (anyOf instead), enums for engines
// and modes, annotations, and the server's instructions.
func TestSchemas(t *testing.T) {
	srv := newServer(t, testRegistry(), "real")
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.MCPServer().Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "0"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if cs.InitializeResult().Instructions != Instructions || !strings.Contains(Instructions, "debug_start") {
		t.Errorf("instructions %q", cs.InitializeResult().Instructions)
	}
	tools := map[string]*sdk.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
		b, _ := json.Marshal([]any{tool.InputSchema, tool.OutputSchema})
		if strings.Contains(string(b), `"type":[`) {
			t.Errorf("%s: a schema has a type array: %s", tool.Name, b)
		}
		if tool.Annotations == nil || tool.Annotations.OpenWorldHint == nil || *tool.Annotations.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, tool.Annotations)
		}
	}
	enum := func(tool, prop string) []any {
		var s struct {
			Properties map[string]struct {
				Enum []any `json:"enum"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tools[tool].InputSchema)
		json.Unmarshal(b, &s)
		return s.Properties[prop].Enum
	}
	for _, c := range []struct {
		tool, prop string
		want       []any
	}{
		{ToolStart, "engine", []any{"real", "model", "openai", "cwm"}},
		{ToolStep, "mode", []any{"into", "over", "out", "back_into", "back_over", "back_call"}},
		{ToolEvaluate, "mode", []any{"auto", "expr", "pretty", "exec"}},
		{ToolPredictInput, "engine", []any{"model", "openai"}},
	} {
		if got := enum(c.tool, c.prop); !slices.Equal(got, c.want) {
			t.Errorf("%s.%s enum %v, want %v", c.tool, c.prop, got, c.want)
		}
	}
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	b, _ := json.Marshal(tools[ToolContext].OutputSchema)
	json.Unmarshal(b, &out)
	if got := string(out.Properties["stack"]); got != `{"anyOf":[{"items":{"type":"string"},"type":"array"},{"type":"null"}]}` {
		t.Errorf("debug_context's stack: %s", got)
	}
	for name, want := range map[string][2]bool{ // read-only, destructive
		ToolContext: {true, false}, ToolSource: {true, false}, ToolSessions: {true, false}, ToolPredictOutput: {true, false},
		ToolStart: {false, false}, ToolStep: {false, false}, ToolEvaluate: {false, false}, ToolEnd: {false, true},
	} {
		a := tools[name].Annotations
		if a.ReadOnlyHint != want[0] || !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint != want[1]) {
			t.Errorf("%s: annotations %+v", name, a)
		}
	}
	if !tools[ToolBreakpoint].Annotations.IdempotentHint || tools[ToolStep].Annotations.IdempotentHint {
		t.Error("debug_breakpoint is idempotent, debug_step is not")
	}
}

// TestIdleSessionsClose: a session unused for the idle timeout is closed
// (its process with it); one in use is not.
func TestIdleSessionsClose(t *testing.T) {
	srv := newServer(t, testRegistry(), "real")
	srv.SetIdleTimeout(300 * time.Millisecond)
	cs := connect(t, srv.MCPServer())
	var a, b Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "x = 1\ny = 2\n"}, &a)
	srv.mu.Lock()
	ssA := srv.sessions[a.Session]
	srv.mu.Unlock()
	if ssA == nil {
		t.Fatal("closed before its start answered")
	}
	mustCall(t, cs, ToolStart, map[string]any{"program": "x = 1\ny = 2\n"}, &b)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		mustCall(t, cs, ToolContext, map[string]any{"session": b.Session}, nil) // b stays in use
		time.Sleep(50 * time.Millisecond)
		ssA.mu.Lock()
		closed := ssA.closed
		ssA.mu.Unlock()
		if closed {
			break
		}
	}
	text, isErr := call(t, cs, ToolContext, map[string]any{"session": a.Session}, nil)
	if !isErr || !strings.Contains(text, "no session") {
		t.Errorf("the idle session: %q", text)
	}
	ssA.mu.Lock()
	if !ssA.closed {
		t.Error("the idle session's program was not closed")
	}
	ssA.mu.Unlock()
	mustCall(t, cs, ToolContext, map[string]any{"session": b.Session}, nil)
}
