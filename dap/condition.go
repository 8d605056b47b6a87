package dap

import (
	"ndb/debugger"
	"ndb/tracer"
)

// A breakpoint condition: the evaluator is debugger.Condition, shared with
// the terminal (see debugger/condition.go for the forms ndb evaluates).
type condition struct {
	c        *debugger.Condition
	original string
}

// parseCondition parses a condition (nil for an empty one); the error says
// why it is refused.
func parseCondition(src string) (*condition, error) {
	c, err := debugger.ParseCondition(src)
	if err != nil || c == nil {
		return nil, err
	}
	return &condition{c: c, original: c.String()}, nil
}

// eval says whether the condition holds at a stop with these locals; an
// error means it could not be evaluated (the breakpoint then stops).
func (c *condition) eval(locals tracer.Locals) (bool, error) { return c.c.Eval(locals) }

func isName(s string) bool { return debugger.IsName(s) }

func isStrRepr(r string) bool { return debugger.IsStrRepr(r) }
