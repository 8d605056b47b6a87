package format

import (
	"fmt"
	"strings"

	"ndb/tracer"
)

// CWM's own trace format (SPEC section 5, last paragraph), for a CWM
// backend. It has no actions: the model writes one frame after another, each
// ended by <|frame_sep|>, and writes <|end_of_text|> when it leaves the entry
// scope:
//
//	<|begin_of_text|><|trace_context_start|>SOURCE (entry line marked)<|frame_sep|>
//	<|call_sep|>LOCALS<|action_sep|>SRC<|frame_sep|>
//	<|line_sep|>LOCALS<|action_sep|>SRC<|frame_sep|>
//	<|return_sep|><|action_sep|>SRC<|arg_sep|>VALUE<|frame_sep|>
//	<|end_of_text|>
//
// LOCALS lists every local; a value unchanged since the previous frame of
// the same Python frame is written as "..".

// CWMMarker is the comment appended to the entry's line in a CWM prompt.
const CWMMarker = "# << START_OF_TRACE"

// CWMUnchanged is the value CWM writes for a local that did not change.
const CWMUnchanged = ".."

// CWMFrame is one CWM frame: a state with CWM's locals.
type CWMFrame struct {
	Event  string // tracer.EventCall, EventLine, EventReturn or EventException
	Src    string
	Locals tracer.Locals // call and line: every local, unchanged values as ".."
	Arg    string        // return and exception: the repr
}

// CWMPrompt returns the prompt of a CWM trace: the source with CWMMarker
// appended to line entryLine (1-based), then <|frame_sep|>.
func CWMPrompt(source string, entryLine int) (string, error) {
	if ContainsSpecialToken(source) {
		return "", fmt.Errorf("format: source contains a special token")
	}
	lines := strings.SplitAfter(source, "\n")
	if entryLine < 1 || entryLine > len(lines) || (entryLine == len(lines) && lines[entryLine-1] == "") {
		return "", fmt.Errorf("format: entry line %d outside the source", entryLine)
	}
	l := lines[entryLine-1]
	nl := strings.HasSuffix(l, "\n")
	l = strings.TrimSuffix(l, "\n") + " " + CWMMarker
	if nl {
		l += "\n"
	}
	lines[entryLine-1] = l
	return TokBeginOfText + TokTraceContextStart + strings.Join(lines, "") + TokFrameSep, nil
}

// CWMFrames turns the states of a trace from the entry's call onwards into
// CWM frames, marking unchanged values with "..".
func CWMFrames(states []tracer.State) []CWMFrame {
	last := map[int]tracer.Locals{} // Python frame id -> its locals at the previous frame
	out := make([]CWMFrame, 0, len(states))
	for _, s := range states {
		f := CWMFrame{Event: s.Event, Src: s.Src}
		switch s.Event {
		case tracer.EventCall, tracer.EventLine:
			prev, seen := last[s.Frame]
			for _, v := range s.Locals {
				if pv, ok := prev.Get(v.Name); seen && ok && pv == v.Value && s.Event != tracer.EventCall {
					v.Value = CWMUnchanged
				}
				f.Locals = append(f.Locals, v)
			}
			last[s.Frame] = s.Locals
		default:
			f.Arg = s.Arg
			delete(last, s.Frame)
		}
		out = append(out, f)
	}
	return out
}

// CWMFrameText returns one CWM frame as the model writes it, ending with
// <|frame_sep|>.
func CWMFrameText(f CWMFrame) (string, error) {
	if ContainsSpecialToken(f.Src) || ContainsSpecialToken(f.Arg) || strings.ContainsAny(f.Src, "\n\r") {
		return "", fmt.Errorf("format: CWM frame text cannot be written")
	}
	var b strings.Builder
	switch f.Event {
	case tracer.EventCall, tracer.EventLine:
		for _, v := range f.Locals {
			if ContainsSpecialToken(v.Name) || ContainsSpecialToken(v.Value) {
				return "", fmt.Errorf("format: local %q cannot be written", v.Name)
			}
		}
		if f.Event == tracer.EventCall {
			b.WriteString(TokCallSep)
		} else {
			b.WriteString(TokLineSep)
		}
		writeLocals(&b, f.Locals, false)
		b.WriteString(TokActionSep)
		b.WriteString(f.Src)
	case tracer.EventReturn, tracer.EventException:
		if f.Event == tracer.EventReturn {
			b.WriteString(TokReturnSep)
		} else {
			b.WriteString(TokExceptionSep)
		}
		b.WriteString(TokActionSep)
		b.WriteString(f.Src)
		b.WriteString(TokArgSep)
		writeJSONString(&b, f.Arg)
	default:
		return "", fmt.Errorf("format: unknown CWM event %q", f.Event)
	}
	b.WriteString(TokFrameSep)
	return b.String(), nil
}

// SerializeCWM returns a whole CWM trace: the prompt, the frames, and
// <|end_of_text|> when ended is set (the entry scope was left).
func SerializeCWM(source string, entryLine int, frames []CWMFrame, ended bool) (string, error) {
	p, err := CWMPrompt(source, entryLine)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(p)
	for i, f := range frames {
		t, err := CWMFrameText(f)
		if err != nil {
			return "", fmt.Errorf("frame %d: %w", i, err)
		}
		b.WriteString(t)
	}
	if ended {
		b.WriteString(TokEndOfText)
	}
	return b.String(), nil
}

// ParseCWMFrame reads one CWM frame from the start of s, up to and including
// its <|frame_sep|>. It returns the frame and the bytes read. When s starts
// with <|end_of_text|> it returns end = true.
func ParseCWMFrame(s string) (f CWMFrame, n int, end bool, err error) {
	if strings.HasPrefix(s, TokEndOfText) {
		return CWMFrame{}, len(TokEndOfText), true, nil
	}
	sc := frameScanner{s: s}
	st := sc.cwmFrame(&f)
	if st != Complete {
		return CWMFrame{}, 0, false, fmt.Errorf("format: CWM frame: %s", sc.describe())
	}
	return f, sc.pos, false, nil
}

// CWMTrace is a parsed CWM trace.
type CWMTrace struct {
	Source    string // without the marker
	EntryLine int
	Frames    []CWMFrame
	Ended     bool
}

// ParseCWM reads a CWM trace written by SerializeCWM (or a prefix of one
// that ends after a frame).
func ParseCWM(text string) (*CWMTrace, error) {
	head := TokBeginOfText + TokTraceContextStart
	if !strings.HasPrefix(text, head) {
		return nil, fmt.Errorf("format: CWM trace must start with %s", head)
	}
	st, en, ok := nextSpecial(text, len(head))
	if !ok || text[st:en] != TokFrameSep {
		return nil, fmt.Errorf("format: CWM source must be followed by %s", TokFrameSep)
	}
	t := &CWMTrace{}
	lines := strings.SplitAfter(text[len(head):st], "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if strings.HasSuffix(body, " "+CWMMarker) && t.EntryLine == 0 {
			t.EntryLine = i + 1
			lines[i] = strings.TrimSuffix(body, " "+CWMMarker) + l[len(body):]
		}
	}
	if t.EntryLine == 0 {
		return nil, fmt.Errorf("format: CWM source has no %q line", CWMMarker)
	}
	t.Source = strings.Join(lines, "")
	pos := en
	for pos < len(text) {
		f, n, end, err := ParseCWMFrame(text[pos:])
		if err != nil {
			return nil, fmt.Errorf("offset %d: %w", pos, err)
		}
		pos += n
		if end {
			if pos != len(text) {
				return nil, fmt.Errorf("format: text after %s at offset %d", TokEndOfText, pos)
			}
			t.Ended = true
			break
		}
		t.Frames = append(t.Frames, f)
	}
	return t, nil
}

func (sc *frameScanner) cwmFrame(f *CWMFrame) FrameStatus {
	rest := sc.s[sc.pos:]
	heads := map[string]string{TokCallSep: tracer.EventCall, TokLineSep: tracer.EventLine,
		TokReturnSep: tracer.EventReturn, TokExceptionSep: tracer.EventException}
	for tok, ev := range heads {
		if strings.HasPrefix(rest, tok) {
			f.Event = ev
			sc.pos += len(tok)
		}
	}
	if f.Event == "" {
		return sc.fail("want a CWM frame token")
	}
	if f.Event == tracer.EventCall || f.Event == tracer.EventLine {
		if st := sc.locals(); st != Complete {
			return st
		}
		if sc.frame.Elided {
			return sc.fail(`CWM locals have no ".." entry`)
		}
		f.Locals = sc.frame.Locals
		if st := sc.expect(TokActionSep); st != Complete {
			return st
		}
		if st := sc.src(TokFrameSep); st != Complete {
			return st
		}
		f.Src = sc.frame.Src
		return Complete
	}
	if st := sc.expect(TokActionSep); st != Complete {
		return st
	}
	if st := sc.src(TokArgSep); st != Complete {
		return st
	}
	f.Src = sc.frame.Src
	if st := sc.value(); st != Complete {
		return st
	}
	f.Arg = sc.frame.Arg
	return sc.expect(TokFrameSep)
}

// MergeCWMLocals returns the complete locals of a CWM frame: each ".." value
// replaced by the value in prev (the locals of the previous frame of the same
// Python frame).
func MergeCWMLocals(prev tracer.Locals, f CWMFrame) tracer.Locals {
	out := make(tracer.Locals, 0, len(f.Locals))
	for _, v := range f.Locals {
		if v.Value == CWMUnchanged {
			if pv, ok := prev.Get(v.Name); ok {
				v.Value = pv
			}
		}
		out = append(out, v)
	}
	return out
}
