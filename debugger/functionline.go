package debugger

import (
	"regexp"
	"strings"
)

// FunctionLine is where a function breakpoint on name goes, as pdb puts
// `b FUNC` once the function is defined: its code's co_firstlineno, the
// line of its first decorator, else of its `def` (the session's function
// breakpoint then stops at the first line the function runs, as pdb's).
// name is a function (`total`: an unindented def first, as pdb's search,
// else a method of that name) or a method (`C.method`: a def indented
// under `class C`); 0 when source has none.
func FunctionLine(source, name string) int {
	name = strings.TrimSpace(name)
	cls := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		cls, name = name[:i], name[i+1:]
	}
	if !IsName(name) || cls != "" && !IsName(cls) {
		return 0
	}
	lines := SourceLines(source)
	def := regexp.MustCompile(`^([ \t]*)(async\s+)?def\s+` + regexp.QuoteMeta(name) + `\s*\(`)
	class := regexp.MustCompile(`^([ \t]*)class\s+` + regexp.QuoteMeta(cls) + `\s*[(:]`)
	// firstLine is the def at line i with its decorators above it.
	firstLine := func(i int) int {
		ind := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
		for i > 0 && strings.HasPrefix(lines[i-1], ind+"@") {
			i--
		}
		return i + 1
	}
	indentOf := func(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }
	if cls == "" {
		for _, top := range []bool{true, false} {
			for i, l := range lines {
				if m := def.FindStringSubmatch(l); m != nil && (m[1] == "") == top {
					return firstLine(i)
				}
			}
		}
		return 0
	}
	for i, l := range lines {
		m := class.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if indentOf(lines[j]) <= len(m[1]) {
				break // the class body ended
			}
			if def.MatchString(lines[j]) {
				return firstLine(j)
			}
		}
	}
	return 0
}
