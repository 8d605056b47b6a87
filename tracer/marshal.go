package tracer

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// marshalReader reads, value by value, the subset of CPython's marshal
// format (version 2) that the worker writes for records: lists, tuples,
// ints, str, None, True, False. Reading typed values directly, rather than
// building a tree of interfaces, keeps decoding cheap next to the tracer.
// Strings may hold lone surrogates (marshal writes them with surrogatepass):
// they become U+FFFD.
type marshalReader struct {
	b []byte
	i int
}

func (d *marshalReader) need(n int) ([]byte, error) {
	if n < 0 || d.i+n > len(d.b) {
		return nil, fmt.Errorf("marshal: truncated at byte %d", d.i)
	}
	s := d.b[d.i : d.i+n]
	d.i += n
	return s, nil
}

func (d *marshalReader) int32() (int, error) {
	s, err := d.need(4)
	if err != nil {
		return 0, err
	}
	return int(int32(binary.LittleEndian.Uint32(s))), nil
}

// kind returns the type code of the next value without consuming it.
func (d *marshalReader) kind() byte {
	if d.i >= len(d.b) {
		return 0
	}
	return d.b[d.i] &^ 0x80 // FLAG_REF is never written by version 2
}

func (d *marshalReader) none() bool {
	if d.kind() == 'N' {
		d.i++
		return true
	}
	return false
}

// seq reads the header of a list or tuple and returns its length.
func (d *marshalReader) seq() (int, error) {
	switch d.kind() {
	case '[', '(':
		d.i++
		n, err := d.int32()
		if err != nil {
			return 0, err
		}
		if n < 0 || n > len(d.b)-d.i {
			return 0, fmt.Errorf("marshal: bad length %d", n)
		}
		return n, nil
	}
	return 0, fmt.Errorf("marshal: want a list or tuple at byte %d", d.i)
}

func (d *marshalReader) int() (int, error) {
	switch d.kind() {
	case 'i':
		d.i++
		return d.int32()
	case 'l':
		d.i++
		n, err := d.int32()
		if err != nil {
			return 0, err
		}
		neg := n < 0
		if neg {
			n = -n
		}
		if n > 5 || n < 0 { // 15-bit digits: more than 5 cannot fit an int64
			return 0, fmt.Errorf("marshal: integer out of range")
		}
		digits, err := d.need(2 * n)
		if err != nil {
			return 0, err
		}
		v := new(big.Int)
		for k := n - 1; k >= 0; k-- {
			v.Lsh(v, 15)
			v.Or(v, big.NewInt(int64(binary.LittleEndian.Uint16(digits[2*k:]))))
		}
		if neg {
			v.Neg(v)
		}
		if !v.IsInt64() {
			return 0, fmt.Errorf("marshal: integer out of range")
		}
		return int(v.Int64()), nil
	}
	return 0, fmt.Errorf("marshal: want an int at byte %d", d.i)
}

func (d *marshalReader) bool() (bool, error) {
	switch d.kind() {
	case 'T':
		d.i++
		return true, nil
	case 'F':
		d.i++
		return false, nil
	}
	return false, fmt.Errorf("marshal: want a bool at byte %d", d.i)
}

func (d *marshalReader) str() (string, error) { return d.strMax(-1) }

// strMax is str, refusing (before copying) a str of more than maxBytes
// bytes (-1: no bound but the data's).
func (d *marshalReader) strMax(maxBytes int) (string, error) {
	switch d.kind() {
	case 'u', 'a', 'A', 't':
		d.i++
		n, err := d.int32()
		if err != nil {
			return "", err
		}
		if maxBytes >= 0 && n > maxBytes {
			return "", errTooLong{n}
		}
		s, err := d.need(n)
		if err != nil {
			return "", err
		}
		str := string(s)
		if !utf8.ValidString(str) {
			str = strings.ToValidUTF8(str, "\uFFFD")
		}
		return str, nil
	}
	return "", fmt.Errorf("marshal: want a str at byte %d", d.i)
}

// skipStr steps over a str without copying it.
func (d *marshalReader) skipStr() error {
	switch d.kind() {
	case 'u', 'a', 'A', 't':
		d.i++
		n, err := d.int32()
		if err != nil {
			return err
		}
		_, err = d.need(n)
		return err
	}
	return fmt.Errorf("marshal: want a str at byte %d", d.i)
}

// errTooLong is strMax's error: a str of n bytes.
type errTooLong struct{ n int }

func (e errTooLong) Error() string { return fmt.Sprintf("marshal: a str of %d bytes", e.n) }
