package tracer

import (
	"encoding/binary"
	"testing"
)

// The filter is well formed for both architectures: whole instructions,
// every jump inside the program, every path ending in a return, every
// denied call known there (or absent from that architecture on purpose).
func TestSeccompFilterShape(t *testing.T) {
	for _, arch := range []string{"amd64", "arm64"} {
		f, err := seccompFilter(arch)
		if err != nil {
			t.Fatal(err)
		}
		if len(f)%8 != 0 || len(f)/8 > 4096 {
			t.Fatalf("%s: %d bytes", arch, len(f))
		}
		n := len(f) / 8
		rets := 0
		for i := 0; i < n; i++ {
			code := binary.LittleEndian.Uint16(f[8*i:])
			jt, jf := int(f[8*i+2]), int(f[8*i+3])
			switch code {
			case bpfRetK:
				rets++
			case bpfJeqK, bpfJgeK, bpfJsetK:
				if i+1+jt >= n || i+1+jf >= n {
					t.Errorf("%s: jump out of the program at %d", arch, i)
				}
			case bpfLdWAbs:
			default:
				t.Errorf("%s: unexpected opcode %#x", arch, code)
			}
		}
		if last := binary.LittleEndian.Uint16(f[len(f)-8:]); last != bpfRetK || rets != 4 {
			t.Errorf("%s: %d returns, last opcode %#x", arch, rets, last)
		}
		for _, name := range []string{"unshare", "setns", "mount", "ptrace", "bpf", "kexec_load", "clone", "clone3"} {
			if _, ok := syscallNumbers[arch][name]; !ok {
				t.Errorf("%s: no number for %s", arch, name)
			}
		}
	}
	if _, err := seccompFilter("mips"); err == nil {
		t.Error("a filter for an unknown architecture")
	}
}
