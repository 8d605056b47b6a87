package dataset

import (
	"strings"
	"testing"
)

// FuzzExtractCall: the assert scanner never panics and what it returns is
// a call of the name with balanced parentheses.
func FuzzExtractCall(f *testing.F) {
	f.Add("assert f(1, 'a)') == 2", "f")
	f.Add(`assert set(f("""x""", [1, (2)])) == {1}`, "f")
	f.Add("assert f('", "f")
	f.Fuzz(func(t *testing.T, line, name string) {
		if name == "" {
			return
		}
		call, ok := extractCall(line, name)
		if ok && (!strings.HasPrefix(call, name+"(") || !strings.HasSuffix(call, ")")) {
			t.Fatalf("extractCall(%q, %q) = %q", line, name, call)
		}
		literalArgs(line)
	})
}

// FuzzPyArgLists: the JSON-to-Python converter never panics.
func FuzzPyArgLists(f *testing.F) {
	f.Add(`[[1, "a", {"k": [true, null]}], [Infinity]]`)
	f.Add(`{}`)
	f.Add(`[[-Infinity, NaN, "NaN\"x"]]`)
	f.Fuzz(func(t *testing.T, raw string) {
		pyArgLists(sanitizeJSON([]byte(raw)))
	})
}
