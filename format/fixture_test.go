package format

import (
	"ndb/debugger"
	"ndb/tracer"
)

// fixtureSource is a small CruxEval-shaped program, already wrapped in main.
const fixtureSource = `def f(n):
    result = []
    for i in range(n):
        result.append(i + 1)
    return result

def main():
    return f(2)
`

func vars(kv ...string) tracer.Locals {
	var l tracer.Locals
	for i := 0; i+1 < len(kv); i += 2 {
		l = append(l, tracer.Var{Name: kv[i], Value: kv[i+1]})
	}
	return l
}

// fixtureStates is the settrace record of fixtureSource, written by hand.
var fixtureStates = []tracer.State{
	{Event: "call", Lineno: 7, Function: "main", Depth: 0, Src: "def main():", Frame: 1},                                                 // 0
	{Event: "line", Lineno: 8, Function: "main", Depth: 0, Src: "    return f(2)", Frame: 1},                                             // 1
	{Event: "call", Lineno: 1, Function: "f", Depth: 1, Src: "def f(n):", Locals: vars("n", "2"), Frame: 2},                              // 2
	{Event: "line", Lineno: 2, Function: "f", Depth: 1, Src: "    result = []", Locals: vars("n", "2"), Frame: 2},                        // 3
	{Event: "line", Lineno: 3, Function: "f", Depth: 1, Src: "    for i in range(n):", Locals: vars("n", "2", "result", "[]"), Frame: 2}, // 4
	{Event: "line", Lineno: 4, Function: "f", Depth: 1, Src: "        result.append(i + 1)", Locals: vars("n", "2", "result", "[]", "i", "0"), Frame: 2},
	{Event: "line", Lineno: 3, Function: "f", Depth: 1, Src: "    for i in range(n):", Locals: vars("n", "2", "result", "[1]", "i", "0"), Frame: 2},
	{Event: "line", Lineno: 4, Function: "f", Depth: 1, Src: "        result.append(i + 1)", Locals: vars("n", "2", "result", "[1]", "i", "1"), Frame: 2},
	{Event: "line", Lineno: 3, Function: "f", Depth: 1, Src: "    for i in range(n):", Locals: vars("n", "2", "result", "[1, 2]", "i", "1"), Frame: 2},
	{Event: "line", Lineno: 5, Function: "f", Depth: 1, Src: "    return result", Locals: vars("n", "2", "result", "[1, 2]", "i", "1"), Frame: 2},
	{Event: "return", Lineno: 5, Function: "f", Depth: 1, Src: "    return result", Arg: "[1, 2]", Frame: 2},  // 10
	{Event: "return", Lineno: 8, Function: "main", Depth: 0, Src: "    return f(2)", Arg: "[1, 2]", Frame: 1}, // 11
}

// visit is one state a hand-made trajectory reaches, and how.
type visit struct {
	state    int
	lineCall bool
	via      debugger.Action
	bp       string // breakpoint line when via is Breakpoint
}

// build makes a trajectory from visits and an exit, with the Builder.
func build(source string, states []tracer.State, inverse bool, visits []visit, exitVia debugger.Action, exit Kind) *Trajectory {
	b := NewBuilder(inverse)
	t := &Trajectory{Source: source}
	for i, v := range visits {
		if i > 0 {
			t.Steps = append(t.Steps, Step{Action: v.via, Src: v.bp})
		}
		f, err := b.Frame(states[v.state], v.lineCall, v.via)
		if err != nil {
			panic(err)
		}
		t.Frames = append(t.Frames, f)
	}
	t.Steps = append(t.Steps, Step{Action: exitVia})
	t.Frames = append(t.Frames, b.Exit(exit))
	return t
}
