package tracer

import (
	"encoding/binary"
	"testing"
	"unicode/utf8"
)

// FuzzDecoder feeds arbitrary bytes to the record-stream decoder: it may
// reject them, never panic.
func FuzzDecoder(f *testing.F) {
	// A real chunk: [(0, 1, 1, 0, [0, '1'], ['x'], 'f', 0), (1, 2, 1, 0, None), ('x', 'normal', '', '', 0)]
	f.Add([]byte("[\x03\x00\x00\x00(\x08\x00\x00\x00i\x00\x00\x00\x00i\x01\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00[\x02\x00\x00\x00i\x00\x00\x00\x00u\x01\x00\x00\x001[\x01\x00\x00\x00u\x01\x00\x00\x00xu\x01\x00\x00\x00fi\x00\x00\x00\x00(\x05\x00\x00\x00i\x01\x00\x00\x00i\x02\x00\x00\x00i\x01\x00\x00\x00i\x00\x00\x00\x00N(\x05\x00\x00\x00u\x01\x00\x00\x00xu\x06\x00\x00\x00normalu\x00\x00\x00\x00u\x00\x00\x00\x00i\x00\x00\x00\x00"))
	f.Add([]byte("l\xff\xff\xff\x7f"))
	f.Fuzz(func(t *testing.T, payload []byte) {
		tr := &Trace{}
		d := newDecoder("a\nb\n", tr)
		var hdr [4]byte
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(payload)))
		d.feed(append(hdr[:], payload...))
		d.finish(workerEnd{})
		for _, s := range tr.States {
			if s.Event == "" {
				t.Fatalf("state without event: %+v", s)
			}
		}
	})
}

// FuzzDecodeSource: any bytes either decode to valid UTF-8 text or give an error.
func FuzzDecodeSource(f *testing.F) {
	f.Add([]byte("x = 1\n"))
	f.Add([]byte("# -*- coding: latin-1 -*-\nx = '\xe9'\n"))
	f.Add([]byte("\xef\xbb\xbfx = '\xe9'\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSource(b)
		if err == nil && !utf8.ValidString(s) {
			t.Fatalf("decoded text is not UTF-8: %q", s)
		}
	})
}
