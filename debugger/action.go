// Package debugger holds the debugger's semantics over traces: the forward
// and inverse state trees, every action as a pure function, a bdb-exact
// simulation of pdb's commands, and the Session every front end drives.
package debugger

import "slices"

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

// Move is one movement command as every front end names it: pdb's name
// and short forms (the terminal, eval session, the engine tests), the
// agents' mode (MCP's debug_step; "" where a tool of its own has it:
// continue and until), the Command it is, and its help. The direction is
// the Command's (Reverse). DAP's requests are the protocol's own names
// for the same Commands.
type Move struct {
	Name    string
	Aliases []string
	Mode    string
	Command Command
	Help    string
}

// MoveTable lists the movement commands in help order.
var MoveTable = []Move{
	{Name: "step", Aliases: []string{"s"}, Mode: "into", Command: Command{Action: StepInto},
		Help: "Run until the next event anywhere: the next line, or the --Call-- of a function the line calls (pdb's step)."},
	{Name: "next", Aliases: []string{"n"}, Mode: "over", Command: Command{Action: StepOver},
		Help: "Run until the next line of the current function, or its --Return--; calls run without stopping unless they hit a breakpoint (pdb's next)."},
	{Name: "return", Aliases: []string{"r"}, Mode: "out", Command: Command{Action: StepReturn},
		Help: "Run until the current function returns (stops at its --Return--)."},
	{Name: "continue", Aliases: []string{"c", "cont"}, Command: Command{Action: Continue},
		Help: "Run until a breakpoint, or to the end of the program."},
	{Name: "until", Aliases: []string{"unt"}, Command: Command{Action: StepOver, Until: true},
		Help: "Without LINE, run until a line greater than the current one in this function (leaves loops); with LINE, until a line >= LINE. Also stops when the function returns."},
	{Name: "rs", Mode: "back_into", Command: Command{Action: InvStepInto},
		Help: "Reverse step: back to the previous event, entering a call the previous line made at its last event (inv_step_into)."},
	{Name: "rn", Mode: "back_over", Command: Command{Action: InvStepOver},
		Help: "Reverse next: back to the previous event of the current function, skipping calls (inv_step_over)."},
	{Name: "rr", Mode: "back_call", Command: Command{Action: InvStepCall},
		Help: "Reverse return: back to the --Call-- of the current function, showing its arguments (inv_step_call)."},
	{Name: "rc", Command: Command{Action: Continue, Backward: true},
		Help: "Reverse continue: back to the latest earlier stop at a breakpoint line, or to before the start."},
}

// Moves are the movement commands by every name and short form (s, step,
// n, unt, r, c, cont, rs, ...).
var Moves = func() map[string]Command {
	m := map[string]Command{}
	for _, mv := range MoveTable {
		m[mv.Name] = mv.Command
		for _, a := range mv.Aliases {
			m[a] = mv.Command
		}
	}
	return m
}()

// MoveNamed is the move called name (a name, a short form or a mode).
func MoveNamed(name string) (Move, bool) {
	for _, mv := range MoveTable {
		if mv.Name == name || mv.Mode == name && name != "" || slices.Contains(mv.Aliases, name) {
			return mv, true
		}
	}
	return Move{}, false
}

// MoveModes are the agents' modes, in table order.
func MoveModes() []string {
	var out []string
	for _, mv := range MoveTable {
		if mv.Mode != "" {
			out = append(out, mv.Mode)
		}
	}
	return out
}
