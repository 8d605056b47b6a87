package pysource

import (
	"strings"
	"unicode/utf8"
)

// The tokenizer: enough of Python's to find statements and names. Strings
// (any prefix, triple-quoted, across lines), comments, bracketed and
// backslash-continued lines are skipped as Python skips them; an f-string's
// replacement fields are read back as code, because their names are loads
// (and may make free variables) like any other. Bad input never fails: an
// unterminated string ends at its line (single quotes) or at the end
// (triple quotes), a stray closing bracket is ignored.

type tokKind uint8

const (
	tName tokKind = iota
	tNumber
	tString
	tOp
)

type token struct {
	kind tokKind
	text string // a name, an operator; a string's or number's raw text
	line int    // 1-based line where it starts
	end  int    // line where it ends (a triple-quoted string may span lines)
	col  int    // byte offset in its line where it starts (an f-string field's: its string's)
	// field marks a token read from an f-string's replacement field (and
	// the parentheses put around each field): it has no text of its own in
	// the source
	field bool
}

// logical is one logical line: the tokens of a statement (or of a compound
// statement's header with its one-line body) from its first physical line to
// its last.
type logical struct {
	toks        []token
	first, last int // physical lines
	indent      int // of the first line, tabs to the next multiple of 8
}

// IndentWidth is a line's indentation as Python's tokenizer counts it:
// tabs to the next multiple of 8.
func IndentWidth(l string) int {
	w := 0
	for _, c := range l {
		switch c {
		case ' ':
			w++
		case '\t':
			w = w/8*8 + 8
		case '\f':
			w = 0
		default:
			return w
		}
	}
	return w
}

// threeOps and twoOps are the multi-character operators, longest first.
var (
	threeOps = []string{"**=", "//=", ">>=", "<<=", "..."}
	twoOps   = []string{"**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="}
)

// splitLines splits src into physical lines as Python counts them: "\n",
// "\r\n" and a lone "\r" end a line.
func splitLines(src string) []string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	lines := strings.Split(src, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// tokenize reads the logical lines of the source lines, and where each
// line's comment starts (a byte offset, -1 for none).
func tokenize(lines []string) ([]logical, []int) {
	var out []logical
	comments := make([]int, len(lines))
	for i := range comments {
		comments[i] = -1
	}
	var cur *logical
	depth := 0
	lineNo := 0
	// open triple-quoted string carried across lines
	var openStr *token
	var openQuote string
	var openBuf strings.Builder
	var openF bool
	finish := func() {
		if cur != nil && len(cur.toks) > 0 {
			out = append(out, *cur)
		}
		cur, depth = nil, 0
	}
	emit := func(t token) {
		if cur == nil {
			cur = &logical{first: t.line, indent: IndentWidth(lines[t.line-1])}
		}
		cur.toks = append(cur.toks, t)
		cur.last = max(cur.last, t.end)
	}
	emitString := func(t token, body string, f bool) {
		emit(t)
		if f {
			for _, field := range fstringFields(body) {
				sub, _ := tokenize(splitLines(field))
				emit(token{kind: tOp, text: "(", line: t.line, end: t.line, col: t.col, field: true})
				for _, l := range sub {
					for _, st := range l.toks {
						st.line, st.end, st.col, st.field = t.line, t.line, t.col, true
						emit(st)
					}
				}
				emit(token{kind: tOp, text: ")", line: t.line, end: t.line, col: t.col, field: true})
			}
		}
	}
	for lineNo = 1; lineNo <= len(lines); lineNo++ {
		l := lines[lineNo-1]
		i := 0
		if openStr != nil {
			j, closed := scanStringBody(l, 0, openQuote)
			if !closed && len(openQuote) == 1 && !strings.HasSuffix(l, "\\") {
				closed = true // a one-quote string ends at its line
			}
			if !closed {
				openBuf.WriteString(l)
				openBuf.WriteByte('\n')
				continue
			}
			openBuf.WriteString(l[:j])
			t := *openStr
			t.end = lineNo
			t.text += openBuf.String()
			emitString(t, strings.TrimSuffix(t.text[strings.Index(t.text, openQuote)+len(openQuote):], openQuote), openF)
			openStr = nil
			i = j
		}
		continued := false
		for i < len(l) {
			c := l[i]
			switch {
			case c == ' ' || c == '\t' || c == '\f':
				i++
			case c == '#':
				comments[lineNo-1] = i
				i = len(l)
			case c == '\\' && i == len(l)-1:
				continued = true
				i++
			case c == '\'' || c == '"':
				i = readString(l, i, "", lineNo, &openStr, &openQuote, &openBuf, &openF, emitString)
			case isNameStart(c):
				j := i
				for j < len(l) && isNameByte(l[j]) {
					j++
				}
				word := l[i:j]
				if j < len(l) && (l[j] == '\'' || l[j] == '"') && isStringPrefix(word) {
					i = readString(l, j, word, lineNo, &openStr, &openQuote, &openBuf, &openF, emitString)
					continue
				}
				emit(token{kind: tName, text: word, line: lineNo, end: lineNo, col: i})
				i = j
			case c >= '0' && c <= '9' || c == '.' && i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '9':
				j := i + 1
				for j < len(l) && (isNameByte(l[j]) || l[j] == '.' ||
					(l[j] == '+' || l[j] == '-') && (l[j-1] == 'e' || l[j-1] == 'E') && !strings.ContainsAny(l[i:j], "xXbBoO")) {
					j++
				}
				emit(token{kind: tNumber, text: l[i:j], line: lineNo, end: lineNo, col: i})
				i = j
			default:
				op := l[i : i+1]
				for _, ops := range [][]string{threeOps, twoOps} {
					for _, o := range ops {
						if strings.HasPrefix(l[i:], o) {
							op = o
							break
						}
					}
					if len(op) > 1 {
						break
					}
				}
				switch op {
				case "(", "[", "{":
					depth++
				case ")", "]", "}":
					depth = max(depth-1, 0)
				}
				emit(token{kind: tOp, text: op, line: lineNo, end: lineNo, col: i})
				i += len(op)
			}
			if openStr != nil {
				break
			}
		}
		if openStr == nil && !continued && depth == 0 {
			finish()
		}
	}
	if openStr != nil { // unterminated triple-quoted string: it runs to the end
		t := *openStr
		t.end = len(lines)
		emit(t)
	}
	finish()
	return out, comments
}

// readString reads the string literal whose quote is at l[i] (prefix
// before it) and emits it; a triple-quoted one left open is kept in
// openStr for the next lines. It returns where reading goes on.
func readString(l string, i int, prefix string, lineNo int, openStr **token, openQuote *string, openBuf *strings.Builder, openF *bool,
	emitString func(token, string, bool)) int {
	q := l[i : i+1]
	if strings.HasPrefix(l[i:], q+q+q) {
		q = q + q + q
	}
	f := strings.ContainsAny(prefix, "fF")
	start := i - len(prefix)
	j, closed := scanStringBody(l, i+len(q), q)
	if !closed {
		if len(q) == 3 || strings.HasSuffix(l, "\\") {
			// goes on: a triple quote, or a one-quote string continued by a backslash
			*openStr = &token{kind: tString, text: l[start:] + "\n", line: lineNo, col: start}
			*openQuote, *openF = q, f
			openBuf.Reset()
			return len(l)
		}
		// an unterminated one-line string (a syntax error): it ends here
		emitString(token{kind: tString, text: l[start:], line: lineNo, end: lineNo, col: start}, "", false)
		return len(l)
	}
	emitString(token{kind: tString, text: l[start:j], line: lineNo, end: lineNo, col: start}, l[i+len(q):j-len(q)], f)
	return j
}

// scanStringBody finds the end of a string body from l[i] closed by quote:
// the index after the closing quote, or false when the line ends first.
func scanStringBody(l string, i int, quote string) (int, bool) {
	for i < len(l) {
		switch {
		case l[i] == '\\':
			i += 2
		case strings.HasPrefix(l[i:], quote):
			return i + len(quote), true
		default:
			i++
		}
	}
	return len(l), false
}

// fstringFields lists the expressions of an f-string body's replacement
// fields ({expr!r:spec}, {{ is a brace), with a `=` debug marker, the
// conversion and the format spec cut off; a field's nested fields in its
// format spec are fields too.
func fstringFields(body string) []string {
	var out []string
	for i := 0; i < len(body); i++ {
		switch {
		case strings.HasPrefix(body[i:], "{{") || strings.HasPrefix(body[i:], "}}"):
			i++
		case body[i] == '{':
			depth, j := 0, i+1
			end, cut := -1, -1
			var quote byte
			for ; j < len(body) && end < 0; j++ {
				c := body[j]
				switch {
				case quote != 0:
					if c == quote {
						quote = 0
					}
				case c == '\'' || c == '"':
					quote = c
				case c == '(' || c == '[' || c == '{':
					depth++
				case (c == ')' || c == ']') && depth > 0:
					depth--
				case c == '}' && depth > 0:
					depth--
				case c == '}':
					end = j
				case depth == 0 && cut < 0 && (c == '!' && j+1 < len(body) && body[j+1] != '=' || c == ':'):
					cut = j
				}
			}
			if end < 0 {
				return out
			}
			expr := body[i+1 : end]
			if cut >= 0 {
				out = append(out, fstringFields(body[cut+1:end])...)
				expr = body[i+1 : cut]
			}
			expr = strings.TrimRight(expr, " ")
			if strings.HasSuffix(expr, "=") && !strings.HasSuffix(expr, "==") && !strings.HasSuffix(expr, "!=") &&
				!strings.HasSuffix(expr, "<=") && !strings.HasSuffix(expr, ">=") {
				expr = strings.TrimSuffix(expr, "=")
			}
			out = append(out, strings.ReplaceAll(expr, "\n", " "))
			i = end
		}
	}
	return out
}

func isStringPrefix(w string) bool {
	if len(w) > 2 {
		return false
	}
	lw := strings.ToLower(w)
	switch lw {
	case "r", "b", "u", "f", "rb", "br", "fr", "rf":
		return true
	}
	return false
}

// isNameStart: a letter, _ or a non-ASCII letter (Python allows Unicode
// identifiers; every non-ASCII byte is taken as part of one).
func isNameStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf
}

func isNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= utf8.RuneSelf
}
