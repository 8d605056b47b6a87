package infer

import "unicode/utf8"

// The model writes bytes; frames must be valid UTF-8 (the parser would
// turn anything else into U+FFFD and the frame would not round-trip).
// During decoding the text may end inside a character, so "valid" means
// valid UTF-8 up to a final incomplete sequence that can still be finished.

// incompleteTail returns the start of s's final incomplete UTF-8 sequence,
// or len(s) if s ends on a character boundary (or in invalid bytes).
func incompleteTail(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return i
			}
			return len(s)
		}
	}
	return len(s)
}

// validAppend reports whether cur+t is valid UTF-8 but for a finishable
// final sequence, given that cur is.
func validAppend(cur, t string) bool {
	s := cur[incompleteTail(cur):] + t
	i := incompleteTail(s)
	return utf8.ValidString(s[:i]) && (i == len(s) || finishRune(s[i:]) != "")
}

// finishRune returns the continuation bytes that complete the incomplete
// sequence p into a valid character, or "" if none can (or p is empty).
func finishRune(p string) string {
	if p == "" {
		return ""
	}
	var try func(q string) string
	try = func(q string) string {
		if utf8.FullRuneInString(q) {
			if r, _ := utf8.DecodeRuneInString(q); r != utf8.RuneError {
				return q
			}
			return ""
		}
		for b := 0x80; b <= 0xBF; b++ {
			if done := try(q + string([]byte{byte(b)})); done != "" {
				return done
			}
		}
		return ""
	}
	done := try(p)
	if done == "" {
		return ""
	}
	return done[len(p):]
}
