package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, line, text string }{
		{"plain 'text' é 中", "plain 'text' é 中", "plain 'text' é 中"},
		{"\x1b[2J\x1b]0;title\x07", `\x1b[2J\x1b]0;title\x07`, `\x1b[2J\x1b]0;title\x07`},
		{"a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"\u009b31m\x7f", `\x9b31m\x7f`, `\x9b31m\x7f`},
		{"abc\u202edef\u2066", `abc\u202edef\u2066`, `abc\u202edef\u2066`},
		{"bad \xff byte", `bad \xff byte`, `bad \xff byte`},
		{"", "", ""},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
	}
}

// FuzzEscape: Line never leaves a control character or a newline, Text
// only newlines and tabs, and both are valid UTF-8.
func FuzzEscape(f *testing.F) {
	f.Add("\x1b[31mred\x1b[0m\n")
	f.Add("\xc2\x9b\xe2\x80\xae")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Line(s), Text(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q -> %q: not UTF-8", s, out)
			}
		}
		for _, r := range Line(s) {
			if unsafeRune(r) {
				t.Fatalf("Line(%q) keeps %U", s, r)
			}
		}
		for _, r := range strings.NewReplacer("\n", "", "\t", "").Replace(Text(s)) {
			if unsafeRune(r) {
				t.Fatalf("Text(%q) keeps %U", s, r)
			}
		}
	})
}
