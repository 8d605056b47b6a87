package debugger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"ndb/tracer"
)

// This file is the one breakpoint-condition evaluator of ndb: the terminal
// (b LINE, COND; tbreak), the trace backend's bdb simulation and DAP's
// conditional breakpoints all use it.
// A breakpoint condition, evaluated over the locals' reprs (an engine
// gives reprs, and a model never runs code). The forms are
//
//	NAME                 truthy: the repr is not 0, 0.0, False, None, '', [], {}, (), set()
//	not NAME             falsy
//	NAME OP OPERAND      OP: == != < <= > >=; OPERAND: a NAME or a literal
//	                     (int, float, 'str', "str", True, False, None)
//
// == and != compare numbers as numbers and anything else by repr; the
// orderings need two numbers, or two strings. A condition that fails to
// evaluate (an unknown name, an ordering of other values) stops, as in pdb.
type Condition struct {
	neg      bool // not NAME
	left     operand
	op       string // "" for NAME / not NAME
	right    operand
	original string
}

type operand struct {
	name string // a local's name, or "" for a literal
	lit  string // the literal's repr
}

var condOps = []string{"==", "!=", "<=", ">=", "<", ">"}

// ConditionHelp says which conditions ndb evaluates.
const ConditionHelp = "ndb evaluates conditions of the form NAME, not NAME, or NAME OP VALUE (OP one of == != < <= > >=; VALUE a local name or a literal) over the locals' reprs"

// ParseCondition parses a condition; the error says why it is refused.
func ParseCondition(src string) (*Condition, error) {
	s := strings.TrimSpace(src)
	if s == "" {
		return nil, nil
	}
	c := &Condition{original: s}
	if rest, ok := strings.CutPrefix(s, "not "); ok {
		name := strings.TrimSpace(rest)
		if !IsName(name) {
			return nil, fmt.Errorf("condition %q: %s", src, ConditionHelp)
		}
		c.neg, c.left = true, operand{name: name}
		return c, nil
	}
	if IsName(s) {
		c.left = operand{name: s}
		return c, nil
	}
	i, op := findOp(s)
	if i < 0 {
		return nil, fmt.Errorf("condition %q: %s", src, ConditionHelp)
	}
	l, errL := parseOperand(s[:i])
	r, errR := parseOperand(s[i+len(op):])
	if errL != nil || errR != nil || l.name == "" && r.name == "" {
		return nil, fmt.Errorf("condition %q: %s", src, ConditionHelp)
	}
	c.left, c.op, c.right = l, op, r
	return c, nil
}

// findOp finds the first comparison operator outside string literals.
func findOp(s string) (int, string) {
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		default:
			for _, op := range condOps {
				if strings.HasPrefix(s[i:], op) {
					return i, op
				}
			}
		}
	}
	return -1, ""
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

func parseOperand(s string) (operand, error) {
	s = strings.TrimSpace(s)
	switch {
	case IsName(s):
		return operand{name: s}, nil
	case s == "True" || s == "False" || s == "None":
		return operand{lit: s}, nil
	case IsStrRepr(s):
		// Escapes stay as written (a repr writes \n as \n); only the quotes
		// are normalised to the ones repr picks.
		v := strings.NewReplacer(`\'`, `'`, `\"`, `"`).Replace(s[1 : len(s)-1])
		return operand{lit: pyStrRepr(v)}, nil
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil {
		return operand{lit: s}, nil
	}
	return operand{}, fmt.Errorf("not an operand: %q", s)
}

// pyStrRepr quotes v as Python's repr does: 'text', or "text" when it
// holds a ' and no ".
func pyStrRepr(v string) string {
	if strings.Contains(v, "'") && !strings.Contains(v, `"`) {
		return `"` + v + `"`
	}
	return "'" + strings.ReplaceAll(v, "'", `\'`) + "'"
}

// Eval says whether the condition holds at a stop with these locals; an
// error means it could not be evaluated (the breakpoint then stops).
func (c *Condition) Eval(locals tracer.Locals) (bool, error) {
	left, err := c.left.value(locals)
	if err != nil {
		return true, err
	}
	if c.op == "" {
		return truthy(left) != c.neg, nil
	}
	right, err := c.right.value(locals)
	if err != nil {
		return true, err
	}
	lf, lnum := number(left)
	rf, rnum := number(right)
	switch c.op {
	case "==", "!=":
		eq := left == right
		if lnum && rnum {
			eq = lf == rf
		}
		return eq == (c.op == "=="), nil
	}
	var cmp int
	switch {
	case lnum && rnum:
		cmp = compare(lf, rf)
	case IsStrRepr(left) && IsStrRepr(right):
		cmp = strings.Compare(left[1:len(left)-1], right[1:len(right)-1])
	default:
		return true, fmt.Errorf("cannot order %s and %s (ndb compares numbers or strings)", left, right)
	}
	switch c.op {
	case "<":
		return cmp < 0, nil
	case "<=":
		return cmp <= 0, nil
	case ">":
		return cmp > 0, nil
	}
	return cmp >= 0, nil
}

func (o operand) value(locals tracer.Locals) (string, error) {
	if o.name == "" {
		return o.lit, nil
	}
	v, ok := locals.Get(o.name)
	if !ok {
		return "", fmt.Errorf("name %q is not a local here", o.name)
	}
	return v, nil
}

func number(repr string) (float64, bool) {
	switch repr {
	case "True":
		return 1, true
	case "False":
		return 0, true
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(repr, "_", ""), 64)
	return f, err == nil
}

// IsStrRepr reports whether r is a quoted string repr.
func IsStrRepr(r string) bool {
	return len(r) >= 2 && (r[0] == '\'' || r[0] == '"') && r[len(r)-1] == r[0]
}

func compare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func truthy(repr string) bool {
	switch repr {
	case "0", "0.0", "-0.0", "False", "None", "''", `""`, "[]", "{}", "()", "set()", "b''", "0j":
		return false
	}
	return true
}

// String is the condition as written (trimmed).
func (c *Condition) String() string { return c.original }
