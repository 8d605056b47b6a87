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
	// A live run's records: a state, output, a pause, a jump's state, eval answers, a traceback, the exit.
	f.Add([]byte("\x5b\x08\x00\x00\x00\x28\x08\x00\x00\x00\x69\x00\x00\x00\x00\x69\x01\x00\x00\x00\x69\x01\x00\x00\x00\x69\x00\x00\x00\x00\x5b\x02\x00\x00\x00\x69\x00\x00\x00\x00\x75\x01\x00\x00\x00\x31\x5b\x01\x00\x00\x00\x75\x01\x00\x00\x00\x78\x75\x01\x00\x00\x00\x66\x69\x00\x00\x00\x00\x28\x02\x00\x00\x00\x75\x01\x00\x00\x00\x77\x75\x03\x00\x00\x00\x68\x69\x0a\x28\x02\x00\x00\x00\x75\x01\x00\x00\x00\x70\x75\x00\x00\x00\x00\x28\x05\x00\x00\x00\x69\x01\x00\x00\x00\x69\x02\x00\x00\x00\x69\x01\x00\x00\x00\x69\x00\x00\x00\x00\x4e\x28\x04\x00\x00\x00\x75\x01\x00\x00\x00\x72\x54\x75\x01\x00\x00\x00\x32\x5b\x02\x00\x00\x00\x75\x01\x00\x00\x00\x78\x75\x01\x00\x00\x00\x32\x28\x04\x00\x00\x00\x75\x01\x00\x00\x00\x72\x46\x75\x09\x00\x00\x00\x4e\x61\x6d\x65\x45\x72\x72\x6f\x72\x4e\x28\x02\x00\x00\x00\x75\x01\x00\x00\x00\x74\x75\x09\x00\x00\x00\x54\x72\x61\x63\x65\x62\x61\x63\x6b\x28\x05\x00\x00\x00\x75\x01\x00\x00\x00\x78\x75\x05\x00\x00\x00\x65\x72\x72\x6f\x72\x75\x03\x00\x00\x00\x45\x28\x29\x75\x00\x00\x00\x00\x69\x00\x00\x00\x00"))
	// Small limits, so that the fuzzer reaches them (issue 30): whatever
	// the bytes, what is kept stays within them.
	lim := Limits{MaxEvents: 50, ReprLimit: 20, MaxOutput: 100, MaxTraceBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, payload []byte) {
		tr := &Trace{}
		d := newDecoder("a\nb\n", tr, lim)
		streamed := 0
		d.output = func(s string) { streamed += utf8.RuneCountInString(s) }
		var hdr [4]byte
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(payload)))
		d.feed(append(hdr[:], payload...))
		d.states() // a live run joins at its pauses
		stream := append(hdr[:], payload...)
		d.feed(stream[:len(stream)/2]) // split anywhere
		d.feed(stream[len(stream)/2:])
		d.finish(workerEnd{})
		if len(tr.States) > lim.MaxEvents || d.size > lim.MaxTraceBytes {
			t.Fatalf("%d states, %d bytes kept", len(tr.States), d.size)
		}
		if n := utf8.RuneCountInString(tr.Stdout); n > lim.MaxOutput+len(OutputCutMarker) || streamed > lim.MaxOutput {
			t.Fatalf("stdout of %d characters, %d streamed", n, streamed)
		}
		for _, s := range tr.States {
			if s.Event == "" || s.Depth < 0 || s.Lineno < 0 || s.Frame < 1 || utf8.RuneCountInString(s.Arg) > minReprBound+3 {
				t.Fatalf("bad state kept: %+v", s)
			}
			for _, v := range s.Locals {
				if utf8.RuneCountInString(v.Value) > minReprBound+3 {
					t.Fatalf("repr of %d characters kept", len(v.Value))
				}
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
