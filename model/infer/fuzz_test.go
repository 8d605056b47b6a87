package infer

import (
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
