package mcp

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"ndb/engine"
	"ndb/tracer"
)

// TestEvaluate evaluates in the live program's frames (level 0 the
// current one), as pdb's p, pp and !; where no live program waits, local
// names are looked up in the recorded state.
func TestEvaluate(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "real").MCPServer())
	prog, _ := filepath.Abs(filepath.Join("..", "engine", "testdata", "calls.py"))
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": prog, "call": "f('ab', 3)"}, &st)
	id := st.Session
	mustCall(t, cs, ToolBreakpoint, map[string]any{"session": id, "line": 2}, nil)
	mustCall(t, cs, ToolContinue, map[string]any{"session": id}, &st) // square:2 < total:9 < f:14 < main:20
	cases := []struct {
		args map[string]any
		want string // the text, or "!" + the tool error's start
	}{
		{map[string]any{"code": "x * 10 + 1"}, "1"},
		{map[string]any{"code": "s * 2", "level": 2}, "'abab'"},
		{map[string]any{"code": "[n, acc]", "level": 1, "mode": "expr"}, "[3, 0]"},
		{map[string]any{"code": "{'k': list(range(30))}", "mode": "pretty"}, "{'k': [0,\n       1,"},
		{map[string]any{"code": "z = 41", "mode": "expr"}, "!SyntaxError"},
		{map[string]any{"code": "z = 41"}, ""},
		{map[string]any{"code": "print(z + 1)"}, "42"},
		{map[string]any{"code": "nope"}, "!NameError: name 'nope' is not defined"},
		{map[string]any{"code": "x", "mode": "sideways"}, "!validating \"arguments\""}, // not in the schema's enum
		{map[string]any{"code": "x", "level": -1}, "!level"},
		{map[string]any{"code": " "}, "!code is required"},
	}
	for _, tc := range cases {
		tc.args["session"] = id
		text, isErr := call(t, cs, ToolEvaluate, tc.args, nil)
		if want, bad := strings.CutPrefix(tc.want, "!"); bad {
			if !isErr || !strings.HasPrefix(text, want) {
				t.Errorf("evaluate %v: %q (error %v), want an error %q", tc.args, text, isErr, want)
			}
		} else if isErr || !strings.HasPrefix(text, want) || want == "" && text != "" {
			t.Errorf("evaluate %v: %q (error %v), want %q", tc.args, text, isErr, want)
		}
	}
	var ev Evaluation
	mustCall(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "x = 5"}, &ev)
	if ev.Locals["x"] != "5" {
		t.Errorf("locals after x = 5: %v", ev.Locals)
	}
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "over"}, &st)
	if st.Locals["y"] != "25" {
		t.Errorf("the run goes on from x = 5: %+v", st)
	}
	// Stepped back, the program waits elsewhere: recorded names only.
	mustCall(t, cs, ToolStep, map[string]any{"session": id, "mode": "back_into"}, &st)
	// (square:2 as recorded: the edit changed the program from there on)
	if text := mustCall(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "x"}, &ev); !ev.Recorded || ev.Result != "0" {
		t.Errorf("a recorded name: %+v %q", ev, text)
	}
	if text, isErr := call(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "x + 1"}, nil); !isErr || !strings.Contains(text, "not waiting here") {
		t.Errorf("an expression in the past: %q", text)
	}
}

// TestOutputAndInterrupts: a moving tool's answer has what the program
// printed meanwhile, and says when the time limit interrupted the run; a
// cancelled call interrupts it rather than killing it.
func TestOutputAndInterrupts(t *testing.T) {
	reg := engine.NewRegistry(engine.Options{Workers: 1, Live: true, Limits: tracer.Limits{Timeout: time.Second}})
	defer reg.Close()
	srv := newServer(t, reg, "real")
	defer srv.Close()
	cs := connect(t, srv.MCPServer())
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "print('hi')\nn = 0\nwhile True:\n    n += 1\n"}, &st)
	text := mustCall(t, cs, ToolStep, map[string]any{"session": st.Session, "mode": "over"}, &st)
	if st.Output != "hi\n" || !strings.HasSuffix(text, "\noutput:\nhi") {
		t.Errorf("step over print: %+v %q", st, text)
	}
	id := st.Session
	st = Stop{}
	text = mustCall(t, cs, ToolContinue, map[string]any{"session": id}, &st)
	if st.Interrupted != "timeout" || st.Output != "" || !strings.Contains(text, "interrupted: the program ran the time limit") {
		t.Errorf("continue into an endless loop: %+v %q", st, text)
	}
	var ev Evaluation
	if mustCall(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "n > 0"}, &ev); ev.Result != "True" {
		t.Errorf("n > 0 at the interrupt: %+v", ev)
	}
	// A cancelled call: the run is interrupted (not killed) and the
	// session answers at once, well before the default time limit (10 s).
	cs2 := connect(t, newServer(t, testRegistry(), "real").MCPServer())
	mustCall(t, cs2, ToolStart, map[string]any{"program": "n = 0\nwhile True:\n    n += 1\n"}, &st)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := cs2.CallTool(ctx, &sdk.CallToolParams{Name: ToolContinue, Arguments: map[string]any{"session": st.Session}}); err == nil {
		t.Fatal("the call should have been cancelled")
	}
	mustCall(t, cs2, ToolEvaluate, map[string]any{"session": st.Session, "code": "n > 0"}, &ev)
	if d := time.Since(start); ev.Result != "True" || d > 5*time.Second {
		t.Errorf("after a cancelled continue (%v): %+v", d, ev)
	}
}

// TestPostMortem: at the end of a program that an uncaught exception
// ended, debug_context has the traceback and its frames, and evaluate runs
// in them (level 0 where it was raised).
func TestPostMortem(t *testing.T) {
	cs := connect(t, newServer(t, testRegistry(), "real").MCPServer())
	var st Stop
	mustCall(t, cs, ToolStart, map[string]any{"program": "def g(d):\n    return d['x']\n\n\ndef f():\n    d = {'y': 1}\n    return g(d)\n\n\nf()\n"}, &st)
	id := st.Session
	st = Stop{}
	if mustCall(t, cs, ToolContinue, map[string]any{"session": id}, &st); st.Exit != "error" {
		t.Fatalf("continue: %+v", st)
	}
	var c Context
	text := mustCall(t, cs, ToolContext, map[string]any{"session": id}, &c)
	if strings.Join(c.Stack, " ") != "<module>:10 f:7 g:2" || c.Locals["d"] != "{'y': 1}" ||
		!strings.HasSuffix(c.Traceback, "KeyError: 'x'\n") || !strings.Contains(text, "Traceback (most recent call last):") {
		t.Errorf("context at the post-mortem: %+v\n%s", c, text)
	}
	for level, want := range []string{"{'y': 1}", "{'y': 1}"} {
		var ev Evaluation
		if mustCall(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "d", "level": level}, &ev); ev.Result != want || ev.Recorded {
			t.Errorf("d at level %d: %+v", level, ev)
		}
	}
	var ev Evaluation
	if mustCall(t, cs, ToolEvaluate, map[string]any{"session": id, "code": "f.__name__", "level": 2}, &ev); ev.Result != "'f'" {
		t.Errorf("the module's frame: %+v", ev)
	}
}
