package engine

import (
	"context"
	"testing"

	"ndb/debugger"
)

// FuzzStopRulesOnPredictedText: the commands answered by predicted steps
// and the shared stop rules (n and r with a breakpoint set, unt, unt N,
// c with two breakpoints, rc) end in a stop or an error whatever a model
// writes, never a panic or a hang; and the stack of any stop is at most
// as deep as the stop.
func FuzzStopRulesOnPredictedText(f *testing.F) {
	for _, s := range []string{
		`<|line_sep|><|arg_sep|>{}<|src_sep|>    y = x * x<|action_sep|>`,
		`<|call_sep|><|src_sep|>def square(x):<|arg_sep|>{"x": "1"}<|action_sep|>`,
		`<|return_sep|><|src_sep|>    return y<|arg_sep|>"4"`,
		`<|exception_sep|><|src_sep|>    return y<|arg_sep|>"E()"`,
		`<|inv_line_sep|><|arg_sep|>{}<|src_sep|>    t = [square(i) for i in range(n)]<|action_sep|>`,
		`<|exit_normal|><|trace_end|>`, `<|end_of_text|>`, "",
	} {
		f.Add(s, uint8(0))
	}
	source := "def square(x):\n    y = x * x\n    return y\n\ndef f(s, n):\n    t = [square(i) for i in range(n)]\n    return s * n\n"
	cmds := []debugger.Command{
		{Action: debugger.StepOver}, {Action: debugger.StepReturn}, {Action: debugger.StepOver, Until: true},
		{Action: debugger.StepOver, Until: true, Line: 7}, {Action: debugger.Continue}, {Action: debugger.Continue, Backward: true},
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		pred := PredictorFunc(func(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
			return []string{text}, nil
		})
		ctx := context.Background()
		p := Program{Source: source, Call: "f('ab', 3)"}
		for _, jump := range []int{0, 4} {
			nb, err := NewNeural(p, pred, Draw{})
			if err != nil {
				t.Fatal(err)
			}
			nb.MaxRollout, nb.JumpSteps = 5, jump
			s, _ := debugger.NewSession(ctx, nb)
			s.SetBreak(2)
			s.SetBreak(3)
			s.Do(ctx, debugger.Command{Action: debugger.StepInto})
			s.Do(ctx, cmds[int(which)%len(cmds)])
			s.Do(ctx, cmds[int(which/8)%len(cmds)])
			if st, stack := s.Current(), s.Stack(); !st.IsExit() && len(stack) > max(st.Depth, 0)+1 {
				t.Fatalf("a stack of %d frames at depth %d", len(stack), st.Depth)
			}
		}
		cb, err := NewCWM(p, pred, Draw{})
		if err != nil {
			t.Fatal(err)
		}
		cb.MaxRollout = 5
		cs, _ := debugger.NewSession(ctx, cb)
		cs.SetBreak(2)
		cs.Do(ctx, debugger.Command{Action: debugger.StepInto})
		cs.Do(ctx, cmds[int(which)%len(cmds)])
		cs.Stack()
	})
}
