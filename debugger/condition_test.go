package debugger

import (
	"testing"

	"ndb/tracer"
)

// TestConditionForms: the forms a condition takes where no program runs
// (a model engine's stops, a recorded trace), evaluated over reprs.
func TestConditionForms(t *testing.T) {
	locals := tracer.Locals{{Name: "i", Value: "3"}, {Name: "s", Value: "'ab'"}, {Name: "xs", Value: "[]"}, {Name: "f", Value: "2.5"}, {Name: "n", Value: "None"}}
	for _, c := range []struct {
		cond string
		want string // true, false, error, refused
	}{
		{"i == 3", "true"}, {"i != 3", "false"}, {"i > 2", "true"}, {"i <= 2", "false"}, {"3 == i", "true"},
		{"i == 3.0", "true"}, {"f < i", "true"}, {"s == 'ab'", "true"}, {`s == "ab"`, "true"}, {"s < 'b'", "true"},
		{"xs", "false"}, {"not xs", "true"}, {"i", "true"}, {"n == None", "true"}, {"not n", "true"},
		{"s > 2", "error"}, {"nope == 1", "error"}, {"i // 0", "error"}, {"f + 1 > 2", "error"},
		{"len(xs) > 2", "false"}, {"i == 1 and s", "false"}, {"i == 3 and s.upper() == 'AB'", "true"}, {"1 == 1", "true"},
		{"i % 2 == 1 or nope", "true"}, {"'a' in s and n is None", "true"}, {"f > 2.0", "true"},
		{"i ==", "refused"}, {"x.y", "refused"}, {"sorted(xs, reverse=True)", "refused"}, {"s.replace('a', 'b')", "refused"}, {"xs[1:]", "refused"}, {"i = 3", "refused"},
		{"sum(xs) == 0 and s.count('a') == 1 and s[-1] == 'b'", "true"}, {"max(i, 4) == 4 and ord(s[0]) == 97", "true"}, {"min(xs)", "error"},
	} {
		cd, err := ParseCondition(c.cond)
		got := "refused"
		if err == nil {
			ok, eerr := cd.Eval(locals)
			switch {
			case eerr != nil:
				got = "error"
			case ok:
				got = "true"
			default:
				got = "false"
			}
		}
		if got != c.want {
			t.Errorf("%q: %s, want %s (%v)", c.cond, got, c.want, err)
		}
	}
}
