// Package debugger holds the debugger's semantics over traces: the forward
// and inverse state trees, every action as a pure function, a bdb-exact
// simulation of pdb's commands, and the Session every front end drives.
package debugger

// Action is one debugger action of SPEC section 3; its string is the token
// name used in the model's text (<|step_into|> ...).
type Action string

// Forward and inverse actions.
const (
	StepInto    Action = "step_into"
	StepOver    Action = "step_over"
	StepReturn  Action = "step_return"
	Breakpoint  Action = "breakpoint"
	Continue    Action = "continue"
	InvStepInto Action = "inv_step_into"
	InvStepOver Action = "inv_step_over"
	InvStepCall Action = "inv_step_call"
)

// ForwardActions and InverseActions list the actions in SPEC order.
var (
	ForwardActions = []Action{StepInto, StepOver, StepReturn, Breakpoint, Continue}
	InverseActions = []Action{InvStepInto, InvStepOver, InvStepCall}
)

// Inverse reports whether a moves backwards in time.
func (a Action) Inverse() bool {
	return a == InvStepInto || a == InvStepOver || a == InvStepCall
}

// Valid reports whether a is one of the eight actions.
func (a Action) Valid() bool {
	for _, b := range ForwardActions {
		if a == b {
			return true
		}
	}
	return a.Inverse()
}

// Moves are pdb's movement commands and ndb's reverse ones by their short
// names (s, n, unt, r, c; rs, rn, rr, rc), the one spelling that the
// terminal's command table, the measures (eval session) and the engine
// tests read; the terminal adds aliases and help.
var Moves = map[string]Command{
	"s": {Action: StepInto}, "n": {Action: StepOver}, "unt": {Action: StepOver, Until: true},
	"r": {Action: StepReturn}, "c": {Action: Continue},
	"rs": {Action: InvStepInto}, "rn": {Action: InvStepOver}, "rr": {Action: InvStepCall},
	"rc": {Action: Continue, Backward: true},
}
