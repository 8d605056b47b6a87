package repl

import (
	"context"
	"slices"
	"strings"
	"testing"

	"ndb/debugger"
)

// TestComplete: the completions of the word before the cursor (-1: the end
// of the line) after the setup commands, on testdata/pdbcmds.py.
func TestComplete(t *testing.T) {
	for _, c := range []struct {
		setup []string
		line  string
		pos   int
		want  []string
	}{
		{nil, "s", -1, []string{"s", "source", "step"}},
		{nil, "  unt", -1, []string{"unt", "until"}},
		{nil, "ru", -1, []string{"run"}},
		{nil, "re", -1, []string{"restart", "return", "retval"}},
		{nil, "r", -1, []string{"r", "rc", "restart", "return", "retval", "rn", "rr", "rs", "run", "rv"}},
		{nil, "res", 1, []string{"r", "rc", "restart", "return", "retval", "rn", "rr", "rs", "run", "rv"}},
		{nil, "zz", -1, nil},
		{nil, "nosuch x", -1, nil},
		{nil, "b ", -1, []string{"deco", "shout", "square", "total"}},
		{nil, "b s", -1, []string{"shout", "square"}},
		{nil, "break  sq", -1, []string{"square"}},
		{nil, "tbreak t", -1, []string{"total"}},
		{nil, "b pdbcmds.py:sq", -1, []string{"square"}},
		{nil, "b sq, n > 1", 4, []string{"square"}},
		{nil, "b 9, a", -1, nil},
		{nil, "b square x", -1, nil},
		{nil, "h b", -1, []string{"b", "break", "bt"}},
		{nil, "help unt", -1, []string{"unt", "until"}},
		{nil, "p ", -1, nil}, // the module's first line: no locals yet
		{[]string{"b 9", "c"}, "p ", -1, []string{"acc", "i", "x", "xs"}},
		{[]string{"b 9", "c"}, "p a", -1, []string{"acc"}},
		{[]string{"b 9", "c"}, "pp x", -1, []string{"x", "xs"}},
		{[]string{"b 9", "c"}, "display ", -1, []string{"acc", "i", "x", "xs"}},
		{[]string{"b 9", "c"}, "p acc ", -1, nil},
		{[]string{"b 9", "c"}, "p __", -1, nil},
		{[]string{"b 9", "c"}, "undisplay ", -1, nil},
		{[]string{"b 9", "c", "display acc"}, "undisplay ", -1, []string{"acc"}},
		{[]string{"b 9", "b 2", "c"}, "cl ", -1, []string{"1", "2"}},
		{[]string{"b 9", "b 2", "b 3", "cl 2"}, "disable ", -1, []string{"1", "3"}},
		{[]string{"b 2", "c", "r"}, "p __", -1, []string{"__return__"}},
		{[]string{"b 2", "c", "r"}, "p ", -1, []string{"__return__", "n", "result"}}, // the frame's locals at the return too (issue 20)
		{[]string{"b 2", "c", "r", "u"}, "p ", -1, []string{"acc", "i", "x", "xs"}},
		{[]string{"b 2", "c", "r", "u"}, "display ", -1, []string{"acc", "i", "x", "xs"}},
		{[]string{"c"}, "p ", -1, nil}, // the exit
	} {
		s := newScriptSession(t, pdbFixture)
		term := New(s, Options{Name: pdbFixture})
		for _, cmd := range c.setup {
			if _, err := term.Exec(context.Background(), cmd); err != nil {
				t.Fatalf("%v: %s: %v", c.setup, cmd, err)
			}
		}
		pos := c.pos
		if pos < 0 {
			pos = len([]rune(c.line))
		}
		if got := term.Complete(c.line, pos); !slices.Equal(got, c.want) {
			t.Errorf("after %v: Complete(%q, %d) = %q, want %q", c.setup, c.line, pos, got, c.want)
		}
	}
}

// TestCompleter: readline gets each candidate's rest after the word typed,
// with a space, and the word's length; extra commands are completed too.
func TestCompleter(t *testing.T) {
	s, err := debugger.NewSession(context.Background(), debugger.NewTraceBackend(handTrace()))
	if err != nil {
		t.Fatal(err)
	}
	term := New(s, Options{Extra: &Extra{Help: []ExtraHelp{{Name: "back"}, {Name: "verify"}}}})
	for _, c := range []struct {
		line string
		pos  int
		want []string
		n    int
	}{
		{"b m", 3, []string{"ain "}, 1},
		{"b  x", 3, []string{"g ", "main "}, 0},
		{"ba", 2, []string{"ck "}, 2},
		{"ve", 2, []string{"rify "}, 2},
		{"h ver", 5, []string{"ify "}, 3},
		{"q", 1, []string{" ", "uit "}, 1},
		{"b mx", 99, nil, 2},
	} {
		got, n := completer{term}.Do([]rune(c.line), c.pos)
		var strs []string
		for _, r := range got {
			strs = append(strs, string(r))
		}
		if !slices.Equal(strs, c.want) || n != c.n {
			t.Errorf("Do(%q, %d) = %q, %d; want %q, %d", c.line, c.pos, strs, n, c.want, c.n)
		}
	}
	if names := strings.Join(term.Complete("", 0), " "); !strings.Contains(names, "back") || !strings.Contains(names, "restart") {
		t.Errorf("command names %q lack back or restart", names)
	}
}
