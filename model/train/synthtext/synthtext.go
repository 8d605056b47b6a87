// Package synthtext writes small trajectories in the model's text (SPEC
// section 5) for the tests and benchmarks of training and inference: a
// family of loop programs, forward and inverse, with exact locals. It is a
// fixture, not training data (`ndb gen` makes that from real traces).
package synthtext

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Program is the source of program id: f(n) sums i*mul over range(n).
func Program(id, n int) string {
	mul, add := 2+id%5, id%7
	return fmt.Sprintf("def f(n):\n    total = %d\n    for i in range(n):\n        total += i * %d\n    return total\n\ndef main():\n    return f(%d)\n", add, mul, n)
}

// Trajectory writes one trajectory of program id (forward, or inverse when
// rng says so) and returns it with its program id.
func Trajectory(rng *rand.Rand, id int) (text, programID string) {
	n := 1 + rng.IntN(4)
	if rng.IntN(4) == 0 {
		return Inverse(id, n), fmt.Sprintf("synth/%d", id)
	}
	return Forward(rng, id, n), fmt.Sprintf("synth/%d", id)
}

type writer struct{ b strings.Builder }

func (w *writer) frame(s string) { w.b.WriteString("<|frame_sep|>" + s) }
func (w *writer) act(a string)   { w.b.WriteString("<|action_sep|><|" + a + "|>") }

// Forward is a forward trajectory of f(n) with a random mix of steps.
func Forward(rng *rand.Rand, id, n int) string {
	mul, add := 2+id%5, id%7
	var w writer
	w.b.WriteString("<|begin_of_text|><|trace_context_start|>" + Program(id, n))
	w.frame("<|call_sep|><|src_sep|>def main():<|arg_sep|>{}")
	w.act("step_into")
	w.frame(fmt.Sprintf("<|line_sep|><|arg_sep|>{}<|src_sep|>    return f(%d)", n))
	w.act("step_into")
	w.frame(fmt.Sprintf(`<|call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "%d"}`, n))
	if rng.IntN(3) == 0 {
		w.act("step_return")
		total := add
		for i := 0; i < n; i++ {
			total += i * mul
		}
		w.frame(fmt.Sprintf(`<|return_sep|><|src_sep|>    return total<|arg_sep|>"%d"`, total))
		w.act("continue")
		w.frame("<|exit_normal|><|trace_end|><|end_of_text|>")
		return w.b.String()
	}
	w.act("step_into")
	w.frame(fmt.Sprintf("<|line_sep|><|arg_sep|>{}<|src_sep|>    total = %d", add))
	w.act("step_over")
	total := add
	w.frame(fmt.Sprintf(`<|line_sep|><|arg_sep|>{"total": "%d", "..": ".."}<|src_sep|>    for i in range(n):`, total))
	for i := 0; i < n; i++ {
		w.act("step_over")
		w.frame(fmt.Sprintf(`<|line_sep|><|arg_sep|>{"i": "%d", "..": ".."}<|src_sep|>        total += i * %d`, i, mul))
		total += i * mul
		w.act("step_over")
		w.frame(fmt.Sprintf(`<|line_sep|><|arg_sep|>{"total": "%d", "..": ".."}<|src_sep|>    for i in range(n):`, total))
	}
	w.act("step_over")
	w.frame(fmt.Sprintf(`<|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>    return total`))
	w.act("step_over")
	w.frame(fmt.Sprintf(`<|return_sep|><|src_sep|>    return total<|arg_sep|>"%d"`, total))
	w.act("step_over")
	w.frame(fmt.Sprintf(`<|return_sep|><|src_sep|>    return f(%d)<|arg_sep|>"%d"`, n, total))
	w.act("step_into")
	w.frame("<|exit_normal|><|trace_end|><|end_of_text|>")
	return w.b.String()
}

// Inverse is an inverse trajectory of f(n) from main's return back to the
// call of f (inv_step_into, then inv_step_call), then out of main.
func Inverse(id, n int) string {
	mul, add := 2+id%5, id%7
	total := add
	for i := 0; i < n; i++ {
		total += i * mul
	}
	var w writer
	w.b.WriteString("<|begin_of_text|><|trace_context_start|>" + Program(id, n))
	w.frame(fmt.Sprintf(`<|inv_return_sep|><|src_sep|>    return f(%d)<|arg_sep|>"%d"`, n, total))
	w.act("inv_step_into")
	w.frame(fmt.Sprintf(`<|inv_line_call_sep|><|src_sep|>    return f(%d)<|arg_sep|>{}`, n))
	w.act("inv_step_into")
	w.frame(fmt.Sprintf(`<|inv_return_sep|><|src_sep|>    return total<|arg_sep|>"%d"`, total))
	w.act("inv_step_call")
	w.frame(fmt.Sprintf(`<|inv_call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "%d"}`, n))
	w.act("inv_step_over")
	w.frame(fmt.Sprintf(`<|inv_line_sep|><|src_sep|>    return f(%d)<|arg_sep|>{}`, n))
	w.act("inv_step_over")
	w.frame(`<|inv_call_sep|><|src_sep|>def main():<|arg_sep|>{}`)
	w.act("inv_step_over")
	w.frame("<|inv_exit_entry|><|trace_end|><|end_of_text|>")
	return w.b.String()
}

// Prompts cuts a trajectory after every action: each prompt ends with the
// action and its <|frame_sep|>, as format.Prompt writes them.
func Prompts(text string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(text[i:], "<|action_sep|>")
		if j < 0 {
			return out
		}
		k := strings.Index(text[i+j:], "<|frame_sep|>")
		if k < 0 {
			return out
		}
		end := i + j + k + len("<|frame_sep|>")
		out = append(out, text[:end])
		i = end
	}
}
