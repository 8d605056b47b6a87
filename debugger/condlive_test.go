package debugger

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"ndb/tracer"
)

const condProgram = `seen = []
for w in ["apple", "mango", "melon", "kiwi", "mint", "moss"]:
    seen.append(w)
print(len(seen))
`

// TestLiveConditions: on a live session a condition is a Python
// expression evaluated in the frame (bdb's effective()); a reverse
// continue and a forward command replayed from the recorded past use the
// values the live frame gave; a condition that raises stops; a whole-run
// trace refuses an expression that is not one of Condition's forms.
func TestLiveConditions(t *testing.T) {
	python := pythonExe(t)
	ctx := context.Background()
	word := func(st Stop) string {
		v, _ := st.Locals.Get("w")
		return v
	}
	b := liveBackend(t, python, tracer.Program{Source: condProgram}, tracer.Limits{})
	defer b.Close()
	s, err := NewSession(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if !s.LiveConditions() {
		t.Fatal("a live session must evaluate conditions live")
	}
	if err := s.AddBreak(BreakSpec{Line: 3, Cond: "w.startswith('m') and len(seen) > 2"}); err != nil {
		t.Fatal(err)
	}
	step := func(cmd Command, want string) {
		t.Helper()
		st, err := s.Do(ctx, cmd)
		if err != nil {
			t.Fatal(err)
		}
		got := word(st)
		if st.IsExit() {
			got = "exit"
		}
		if got != want {
			t.Fatalf("%+v: stopped at %q (line %d), want %q", cmd, got, st.Lineno, want)
		}
	}
	c, rc, rs := Command{Action: Continue}, Command{Action: Continue, Backward: true}, Command{Action: InvStepInto}
	step(c, "'mint'")
	step(c, "'moss'")
	if h := s.BreakSpecs()[0].Hits; h != 6 {
		t.Errorf("hits after two continues: %d, want 6 (every crossing of line 3)", h)
	}
	step(rc, "'mint'")
	step(rs, "'kiwi'")
	step(rc, "exit")  // no earlier crossing where it held: before the start
	step(c, "'mint'") // from before the start: the program runs again to the breakpoint
	step(c, "'moss'")
	step(c, "exit")

	// an exception in the condition stops at the first crossing, as pdb
	b2 := liveBackend(t, python, tracer.Program{Source: condProgram}, tracer.Limits{})
	defer b2.Close()
	s2, err := NewSession(ctx, b2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.AddBreak(BreakSpec{Line: 3, Cond: "nosuch > 1", Temp: true}); err != nil {
		t.Fatal(err)
	}
	st, err := s2.Do(ctx, c)
	if err != nil || word(st) != "'apple'" {
		t.Fatalf("condition that raises: stop %q, %v; want 'apple'", word(st), err)
	}
	if len(s2.BreakSpecs()) != 1 {
		t.Errorf("a temporary breakpoint whose condition raised is kept (bdb), got %d breakpoints", len(s2.BreakSpecs()))
	}

	// a whole-run trace has no frame to evaluate in
	tr := traceFixtureProgram(t, python, tracer.Program{Source: condProgram})
	s3, err := NewSession(ctx, NewTraceBackend(tr))
	if err != nil {
		t.Fatal(err)
	}
	err = s3.AddBreak(BreakSpec{Line: 3, Cond: "seen.pop() == 'kiwi'"})
	if err == nil || !strings.Contains(err.Error(), "Python expressions are evaluated only where the real engine runs the program live") {
		t.Errorf("whole-run trace, Python condition: %v", err)
	}
	if err := s3.AddBreak(BreakSpec{Line: 3, Cond: "w == 'kiwi'"}); err != nil {
		t.Fatal(err)
	}
	if st, err := s3.Do(ctx, c); err != nil || word(st) != "'kiwi'" {
		t.Errorf("whole-run trace, repr condition: %q, %v", word(st), err)
	}
}

// TestBreakNumbers: pdb's numbering (never reused, a second breakpoint
// at a line is a new one with Break, not with AddBreak), and its errors.
func TestBreakNumbers(t *testing.T) {
	python := pythonExe(t)
	tr := traceFixtureProgram(t, python, tracer.Program{Source: condProgram})
	s, err := NewSession(context.Background(), NewTraceBackend(tr))
	if err != nil {
		t.Fatal(err)
	}
	must := func(bp BreakSpec, err error) BreakSpec {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return bp
	}
	if n := must(s.Break(BreakSpec{Line: 3})).Number; n != 1 {
		t.Errorf("first number %d", n)
	}
	if n := must(s.Break(BreakSpec{Line: 3})).Number; n != 2 {
		t.Errorf("second at the same line: %d", n)
	}
	if err := s.AddBreak(BreakSpec{Line: 3}); err != nil || len(s.BreakSpecs()) != 2 {
		t.Errorf("AddBreak of a plain line that has one: %v, %d breakpoints", err, len(s.BreakSpecs()))
	}
	must(s.ClearNumber("1"))
	if n := must(s.Break(BreakSpec{Line: 4})).Number; n != 3 {
		t.Errorf("numbers are never reused: %d", n)
	}
	for arg, want := range map[string]string{
		"": "Breakpoint number expected", "x": "Non-numeric breakpoint number x", "9": "Breakpoint number 9 out of range",
		"1": "Breakpoint 1 already deleted", "0": "Breakpoint number 0 out of range",
	} {
		if _, err := s.EnableBreak(arg, false); err == nil || err.Error() != want {
			t.Errorf("EnableBreak(%q): %v, want %q", arg, err, want)
		}
	}
	must(s.SetIgnore("2", 1))
	st, err := s.Do(context.Background(), Command{Action: Continue})
	if v, _ := st.Locals.Get("w"); err != nil || v != "'mango'" {
		t.Errorf("ignore 2 1, c: %q, %v; want 'mango'", v, err)
	}
	if bp := s.BreakSpecs()[0]; bp.Hits != 2 || bp.Ignore != 0 {
		t.Errorf("hits %d ignore %d, want 2 and 0", bp.Hits, bp.Ignore)
	}
}

// TestLiveConditionCost measures a live condition's price: a continue
// over 2,000 crossings of a breakpoint whose condition never holds (one
// evaluation request per crossing; docs/debugger.md has the figure).
func TestLiveConditionCost(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	python := pythonExe(t)
	ctx := context.Background()
	const n = 2000
	src := "total = 0\nfor i in range(2000):\n    total += i\nprint(total)\n"
	for _, cond := range []string{"", "i < 0", "len(str(i)) > 9"} {
		b := liveBackend(t, python, tracer.Program{Source: src}, tracer.Limits{})
		s, err := NewSession(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddBreak(BreakSpec{Line: 3, Cond: cond}); err != nil {
			t.Fatal(err)
		}
		if cond == "" { // no condition: ignore every crossing, the pauses alone
			bp := s.BreakSpecs()[0]
			if _, err := s.SetIgnore(strconv.Itoa(bp.Number), n); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		st, err := s.Do(ctx, Command{Action: Continue})
		el := time.Since(start)
		if err != nil || !st.IsExit() {
			t.Fatalf("%q: %+v %v", cond, st, err)
		}
		if h := s.BreakSpecs()[0].Hits; h != n {
			t.Errorf("%q: %d hits, want %d", cond, h, n)
		}
		t.Logf("condition %q: c over %d crossings %v (%.0f µs a crossing)", cond, n, el.Round(time.Millisecond), float64(el.Microseconds())/n)
		b.Close()
	}
}
