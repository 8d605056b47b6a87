package format

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"ndb/debugger"
	"ndb/tracer"
)

// Serialize returns the exact model text of t (SPEC section 5):
//
//	<|begin_of_text|><|trace_context_start|>SOURCE
//	<|frame_sep|>FRAME<|action_sep|><|ACTION|>[SRC] ... <|frame_sep|>EXIT<|trace_end|><|end_of_text|>
func Serialize(t *Trajectory) (string, error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	writeHeader(&b, t.Source)
	for i, f := range t.Frames {
		b.WriteString(TokFrameSep)
		writeFrame(&b, f)
		if i < len(t.Steps) {
			writeStep(&b, t.Steps[i])
		}
	}
	b.WriteString(TokTraceEnd)
	b.WriteString(TokEndOfText)
	return b.String(), nil
}

// Prompt returns the text a model reads to predict the frame after step k:
// the trajectory up to and including Steps[k], then <|frame_sep|>.
// Completion(t, k) is what the model should write next.
func Prompt(t *Trajectory, k int) (string, error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	if k < 0 || k >= len(t.Steps) {
		return "", fmt.Errorf("format: step %d out of range [0,%d)", k, len(t.Steps))
	}
	var b strings.Builder
	writeHeader(&b, t.Source)
	for i := 0; i <= k; i++ {
		b.WriteString(TokFrameSep)
		writeFrame(&b, t.Frames[i])
		writeStep(&b, t.Steps[i])
	}
	b.WriteString(TokFrameSep)
	return b.String(), nil
}

// PromptText is Prompt for a trajectory in progress (an engine's session):
// the source, then each frame followed by its step, then <|frame_sep|>.
// len(steps) must equal len(frames): the last step is the action whose
// result the model is asked for.
func PromptText(source string, frames []Frame, steps []Step) (string, error) {
	if len(frames) == 0 || len(steps) != len(frames) {
		return "", fmt.Errorf("format: a prompt needs n frames and n steps, got %d and %d", len(frames), len(steps))
	}
	if ContainsSpecialToken(source) {
		return "", fmt.Errorf("format: source contains a special token")
	}
	inverse := frames[0].Kind.Inverse()
	for i, f := range frames {
		if err := f.validate(); err != nil {
			return "", fmt.Errorf("frame %d: %w", i, err)
		}
		if f.Kind.IsExit() || f.Kind.Inverse() != inverse {
			return "", fmt.Errorf("format: frame %d (%s) cannot be in a %s prompt", i, f.Kind, dirName(inverse))
		}
		if err := steps[i].validate(); err != nil {
			return "", fmt.Errorf("step %d: %w", i, err)
		}
		if steps[i].Action.Inverse() != inverse {
			return "", fmt.Errorf("format: step %d (%s) cannot be in a %s prompt", i, steps[i].Action, dirName(inverse))
		}
	}
	var b strings.Builder
	writeHeader(&b, source)
	for i, f := range frames {
		b.WriteString(TokFrameSep)
		writeFrame(&b, f)
		writeStep(&b, steps[i])
	}
	b.WriteString(TokFrameSep)
	return b.String(), nil
}

func dirName(inverse bool) string {
	if inverse {
		return "inverse"
	}
	return "forward"
}

// Completion returns the text the model writes after Prompt(t, k): frame k+1
// followed by <|action_sep|>, or for an exit the exit token followed by
// <|trace_end|><|end_of_text|>. Prompt(t,k)+Completion(t,k) is a prefix of
// Serialize(t).
func Completion(t *Trajectory, k int) (string, error) {
	if err := t.Validate(); err != nil {
		return "", err
	}
	if k < 0 || k >= len(t.Steps) {
		return "", fmt.Errorf("format: step %d out of range [0,%d)", k, len(t.Steps))
	}
	return FrameText(t.Frames[k+1]), nil
}

// FrameText returns one frame as the model writes it after <|frame_sep|>:
// the frame then <|action_sep|>, or an exit then <|trace_end|><|end_of_text|>.
// ParseFrame reads it back.
func FrameText(f Frame) string {
	var b strings.Builder
	writeFrame(&b, f)
	if f.Kind.IsExit() {
		b.WriteString(TokTraceEnd)
		b.WriteString(TokEndOfText)
	} else {
		b.WriteString(TokActionSep)
	}
	return b.String()
}

// StepText returns one action as written after a frame, starting with
// <|action_sep|>.
func StepText(s Step) string {
	var b strings.Builder
	writeStep(&b, s)
	return b.String()
}

func writeHeader(b *strings.Builder, source string) {
	b.WriteString(TokBeginOfText)
	b.WriteString(TokTraceContextStart)
	b.WriteString(source)
}

// writeFrame writes a frame without the leading <|frame_sep|> and without
// what follows it.
func writeFrame(b *strings.Builder, f Frame) {
	info := kinds[f.Kind]
	b.WriteString(info.tok)
	switch {
	case info.exit:
	case info.srcLast:
		b.WriteString(TokArgSep)
		writeLocals(b, f.Locals, f.Elided)
		b.WriteString(TokSrcSep)
		b.WriteString(f.Src)
	case info.locals:
		b.WriteString(TokSrcSep)
		b.WriteString(f.Src)
		b.WriteString(TokArgSep)
		writeLocals(b, f.Locals, f.Elided)
	default:
		b.WriteString(TokSrcSep)
		b.WriteString(f.Src)
		b.WriteString(TokArgSep)
		writeJSONString(b, f.Arg)
	}
}

func writeStep(b *strings.Builder, s Step) {
	b.WriteString(TokActionSep)
	b.WriteString(actionToken(s.Action))
	if s.Action == debugger.Breakpoint {
		b.WriteString(s.Src)
	}
}

func actionToken(a debugger.Action) string { return "<|" + string(a) + "|>" }

// LocalsJSON returns locals as the text writes them: a JSON object of repr
// strings with ", " and ": " separators, no HTML escaping, and the
// `"..": ".."` entry last when elided is set.
func LocalsJSON(l tracer.Locals, elidedEntries bool) string {
	var b strings.Builder
	writeLocals(&b, l, elidedEntries)
	return b.String()
}

func writeLocals(b *strings.Builder, l tracer.Locals, elidedEntries bool) {
	b.WriteByte('{')
	for i, v := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		writeJSONString(b, v.Name)
		b.WriteString(": ")
		writeJSONString(b, v.Value)
	}
	if elidedEntries {
		if len(l) > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"..": ".."`)
	}
	b.WriteByte('}')
}

// writeJSONString writes s as a JSON string exactly as encoding/json does
// with SetEscapeHTML(false): invalid UTF-8 becomes U+FFFD, U+2028 and
// U+2029 are escaped.
func writeJSONString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b.WriteString(s[start:i])
			b.WriteString(`\u202`)
			b.WriteByte(hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}
