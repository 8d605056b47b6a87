package dataset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"ndb/internal/pysource"
)

// pyFloatMarker prefixes the strings sanitizeJSON puts in place of the
// non-standard numbers Infinity, -Infinity and NaN (MBPP+ has a few).
const pyFloatMarker = "\x00pyfloat:"

// sanitizeJSON replaces bare Infinity, -Infinity and NaN (outside strings)
// with marker strings, so that encoding/json accepts the text.
func sanitizeJSON(b []byte) []byte {
	var out []byte
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			out = append(out, c)
			if c == '\\' && i+1 < len(b) {
				i++
				out = append(out, b[i])
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		matched := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(b[i:], []byte(tok)) {
				py := map[string]string{"-Infinity": "float('-inf')", "Infinity": "float('inf')", "NaN": "float('nan')"}[tok]
				out = append(out, '"')
				out = append(out, []byte(strings.ReplaceAll(pyFloatMarker, "\x00", "\\u0000")+py)...)
				out = append(out, '"')
				i += len(tok) - 1
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, c)
		}
	}
	return out
}

// pyArgLists converts a JSON list of argument lists into Python argument
// texts ("1, 'a'"), keeping dict key order.
func pyArgLists(raw json.RawMessage) ([]string, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "", "null", "{}": // Mbpp/793 has {} for "no inputs"
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var out []string
	for dec.More() {
		if err := expectDelim(dec, '['); err != nil {
			return nil, err
		}
		var b strings.Builder
		for n := 0; dec.More(); n++ {
			if n > 0 {
				b.WriteString(", ")
			}
			if err := writePyValue(dec, &b); err != nil {
				return nil, err
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return nil, err
		}
		out = append(out, b.String())
	}
	return out, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("dataset: want %v, got %v", d, tok)
	}
	return nil
}

// writePyValue reads one JSON value from dec and writes it as a Python
// literal: lists, dicts (in order), True/False/None, numbers as written,
// strings as double-quoted literals (JSON's escapes are Python escapes too).
func writePyValue(dec *json.Decoder, b *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch x := tok.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case json.Number:
		b.WriteString(x.String())
	case string:
		if strings.HasPrefix(x, pyFloatMarker) {
			b.WriteString(strings.TrimPrefix(x, pyFloatMarker))
			return nil
		}
		enc, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(enc)
	case json.Delim:
		closing := map[json.Delim]json.Delim{'[': ']', '{': '}'}[x]
		b.WriteByte(byte(x))
		for n := 0; dec.More(); n++ {
			if n > 0 {
				b.WriteString(", ")
			}
			if err := writePyValue(dec, b); err != nil {
				return err
			}
			if x == '{' {
				b.WriteString(": ")
				if err := writePyValue(dec, b); err != nil {
					return err
				}
			}
		}
		if err := expectDelim(dec, closing); err != nil {
			return err
		}
		b.WriteByte(byte(closing))
	default:
		return fmt.Errorf("dataset: no Python literal for %T", tok)
	}
	return nil
}

// definedFunctions lists the functions code defines at the start of a line
// (`def NAME(`, not async), in order, read by the program's index (a def
// in a string or comment is none).
func definedFunctions(code string) []string {
	var out []string
	for _, s := range pysource.New(code).TopLevel(pysource.Function) {
		if s.Indent == 0 && !s.Async {
			out = append(out, s.Name)
		}
	}
	return out
}

// extractCall finds the first call name(...) in line (outside strings, at
// an identifier boundary) and returns its text up to the matching paren.
func extractCall(line, name string) (string, bool) {
	for i := 0; i < len(line); {
		c := line[i]
		if c == '"' || c == '\'' {
			j, ok := skipString(line, i)
			if !ok {
				return "", false
			}
			i = j
			continue
		}
		if strings.HasPrefix(line[i:], name+"(") && (i == 0 || !isIdent(line[i-1])) {
			end, ok := matchParen(line, i+len(name))
			if !ok {
				return "", false
			}
			return line[i : end+1], true
		}
		i++
	}
	return "", false
}

// matchParen returns the index of the paren closing the one at open, and
// whether the bracket that closes it is a ')'.
func matchParen(s string, open int) (int, bool) {
	i, ok := matchBracket(s, open)
	return i, ok && s[i] == ')'
}

// skipString returns the index after the string literal starting at i
// (single, double or triple quoted; a prefix letter is part of the name
// before it and harmless).
func skipString(s string, i int) (int, bool) {
	q := s[i : i+1]
	if strings.HasPrefix(s[i:], strings.Repeat(q, 3)) {
		q = strings.Repeat(q, 3)
	}
	for j := i + len(q); j < len(s); j++ {
		if s[j] == '\\' {
			j++
			continue
		}
		if strings.HasPrefix(s[j:], q) {
			return j + len(q), true
		}
	}
	return 0, false
}

func isIdent(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// literalNames are the bare names an argument list may use: constants and a
// few pure builtins that build values (set(), float('inf'), ...).
var literalNames = map[string]bool{"True": true, "False": true, "None": true,
	"set": true, "frozenset": true, "tuple": true, "list": true, "dict": true, "float": true,
	"int": true, "str": true, "range": true, "complex": true, "bool": true, "bytes": true,
	"j": true, "e": true, "E": true, "inf": true, "nan": true, "and": true, "or": true, "not": true}

// literalArgs reports whether an argument list "(...)" uses no names other
// than literalNames (outside strings): anything else would need the test's
// own variables or imports.
func literalArgs(args string) bool {
	for i := 0; i < len(args); {
		c := args[i]
		switch {
		case c == '"' || c == '\'':
			j, ok := skipString(args, i)
			if !ok {
				return false
			}
			i = j
		case isIdent(c) && (c < '0' || c > '9'):
			j := i
			for j < len(args) && isIdent(args[j]) {
				j++
			}
			word := args[i:j]
			// string prefixes such as b'..' or r"..": allowed before a quote
			if j < len(args) && (args[j] == '\'' || args[j] == '"') && len(word) <= 2 && strings.Trim(strings.ToLower(word), "rbuf") == "" {
				i = j
				continue
			}
			if !literalNames[word] {
				return false
			}
			i = j
		case c >= '0' && c <= '9':
			for i < len(args) && (isIdent(args[i]) || args[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return true
}
