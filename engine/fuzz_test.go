package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"ndb/debugger"
)

// FuzzPredictedText: whatever a model or server writes, a command ends in
// a stop or an error, never a panic; the same for CWM's format.
func FuzzPredictedText(f *testing.F) {
	for _, s := range []string{
		`<|line_sep|><|arg_sep|>{}<|src_sep|>    return f('ab', 3)<|action_sep|>`,
		`<|call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'ab'"}<|action_sep|>`,
		`<|return_sep|><|src_sep|>    return y<|arg_sep|>"4"`,
		`<|exit_error|><|trace_end|>`,
		`<|inv_line_call_sep|><|src_sep|>        acc += square(i)<|arg_sep|>{"..": ".."}<|action_sep|>`,
		`<|line_sep|>{"x": ".."}<|action_sep|>    y = x * x<|frame_sep|>`,
		`<|end_of_text|>`, "", "\x00<|",
	} {
		f.Add(s, uint8(0))
	}
	source := "def square(x):\n    y = x * x\n    return y\n\ndef f(s, n):\n    t = [square(i) for i in range(n)]\n    return s * n\n"
	actions := append(append([]debugger.Action{}, debugger.ForwardActions...), debugger.InverseActions...)
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		pred := PredictorFunc(func(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
			return []string{text}, nil
		})
		a := actions[int(which)%len(actions)]
		p := Program{Source: source, Call: "f('ab', 3)"}
		ctx := context.Background()
		nb, err := NewNeural(p, pred, Draw{})
		if err != nil {
			t.Fatal(err)
		}
		nb.MaxRollout = 5
		s, _ := debugger.NewSession(ctx, nb)
		for range 3 {
			s.Do(ctx, debugger.Command{Action: debugger.StepInto})
		}
		s.Do(ctx, debugger.Command{Action: a, Src: "    y = x * x", Line: 2})
		cb, err := NewCWM(p, pred, Draw{})
		if err != nil {
			t.Fatal(err)
		}
		cb.MaxRollout = 5
		cs, _ := debugger.NewSession(ctx, cb)
		cs.Do(ctx, debugger.Command{Action: debugger.StepInto})
		cs.Do(ctx, debugger.Command{Action: a, Src: "    y = x * x"})
	})
}

// TestRolloutTime: a model that never walks back to a breakpoint (nor to
// the start) ends a reverse continue at RolloutTime, not after MaxRollout
// slow predictions, and the session does not ask again (it used to, up to
// maxRepeats times: an eval session spent minutes in one rc).
func TestRolloutTime(t *testing.T) {
	calls := 0
	pred := PredictorFunc(func(ctx context.Context, prompt string, k int, d Draw) ([]string, error) {
		calls++
		time.Sleep(5 * time.Millisecond)
		if strings.HasSuffix(prompt, "<|inv_step_into|><|frame_sep|>") {
			return []string{`<|inv_line_sep|><|src_sep|>    y = x * x<|arg_sep|>{"x": "1"}<|action_sep|>`}, nil
		}
		return []string{`<|line_sep|><|arg_sep|>{"x": "1", "y": "1"}<|src_sep|>    y = x * x<|action_sep|>`}, nil
	})
	p := Program{Source: "def square(x):\n    y = x * x\n    return y\n\ndef f(n):\n    return square(n)\n", Call: "f(1)"}
	ctx := context.Background()
	for _, cmd := range []debugger.Command{
		{Action: debugger.Continue, Backward: true},
		{Action: debugger.Continue, Backward: true, Breaks: []int{6}},
	} {
		nb, err := NewNeural(p, pred, Draw{})
		if err != nil {
			t.Fatal(err)
		}
		nb.MaxRollout, nb.RolloutTime = 100000, 100*time.Millisecond
		s, err := debugger.NewSession(ctx, nb)
		if err != nil {
			t.Fatal(err)
		}
		s.Do(ctx, debugger.Command{Action: debugger.StepInto})
		calls = 0
		if _, err := s.Do(ctx, cmd); err != nil {
			t.Fatal(err)
		}
		// 100 ms of 5 ms predictions: about 20, far below MaxRollout
		if calls < 2 || calls > 1000 {
			t.Errorf("%+v: %d predictions, want the walk cut by RolloutTime", cmd, calls)
		}
	}
}
