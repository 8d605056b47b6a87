package infer

import (
	"strings"

	"ndb/format"
)

// Constrained decoding by the format's grammar: which token may extend a
// frame's text (format.CheckFrame and the rules it leaves to us), and how a
// frame cut by the token budget is closed into a whole one.

// tokenAllowed reports whether appending token id to the frame text cur
// keeps it a prefix of a well-formed frame (format.CheckFrame), with two
// rules the check leaves to us because the text must also survive being
// serialized again: a special token may not stand inside a JSON string, and
// text tokens may not write "<|" (spell a special token out of bytes) or
// invalid UTF-8 (see validAppend), nor
// stand anywhere but in a source line or the JSON after <|arg_sep|>.
func (p *Predictor) tokenAllowed(cur string, id int, dir format.Direction) bool {
	t := p.texts[id]
	if t == "" {
		return false
	}
	if p.tok.IsSpecial(int32(id)) {
		if insideJSONString(cur) {
			return false
		}
	} else if spellsSpecial(cur, t) || !validAppend(cur, t) {
		return false
	} else if last := lastSpecial(cur); last != format.TokSrcSep && last != format.TokArgSep {
		return false // text only in a source line or JSON; elsewhere structure
	} else if strings.HasSuffix(t, "<") {
		// A trailing "<" passes the check as the start of a special token;
		// as text it must also be followable by more text.
		return format.CheckFrame(cur+t+" ", dir) != format.Invalid
	}
	return format.CheckFrame(cur+t, dir) != format.Invalid
}

// insideJSONString reports whether frame text cur ends inside a JSON string
// of its LOCALS or VALUE (the JSON after the last <|arg_sep|>, when no
// special token follows it).
func insideJSONString(cur string) bool {
	i := strings.LastIndex(cur, format.TokArgSep)
	if i < 0 {
		return false
	}
	json := cur[i+len(format.TokArgSep):]
	if format.ContainsSpecialToken(json) {
		return false
	}
	in, esc := false, false
	for j := 0; j < len(json); j++ {
		c := json[j]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		}
	}
	return in
}

// lastSpecial is the last special token of s ("" if none).
func lastSpecial(s string) string {
	for i := len(s); ; {
		j := strings.LastIndex(s[:i], "|>")
		if j < 0 {
			return ""
		}
		if k := strings.LastIndex(s[:j], "<|"); k >= 0 && format.IsSpecialToken(s[k:j+2]) {
			return s[k : j+2]
		}
		i = j
	}
}

// spellsSpecial reports whether text token t, appended to cur, writes a
// "<|": the start of a special token's text. Written out of bytes it would
// pass the prefix check as the token itself and then be read back as one;
// so free text never holds "<|" (a repr containing it cannot be predicted).
func spellsSpecial(cur, t string) bool {
	return strings.Contains(t, "<|") || strings.HasPrefix(t, "|") && strings.HasSuffix(cur, "<")
}

// promptDirection is the direction of the frame that follows the prompt's
// last action: inverse actions predict inverse frames.
func promptDirection(prompt string) format.Direction {
	i := strings.LastIndex(prompt, format.TokActionSep+"<|")
	if i < 0 {
		return format.AnyDirection
	}
	if strings.HasPrefix(prompt[i+len(format.TokActionSep):], "<|inv_") {
		return format.Backward
	}
	return format.Forward
}

// canonicalEnd writes an exit frame's end tokens in full, as FrameText does.
func canonicalEnd(text string) string {
	f, err := format.ParseFrame(text)
	if err != nil || !f.Kind.IsExit() {
		return text
	}
	tail := format.TokTraceEnd + format.TokEndOfText
	for _, t := range []string{tail, format.TokTraceEnd} {
		if strings.HasSuffix(text, t) {
			return strings.TrimSuffix(text, t) + tail
		}
	}
	return text + tail
}

// closeOrCutBack closes a partial frame; if it cannot be closed (a dead
// end the prefix check let through, such as a LOCALS name written twice,
// which format.CheckFrame reports only once its value starts), it is cut
// back to its longest prefix that can be closed.
func closeOrCutBack(text string, dir format.Direction) (string, bool) {
	if closed, ok := closeFrame(text, dir); ok {
		return closed, true
	}
	for cut := len(text) - 1; cut >= 0; cut-- {
		prefix := text[:cut]
		if format.CheckFrame(prefix, dir) == format.Invalid {
			continue
		}
		if closed, ok := closeFrame(prefix, dir); ok {
			return closed, true
		}
	}
	return "", false
}

// closers are the strings closeFrame appends, chosen so that every partial
// frame closes in a few of them: a terminator, a closed string, a closed
// key with an empty value, an empty object.
var closers = []string{format.TokActionSep, `"`, `"}`, `": ""}`, ` ""}`, `""}`, `".."}`, `.."}`, "}", "{}", ": ", " ", "0",
	format.TokSrcSep, format.TokArgSep, format.TokExitNormal, format.TokInvExitEntry}

// closeFrame finds a shortest completion of a partial frame text by
// breadth-first search over closers (special tokens only where
// tokenAllowed would allow them), for a frame that ran out of tokens.
func closeFrame(text string, dir format.Direction) (string, bool) {
	if i := incompleteTail(text); i < len(text) {
		text += finishRune(text[i:]) // end a character cut by the budget
	}
	if format.CheckFrame(text, dir) == format.Invalid {
		return "", false
	}
	level := []string{text}
	seen := map[string]bool{text: true}
	checks := 0
	for depth := 0; depth < 8 && len(level) > 0; depth++ {
		var next []string
		for _, t := range level {
			inString, inSrc := insideJSONString(t), lastSpecial(t) == format.TokSrcSep
			for _, c := range closers {
				u := t + c
				special := format.IsSpecialToken(c)
				// In free text only moves that can end it: a quote (or a
				// hex digit of an escape) in a string, a token in a source
				// line; this keeps the search small.
				if seen[u] || inString && (special || !strings.HasPrefix(c, `"`) && c != "0" && c != `.."}`) || inSrc && !special {
					continue
				}
				seen[u] = true
				checks++
				switch format.CheckFrame(u, dir) {
				case format.Complete:
					return u, true
				case format.Partial:
					next = append(next, u)
				}
				if checks > 20000 {
					return "", false
				}
			}
		}
		level = next
	}
	return "", false
}
