package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// PretokenizePattern is the regular expression (Oniguruma syntax, as Hugging
// Face's `tokenizers` runs it in a Split pre-tokenizer with behavior
// "Isolated") that splitPretokens implements by hand. Pieces, tried in order:
// a word with at most one leading space (identifiers: letters, digits after
// the first character, underscores), one to three digits with at most one
// leading space (so numbers split in groups of three), a run of
// punctuation with at most one leading space, a run of line breaks with the
// indentation that follows them (so "\n    " is one piece: one token per
// indentation level), and other horizontal whitespace, which leaves its last
// space to the word that follows, as GPT-2 does.
//
// Merges never cross these pieces, so indentation chunks, identifiers and
// numbers become tokens of their own.
const PretokenizePattern = ` ?[\p{L}_][\p{L}\p{N}_]*| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}_]+|[\r\n]+[^\S\r\n]*|[^\S\r\n]+(?!\S)|[^\S\r\n]+`

// charClass is the class of a rune for the pre-tokenizer.
type charClass uint8

const (
	classLetter  charClass = iota // \p{L} or '_'
	classNumber                   // \p{N}
	classNewline                  // '\r' or '\n'
	classSpace                    // other \s
	classOther                    // everything else, including invalid UTF-8 bytes
)

func classify(r rune) charClass {
	if r < utf8.RuneSelf {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == '\n' || r == '\r':
			return classNewline
		case r == ' ' || (r >= '\t' && r <= '\f'):
			return classSpace
		}
		return classOther
	}
	switch {
	case r == utf8.RuneError:
		return classOther
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// classAt returns the class and byte width of the rune at s[i]; an invalid
// byte is one rune of classOther.
func classAt(s string, i int) (charClass, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return classify(rune(c)), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return classify(r), w
}

// splitPretokens calls emit with each piece of s, in order; the pieces
// concatenate to s. It is PretokenizePattern written as a scanner (the regexp
// package has no look-ahead, and a scanner is faster).
func splitPretokens(s string, emit func(piece string)) {
	for i := 0; i < len(s); {
		c, w := classAt(s, i)
		j := i + w
		if s[i] == ' ' && j < len(s) {
			// " word", " 42" or " +=": one leading space joins the next piece.
			if next, _ := classAt(s, j); next == classLetter || next == classOther || next == classNumber {
				end := scanPiece(s, j, next)
				emit(s[i:end])
				i = end
				continue
			}
		}
		switch c {
		case classLetter, classNumber, classOther:
			j = scanPiece(s, i, c)
		case classNewline: // line breaks, then the next line's indentation
			for j < len(s) && (s[j] == '\n' || s[j] == '\r') {
				j++
			}
			for j < len(s) {
				nc, nw := classAt(s, j)
				if nc != classSpace {
					break
				}
				j += nw
			}
		case classSpace:
			last := i // start of the run's last rune
			for j < len(s) {
				nc, nw := classAt(s, j)
				if nc != classSpace {
					break
				}
				last = j
				j += nw
			}
			if j < len(s) {
				if nc, _ := classAt(s, j); nc != classNewline && last > i {
					// Followed by a non-space: leave the last space to it.
					j = last
				}
			}
		}
		emit(s[i:j])
		i = j
	}
}

// scanPiece returns the end of the word, number (at most three digits) or
// punctuation run of class c that starts at i.
func scanPiece(s string, i int, c charClass) int {
	_, w := classAt(s, i)
	j := i + w
	if c != classNumber {
		return scanWhile(s, j, c)
	}
	for n := 1; n < 3 && j < len(s); n++ {
		nc, nw := classAt(s, j)
		if nc != classNumber {
			break
		}
		j += nw
	}
	return j
}

// scanWhile advances j over runes of class c; for classLetter it also takes
// digits, as identifiers do.
func scanWhile(s string, j int, c charClass) int {
	for j < len(s) {
		nc, nw := classAt(s, j)
		if nc != c && !(c == classLetter && nc == classNumber) {
			break
		}
		j += nw
	}
	return j
}
