package debugger

import (
	"strings"

	"ndb/internal/pysource"
)

// FunctionLine is where a function breakpoint on name goes, as pdb puts
// `b FUNC` once the function is defined: its code's co_firstlineno, the
// line of its first decorator, else of its `def` (the session's function
// breakpoint then stops at the first line the function runs, as pdb's).
// name is a function (`total`: the module's own def first, as pdb's
// search, else a def of that name at any depth) or a method (`C.method`: a
// def in the body of a class C; `Outer.Inner.m` by its qualified name); 0
// when source has none. Defs in strings and comments are not defs.
func FunctionLine(source, name string) int {
	name = strings.TrimSpace(name)
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if !IsName(p) {
			return 0
		}
	}
	ix := pysource.New(source)
	var fallback *pysource.Scope
	for _, s := range ix.Scopes {
		if s.Kind != pysource.Function {
			continue
		}
		switch {
		case len(parts) == 1 && s.Name == name && s.Parent == ix.Module:
			return s.First
		case len(parts) == 1 && s.Name == name && fallback == nil:
			fallback = s
		case len(parts) > 1 && s.Qualname == name:
			return s.First
		case len(parts) == 2 && s.Name == parts[1] && s.Parent.Kind == pysource.Class && s.Parent.Name == parts[0] && fallback == nil:
			fallback = s // a class of that name nested in a function or class
		}
	}
	if fallback != nil {
		return fallback.First
	}
	return 0
}
