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

// extractCall finds the first plain call name(...) in line (not in a
// string or comment, not a method x.name(...)) and returns it as name and
// its argument list as written, up to the matching paren.
func extractCall(line, name string) (string, bool) {
	args, ok := pysource.New(line).CallArgs(1, name)
	if !ok {
		return "", false
	}
	return name + args, true
}

// literalNames are the bare names an argument list may use: constants and a
// few pure builtins that build values (set(), float('inf'), ...).
var literalNames = map[string]bool{"True": true, "False": true, "None": true,
	"set": true, "frozenset": true, "tuple": true, "list": true, "dict": true, "float": true,
	"int": true, "str": true, "range": true, "complex": true, "bool": true, "bytes": true,
	"j": true, "e": true, "E": true, "inf": true, "nan": true}

// literalArgs reports whether an argument list "(...)" needs no names from
// outside but literalNames (the index's unbound names of it as an
// expression): anything else would need the test's own variables or
// imports. Its comprehensions', lambdas' and :='s own names are its own;
// an f-string's fields are code; a keyword argument's name reads as a name
// (the list is read as a parenthesized expression), so one is refused.
func literalArgs(args string) bool {
	for _, n := range pysource.New(args).Unbound() {
		if !literalNames[n] {
			return false
		}
	}
	return true
}
