package tracer

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"unicode/utf8"
)

// unmarshalPy decodes the subset of CPython's marshal format, version 2,
// that the worker writes: lists, tuples, ints, str, None, True, False,
// floats. Strings may hold lone surrogates (encoded with surrogatepass);
// they become U+FFFD.
func unmarshalPy(b []byte) (any, error) {
	d := &marshalReader{b: b}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.i != len(b) {
		return nil, fmt.Errorf("marshal: %d trailing bytes", len(b)-d.i)
	}
	return v, nil
}

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

func (d *marshalReader) value(depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("marshal: nested too deep")
	}
	t, err := d.need(1)
	if err != nil {
		return nil, err
	}
	switch t[0] &^ 0x80 { // FLAG_REF is never written by version 2
	case 'N':
		return nil, nil
	case 'T':
		return true, nil
	case 'F':
		return false, nil
	case 'i':
		n, err := d.int32()
		return n, err
	case 'l':
		n, err := d.int32()
		if err != nil {
			return nil, err
		}
		neg := n < 0
		if neg {
			n = -n
		}
		digits, err := d.need(2 * n)
		if err != nil {
			return nil, err
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
			return nil, fmt.Errorf("marshal: integer out of range")
		}
		return int(v.Int64()), nil
	case 'g':
		s, err := d.need(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(s)), nil
	case 'u', 'a', 'A', 't':
		n, err := d.int32()
		if err != nil {
			return nil, err
		}
		s, err := d.need(n)
		if err != nil {
			return nil, err
		}
		str := string(s)
		if !utf8.ValidString(str) {
			str = strings.ToValidUTF8(str, "\uFFFD")
		}
		return str, nil
	case '[', '(':
		n, err := d.int32()
		if err != nil {
			return nil, err
		}
		if n < 0 || n > len(d.b)-d.i {
			return nil, fmt.Errorf("marshal: bad length %d", n)
		}
		out := make([]any, n)
		for k := range out {
			if out[k], err = d.value(depth + 1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("marshal: unsupported type %q at byte %d", t[0], d.i-1)
}
