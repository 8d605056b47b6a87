package format

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"ndb/debugger"
	"ndb/tracer"
)

func assertSameTrajectory(t *testing.T, want, got *Trajectory) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("round trip differs:\nwant %#v\ngot  %#v", want, got)
	}
}

// randText draws text from fragments chosen to stress the format: JSON
// escapes, unicode, and pieces of special tokens that must stay text.
func randText(r *rand.Rand, maxParts int) string {
	parts := []string{"a", "x1", " ", "'", `"`, `\`, "\t", "é", "日本", "😀", "<", "|", ">", "<|", "|>",
		"frame_sep", "..", ":", ", ", "{", "}", "\u2028", "\x01", "\x7f", "<function f at 0x...>"}
	var b strings.Builder
	for n := r.IntN(maxParts + 1); n > 0; n-- {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

func randLine(r *rand.Rand) string {
	for {
		s := strings.NewReplacer("\n", "", "\r", "").Replace(randText(r, 8))
		if !ContainsSpecialToken(s) {
			return s
		}
	}
}

func randValue(r *rand.Rand) string {
	for {
		if s := randText(r, 6); !ContainsSpecialToken(s) {
			return s
		}
	}
}

func randFrame(r *rand.Rand, inverse bool) Frame {
	fw := []Kind{Call, Line, Return, Exception}
	inv := []Kind{InvCall, InvLine, InvReturn, InvLineCall, InvException}
	ks := fw
	if inverse {
		ks = inv
	}
	f := Frame{Kind: ks[r.IntN(len(ks))], Src: randLine(r)}
	if !f.Kind.HasLocals() {
		f.Arg = randValue(r)
		return f
	}
	seen := map[string]bool{elided: true}
	for n := r.IntN(4); n > 0; n-- {
		name := randValue(r)
		if seen[name] {
			continue
		}
		seen[name] = true
		f.Locals = append(f.Locals, tracer.Var{Name: name, Value: randValue(r)})
	}
	f.Elided = r.IntN(3) == 0
	return f
}

func randTrajectory(r *rand.Rand) *Trajectory {
	inverse := r.IntN(2) == 0
	t := &Trajectory{Source: strings.ReplaceAll(randValue(r), "\r", "") + "\n"}
	for n := 1 + r.IntN(6); n > 0; n-- {
		t.Frames = append(t.Frames, randFrame(r, inverse))
	}
	exits := []Kind{ExitNormal, ExitError, ExitNever}
	actions := debugger.ForwardActions
	if inverse {
		exits = []Kind{InvExitEntry}
		actions = debugger.InverseActions
	}
	t.Frames = append(t.Frames, Frame{Kind: exits[r.IntN(len(exits))]})
	for range len(t.Frames) - 1 {
		s := Step{Action: actions[r.IntN(len(actions))]}
		if s.Action == debugger.Breakpoint {
			s.Src = randLine(r)
		}
		t.Steps = append(t.Steps, s)
	}
	return t
}

// TestRoundTrip: random trajectories -> text -> parse -> equal; every prompt
// plus its completion is a prefix of the text; every completion parses back
// to its frame, and each of its prefixes is a valid partial frame.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		tr := randTrajectory(r)
		text, err := Serialize(tr)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		back, err := ParseTrajectory(text)
		if err != nil {
			t.Fatalf("case %d: parse %q: %v", i, text, err)
		}
		assertSameTrajectory(t, tr, back)
		for k := range tr.Steps {
			p, _ := Prompt(tr, k)
			c, _ := Completion(tr, k)
			if p2, err := PromptText(tr.Source, tr.Frames[:k+1], tr.Steps[:k+1]); err != nil || p2 != p {
				t.Fatalf("case %d step %d: PromptText differs from Prompt: %v", i, k, err)
			}
			if !strings.HasPrefix(text, p+c) {
				t.Fatalf("case %d step %d: prompt+completion is not a prefix of the text", i, k)
			}
			f, err := ParseFrame(c)
			if err != nil || !reflect.DeepEqual(f, tr.Frames[k+1]) {
				t.Fatalf("case %d step %d: ParseFrame(%q) = %#v, %v", i, k, c, f, err)
			}
			dir := Forward
			if tr.Inverse() {
				dir = Backward
			}
			if CheckFrame(c, dir) != Complete || CheckFrame(c, 3-dir) != Invalid {
				t.Fatalf("case %d step %d: %q should be complete only in its direction", i, k, c)
			}
			for j := 0; j < len(c); j++ {
				if st := CheckFrame(c[:j], dir); st == Invalid {
					t.Fatalf("case %d: prefix %q of %q judged invalid", i, c[:j], c)
				}
			}
		}
	}
}

// TestJSONMatchesEncodingJSON: LocalsJSON is valid JSON that encoding/json
// reads back to the same strings.
func TestJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		var l tracer.Locals
		for n := r.IntN(4); n > 0; n-- {
			l = append(l, tracer.Var{Name: randText(r, 4) + string(rune('a'+n)), Value: randText(r, 6)})
		}
		text := LocalsJSON(l, false)
		var back tracer.Locals
		if err := json.Unmarshal([]byte(text), &back); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if len(l) == 0 {
			l = tracer.Locals{}
		}
		if !reflect.DeepEqual(l, back) {
			t.Fatalf("%q: got %#v want %#v", text, back, l)
		}
	}
}

func TestCheckFrame(t *testing.T) {
	cases := []struct {
		text string
		dir  Direction
		want FrameStatus
	}{
		{"", AnyDirection, Partial},
		{"<|li", AnyDirection, Partial},
		{"<|line_sep|>", AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"a": "1", `, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"a": "1",`, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"a":"1"}`, AnyDirection, Invalid}, // not the canonical layout
		{`<|line_sep|><|arg_sep|>{"a": "1"}<|src_sep|>x = 1<|action_sep|>`, AnyDirection, Complete},
		{`<|line_sep|><|arg_sep|>{"a": "1"}<|src_sep|>x = 1<|action_sep|>`, Backward, Invalid},
		{`<|line_sep|><|arg_sep|>{"a": "1"}<|src_sep|>x = 1<|action_sep|><|step_into|>`, AnyDirection, Invalid},
		{`<|line_sep|><|arg_sep|>{"a": "1", "..": ".."}<|src_sep|>x<|action_sep|>`, AnyDirection, Complete},
		{`<|line_sep|><|arg_sep|>{"..": "..", "a": "1"}<|src_sep|>x<|action_sep|>`, AnyDirection, Invalid},
		{`<|line_sep|><|arg_sep|>{"a": "1", "a": "2"}<|src_sep|>x<|action_sep|>`, AnyDirection, Invalid},
		// A repeated key is rejected as soon as its string closes, in every layout.
		{`<|line_sep|><|arg_sep|>{"b": "7", "b"`, AnyDirection, Invalid},
		{`<|line_sep|><|arg_sep|>{"b": "7", "b":`, AnyDirection, Invalid},
		{`<|line_sep|><|arg_sep|>{"b": "7", "b": `, AnyDirection, Invalid},
		{`<|line_sep|><|arg_sep|>{"b": "7", "a": "1", "b"`, AnyDirection, Invalid},
		{`<|call_sep|><|src_sep|>def f(b):<|arg_sep|>{"b": "7", "b"`, Forward, Invalid},
		{`<|inv_line_sep|><|src_sep|>x<|arg_sep|>{"b": "7", "b"`, Backward, Invalid},
		{`<|line_sep|><|arg_sep|>{"b": "7", "b"`, AnyDirection, Invalid}, // same key, escaped
		// A key that is still open, or only shares a prefix, may yet differ.
		{`<|line_sep|><|arg_sep|>{"b": "7", "b`, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"b": "7", "bc"`, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"b": "7", "bc": "8"}<|src_sep|>x<|action_sep|>`, AnyDirection, Complete},
		{`<|line_sep|><|arg_sep|>{"b": "7", ".."`, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"a": "\u00e9\ud83d\ude00"}<|src_sep|>x<|action_sep|>`, AnyDirection, Complete},
		{`<|line_sep|><|arg_sep|>{"a": "\u00`, AnyDirection, Partial},
		{`<|line_sep|><|arg_sep|>{"a": "\x"}`, AnyDirection, Invalid},
		{"<|line_sep|><|arg_sep|>{}<|src_sep|>a\nb", AnyDirection, Invalid},
		{`<|return_sep|><|src_sep|>    return x<|arg_sep|>"3"<|action_sep|>`, Forward, Complete},
		{`<|return_sep|><|src_sep|>    return x<|arg_sep|>3<|action_sep|>`, Forward, Invalid},
		{`<|call_sep|><|src_sep|>def f(a):<|action_sep|>`, Forward, Invalid},
		{`<|inv_line_call_sep|><|src_sep|>    y = g(x)<|arg_sep|>{"x": "1"}<|action_sep|>`, Backward, Complete},
		{`<|exit_normal|>`, Forward, Complete},
		{`<|exit_normal|><|trace_end|>`, Forward, Complete},
		{`<|exit_normal|><|trace_end|><|end_of_text|>`, Forward, Complete},
		{`<|exit_normal|><|trace_`, Forward, Partial},
		{`<|exit_normal|>x`, Forward, Invalid},
		{`<|inv_exit_entry|>`, Forward, Invalid},
		{`<|inv_exit_entry|>`, Backward, Complete},
		{`hello`, AnyDirection, Invalid},
	}
	for _, c := range cases {
		if got := CheckFrame(c.text, c.dir); got != c.want {
			t.Errorf("CheckFrame(%q, %d) = %v, want %v", c.text, c.dir, got, c.want)
		}
	}
}

func TestParseFrameWithoutTerminator(t *testing.T) {
	f, err := ParseFrame(`<|call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "5"}`)
	if err != nil || f.Kind != Call || f.Src != "def f(n):" || !reflect.DeepEqual(f.Locals, vars("n", "5")) {
		t.Fatalf("got %#v, %v", f, err)
	}
	if _, err := ParseFrame(`<|call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "5"`); err == nil {
		t.Fatal("an unfinished frame must not parse")
	}
}

func TestBadTrajectories(t *testing.T) {
	good, _ := Serialize(goldenCases()["forward_jumps"])
	bad := []string{
		"",
		"<|begin_of_text|>",
		strings.Replace(good, "<|step_over|>", "<|inv_step_over|>", 1),
		strings.Replace(good, "<|step_over|>", "<|fly|>", 1),
		strings.TrimSuffix(good, "<|end_of_text|>"),
		good + "x",
		strings.Replace(good, "<|exit_normal|>", "<|inv_exit_entry|>", 1),
		strings.Replace(good, `{"n": "2"}`, `{"n": 2}`, 1),
	}
	for _, b := range bad {
		if _, err := ParseTrajectory(b); err == nil {
			t.Errorf("ParseTrajectory accepted %q", b)
		}
	}
}

// TestLocalsRules pins the diff rules on the fixture: "..", scope changes
// and disappearing variables, and that MergeLocals recovers the truth.
func TestLocalsRules(t *testing.T) {
	b := NewBuilder(false)
	var full tracer.Locals
	for i, s := range fixtureStates[:10] {
		via := debugger.StepInto
		f, err := b.Frame(s, false, via)
		if err != nil {
			t.Fatal(err)
		}
		full = MergeLocals(full, f)
		if !reflect.DeepEqual(full, cloneLocals(s.Locals)) {
			t.Fatalf("state %d: merged %v, want %v", i, full, s.Locals)
		}
		if i == 5 && (!f.Elided || !reflect.DeepEqual(f.Locals, vars("i", "0"))) {
			t.Fatalf("state 5: got %#v, want only i with ..", f)
		}
	}
	f, _ := b.Frame(fixtureStates[9], false, debugger.Breakpoint)
	if f.Elided || len(f.Locals) != 3 {
		t.Fatalf("after a breakpoint all locals are shown, got %#v", f)
	}
	inv := NewBuilder(true)
	inv.Frame(fixtureStates[5], false, "")
	f, _ = inv.Frame(fixtureStates[4], false, debugger.InvStepOver)
	if f.Elided || len(f.Locals) != 2 {
		t.Fatalf("a variable that disappears backwards shows all locals, got %#v", f)
	}
}

func TestSpecialTokensAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, tok := range SpecialTokens {
		if seen[tok] || !strings.HasPrefix(tok, "<|") || !strings.HasSuffix(tok, "|>") {
			t.Fatalf("bad or repeated token %q", tok)
		}
		seen[tok] = true
	}
	for k := range kinds {
		if !seen[k.Token()] {
			t.Errorf("kind %s token %s missing from SpecialTokens", k, k.Token())
		}
	}
	for _, a := range append(append([]debugger.Action{}, debugger.ForwardActions...), debugger.InverseActions...) {
		if !seen[actionToken(a)] {
			t.Errorf("action %s missing from SpecialTokens", a)
		}
	}
}
