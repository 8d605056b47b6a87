// Package termsafe escapes control characters in text that ndb shows on a
// terminal (docs/tracer.md, "Terminal views"). What a traced program
// controls (reprs, names, evaluation results, tracebacks, its output in
// ndb's own views) can hold ANSI escape sequences and other controls that
// a terminal would act on: move the cursor, rewrite earlier lines, set the
// window title, reorder text (bidirectional overrides). Escaped, they show
// as Python writes them in a repr (\x1b, \r, \u202e).
package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line escapes every control character of s, newlines and tabs included:
// for one-line views (a locals line, a state of a trace).
func Line(s string) string { return escape(s, false) }

// Text escapes every control character of s but newlines and tabs: for
// multi-line views (pp's result, a traceback).
func Text(s string) string { return escape(s, true) }

// unsafeRune reports whether a terminal may act on r: C0 controls, DEL,
// C1 controls (U+0080-U+009F, CSI among them), the bidirectional
// embeddings, overrides and isolates, line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

func escape(s string, keepLines bool) string {
	clean := true
	for _, r := range s {
		if unsafeRune(r) && !(keepLines && (r == '\n' || r == '\t')) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i]) // a byte that is not UTF-8
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r <= 0xff && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
