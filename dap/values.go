package dap

import (
	"strconv"
	"strings"

	"ndb/debugger"
)

// child is one element of a container value, read from its repr.
type child struct {
	name, value string
}

// maxChildren bounds the children read from one repr.
const maxChildren = 10000

// children reads the elements of a container from its repr, since that is
// all an engine gives: a list [a, b], a tuple (a, b), a dict {k: v}, a set
// {a, b}, and a call-like repr such as Point(x=1, y=2), deque([1, 2]) or
// frozenset({1}) (keyword arguments named, positional ones numbered; a
// single positional container is opened directly). ok is false for
// scalars, opaque reprs (<object at 0x...>) and empty containers. A repr
// cut short by the tracer ("...") yields the elements before the cut and
// a last child named "..." holding the rest.
func children(repr string) (out []child, ok bool) {
	r := strings.TrimSpace(repr)
	if len(r) < 2 {
		return nil, false
	}
	cut := false
	if strings.HasSuffix(r, "...") && !balanced(r) {
		cut = true
	}
	open, body := r[0], ""
	switch open {
	case '[', '(', '{':
		end := closer(open)
		if cut {
			body = r[1:]
		} else if r[len(r)-1] == end {
			body = r[1 : len(r)-1]
		} else {
			return nil, false
		}
	default:
		// Name(args): a call-like repr of a class.
		i := strings.IndexByte(r, '(')
		if i <= 0 || !isDotted(r[:i]) || (!cut && r[len(r)-1] != ')') {
			return nil, false
		}
		body = r[i+1:]
		if !cut {
			body = body[:len(body)-1]
		}
		items := splitTop(body, ',')
		if len(items) == 1 && !cut {
			if kids, ok := children(items[0]); ok && strings.IndexByte("[({", strings.TrimSpace(items[0])[0]) >= 0 {
				return kids, true // deque([1, 2]), frozenset({1}), Counter({...})
			}
		}
		return named(items, cut), len(items) > 0
	}
	items := splitTop(body, ',')
	if len(items) == 0 {
		return nil, false
	}
	isDict := open == '{' && len(items) > 0 && topColon(items[0]) > 0
	for i, it := range items {
		if len(out) >= maxChildren {
			out = append(out, child{"...", strconv.Itoa(len(items)-i) + " more"})
			break
		}
		if cut && i == len(items)-1 {
			out = append(out, child{"...", strings.TrimSpace(it)})
			break
		}
		if isDict {
			if j := topColon(it); j > 0 {
				out = append(out, child{strings.TrimSpace(it[:j]), strings.TrimSpace(it[j+1:])})
				continue
			}
		}
		out = append(out, child{strconv.Itoa(i), strings.TrimSpace(it)})
	}
	return out, true
}

// named turns call arguments into children: keyword ones by name.
func named(items []string, cut bool) []child {
	var out []child
	for i, it := range items {
		if len(out) >= maxChildren {
			break
		}
		it = strings.TrimSpace(it)
		if cut && i == len(items)-1 {
			out = append(out, child{"...", it})
			break
		}
		if j := topEquals(it); j > 0 && debugger.IsName(strings.TrimSpace(it[:j])) {
			out = append(out, child{strings.TrimSpace(it[:j]), strings.TrimSpace(it[j+1:])})
			continue
		}
		out = append(out, child{strconv.Itoa(i), it})
	}
	return out
}

func closer(open byte) byte {
	switch open {
	case '[':
		return ']'
	case '(':
		return ')'
	case '{':
		return '}'
	case '<':
		return '>'
	}
	return 0
}

func isDotted(s string) bool {
	for _, p := range strings.Split(s, ".") {
		if !debugger.IsName(p) {
			return false
		}
	}
	return true
}

// scan walks s outside string literals, calling f with each byte and the
// bracket depth before it; f returns false to stop.
func scan(s string, f func(i int, ch byte, depth int) bool) (depth int, inString bool) {
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if quote != 0 {
			if ch == '\\' {
				i++
			} else if ch == quote {
				quote = 0
			}
			continue
		}
		switch ch {
		case '\'', '"':
			quote = ch
			continue
		case '[', '(', '{', '<':
			if !f(i, ch, depth) {
				return depth, false
			}
			depth++
			continue
		case ']', ')', '}', '>':
			if depth > 0 {
				depth--
			}
		}
		if !f(i, ch, depth) {
			return depth, false
		}
	}
	return depth, quote != 0
}

// splitTop splits s at sep outside brackets and strings; a trailing
// separator (a one-tuple's) makes no empty item.
func splitTop(s string, sep byte) []string {
	var out []string
	start := 0
	scan(s, func(i int, ch byte, depth int) bool {
		if ch == sep && depth == 0 {
			out = append(out, s[start:i])
			start = i + 1
		}
		return true
	})
	if last := s[start:]; strings.TrimSpace(last) != "" {
		out = append(out, last)
	}
	return out
}

// topColon is the index of the first ':' outside brackets and strings.
func topColon(s string) int { return topByte(s, ':') }

func topEquals(s string) int { return topByte(s, '=') }

func topByte(s string, b byte) int {
	at := -1
	scan(s, func(i int, ch byte, depth int) bool {
		if ch == b && depth == 0 {
			at = i
			return false
		}
		return true
	})
	return at
}

// balanced reports whether every bracket and string of r is closed.
func balanced(r string) bool {
	depth, inString := scan(r, func(int, byte, int) bool { return true })
	return depth == 0 && !inString
}
