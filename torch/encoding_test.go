package torch_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"ndb/model/hf"
	"ndb/model/modelfile"
)

// TestHalfEncodingMatchesGo: ndb_torch.hf's BF16 and F16 encoders (numpy)
// give bit for bit what ndb's Go export writes (modelfile.F32ToBF16, hf.F32ToF16),
// on ties, subnormals, overflow, infinities, NaN and random values, so a
// model exported by either side rounds the same way.
func TestHalfEncodingMatchesGo(t *testing.T) {
	py := numpyPython(t)
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65520, 1e5, -1e5, 6e-8, 3e-8, 1e-40, -1e-45,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32}
	for _, bits := range []uint32{0x3F808000, 0x3F818000, 0x3F80C000, 0x7F7FFFFF, 0x00008000, 0x38800000, 0x33000000, 0x33000001} {
		vals = append(vals, math.Float32frombits(bits)) // BF16/F16 ties and edges
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 20000; i++ {
		vals = append(vals, math.Float32frombits(rng.Uint32()))
		vals = append(vals, float32(rng.NormFloat64()*0.02))
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.f32")
	buf := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	if err := os.WriteFile(in, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import sys, numpy as np
from ndb_torch.hf import encode
a = np.fromfile(sys.argv[1], dtype="<f4")
open(sys.argv[2], "wb").write(encode(a, "BF16"))
open(sys.argv[3], "wb").write(encode(a, "F16"))`
	bf, f16 := filepath.Join(dir, "bf16"), filepath.Join(dir, "f16")
	cmd := exec.Command(py, "-c", script, in, bf, f16)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for _, c := range []struct {
		path string
		conv func(float32) uint16
	}{{bf, modelfile.F32ToBF16}, {f16, hf.F32ToF16}} {
		got, err := os.ReadFile(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2*len(vals) {
			t.Fatalf("%s: %d bytes, want %d", c.path, len(got), 2*len(vals))
		}
		for i, v := range vals {
			g, w := binary.LittleEndian.Uint16(got[2*i:]), c.conv(v)
			if v != v { // NaN: any NaN will do
				if !isHalfNaN(g, c.path == bf) {
					t.Errorf("%s: NaN encoded as %#04x", filepath.Base(c.path), g)
				}
				continue
			}
			if g != w {
				t.Fatalf("%s: %g (%#08x): Python %#04x, Go %#04x", filepath.Base(c.path), v, math.Float32bits(v), g, w)
			}
		}
	}
}

func isHalfNaN(h uint16, bf16 bool) bool {
	if bf16 {
		return h&0x7F80 == 0x7F80 && h&0x7F != 0
	}
	return h&0x7C00 == 0x7C00 && h&0x3FF != 0
}
