package infer

import (
	"slices"
	"strings"
	"testing"

	"ndb/format"
)

// TestConstraintAllowsTrueFrames walks the tokens of real frames through
// the constraint: it must never refuse a token of a well-formed frame, or
// a trained model could not write the right answer. The frames cover every
// layout, escapes, non-ASCII text (split across byte tokens) and "<" in
// source lines.
func TestConstraintAllowsTrueFrames(t *testing.T) {
	p := randomPredictor(t, 128)
	frames := []struct {
		text string
		dir  format.Direction
	}{
		{`<|call_sep|><|src_sep|>def f(s, n):<|arg_sep|>{"s": "'héllo wörld ✓'", "n": "3"}<|action_sep|>`, format.Forward},
		{`<|line_sep|><|arg_sep|>{}<|src_sep|>    if a < b and c <= d:<|action_sep|>`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"x": "'a\"b\\\\c\\n'", "..": ".."}<|src_sep|>    return x<|action_sep|>`, format.Forward},
		{`<|line_sep|><|arg_sep|>{"d": "{'k': [1, 2], 'é': None}", "..": ".."}<|src_sep|>	y = d<|action_sep|>`, format.Forward},
		{`<|return_sep|><|src_sep|>    return result<|arg_sep|>"[1, 2, 3]"<|action_sep|>`, format.Forward},
		{`<|exception_sep|><|src_sep|>    return d['b'] < 1<|arg_sep|>"KeyError('b')"<|action_sep|>`, format.Forward},
		{`<|exit_normal|><|trace_end|><|end_of_text|>`, format.Forward},
		{`<|exit_error|><|trace_end|><|end_of_text|>`, format.Forward},
		{`<|inv_line_sep|><|src_sep|>    for i in range(n):<|arg_sep|>{"..": ".."}<|action_sep|>`, format.Backward},
		{`<|inv_call_sep|><|src_sep|>def f(n):<|arg_sep|>{"n": "'日本'"}<|action_sep|>`, format.Backward},
		{`<|inv_line_call_sep|><|src_sep|>    return f(2)<|arg_sep|>{"n": "3"}<|action_sep|>`, format.Backward}, // in def f(n)
		{`<|inv_exit_entry|><|trace_end|><|end_of_text|>`, format.Backward},
	}
	// The program behind the frames: their source lines, and a line of the
	// first def that binds the names they read.
	var src []string
	for _, fr := range frames {
		if f, err := format.ParseFrame(fr.text); err == nil && !f.Kind.IsExit() {
			src = append(src, f.Src)
		}
	}
	src = slices.Insert(src, 1, "    x = d = result = 0")
	rules := promptRules(nil, format.TokBeginOfText+format.TokTraceContextStart+strings.Join(src, "\n")+"\n"+format.TokFrameSep)
	for _, fr := range frames {
		if format.CheckFrame(fr.text, fr.dir) != format.Complete {
			t.Fatalf("test frame %q is not a frame", fr.text)
		}
		cur := ""
		for _, id := range p.tok.Encode(fr.text) {
			if !p.tokenAllowed(cur, int(id), fr.dir) || !p.programAllowed(cur, int(id), rules) {
				t.Fatalf("frame %q: token %q refused after %q", fr.text, p.texts[id], cur)
			}
			cur += p.texts[id]
		}
		if canonicalEnd(cur) != fr.text {
			t.Fatalf("walked %q, want %q", cur, fr.text)
		}
	}
}
