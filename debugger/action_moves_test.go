package debugger

import (
	"slices"
	"testing"
)

// TestMoveTable: one spelling per move for every front end: names, short
// forms and modes are unique and find their move; the reverse moves are
// the backward ones.
func TestMoveTable(t *testing.T) {
	seen := map[string]string{}
	for _, mv := range MoveTable {
		for _, n := range append([]string{mv.Name, mv.Mode}, mv.Aliases...) {
			if n == "" {
				continue
			}
			if other, dup := seen[n]; dup {
				t.Errorf("%q names both %s and %s", n, other, mv.Name)
			}
			seen[n] = mv.Name
			if got, ok := MoveNamed(n); !ok || got.Name != mv.Name {
				t.Errorf("MoveNamed(%q) = %+v, %v", n, got, ok)
			}
		}
		if reverse := mv.Name[0] == 'r' && len(mv.Name) == 2; mv.Command.Reverse() != reverse {
			t.Errorf("%s: Reverse() = %v", mv.Name, mv.Command.Reverse())
		}
	}
	for _, short := range []string{"s", "n", "unt", "r", "c", "rs", "rn", "rr", "rc"} {
		if _, ok := Moves[short]; !ok {
			t.Errorf("Moves[%q] missing", short)
		}
	}
	if got := MoveModes(); !slices.Equal(got, []string{"into", "over", "out", "back_into", "back_over", "back_call"}) {
		t.Errorf("MoveModes() = %v", got)
	}
	if _, ok := MoveNamed(""); ok {
		t.Error(`MoveNamed("") found a move`)
	}
}
