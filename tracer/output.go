package tracer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"ndb/internal/termsafe"
)

// jsonState is a State as a JSON line: like State's own JSON, but call and
// line states always carry "locals" (an empty object when there are none);
// return and exception states carry them when the State has them (every
// state the tracer records does).
type jsonState struct {
	Event    string  `json:"event"`
	Lineno   int     `json:"lineno"`
	Function string  `json:"function"`
	Depth    int     `json:"depth"`
	Src      string  `json:"src"`
	Locals   *Locals `json:"locals,omitempty"`
	Arg      *string `json:"arg,omitempty"`
	Frame    int     `json:"frame"`
	Gen      bool    `json:"gen,omitempty"`

	CallerUntraced bool `json:"caller_untraced,omitempty"`
}

// jsonExit is the last JSON line of a trace.
type jsonExit struct {
	Exit   string `json:"exit"`
	Error  string `json:"error,omitempty"`
	Reason string `json:"reason,omitempty"`
	Code   int    `json:"code,omitempty"`
	Stdout string `json:"stdout,omitempty"`
}

// WriteJSONLines writes one JSON object per State, then one exit line
// (schema in docs/tracer.md). '<' and '>' are not escaped.
func WriteJSONLines(w io.Writer, tr *Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range tr.States {
		s := &tr.States[i]
		js := jsonState{Event: s.Event, Lineno: s.Lineno, Function: s.Function, Depth: s.Depth,
			Src: s.Src, Frame: s.Frame, Gen: s.Gen, CallerUntraced: s.CallerUntraced}
		switch s.Event {
		case EventCall, EventLine:
			l := s.Locals
			if l == nil {
				l = Locals{}
			}
			js.Locals = &l
		case EventReturn, EventException:
			a := s.Arg
			js.Arg = &a
			if s.Locals != nil { // the real engine's states have them; older traces may not
				l := s.Locals
				js.Locals = &l
			}
		}
		if err := enc.Encode(js); err != nil {
			return err
		}
	}
	if err := enc.Encode(jsonExit{Exit: tr.Exit.Kind, Error: tr.Exit.Error, Reason: tr.Exit.Reason,
		Code: tr.Exit.Code, Stdout: tr.Stdout}); err != nil {
		return err
	}
	return bw.Flush()
}

// maxTextIndent is the deepest level WriteText indents: beyond it a line
// says its depth instead, so that a deep recursion's view grows linearly
// (indenting 50,000 levels wrote 5 GB for 100,000 states).
const maxTextIndent = 32

// WriteText writes a readable view: one line per state, indented by depth
// (up to maxTextIndent levels, then marked "[depth N]"), then the exit and
// what the program printed. Control characters are escaped everywhere
// (termsafe): a repr, a name or the program's output cannot drive the
// terminal that shows the view.
func WriteText(w io.Writer, tr *Trace) error {
	bw := bufio.NewWriter(w)
	for _, s := range tr.States {
		ind := strings.Repeat("  ", max(0, min(s.Depth, maxTextIndent)))
		if s.Depth > maxTextIndent || s.Depth < 0 {
			ind += fmt.Sprintf("[depth %d] ", s.Depth)
		}
		loc := fmt.Sprintf("%s:%d", termsafe.Line(s.Function), s.Lineno)
		fmt.Fprintf(bw, "%s%-9s %-16s %s", ind, s.Event, loc, termsafe.Line(strings.TrimSpace(s.Src)))
		switch s.Event {
		case EventCall, EventLine:
			if len(s.Locals) > 0 {
				var b bytes.Buffer
				for i, v := range s.Locals {
					if i > 0 {
						b.WriteString(", ")
					}
					b.WriteString(termsafe.Line(v.Name))
					b.WriteString("=")
					b.WriteString(termsafe.Line(v.Value))
				}
				fmt.Fprintf(bw, "    | %s", b.String())
			}
		case EventReturn:
			fmt.Fprintf(bw, "    -> %s", termsafe.Line(s.Arg))
		case EventException:
			fmt.Fprintf(bw, "    !! %s", termsafe.Line(s.Arg))
		}
		bw.WriteByte('\n')
	}
	fmt.Fprintf(bw, "exit %s", termsafe.Line(tr.Exit.Kind))
	if tr.Exit.Error != "" {
		fmt.Fprintf(bw, ": %s", termsafe.Line(tr.Exit.Error))
	}
	if tr.Exit.Reason != "" {
		fmt.Fprintf(bw, " (%s)", termsafe.Line(tr.Exit.Reason))
	}
	if tr.Exit.Code != 0 {
		fmt.Fprintf(bw, " [status %d]", tr.Exit.Code)
	}
	fmt.Fprintf(bw, "  (%d states)\n", len(tr.States))
	if tr.Stdout != "" {
		// the program's output as printed, but for control characters
		// other than newlines and tabs
		fmt.Fprintf(bw, "--- stdout ---\n%s", termsafe.Text(tr.Stdout))
		if !strings.HasSuffix(tr.Stdout, "\n") {
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}
