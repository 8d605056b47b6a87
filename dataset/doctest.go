package dataset

import (
	"regexp"
	"strings"

	"ndb/internal/pysource"
)

// Doctest calls and main blocks of real-world files (the function units of
// the file sources, files.go).

var mainBlockRe = regexp.MustCompile(`^if\s+__name__\s*==\s*['"]__main__['"]\s*:`)

// StripMainBlock removes every top-level `if __name__ == "__main__":` block
// (the line and the indented, blank or comment lines under it, up to the
// next top-level statement), so that a call unit does not run it at import.
func StripMainBlock(code string) string {
	lines := strings.Split(code, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if !mainBlockRe.MatchString(lines[i]) {
			out = append(out, lines[i])
			continue
		}
		j := i + 1
		for j < len(lines) {
			l := lines[j]
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && l[0] != ' ' && l[0] != '\t' {
				break
			}
			j++
		}
		i = j - 1
	}
	// no trailing blank lines left by the cut
	for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n") + "\n"
}

var (
	promptRe = regexp.MustCompile(`^\s*>>> ?(.*)$`)
	contRe   = regexp.MustCompile(`^\s*\.\.\.(?: (.*))?$`)
)

// moduleNames lists the names a module binds when it is imported without
// its main block (StripMainBlock, as a call unit runs it): functions,
// classes, imports, assignments, also those under a top-level if or try
// (`try: import numpy as np`), read by the program's index.
func moduleNames(code string) map[string]bool {
	names := map[string]bool{}
	for _, n := range pysource.New(StripMainBlock(code)).Module.Locals() {
		names[n] = true
	}
	return names
}

// DoctestCalls returns the distinct doctest calls of a file, in order: each
// `>>>` example (with its `...` continuation lines joined by one space,
// comments removed) that is one call expression of a name the module binds
// at top level (f(1), Cls(3).method(4), mod_fn(x=[1, 2]).attr(...)), or of a
// builtin wrapping such a call (list(gen(3))), and that uses no name the
// doctest itself defined (`result = f(1)`, then `g(result)` is skipped).
// Assignments, imports, bare names and other statements are skipped.
func DoctestCalls(code string) []string {
	mod := moduleNames(code)
	lines := strings.Split(code, "\n")
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		m := promptRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		parts := []string{stripComment(m[1])}
		for i+1 < len(lines) {
			c := contRe.FindStringSubmatch(lines[i+1])
			if c == nil {
				break
			}
			parts = append(parts, strings.TrimSpace(stripComment(c[1])))
			i++
		}
		call := strings.TrimSpace(strings.Join(parts, " "))
		if call == "" || seen[call] || !isModuleCall(call, mod) {
			continue
		}
		seen[call] = true
		out = append(out, call)
	}
	return out
}

// stripComment cuts a trailing # comment outside strings.
func stripComment(s string) string {
	for i := 0; i < len(s); {
		switch s[i] {
		case '"', '\'':
			j, ok := skipString(s, i)
			if !ok {
				return s
			}
			i = j
			continue
		case '#':
			return strings.TrimRight(s[:i], " \t")
		}
		i++
	}
	return s
}

// pyKeywords are the keywords and constants an expression may hold.
var pyKeywords = map[string]bool{"True": true, "False": true, "None": true, "and": true, "or": true,
	"not": true, "in": true, "is": true, "if": true, "else": true, "for": true, "lambda": true,
	"await": true, "async": true}

// pyBuiltins are the builtins a doctest call may name.
var pyBuiltins = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`abs all any ascii bin bool bytearray bytes callable chr complex dict
		dir divmod enumerate filter float format frozenset getattr hasattr hash hex id int isinstance
		issubclass iter len list map max min next object oct ord pow print range repr reversed round set
		slice sorted str sum tuple type zip ValueError TypeError KeyError IndexError Exception
		ZeroDivisionError ArithmeticError OverflowError RuntimeError StopIteration NotImplemented
		Ellipsis float`) {
		pyBuiltins[n] = true
	}
}

// isModuleCall reports whether expr is a call chain NAME(trailers...)
// ending in a call, whose head is a module-level name (or a builtin whose
// arguments call one), and whose other free names are module-level names,
// builtins or names the expression binds itself (comprehension targets,
// lambda parameters, := targets, keyword argument names).
func isModuleCall(expr string, mod map[string]bool) bool {
	// head: a name, then trailers . name, (...), [...]; the last one a call
	i := 0
	for i < len(expr) && isIdent(expr[i]) {
		i++
	}
	head := expr[:i]
	if head == "" || (head[0] >= '0' && head[0] <= '9') || pyKeywords[head] {
		return false
	}
	lastCall := false
	for i < len(expr) {
		switch expr[i] {
		case '.':
			j := i + 1
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			if j == i+1 {
				return false
			}
			i, lastCall = j, false
		case '(', '[':
			end, ok := matchBracket(expr, i)
			if !ok {
				return false
			}
			lastCall = expr[i] == '('
			i = end + 1
		default:
			return false // an operator, comparison, assignment: not one call
		}
	}
	if !lastCall {
		return false
	}
	names, bound := exprNames(expr)
	callsModule := mod[head]
	if !callsModule {
		if !pyBuiltins[head] || head == "print" { // print(f(x)): an expression printed, skipped
			return false
		}
		for _, n := range names {
			if n.call && mod[n.name] {
				callsModule = true
			}
		}
		if !callsModule {
			return false
		}
	}
	for _, n := range names {
		if !mod[n.name] && !pyBuiltins[n.name] && !pyKeywords[n.name] && !bound[n.name] {
			return false
		}
	}
	return true
}

// matchBracket returns the index of the bracket closing the one at open.
func matchBracket(s string, open int) (int, bool) {
	depth := 0
	for i := open; i < len(s); {
		switch c := s[i]; c {
		case '"', '\'':
			j, ok := skipString(s, i)
			if !ok {
				return 0, false
			}
			i = j
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i, true
			}
		}
		i++
	}
	return 0, false
}

type freeName struct {
	name string
	call bool // followed by (
}

// exprNames lists the free names of an expression (not attributes, not
// keyword argument names, not string prefixes, not numbers) and the names
// it binds (for TARGETS in, lambda PARAMS:, NAME :=).
func exprNames(s string) ([]freeName, map[string]bool) {
	var names []freeName
	bound := map[string]bool{}
	prevWord := ""
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j, ok := skipString(s, i)
			if !ok {
				return append(names, freeName{name: "\x00"}), bound // unparsable: rejected
			}
			i, prevWord = j, ""
		case c >= '0' && c <= '9':
			for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
				i++
			}
			prevWord = ""
		case isIdent(c):
			j := i
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && s[k] == ' ' {
				k++
			}
			attr := i > 0 && s[i-1] == '.'
			switch {
			case k < len(s) && (s[k] == '\'' || s[k] == '"') && k == j && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == "":
				// string prefix
			case attr:
			case k < len(s) && s[k] == '=' && (k+1 >= len(s) || s[k+1] != '='):
				// keyword argument name
			case k+1 < len(s) && s[k] == ':' && s[k+1] == '=':
				bound[word] = true
			case prevWord == "for":
				bound[word] = true
				// further targets: for a, b in ...
				for k < len(s) && s[k] == ',' {
					k++
					for k < len(s) && s[k] == ' ' {
						k++
					}
					e := k
					for e < len(s) && isIdent(s[e]) {
						e++
					}
					bound[s[k:e]] = true
					j, k = e, e
				}
			case prevWord == "lambda":
				for _, p := range strings.Split(s[i:strings.IndexByte(s[i:]+":", ':')+i], ",") {
					bound[strings.TrimSpace(strings.SplitN(p, "=", 2)[0])] = true
				}
			default:
				names = append(names, freeName{name: word, call: k < len(s) && s[k] == '('})
			}
			prevWord = word
			i = j
		default:
			if c != ' ' {
				prevWord = ""
			}
			i++
		}
	}
	return names, bound
}
