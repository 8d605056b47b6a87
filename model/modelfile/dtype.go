package modelfile

import (
	"encoding/binary"
	"fmt"
	"math"

	"ndb/model/nn"
)

// DType is how a model file stores its weights. Load always widens them to
// float32, so inference and training see the same kind of model; a smaller
// type makes a smaller file (and embedded binary) for a little precision.
type DType string

const (
	// F32 stores every weight exactly (4 bytes each): the only type a file
	// with training state may use.
	F32 DType = "f32"
	// BF16 rounds every weight to bfloat16, to nearest even (2 bytes): the
	// precision the GPU trainer computes in.
	BF16 DType = "bf16"
	// Q8 stores each row of a matrix as int8 with one float32 scale (its
	// largest magnitude / 127), a little over 1 byte a weight; vectors (the
	// norms' weights) stay float32.
	Q8 DType = "q8"
)

// ParseDType reads "f32", "bf16" or "q8"; "" is F32.
func ParseDType(s string) (DType, error) {
	switch d := DType(s); d {
	case "":
		return F32, nil
	case F32, BF16, Q8:
		return d, nil
	}
	return "", fmt.Errorf("unknown weight type %q (want f32, bf16 or q8)", s)
}

// F32ToBF16 rounds f to bfloat16, to nearest even; NaN stays NaN.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToF32 widens a bfloat16 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// encodeWeights writes w as d; cfg gives Q8 its rows. Q8 refuses a NaN or
// an infinity, which no scale can hold.
func encodeWeights(w []float32, d DType, cfg nn.Config) ([]byte, error) {
	switch d {
	case BF16:
		b := make([]byte, 2*len(w))
		for i, f := range w {
			binary.LittleEndian.PutUint16(b[2*i:], F32ToBF16(f))
		}
		return b, nil
	case Q8:
		for i, v := range w {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("weight %d is %v: q8 stores finite weights only (use f32 or bf16)", i, v)
			}
		}
		b := make([]byte, 0, int(q8Size(cfg)))
		for _, t := range cfg.Layout() {
			x := w[t.Offset : t.Offset+t.Size]
			if len(t.Shape) != 2 {
				b = append(b, floatBytes(x)...)
				continue
			}
			rows, cols := t.Shape[0], t.Shape[1]
			scales := make([]float32, rows)
			q := make([]byte, rows*cols)
			for r := range rows {
				row := x[r*cols : (r+1)*cols]
				var top float32
				for _, v := range row {
					top = max(top, float32(math.Abs(float64(v))))
				}
				if top == 0 {
					continue
				}
				scales[r] = top / 127
				for c, v := range row {
					q[r*cols+c] = byte(int8(math.Round(float64(v / scales[r]))))
				}
			}
			b = append(b, floatBytes(scales)...)
			b = append(b, q...)
		}
		return b, nil
	}
	return floatBytes(w), nil
}

// decodeWeights widens a weights section of kind d back to float32. It
// reports a section whose size does not fit the config.
func decodeWeights(raw []byte, d DType, cfg nn.Config) ([]float32, error) {
	switch d {
	case F32: // its length was checked with the other float sections
		return bytesFloats(raw), nil
	case BF16:
		if len(raw)%2 != 0 {
			return nil, fmt.Errorf("%w: bf16 weights of %d bytes", ErrCorrupt, len(raw))
		}
		w := make([]float32, len(raw)/2)
		for i := range w {
			w[i] = BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		return w, nil
	case Q8:
		if err := cfg.Validate(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMismatch, err)
		}
		if want := q8Size(cfg); float64(len(raw)) != want {
			return nil, fmt.Errorf("%w: q8 weights of %d bytes, config %+v needs %.0f", ErrMismatch, len(raw), cfg, want)
		}
		w := make([]float32, cfg.NumParams())
		for _, t := range cfg.Layout() {
			x := w[t.Offset : t.Offset+t.Size]
			if len(t.Shape) != 2 {
				copy(x, bytesFloats(raw[:4*t.Size]))
				raw = raw[4*t.Size:]
				continue
			}
			rows, cols := t.Shape[0], t.Shape[1]
			scales := bytesFloats(raw[:4*rows])
			q := raw[4*rows : 4*rows+rows*cols]
			raw = raw[4*rows+rows*cols:]
			for r, s := range scales {
				for c := range cols {
					x[r*cols+c] = s * float32(int8(q[r*cols+c]))
				}
			}
		}
		return w, nil
	}
	return nil, fmt.Errorf("%w: weights of unknown type %q", ErrCorrupt, d)
}

// q8Size is the bytes of cfg's weights stored as Q8: every weight one byte,
// a float32 scale per matrix row, vectors 4 bytes a weight. It is computed in
// float64 from the sizes alone, so a hostile header cannot make it overflow
// or loop (it is exact below 2^53 and larger than any file above).
func q8Size(cfg nn.Config) float64 {
	C, F, V, L := float64(cfg.Dim), float64(cfg.HiddenDim), float64(cfg.Vocab), float64(cfg.Layers)
	matrices := 2*V*C + L*(4*C*C+3*F*C)
	rows := 2*V + L*(4*C+2*F+C)
	vectors := L*2*C + C
	return matrices + 4*rows + 4*vectors
}
