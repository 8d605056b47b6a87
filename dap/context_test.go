package dap

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLaunchProgramContext: a launched script runs as `python FILE ARGS`
// would, from its folder: a sibling module imports and sys.argv carries
// launch.json's args; args with a call are refused.
func TestLaunchProgramContext(t *testing.T) {
	dir := t.TempDir()
	// Programs run as an unprivileged uid: the folder must be readable by others.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("helper.py", "def twice(x):\n    return 2 * x\n")
	prog := write("app.py", "import sys\nimport helper\nn = helper.twice(len(sys.argv))\nprint(n, sys.argv[1:])\n")

	c, stop := startServer(t, sharedReal())
	defer stop()
	initialize(t, c)
	c.ok("launch", map[string]any{"program": prog, "engine": "real", "args": []string{"a", "b"}})
	c.ok("setBreakpoints", map[string]any{"source": map[string]any{"path": prog}, "lines": []int{4}})
	c.ok("configurationDone", nil)
	c.waitEvent("stopped")
	top := c.top()
	if top.Line != 4 {
		t.Fatalf("stopped at %+v, want line 4", top)
	}
	if l := c.locals(top.Id); l["n"] != "6" {
		t.Errorf("n = %q, want 6 (argv of 3: the file and the two args): %v", l["n"], l)
	}

	c2, stop2 := startServer(t, sharedReal())
	defer stop2()
	initialize(t, c2)
	if r, _ := c2.call("launch", map[string]any{"program": prog, "engine": "real", "call": "helper.twice(1)", "args": []string{"a"}}); r.GetResponse().Success {
		t.Errorf("args with a call were accepted")
	}
}
