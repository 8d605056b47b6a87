package format

import (
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"ndb/debugger"
	"ndb/tracer"
)

// Direction restricts which frames a check accepts.
type Direction int

// Directions for CheckFrame.
const (
	AnyDirection Direction = iota
	Forward                // call, line, return, exception, exit_normal/error/never
	Backward               // inv_* frames and inv_exit_entry
)

func (d Direction) allows(k Kind) bool {
	switch d {
	case Forward:
		return !k.Inverse()
	case Backward:
		return k.Inverse()
	}
	return true
}

// FrameStatus is the verdict of CheckFrame on a text.
type FrameStatus int

// Verdicts: Invalid text can never become a frame; Partial text is a proper
// prefix of some frame; Complete text is a whole frame with its terminator.
const (
	Invalid FrameStatus = iota
	Partial
	Complete
)

// String names the verdict.
func (s FrameStatus) String() string {
	return [...]string{"invalid", "partial", "complete"}[s]
}

// CheckFrame classifies s as a frame text as the model writes it after
// <|frame_sep|> (see FrameText): the frame up to and including its
// <|action_sep|>, or an exit token optionally followed by <|trace_end|> and
// <|end_of_text|>. An exit is Complete at its token. The check is strict: the
// JSON must be written as LocalsJSON writes it (", " and ": " separators, no
// other white space, the ".." entry last, no repeated name). It runs in time
// linear in len(s); constrained decoding calls it on every candidate.
func CheckFrame(s string, dir Direction) FrameStatus {
	sc := frameScanner{s: s, dir: dir}
	st := sc.scan()
	if st != Complete {
		return st
	}
	if sc.frame.Kind.IsExit() {
		return exitTail(s[sc.pos:])
	}
	if sc.pos != len(s) {
		return Invalid
	}
	return Complete
}

// exitTail judges what follows an exit token: nothing, <|trace_end|>, or
// <|trace_end|><|end_of_text|> complete it; their prefixes are partial.
func exitTail(rest string) FrameStatus {
	full := TokTraceEnd + TokEndOfText
	switch {
	case rest == "" || rest == TokTraceEnd || rest == full:
		return Complete
	case strings.HasPrefix(full, rest):
		return Partial
	}
	return Invalid
}

// FrameComplete reports whether s is one whole frame with its terminator.
func FrameComplete(s string) bool { return CheckFrame(s, AnyDirection) == Complete }

// ParseFrame reads one predicted frame: the text a model wrote after
// <|frame_sep|>, with or without its <|action_sep|> (or, for an exit, with
// or without the end tokens). Use MergeLocals to get complete locals and
// Frame.State to get a tracer.State.
func ParseFrame(s string) (Frame, error) {
	sc := frameScanner{s: s}
	switch sc.scan() {
	case Complete:
		if sc.frame.Kind.IsExit() {
			if exitTail(s[sc.pos:]) != Complete {
				return Frame{}, fmt.Errorf("format: unexpected text after %s at offset %d", sc.frame.Kind, sc.pos)
			}
		} else if sc.pos != len(s) {
			return Frame{}, fmt.Errorf("format: unexpected text after the frame at offset %d", sc.pos)
		}
		return sc.frame, nil
	case Partial:
		// The model may stop right before its <|action_sep|>.
		sc2 := frameScanner{s: s + TokActionSep}
		if sc2.scan() == Complete && sc2.pos == len(sc2.s) {
			return sc2.frame, nil
		}
		return Frame{}, fmt.Errorf("format: frame is incomplete: %s", sc.describe())
	}
	return Frame{}, fmt.Errorf("format: bad frame: %s", sc.describe())
}

// ParsePredicted reads the frame a predictor wrote for a step forwards or
// backwards (inverse): a leading <|frame_sep|> is dropped, a text cut
// before its terminator (a server stops at its stop sequence, which it
// does not return) is read with the terminator added, and a frame of the
// other direction is an error. The engines and ndb eval read predictions
// with it.
func ParsePredicted(text string, inverse bool) (Frame, error) {
	text = strings.TrimPrefix(text, TokFrameSep)
	var firstErr error
	for _, t := range []string{text, text + TokActionSep, text + TokEndOfText, text + TokTraceEnd + TokEndOfText} {
		f, err := ParseFrame(t)
		if err == nil {
			if f.Kind.Inverse() != inverse {
				return Frame{}, fmt.Errorf("frame %s does not fit a %s step", f.Kind, map[bool]string{true: "backward", false: "forward"}[inverse])
			}
			return f, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return Frame{}, firstErr
}

// State returns the tracer state a (non-exit) frame stands for, with the
// given complete locals (see MergeLocals). Lineno, Function, Depth and Frame
// are not in the text: the caller finds them from the source and the stack.
func (f Frame) State(locals tracer.Locals) (tracer.State, error) {
	if !f.Kind.Valid() || f.Kind.IsExit() {
		return tracer.State{}, fmt.Errorf("format: %q is not a state frame", f.Kind)
	}
	s := tracer.State{Event: f.Kind.Event(), Src: f.Src}
	if f.Kind.HasLocals() {
		s.Locals = locals
	} else {
		s.Arg = f.Arg
	}
	return s, nil
}

// HeaderSource returns the program a trajectory or a prompt starts with:
// the text after <|begin_of_text|><|trace_context_start|> up to the first
// special token, which must be <|frame_sep|>.
func HeaderSource(text string) (string, error) {
	head := TokBeginOfText + TokTraceContextStart
	if !strings.HasPrefix(text, head) {
		return "", fmt.Errorf("format: trajectory must start with %s", head)
	}
	st, en, ok := nextSpecial(text, len(head))
	if !ok || text[st:en] != TokFrameSep {
		return "", fmt.Errorf("format: source must be followed by %s", TokFrameSep)
	}
	return text[len(head):st], nil
}

// ParseTrajectory reads a whole trajectory written by Serialize. It never
// panics; bad text gives an error with its byte offset.
func ParseTrajectory(text string) (*Trajectory, error) {
	source, err := HeaderSource(text)
	if err != nil {
		return nil, err
	}
	t := &Trajectory{Source: source}
	pos := len(TokBeginOfText + TokTraceContextStart + source)
	for {
		if !strings.HasPrefix(text[pos:], TokFrameSep) {
			return nil, fmt.Errorf("format: want %s at offset %d", TokFrameSep, pos)
		}
		pos += len(TokFrameSep)
		sc := frameScanner{s: text[pos:]}
		if sc.scan() != Complete {
			return nil, fmt.Errorf("format: frame %d at offset %d: %s", len(t.Frames), pos, sc.describe())
		}
		t.Frames = append(t.Frames, sc.frame)
		pos += sc.pos
		if sc.frame.Kind.IsExit() {
			if text[pos:] != TokTraceEnd+TokEndOfText {
				return nil, fmt.Errorf("format: want %s%s at offset %d after the exit", TokTraceEnd, TokEndOfText, pos)
			}
			break
		}
		step, n, err := parseStep(text[pos:])
		if err != nil {
			return nil, fmt.Errorf("format: step %d at offset %d: %w", len(t.Steps), pos, err)
		}
		t.Steps = append(t.Steps, step)
		pos += n
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// parseStep reads an action token (the <|action_sep|> is already consumed)
// and a breakpoint's line, up to but not including the next <|frame_sep|>.
func parseStep(s string) (Step, int, error) {
	if !strings.HasPrefix(s, "<|") {
		return Step{}, 0, fmt.Errorf("want an action token")
	}
	end := strings.Index(s[2:], "|>")
	if end < 0 {
		return Step{}, 0, fmt.Errorf("want an action token")
	}
	end += 2
	a := debugger.Action(s[2:end])
	if !a.Valid() {
		return Step{}, 0, fmt.Errorf("unknown action %q", s[:end+2])
	}
	n := end + 2
	step := Step{Action: a}
	if a == debugger.Breakpoint {
		st, _, ok := nextSpecial(s, n)
		if !ok {
			return Step{}, 0, fmt.Errorf("breakpoint line runs to the end of the text")
		}
		step.Src = s[n:st]
		n = st
	}
	return step, n, nil
}

// ParseStep reads one action as written by StepText (starting with
// <|action_sep|>).
func ParseStep(s string) (Step, error) {
	if !strings.HasPrefix(s, TokActionSep) {
		return Step{}, fmt.Errorf("format: want %s", TokActionSep)
	}
	s = s[len(TokActionSep):]
	step, n, err := parseStep(s + TokFrameSep)
	if err != nil {
		return Step{}, fmt.Errorf("format: %w", err)
	}
	if n != len(s) {
		return Step{}, fmt.Errorf("format: unexpected text after the action")
	}
	if err := step.validate(); err != nil {
		return Step{}, err
	}
	return step, nil
}

// frameScanner reads one frame from s, character by character, so that it
// can tell a bad text from an unfinished one.
type frameScanner struct {
	s     string
	dir   Direction
	pos   int
	frame Frame
	err   string
}

func (sc *frameScanner) describe() string {
	if sc.err == "" {
		return "unexpected end"
	}
	return fmt.Sprintf("%s at offset %d", sc.err, sc.pos)
}

func (sc *frameScanner) fail(msg string) FrameStatus {
	sc.err = msg
	return Invalid
}

// expect consumes tok; Partial when the text ends inside it.
func (sc *frameScanner) expect(tok string) FrameStatus {
	rest := sc.s[sc.pos:]
	if strings.HasPrefix(rest, tok) {
		sc.pos += len(tok)
		return Complete
	}
	if strings.HasPrefix(tok, rest) {
		sc.pos = len(sc.s)
		return Partial
	}
	return sc.fail("want " + tok)
}

func (sc *frameScanner) scan() FrameStatus {
	rest := sc.s[sc.pos:]
	var kind Kind
	partial := false
	for k, info := range kinds {
		if !sc.dir.allows(k) {
			continue
		}
		if strings.HasPrefix(rest, info.tok) {
			kind = k
			break
		}
		if strings.HasPrefix(info.tok, rest) {
			partial = true
		}
	}
	if kind == "" {
		if partial {
			return Partial
		}
		return sc.fail("want a frame token")
	}
	info := kinds[kind]
	sc.pos += len(info.tok)
	sc.frame = Frame{Kind: kind}
	if info.exit {
		return Complete
	}
	steps := []func() FrameStatus{}
	src := func(term string) func() FrameStatus {
		return func() FrameStatus { return sc.src(term) }
	}
	tok := func(t string) func() FrameStatus { return func() FrameStatus { return sc.expect(t) } }
	switch {
	case info.srcLast:
		steps = append(steps, tok(TokArgSep), sc.locals, tok(TokSrcSep), src(TokActionSep))
	case info.locals:
		steps = append(steps, tok(TokSrcSep), src(TokArgSep), sc.locals, tok(TokActionSep))
	default:
		steps = append(steps, tok(TokSrcSep), src(TokArgSep), sc.value, tok(TokActionSep))
	}
	for _, step := range steps {
		if st := step(); st != Complete {
			return st
		}
	}
	return Complete
}

// src reads a source line up to the special token term, which it consumes.
func (sc *frameScanner) src(term string) FrameStatus {
	st, en, ok := nextSpecial(sc.s, sc.pos)
	text := sc.s[sc.pos:]
	if ok {
		text = sc.s[sc.pos:st]
	}
	if i := strings.IndexAny(text, "\n\r"); i >= 0 {
		sc.pos += i
		return sc.fail("line break in a source line")
	}
	if !ok {
		sc.frame.Src = text
		sc.pos = len(sc.s)
		return Partial
	}
	if sc.s[st:en] != term {
		sc.pos = st
		return sc.fail("want " + term)
	}
	sc.frame.Src = text
	sc.pos = en
	return Complete
}

// value reads the VALUE of a return or exception frame: one JSON string.
func (sc *frameScanner) value() FrameStatus {
	v, st := sc.jsonString()
	if st == Complete {
		sc.frame.Arg = v
	}
	return st
}

// locals reads a LOCALS object in LocalsJSON's exact layout.
func (sc *frameScanner) locals() FrameStatus {
	if st := sc.expect("{"); st != Complete {
		return st
	}
	seen := map[string]bool{}
	var out tracer.Locals
	for first := true; ; first = false {
		if sc.pos == len(sc.s) {
			return Partial
		}
		if sc.s[sc.pos] == '}' {
			sc.pos++
			sc.frame.Locals = out
			return Complete
		}
		if !first {
			if st := sc.expect(", "); st != Complete {
				return st
			}
		}
		keyStart := sc.pos
		name, st := sc.jsonString()
		if st != Complete {
			return st
		}
		// Reject a repeated key as soon as its string closes: a prefix that
		// holds one has no valid ending, so constrained decoding must not
		// reach it.
		if name != elided && seen[name] {
			sc.pos = keyStart
			return sc.fail(fmt.Sprintf("repeated local %q", name))
		}
		seen[name] = true
		if st := sc.expect(": "); st != Complete {
			return st
		}
		if name == elided {
			if st := sc.expect(`".."}`); st != Complete {
				return st
			}
			sc.frame.Locals, sc.frame.Elided = out, true
			return Complete
		}
		value, st := sc.jsonString()
		if st != Complete {
			return st
		}
		out = append(out, tracer.Var{Name: name, Value: value})
	}
}

// jsonString reads one JSON string and decodes it.
func (sc *frameScanner) jsonString() (string, FrameStatus) {
	if st := sc.expect(`"`); st != Complete {
		return "", st
	}
	var b strings.Builder
	s := sc.s
	for sc.pos < len(s) {
		c := s[sc.pos]
		switch {
		case c == '"':
			sc.pos++
			return b.String(), Complete
		case c < 0x20:
			return "", sc.fail("control character in a JSON string")
		case c == '\\':
			if sc.pos+1 >= len(s) {
				sc.pos = len(s)
				return "", Partial
			}
			e := s[sc.pos+1]
			if r, ok := simpleEscapes[e]; ok {
				b.WriteByte(r)
				sc.pos += 2
				continue
			}
			if e != 'u' {
				sc.pos++
				return "", sc.fail("bad escape in a JSON string")
			}
			r, n, st := hex4(s[sc.pos+2:])
			if st != Complete {
				if st == Partial {
					sc.pos = len(s)
				}
				return "", sc.failIf(st, "bad \\u escape")
			}
			sc.pos += 2 + n
			if utf16.IsSurrogate(r) {
				// A pair is \uD8xx\uDCxx; a lone half decodes to U+FFFD as in encoding/json.
				rest := s[sc.pos:]
				if len(rest) < 2 && strings.HasPrefix(`\u`, rest) {
					sc.pos = len(s)
					return "", Partial
				}
				if strings.HasPrefix(rest, `\u`) {
					r2, n2, st2 := hex4(rest[2:])
					if st2 == Partial {
						sc.pos = len(s)
						return "", Partial
					}
					if st2 == Complete {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b.WriteRune(dec)
							sc.pos += 2 + n2
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			// Raw text, including UTF-8 bytes, up to the next quote, escape or control.
			j := sc.pos
			for j < len(s) && s[j] != '"' && s[j] != '\\' && s[j] >= 0x20 {
				j++
			}
			writeValidUTF8(&b, s[sc.pos:j])
			sc.pos = j
		}
	}
	return "", Partial
}

func (sc *frameScanner) failIf(st FrameStatus, msg string) FrameStatus {
	if st == Invalid {
		return sc.fail(msg)
	}
	return st
}

// writeValidUTF8 writes s with each invalid byte replaced by U+FFFD, as
// encoding/json decodes (and as the serializer writes) such bytes.
func writeValidUTF8(b *strings.Builder, s string) {
	if utf8.ValidString(s) {
		b.WriteString(s)
		return
	}
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[:size])
		}
		s = s[size:]
	}
}

var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 decodes the four hex digits of a \u escape.
func hex4(s string) (rune, int, FrameStatus) {
	var r rune
	for i := 0; i < 4; i++ {
		if i >= len(s) {
			return 0, 0, Partial
		}
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0, Invalid
		}
	}
	return r, 4, Complete
}
