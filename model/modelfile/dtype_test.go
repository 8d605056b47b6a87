package modelfile

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// finiteModel is testModel without its NaN and infinity, which q8 refuses.
func finiteModel(t testing.TB) *Model {
	m := testModel(t, tiny, false)
	m.Weights[3], m.Weights[4] = 0.25, -3
	return m
}

// TestDTypeRoundTrip saves each weight type and checks what comes back:
// bf16 is the nearest-even rounding of every weight, q8 is within half a
// step of its row's scale (vectors exact), and the file shrinks as it should.
func TestDTypeRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := finiteModel(t)
	sizes := map[DType]int64{}
	for _, d := range []DType{F32, BF16, Q8} {
		m.DType = d
		path := filepath.Join(dir, string(d)+".ndb")
		if err := Save(path, m); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		sizes[d] = fi.Size()
		data, _ := os.ReadFile(path)
		if v, want := binary.LittleEndian.Uint32(data[8:]), map[DType]uint32{F32: 1, BF16: 2, Q8: 2}[d]; v != want {
			t.Errorf("%s: file version %d, want %d", d, v, want)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if back.DType != d || back.Config != m.Config {
			t.Fatalf("%s: came back as %q, config %+v", d, back.DType, back.Config)
		}
		switch d {
		case F32:
			if !sameBits(back.Weights, m.Weights) {
				t.Error("f32 changed a weight")
			}
		case BF16:
			for i, w := range m.Weights {
				if want := BF16ToF32(F32ToBF16(w)); back.Weights[i] != want {
					t.Fatalf("bf16 weight %d: %v -> %v, want %v", i, w, back.Weights[i], want)
				}
			}
		case Q8:
			for _, tn := range m.Config.Layout() {
				w, got := m.Weights[tn.Offset:tn.Offset+tn.Size], back.Weights[tn.Offset:tn.Offset+tn.Size]
				cols := tn.Size
				if len(tn.Shape) == 2 {
					cols = tn.Shape[1]
				} else if !sameBits(w, got) {
					t.Fatalf("q8 changed vector %s", tn.Name)
				}
				for r := 0; r < tn.Size/cols; r++ {
					var top float64
					for _, v := range w[r*cols : (r+1)*cols] {
						top = max(top, math.Abs(float64(v)))
					}
					for c := r * cols; c < (r+1)*cols; c++ {
						if e := math.Abs(float64(got[c] - w[c])); e > top/127/2*1.0001 {
							t.Fatalf("q8 %s row %d: %v -> %v, error %g over half a step of %g", tn.Name, r, w[c], got[c], e, top/127)
						}
					}
				}
			}
		}
		// Saving what was loaded keeps the type (and the weights: the
		// rounding is idempotent).
		again := filepath.Join(dir, "again.ndb")
		if err := Save(again, back); err != nil {
			t.Fatal(err)
		}
		if b2, err := Load(again); err != nil || b2.DType != d || !sameBits(b2.Weights, back.Weights) {
			t.Errorf("%s: saving a loaded model changed it (%v)", d, err)
		}
	}
	// The tokenizer and header are the same in all three; the weights are
	// 4, 2 and a little over 1 bytes each.
	n := float64(len(m.Weights))
	if got := float64(sizes[F32]-sizes[BF16]) / n; math.Abs(got-2) > 0.05 {
		t.Errorf("bf16 saves %.3f bytes a weight, want 2", got)
	}
	if got := float64(sizes[F32]-sizes[Q8]) / n; got < 2.8 || got > 3 {
		t.Errorf("q8 saves %.3f bytes a weight, want 2.8-3", got)
	}
}

func TestDTypeErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.ndb")
	cases := []struct {
		name string
		edit func(m *Model)
		msg  string
	}{
		{"unknown type", func(m *Model) { m.DType = "f16" }, `unknown weight type "f16"`},
		{"q8 of a NaN", func(m *Model) { m.DType, m.Weights[7] = Q8, float32(math.NaN()) }, "weight 7 is NaN"},
		{"q8 of an infinity", func(m *Model) { m.DType, m.Weights[9] = Q8, float32(math.Inf(1)) }, "weight 9 is +Inf"},
		{"bf16 with training state", func(m *Model) {
			m.DType, m.Train = BF16, &TrainState{Step: 1}
		}, "training state keeps its weights in f32"},
	}
	for _, c := range cases {
		m := finiteModel(t)
		c.edit(m)
		if err := Save(path, m); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Save error %v, want one mentioning %q", c.name, err, c.msg)
		}
	}

	// Files this package would not write: a version-1 file with bf16
	// weights, q8 weights of the wrong size, a version from the future.
	m := finiteModel(t)
	m.DType = BF16
	if err := Save(path, m); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	v1 := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(v1[8:], 1)
	v1 = resum(v1)
	if _, err := Parse(v1); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `section "weights" of kind "bf16"`) {
		t.Errorf("version 1 with bf16 weights: %v", err)
	}
	future := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(future[8:], Version+1)
	if _, err := Parse(resum(future)); !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "versions 1 to 2") {
		t.Errorf("newer version: %v", err)
	}
	// q8 weights saved for one config, read under a config with one more
	// layer (written without the check).
	m = finiteModel(t)
	m.DType = Q8
	raw, err := encodeWeights(m.Weights, Q8, m.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Config
	cfg.Layers++
	if _, err := decodeWeights(raw, Q8, cfg); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "q8 weights of") {
		t.Errorf("q8 of another config: %v", err)
	}
	cfg.Layers = 1 << 40 // sizes alone say no: no loop, no allocation
	if _, err := decodeWeights(raw, Q8, cfg); !errors.Is(err, ErrMismatch) {
		t.Errorf("q8 of a huge config: %v", err)
	}
}

// resum rewrites the checksum of a file edited in place.
func resum(data []byte) []byte {
	sum := sha256Sum(data[:len(data)-sumSize])
	copy(data[len(data)-sumSize:], sum[:])
	return data
}
