package debugger

import (
	"fmt"
	"strings"
	"unicode"

	"ndb/internal/pysource"
	"ndb/tracer"
)

// This file is the one breakpoint-condition evaluator of ndb: the terminal
// (b LINE, COND; tbreak), the trace backend's bdb simulation and DAP's
// conditional breakpoints all use it.
// A breakpoint condition, evaluated over the locals' reprs (an engine
// gives reprs, and a model never runs code) by pysource's expression
// reader, the same that folds a frame's values for the model engine's
// rules: names, int, float, str, True, False and None literals, list and
// tuple displays, not, and, or, `a if c else b`, comparisons (== != < <= >
// >=, in, not in, is None), + - * // % on ints, subscripts by an int, the
// builtins len, sum, min, max, abs, ord, chr, str, int, sorted, list and
// tuple, and a str's methods upper, lower, strip, isdigit, ..., split,
// join, count, find, startswith and endswith; a name's repr must read as
// one of those values, or a list, tuple or dict of them. A condition that fails to evaluate (an
// unknown name, a value it does not read, an operation that would raise)
// stops, as in pdb.
type Condition struct {
	expr     *pysource.Expr
	original string
}

// ConditionHelp says which conditions ndb evaluates.
const ConditionHelp = "ndb evaluates, over the locals' reprs, conditions made of local names, int, float, str, True/False/None literals, list and tuple displays, not/and/or, `a if c else b`, comparisons (== != < <= > >= in, not in, is None), + - * // % on ints, subscripts by an int, len/sum/min/max/abs/ord/chr/str/int/sorted/list/tuple, and a str's methods (upper, lower, strip, isdigit, ..., split, join, count, find, startswith, endswith)"

// ParseCondition parses a condition; the error says why it is refused.
func ParseCondition(src string) (*Condition, error) {
	s := strings.TrimSpace(src)
	if s == "" {
		return nil, nil
	}
	expr, ok := pysource.ParseExpr(s)
	if !ok {
		return nil, fmt.Errorf("condition %q: %s", src, ConditionHelp)
	}
	return &Condition{expr: expr, original: s}, nil
}

// IsName reports whether s is a Python identifier (and not a keyword
// constant or and/or/not).
func IsName(s string) bool {
	if s == "" || s == "not" || s == "and" || s == "or" || s == "True" || s == "False" || s == "None" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// Eval says whether the condition holds at a stop with these locals; an
// error means it could not be evaluated (the breakpoint then stops).
func (c *Condition) Eval(locals tracer.Locals) (bool, error) {
	holds, ok := c.expr.Truth(locals.Get)
	if !ok {
		return true, fmt.Errorf("condition %q cannot be evaluated over these locals' reprs (a name that is no local, a value ndb does not read, or an error)", c.original)
	}
	return holds, nil
}

// IsStrRepr reports whether r is a quoted string repr.
func IsStrRepr(r string) bool {
	return len(r) >= 2 && (r[0] == '\'' || r[0] == '"') && r[len(r)-1] == r[0]
}

// String is the condition as written (trimmed).
func (c *Condition) String() string { return c.original }
