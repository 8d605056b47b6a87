package tokenizer

// Llama3Pattern is Llama 3's pre-tokenizer regex as llama.cpp runs it for
// the pre-tokenizer "llama-bpe" (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_LLAMA3).
// Llama 3's tokenizer.json writes the contractions `(?i:'s|'t|'re|'ve|'m|'ll|'d)`;
// llama.cpp spells the case-insensitivity out in ASCII, as here, and so does
// its hand-written splitter (unicode.cpp, unicode_regex_split_custom_llama3),
// which splitLlama3 follows rule for rule. (Oniguruma's (?i) would also take
// the long s, U+017F, for an s.) Pieces, tried in order: a contraction;
// a run of letters with at most one character before it that is not a
// letter, digit or line break (" word", "(word", "_word", "\tword"); one to
// three digits, with no leading space; a run of punctuation with at most one
// leading space, and the line breaks after it ("):\n"); whitespace up to its
// last line break; other whitespace, leaving its last character to the piece
// that follows, as GPT-2 does. '_' is punctuation (not \p{L}), so
// identifiers split at underscores, and indentation after a line break is
// its own piece: "\n    return" is "\n", "   ", " return".
const Llama3Pattern = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// classAtLlama3 is classAt for Llama3Pattern, where '_' is punctuation.
// Whitespace (\s) is classNewline or classSpace: Unicode's White_Space, the
// set llama.cpp uses (unicode-data.cpp, unicode_set_whitespace).
func classAtLlama3(s string, i int) (charClass, int) {
	if s[i] == '_' {
		return classOther, 1
	}
	return classAt(s, i)
}

// splitLlama3 calls emit with each piece of s, in order; the pieces
// concatenate to s. It is Llama3Pattern written as a scanner, in the order
// and with the tests of llama.cpp's splitter. An invalid UTF-8 byte is one
// character of punctuation; llama.cpp reads it as U+FFFD, punctuation too,
// so the pieces end at the same places (but llama.cpp then encodes U+FFFD's
// bytes, not the invalid byte).
func splitLlama3(s string, emit func(piece string)) {
	for i := 0; i < len(s); {
		c, w := classAtLlama3(s, i)
		j := i + w
		var next charClass // the class after the first character; read only when j < len(s)
		if j < len(s) {
			next, _ = classAtLlama3(s, j)
		}
		n := 0 // the length of a contraction after an apostrophe
		if s[i] == '\'' {
			n = contraction(s[j:])
		}
		switch {
		case n > 0:
			j += n // (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])
		case c != classNewline && c != classNumber && (c == classLetter || j < len(s) && next == classLetter):
			j = scanLlama3(s, j, classLetter) // [^\r\n\p{L}\p{N}]?\p{L}+
		case c == classNumber:
			j = scanPiece(s, i, classNumber) // \p{N}{1,3}
		case c == classOther || s[i] == ' ' && j < len(s) && next == classOther:
			// " ?[^\s\p{L}\p{N}]+[\r\n]*"
			if c == classOther {
				j = i
			}
			j = scanLlama3(s, j, classOther)
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
		default: // whitespace: \s*[\r\n]+, else \s+(?!\S), else \s+
			end, last, afterBreak := j, i, -1
			if c == classNewline {
				afterBreak = j
			}
			for end < len(s) {
				nc, nw := classAtLlama3(s, end)
				if nc != classSpace && nc != classNewline {
					break
				}
				if nc == classNewline {
					afterBreak = end + nw
				}
				last = end
				end += nw
			}
			switch {
			case afterBreak >= 0:
				j = afterBreak
			case last > i && end < len(s):
				j = last
			default:
				j = end
			}
		}
		emit(s[i:j])
		i = j
	}
}

// contraction returns the length of the contraction ("s", "T", "re", "LL",
// ...) that rest starts with after an apostrophe, or 0. Only ASCII letters
// fold, as in llama.cpp.
func contraction(rest string) int {
	if len(rest) == 0 {
		return 0
	}
	switch rest[0] | 0x20 { // lower-cases ASCII letters; no other byte becomes one
	case 's', 't', 'm', 'd':
		return 1
	case 'r', 'v':
		if len(rest) > 1 && rest[1]|0x20 == 'e' {
			return 2
		}
	case 'l':
		if len(rest) > 1 && rest[1]|0x20 == 'l' {
			return 2
		}
	}
	return 0
}

// scanLlama3 advances j over characters of class c (as classAtLlama3 sees them).
func scanLlama3(s string, j int, c charClass) int {
	for j < len(s) {
		nc, nw := classAtLlama3(s, j)
		if nc != c {
			break
		}
		j += nw
	}
	return j
}
