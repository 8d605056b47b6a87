package repl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"ndb/tracer"
)

// TestTerminalEscapesControls (issue 30, item 3): reprs, names, p/pp
// results, exception lines and the post-mortem traceback that hold ANSI
// escape sequences reach the terminal escaped (\x1b); only the program's
// own output, streamed as pdb prints it, stays raw.
func TestTerminalEscapesControls(t *testing.T) {
	src := "class Evil:\n" +
		"    def __repr__(self):\n" +
		"        return '\\x1b[2J\\x1b]0;pwned\\x07'\n" +
		"e = Evil()\n" +
		"s = 'a\\x1b[31mred\\nline'\n" +
		"globals()['n\\x1b[7m'] = 1\n" +
		"print('\\x1b[1mbold')\n" +
		"raise ValueError('\\x1b[5mboom')\n"
	s := newLiveSession(t, tracer.Program{Source: src}, tracer.Limits{})
	var out bytes.Buffer
	cmds := "n\nn\nn\nn\nn\np e\npp s\np s\np undefined_\x1b[3m\nwhere\nc\nw\n"
	if err := New(s, Options{Name: "evil.py"}).Run(context.Background(), strings.NewReader(cmds), &out, false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Logf("%s", got)
	if n := strings.Count(got, "\x1b"); n != 1 || !strings.Contains(got, "\x1b[1mbold\n") {
		t.Errorf("%d raw escape characters; want only the program's own streamed output", n)
	}
	for _, want := range []string{
		`e = \x1b[2J\x1b]0;pwned\x07`,  // the locals line
		`n\x1b[7m = 1`,                 // a name
		"\\x1b[2J\\x1b]0;pwned\\x07\n", // p e
		`'a\x1b[31mred\nline'`,         // p s: the repr as Python writes it
		`ValueError: \x1b[5mboom`,      // the traceback
		`ValueError('\x1b[5mboom')`,    // the exception line
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
}
