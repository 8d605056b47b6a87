package dataset

import (
	"regexp"
	"strings"

	"ndb/internal/pysource"
)

// Doctest calls and main blocks of real-world files (the function units of
// the file sources, files.go).

// StripMainBlock removes every top-level `if __name__ == "__main__":`
// statement (its elif and else clauses too, and the blank and comment lines
// under it, up to the next top-level statement), so that a call unit does
// not run it at import. The statements are the program index's: a line in
// a string or a comment is none.
func StripMainBlock(code string) string {
	ix := pysource.New(code)
	topLevel := func(n int) bool { return ix.StatementStarts(n) && pysource.IndentWidth(ix.Line(n)) == 0 }
	var out []string
	for n := 1; n <= len(ix.Lines); n++ {
		if !ix.IsMainGuard(n) || !topLevel(n) {
			out = append(out, ix.Line(n))
			continue
		}
		next := n + 1
		for ; next <= len(ix.Lines); next++ {
			if topLevel(next) && ix.StatementKeyword(next) != "elif" && ix.StatementKeyword(next) != "else" {
				break
			}
		}
		n = next - 1
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
	if c := pysource.New(s).Comment(1); c >= 0 {
		return strings.TrimRight(s[:c], " \t")
	}
	return s
}

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
// arguments call one), and whose other free names are module-level names
// or builtins (the names it binds itself, comprehension targets, lambda
// parameters, := targets, are its own). Both are read by the index of
// expr as a program.
func isModuleCall(expr string, mod map[string]bool) bool {
	ix := pysource.New(expr)
	head, ok := ix.CallChain(1)
	if !ok || len(ix.Lines) != 1 {
		return false
	}
	if !mod[head] {
		if !pyBuiltins[head] || head == "print" { // print(f(x)): an expression printed, skipped
			return false
		}
		callsModule := false
		for _, n := range ix.Calls(ix.Module) {
			if mod[n] {
				callsModule = true
			}
		}
		if !callsModule {
			return false
		}
	}
	for _, n := range ix.Unbound() {
		if !mod[n] && !pyBuiltins[n] {
			return false
		}
	}
	return true
}
