package dap

import (
	"context"
	"strconv"
	"strings"
	"testing"

	godap "github.com/google/go-dap"

	"ndb/engine"
)

// TestBreakpointsAsTerminal: DAP's breakpoints are the session's (the
// terminal's path), so a conditional breakpoint in a function that a next
// steps over stops that next, as in pdb: on calls.py, `b 9`, `b 2, x == 1`,
// `c`, then three `n` stop at square:2 with x = 1 (python3 -m pdb stops
// there too). DAP used to lift conditional breakpoints during steps.
func TestBreakpointsAsTerminal(t *testing.T) {
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "real", "call": "f('ab', 3)"})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": program(t)},
		"breakpoints": []map[string]any{{"line": 9}, {"line": 2, "condition": "x == 1"}}})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	if top := c.top(); top.Name != "total" || top.Line != 9 {
		t.Fatalf("continue stopped at %+v, want total:9", top)
	}
	want := []string{"total:8", "total:9", "square:2"}
	for i, w := range want {
		_, top := c.move("next")
		if got := strings.TrimSuffix(top.Name, " --Call--") + ":" + itoa(top.Line); got != w {
			t.Errorf("next %d: %s, want %s", i+1, got, w)
		}
	}
	if l := c.locals(1); l["x"] != "1" {
		t.Errorf("at square:2 x = %q, want 1", l["x"])
	}
	c.ok("disconnect", nil)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestEndOfProgram: at the end DAP shows the last line the program ran
// (not the line the last continue started from), sends exited with the
// exit code once, answers further forward commands with an error and no
// stopped event, and still steps back.
func TestEndOfProgram(t *testing.T) {
	for _, c := range []struct {
		name, src string
		line      int // the last line run
		code      int
	}{
		{"normal", loopProgram, 11, 0},
		{"error", "def f(xs):\n    return xs[3]\n\n\nx = [1]\ny = f(x)\nprint(y)\n", 6, 1}, // the exception ends the module at line 6
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := writeProgram(t, "end.py", c.src)
			cl, stop := startServer(t, sharedReal())
			defer stop()
			initialize(t, cl)
			cl.ok("setExceptionBreakpoints", map[string]any{"filters": []string{}}) // no post-mortem: the plain end
			cl.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{2}})
			cl.ok("launch", map[string]any{"program": prog, "engine": "real"})
			cl.ok("configurationDone", nil)
			cl.waitEvent("stopped")
			cl.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{}})
			cl.ok("continue", map[string]any{"threadId": 1})
			var exited []*godap.ExitedEvent
			for stopped := false; !stopped; {
				switch e := cl.read().(type) {
				case *godap.ExitedEvent:
					exited = append(exited, e)
				case *godap.StoppedEvent:
					stopped = true
					if e.Body.Reason != "exit" {
						t.Errorf("reason %q, want exit", e.Body.Reason)
					}
				case *godap.TerminatedEvent:
					t.Fatal("terminated at the end: the session should stay for stepping back")
				}
			}
			if len(exited) != 1 || exited[0].Body.ExitCode != c.code {
				t.Errorf("exited events %+v, want one with code %d", exited, c.code)
			}
			if top := cl.top(); top.Line != c.line {
				t.Errorf("the end shows line %d, want %d (the last line run)", top.Line, c.line)
			}
			for _, cmd := range []string{"continue", "next", "stepIn", "stepOut"} {
				r, evs := cl.call(cmd, map[string]any{"threadId": 1})
				if r.GetResponse().Success || !strings.Contains(r.GetResponse().Message, "exited") || hasStopped(evs) {
					t.Errorf("%s at the end: %+v, events %v", cmd, r.GetResponse(), evs)
				}
			}
			if reason, top := cl.move("stepBack"); reason != "step" || top.Line != c.line {
				t.Errorf("stepBack from the end: %s %+v", reason, top)
			}
			cl.ok("disconnect", nil)
		})
	}
}

// TestModelStepBackFromEndFails: on a model engine a command whose
// prediction fails (here a step back from the end that the model cannot
// write) is an error response, not text on stderr followed by a stopped
// event, and the session stays at the end.
func TestModelStepBackFromEndFails(t *testing.T) {
	pred := engine.PredictorFunc(func(ctx context.Context, prompt string, k int, d engine.Draw) ([]string, error) {
		if strings.HasSuffix(prompt, "<|step_into|><|frame_sep|>") {
			return []string{`<|exit_normal|><|trace_end|><|end_of_text|>`}, nil
		}
		return []string{`not a frame`}, nil
	})
	reg := engine.NewRegistry(engine.Options{Predictor: pred, Workers: 1})
	defer reg.Close()
	c, stop := startServer(t, reg)
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": program(t), "engine": "model", "call": "f('ab', 3)", "stopOnEntry": true})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	if reason, _ := c.move("stepIn"); reason != "exit" {
		t.Fatalf("stepIn: %s, want the end", reason)
	}
	r, evs := c.call("stepBack", map[string]any{"threadId": 1})
	if r.GetResponse().Success || hasStopped(evs) {
		t.Errorf("a failed step back from the end: %+v, events %v", r.GetResponse(), evs)
	}
	for _, e := range evs {
		if o, ok := e.(*godap.OutputEvent); ok && o.Body.Category == "stderr" {
			t.Errorf("stderr output %q", o.Body.Output)
		}
	}
	if top := c.top(); top.Name != "<program ended>" {
		t.Errorf("after the failed step back: %+v", top)
	}
	c.ok("disconnect", nil)
}

// TestFunctionBreakpointsStop: function breakpoints are the session's
// (BreakSpec.Func at co_firstlineno), so one on a decorated function
// (its first decorator's line) and one on a method stop at the first line
// each runs, and the end shows the module's last line.
func TestFunctionBreakpointsStop(t *testing.T) {
	prog := writeProgram(t, "deco.py", `import functools


def deco(f):
    @functools.wraps(f)
    def w(*a):
        return f(*a)
    return w


@deco
def g(x):
    y = x + 1
    return y


class C:
    def m(self):
        return 5


print(g(1), C().m())
`)
	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	fb := c.ok("setFunctionBreakpoints", map[string]any{"breakpoints": []map[string]any{{"name": "g"}, {"name": "C.m"}}}).(*godap.SetFunctionBreakpointsResponse)
	c.ok("launch", map[string]any{"program": prog, "engine": "real"})
	_, evs := c.call("configurationDone", nil)
	lines := map[int]int{}
	for _, e := range evs {
		if b, ok := e.(*godap.BreakpointEvent); ok && b.Body.Breakpoint.Verified {
			lines[b.Body.Breakpoint.Id] = b.Body.Breakpoint.Line
		}
	}
	if lines[fb.Body.Breakpoints[0].Id] != 11 || lines[fb.Body.Breakpoints[1].Id] != 18 {
		t.Errorf("resolved to %v, want g at 11 (its decorator) and C.m at 18", lines)
	}
	c.waitEvent("stopped")
	for _, want := range []string{"g:13", "m:19", "<program ended>:22"} {
		top := c.top()
		if got := top.Name + ":" + itoa(top.Line); got != want {
			t.Errorf("stopped at %s, want %s", got, want)
		}
		if want[0] != '<' {
			c.move("continue")
		}
	}
	c.ok("disconnect", nil)
}
