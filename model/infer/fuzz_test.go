package infer

import (
	"slices"
	"testing"

	"ndb/format"
)

// FuzzConstrainedDecoding lets the fuzzer play an adversarial model: each
// input byte picks one of the tokens the constraint allows. Whatever it
// picks, the frame closes, parses, and serializes back to the same text.
func FuzzConstrainedDecoding(f *testing.F) {
	for _, seed := range [][]byte{{}, {0}, {1, 2, 3}, {7, 7, 7, 7, 7, 7, 7, 7}, {255, 128, 64, 32, 16, 8, 4, 2, 1}, []byte("a longer adversarial token choice sequence")} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	p := randomPredictor(f, 128)
	f.Fuzz(func(t *testing.T, choices []byte, inverse bool) {
		dir := format.Forward
		if inverse {
			dir = format.Backward
		}
		if len(choices) > 200 {
			choices = choices[:200] // a frame's worth of tokens
		}
		text := ""
		for _, c := range choices {
			var allowed []int
			for id := range p.texts {
				if p.tokenAllowed(text, id, dir) {
					allowed = append(allowed, id)
				}
			}
			if len(allowed) == 0 {
				t.Fatalf("no token allowed after %q", text)
			}
			text += p.texts[allowed[int(c)%len(allowed)]]
			if format.CheckFrame(text, dir) == format.Complete {
				break
			}
		}
		if format.CheckFrame(text, dir) != format.Complete {
			closed, ok := closeOrCutBack(text, dir)
			if !ok {
				t.Fatalf("could not close %q", text)
			}
			text = closed
		}
		text = canonicalEnd(text)
		fr, err := format.ParseFrame(text)
		if err != nil {
			t.Fatalf("%q does not parse: %v", text, err)
		}
		if again := format.FrameText(fr); again != text {
			t.Fatalf("frame %q serializes back as %q", text, again)
		}
	})
}

// FuzzProgramScopes: any text reads into one scope list per line without
// a panic, and a step's scope holds only executable lines of the program
// (or a script's module call, which has none).
func FuzzProgramScopes(f *testing.F) {
	f.Add("def f(x):\n    return x\n", "    return x")
	f.Add("class K:\n    '''doc\n(\n'''\n    def m(self): return [\n1]\n", "class K:")
	f.Add("x = '\\\ndef g(): pass\n", "def g(): pass")
	f.Fuzz(func(t *testing.T, src, line string) {
		s := programScopes(nil, src)
		if len(s.member) != len(s.lines) || len(s.opens) != len(s.lines) {
			t.Fatalf("%d lines, %d scope lists, %d opens", len(s.lines), len(s.member), len(s.opens))
		}
		for _, frame := range []string{
			format.TokLineSep + format.TokArgSep + "{}" + format.TokSrcSep + line + format.TokActionSep + format.TokStepOver,
			format.TokCallSep + format.TokSrcSep + line + format.TokArgSep + "{}" + format.TokActionSep + format.TokStepInto,
			format.TokInvLineSep + format.TokSrcSep + line + format.TokArgSep + "{}" + format.TokActionSep + format.TokInvStepCall,
		} {
			prompt := format.TokBeginOfText + format.TokTraceContextStart + src + format.TokFrameSep + frame + format.TokFrameSep
			for tok, lines := range s.stepScopes(prompt, s.runsAsScript(prompt)) {
				for _, l := range lines {
					if l == "" && tok == format.TokInvCallSep {
						continue // a script's module call has no line
					}
					if !executable(l) || !slices.Contains(s.lines, l) {
						t.Fatalf("%s scope line %q is not an executable line of the program", tok, l)
					}
				}
			}
		}
	})
}
