package dataset

import "testing"

// TestExtractCallSkipsCommentsAndMethods: a call in a comment, or a method
// of the same name, is not the function's call.
func TestExtractCallSkipsCommentsAndMethods(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"assert g(1) == 2  # f(2)", ""},
		{"assert s.f(1) == 2", ""},
		{"assert s.f(1) == f(2)", "f(2)"},
		{"assert f (1) == 2", "f(1)"},
	} {
		got, ok := extractCall(c.line, "f")
		if got != c.want || ok != (c.want != "") {
			t.Errorf("extractCall(%q) = %q, %v; want %q", c.line, got, ok, c.want)
		}
	}
}

// TestLiteralArgsScopes: the names an argument list binds itself are its
// own; an f-string's fields read names.
func TestLiteralArgsScopes(t *testing.T) {
	for args, want := range map[string]bool{
		"([i * 2 for i in range(3)])": true,
		"(lambda x: x + 1, 2)":        true,
		"(f'{x}')":                    false,
		"(f'{1 + 2}')":                true,
		"([i for i in xs])":           false,
		"(key=1)":                     false, // as before: a keyword argument is refused
	} {
		if got := literalArgs(args); got != want {
			t.Errorf("literalArgs(%q) = %v, want %v", args, got, want)
		}
	}
}
