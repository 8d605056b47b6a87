package tokenizer

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Pretokenizer names how text is split into pieces before the merges (no
// merge crosses two pieces). A tokenizer keeps the one it was trained with,
// and its files store the pattern.
type Pretokenizer uint8

const (
	// PretokenizerNDB is ndb's split for code, PretokenizePattern (the default).
	PretokenizerNDB Pretokenizer = iota
	// PretokenizerLlama3 is Llama 3's split, Llama3Pattern, which llama.cpp
	// implements as its pre-tokenizer "llama-bpe": a GGUF export of a
	// tokenizer trained with it tokenizes text in llama.cpp as Encode does.
	PretokenizerLlama3
)

// pretokenizers describes each Pretokenizer: its name (the CLI's), its
// pattern (stored in tokenizer files), the scanner that implements it, and
// whether encoding takes a piece that is one token as that token without
// merging ("ignore_merges" in tokenizer.json; llama.cpp does so for
// llama-bpe). For a trained tokenizer that changes nothing (a token's text
// merges to the token), only for hand-made merges.
var pretokenizers = [...]struct {
	name, pattern string
	split         func(s string, emit func(piece string))
	ignoreMerges  bool
}{
	PretokenizerNDB:    {"ndb", PretokenizePattern, splitPretokens, false},
	PretokenizerLlama3: {"llama3", Llama3Pattern, splitLlama3, true},
}

// String returns the pre-tokenizer's name: "ndb" or "llama3".
func (p Pretokenizer) String() string {
	if int(p) < len(pretokenizers) {
		return pretokenizers[p].name
	}
	return fmt.Sprintf("Pretokenizer(%d)", p)
}

// Pattern returns the regular expression the pre-tokenizer implements.
func (p Pretokenizer) Pattern() string { return pretokenizers[p].pattern }

// PretokenizerNames lists the names ParsePretokenizer accepts.
func PretokenizerNames() []string {
	names := make([]string, len(pretokenizers))
	for i, p := range pretokenizers {
		names[i] = p.name
	}
	return names
}

// ParsePretokenizer returns the pre-tokenizer called name ("ndb", "llama3").
func ParsePretokenizer(name string) (Pretokenizer, error) {
	for i, p := range pretokenizers {
		if p.name == name {
			return Pretokenizer(i), nil
		}
	}
	return 0, fmt.Errorf("tokenizer: unknown pre-tokenizer %q (want %s)", name, strings.Join(PretokenizerNames(), " or "))
}

// MarshalText returns the name, so a Pretokenizer can be a flag's value.
func (p Pretokenizer) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText sets p to the pre-tokenizer named text (ParsePretokenizer).
func (p *Pretokenizer) UnmarshalText(text []byte) error {
	q, err := ParsePretokenizer(string(text))
	if err == nil {
		*p = q
	}
	return err
}

// pretokenizerOfPattern returns the pre-tokenizer whose pattern is pattern.
func pretokenizerOfPattern(pattern string) (Pretokenizer, error) {
	for i, p := range pretokenizers {
		if p.pattern == pattern {
			return Pretokenizer(i), nil
		}
	}
	known := make([]string, len(pretokenizers))
	for i, p := range pretokenizers {
		known[i] = fmt.Sprintf("%q (%s)", p.pattern, p.name)
	}
	return 0, fmt.Errorf("pre-tokenizer %q is not one this ndb implements: %s", pattern, strings.Join(known, ", "))
}

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
