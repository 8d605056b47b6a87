package tracer

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

// codingCookie is PEP 263's declaration, looked for on the first two lines.
var codingCookie = regexp.MustCompile(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`)

// DecodeSource turns the bytes of a Python file into text as CPython would:
// a UTF-8 BOM is dropped, a PEP 263 coding declaration of a Latin-1 or ASCII
// family encoding is honoured, and anything else must be valid UTF-8. Other
// declared encodings and invalid bytes are an error that says where.
func DecodeSource(b []byte) (string, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	enc := "utf-8"
	lines := bytes.SplitN(b, []byte("\n"), 3)
	for i := 0; i < len(lines) && i < 2; i++ {
		if m := codingCookie.FindSubmatch(lines[i]); m != nil {
			enc = strings.ToLower(strings.ReplaceAll(string(m[1]), "_", "-"))
			break
		}
		if t := bytes.TrimSpace(lines[i]); len(t) > 0 && t[0] != '#' {
			break // the cookie must come before any code
		}
	}
	switch enc {
	case "utf-8", "utf8":
	case "latin-1", "iso-8859-1", "iso8859-1", "latin1", "l1", "iso-latin-1", "8859", "cp819":
		var sb strings.Builder
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return sb.String(), nil
	case "ascii", "us-ascii", "646":
		for i, c := range b {
			if c >= 0x80 {
				return "", fmt.Errorf("byte 0x%02x at offset %d is not ASCII, the declared encoding", c, i)
			}
		}
		return string(b), nil
	default:
		return "", fmt.Errorf("declared encoding %q is not supported (use UTF-8 or Latin-1)", enc)
	}
	if !utf8.Valid(b) {
		off := invalidUTF8Offset(string(b))
		line := bytes.Count(b[:off], []byte("\n")) + 1
		return "", fmt.Errorf("not valid UTF-8: byte 0x%02x at line %d (offset %d), and no encoding is declared", b[off], line, off)
	}
	return string(b), nil
}

// ReadSource reads and decodes a Python file (see DecodeSource).
func ReadSource(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory, not a Python file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s, err := DecodeSource(b)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
