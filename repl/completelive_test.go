package repl

import (
	"context"
	"slices"
	"testing"

	"ndb/tracer"
)

// TestCompleteLive: where the live program waits, completion after p, pp,
// display, whatis and ! offers what pdb's _complete_expression offers: the
// frame's names and globals (and the builtins), and after "NAME." the
// attributes of NAME's value.
func TestCompleteLive(t *testing.T) {
	s := newLiveScriptSession(t, "conds.py", tracer.Limits{})
	defer s.Close()
	term := New(s, Options{Name: "conds.py"})
	for _, c := range []string{"b 15", "c"} {
		if _, err := term.Exec(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		line    string
		want    []string // all of these, among the completions
		notWant []string
	}{
		{"p se", []string{"self"}, []string{"seen"}},
		{"p wa", []string{"walk"}, nil},
		{"p le", []string{"len"}, nil},
		{"p self.", []string{"self.find", "self.v", "self.__class__"}, []string{"self.x"}},
		{"p self.f", []string{"self.find"}, []string{"self.v"}},
		{"pp x + self.v", []string{"self.v"}, nil},
		{"whatis No", []string{"Node"}, nil},
		{"display wor", []string{"words"}, nil},
		{"p self.v.", []string{"self.v.bit_length"}, nil},
		{"p nosuch.", nil, []string{"nosuch."}},
	} {
		got := term.Complete(c.line, len(c.line))
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %q: lacks %q", c.line, got, w)
			}
		}
		for _, w := range c.notWant {
			if slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %q: has %q", c.line, got, w)
			}
		}
	}
}
