package infer

import (
	"strings"

	"ndb/format"
)

// A forward step never leaves the running function without an event that
// says so: from a line (or the call) of function F, step_into, step_over
// and step_return show a line, return or exception event of F itself, or a
// call event (into another function). So once the prompt's last frame is a
// line or call of F and the next frame's event is line, return or
// exception, its source line is one of F's lines. Scopes are read from the
// program's text: def and class blocks, by indentation, with lines inside
// brackets, strings and backslash continuations belonging to the statement
// they continue. Where the text is ambiguous (the same line text in two
// functions, a one-line def) a line belongs to every scope it may run in,
// which only makes the rule looser.

// scopeRules is what stepScope needs from a program.
type scopeRules struct {
	lines  []string // every line of the program
	member [][]int  // per line: the scopes (block ids, -1 = module) it runs in
	opens  []int    // per line: the block a def or class header (or its decorator) opens, else -2
}

const noBlock = -2

// programScopes reads the def and class blocks of src.
func programScopes(src string) *scopeRules {
	lines := strings.Split(src, "\n")
	s := &scopeRules{lines: lines, member: make([][]int, len(lines)), opens: make([]int, len(lines))}
	type block struct{ indent, id int }
	var stack []block
	var stmt []int       // scopes of the current logical line
	var decorators []int // decorator lines waiting for their def or class
	depth, quote, cont, blocks := 0, "", false, 0
	for i, l := range lines {
		s.opens[i] = noBlock
		t := strings.TrimSpace(l)
		start := depth == 0 && quote == "" && !cont && t != "" && t[0] != '#'
		var code int
		depth, quote, cont, code = scanLine(l, depth, quote)
		if start {
			ind := indentWidth(l)
			for len(stack) > 0 && ind <= stack[len(stack)-1].indent {
				stack = stack[:len(stack)-1]
			}
			cur := -1
			if len(stack) > 0 {
				cur = stack[len(stack)-1].id
			}
			stmt = []int{cur}
			switch {
			case strings.HasPrefix(t, "@"):
				decorators = append(decorators, i)
			case isBlockHeader(t):
				id := blocks
				blocks++
				s.opens[i] = id
				for _, d := range decorators {
					s.opens[d] = id
				}
				stack = append(stack, block{ind, id})
				// a one-line body (def f(): return 1) runs on the header's
				// line, and so may one of a header that goes on
				if depth > 0 || cont || !strings.HasSuffix(strings.TrimSpace(l[:code]), ":") {
					stmt = []int{cur, id}
				}
				decorators = nil
			default:
				decorators = nil
			}
		}
		s.member[i] = stmt
	}
	return s
}

// isBlockHeader reports whether a logical line starts a def or class.
func isBlockHeader(t string) bool {
	for _, kw := range []string{"def", "async def", "class"} {
		if rest, ok := strings.CutPrefix(t, kw); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t' || kw == "class" && rest[0] == ':') {
			return true
		}
	}
	return false
}

// indentWidth is a line's indentation, tabs to the next multiple of 8.
func indentWidth(l string) int {
	w := 0
	for _, c := range l {
		switch c {
		case ' ':
			w++
		case '\t':
			w = w/8*8 + 8
		default:
			return w
		}
	}
	return w
}

// scanLine carries the lexical state over one line: the bracket depth, an
// open triple-quoted string's delimiter, whether the line ends in a
// backslash continuation, and where its code ends (a comment starts).
func scanLine(l string, depth int, quote string) (int, string, bool, int) {
	for j := 0; j < len(l); j++ {
		c := l[j]
		if quote != "" {
			if c == '\\' {
				j++
			} else if strings.HasPrefix(l[j:], quote) {
				j += len(quote) - 1
				quote = ""
			}
			continue
		}
		switch c {
		case '#':
			return depth, "", false, j
		case '\'', '"':
			quote = string(c)
			if triple := strings.Repeat(quote, 3); strings.HasPrefix(l[j:], triple) {
				quote = triple
				j += 2
			}
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(depth-1, 0)
		}
	}
	cont := strings.HasSuffix(l, "\\")
	if len(quote) == 1 && !cont {
		quote = "" // an unterminated one-line string: a syntax error, do not let it spread
	}
	return depth, quote, cont, len(l)
}

// stepScope is the set of lines the next frame's source may be when it is
// a line, return or exception event, or ok false when the prompt does not
// fix one: the last action is not a forward step, or the last frame is not
// a line or call the program's text places.
func (s *scopeRules) stepScope(prompt string) (lines sortedSet, ok bool) {
	body := strings.TrimSuffix(prompt, format.TokFrameSep)
	i := strings.LastIndex(body, format.TokFrameSep)
	if i < 0 || len(body) == len(prompt) {
		return nil, false
	}
	last := body[i+len(format.TokFrameSep):]
	k := strings.LastIndex(last, format.TokActionSep)
	if k < 0 {
		return nil, false
	}
	switch last[k+len(format.TokActionSep):] {
	case format.TokStepInto, format.TokStepOver, format.TokStepReturn:
	default:
		return nil, false
	}
	f, err := format.ParseFrame(last[:k+len(format.TokActionSep)])
	if err != nil {
		return nil, false
	}
	scopes := map[int]bool{}
	for j, l := range s.lines {
		if l != f.Src {
			continue
		}
		switch f.Kind {
		case format.Line:
			for _, sc := range s.member[j] {
				scopes[sc] = true
			}
		case format.Call:
			if s.opens[j] == noBlock {
				return nil, false // a comprehension, lambda, resumed generator or module: no block to read
			}
			scopes[s.opens[j]] = true
		default:
			return nil, false
		}
	}
	if len(scopes) == 0 {
		return nil, false
	}
	for j, l := range s.lines {
		for _, sc := range s.member[j] {
			if scopes[sc] && executable(l) {
				lines = append(lines, l)
				break
			}
		}
	}
	lines.sort()
	return lines, true
}

// scopedEvent reports whether a frame text starts with a line, return or
// exception event: those stay in the running function after a forward step
// (see stepScope).
func scopedEvent(frame string) bool {
	for _, tok := range []string{format.TokLineSep, format.TokReturnSep, format.TokExceptionSep} {
		if strings.HasPrefix(frame, tok) {
			return true
		}
	}
	return false
}

// executable reports whether a source line can be an event's line: not
// blank and not only a comment.
func executable(l string) bool {
	t := strings.TrimSpace(l)
	return t != "" && !strings.HasPrefix(t, "#")
}
