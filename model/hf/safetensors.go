package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"

	"ndb/model/modelfile"
)

// DType is a safetensors element type this package reads and writes.
type DType string

// The element types: F32 is exact; BF16 and F16 halve the size (rounded to
// nearest even) for GPU use.
const (
	F32  DType = "F32"
	BF16 DType = "BF16"
	F16  DType = "F16"
)

// ParseDType reads "f32", "bf16" or "f16" (any case, also torch's names).
func ParseDType(s string) (DType, error) {
	switch s {
	case "f32", "F32", "float32", "fp32":
		return F32, nil
	case "bf16", "BF16", "bfloat16":
		return BF16, nil
	case "f16", "F16", "float16", "fp16":
		return F16, nil
	}
	return "", fmt.Errorf("unknown dtype %q (want f32, bf16 or f16)", s)
}

// Size is the bytes per element.
func (d DType) Size() int {
	if d == F32 {
		return 4
	}
	return 2
}

// torchName is config.json's torch_dtype for d.
func (d DType) torchName() string {
	return map[DType]string{F32: "float32", BF16: "bfloat16", F16: "float16"}[d]
}

// Tensor is one named tensor of a safetensors file, as float32.
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32
}

type tensorHeader struct {
	DType       DType    `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// encode returns the tensor's bytes as dtype d, little-endian.
func encode(data []float32, d DType) []byte {
	switch d {
	case BF16:
		b := make([]byte, 2*len(data))
		for i, f := range data {
			binary.LittleEndian.PutUint16(b[2*i:], modelfile.F32ToBF16(f))
		}
		return b
	case F16:
		b := make([]byte, 2*len(data))
		for i, f := range data {
			binary.LittleEndian.PutUint16(b[2*i:], F32ToF16(f))
		}
		return b
	}
	return modelfile.FloatBytes(data)
}

func decode(b []byte, d DType) []float32 {
	switch d {
	case BF16:
		f := make([]float32, len(b)/2)
		for i := range f {
			f[i] = modelfile.BF16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return f
	case F16:
		f := make([]float32, len(b)/2)
		for i := range f {
			f[i] = F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
		return f
	}
	return modelfile.BytesFloats(b)
}

// WriteSafetensors writes tensors (in the given order) to path as dtype d:
// an 8-byte little-endian header length, the JSON header (padded with spaces
// to a multiple of 8, as the reference implementation does) and the data.
// meta goes into "__metadata__" (transformers wants {"format": "pt"}).
func WriteSafetensors(path string, tensors []Tensor, d DType, meta map[string]string) error {
	header := make(map[string]any, len(tensors)+1)
	if meta != nil {
		header["__metadata__"] = meta
	}
	var off int64
	for _, t := range tensors {
		n := int64(len(t.Data) * d.Size())
		if want := product(t.Shape); want != len(t.Data) {
			return fmt.Errorf("safetensors: %s has %d values for shape %v", t.Name, len(t.Data), t.Shape)
		}
		header[t.Name] = tensorHeader{DType: d, Shape: t.Shape, DataOffsets: [2]int64{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	if pad := (8 - len(h)%8) % 8; pad > 0 {
		h = append(h, bytes.Repeat([]byte(" "), pad)...)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(h)))
	_, err = f.Write(lenBuf[:])
	if err == nil {
		_, err = f.Write(h)
	}
	for _, t := range tensors {
		if err == nil {
			_, err = f.Write(encode(t.Data, d))
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func product(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// SafetensorsFile is a read safetensors file: its tensors converted to
// float32, in file order, and its metadata.
type SafetensorsFile struct {
	Tensors []Tensor
	DTypes  map[string]DType // each tensor's stored type
	Meta    map[string]string
}

// ReadSafetensors reads an F32, BF16 or F16 safetensors file. A header that
// does not parse, a tensor outside the data or of the wrong size, or another
// dtype is an error.
func ReadSafetensors(path string) (*SafetensorsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSafetensors(data, path)
}

// ParseSafetensors reads a safetensors file's bytes; name is used in errors.
func ParseSafetensors(data []byte, name string) (*SafetensorsFile, error) {
	path := name
	fail := func(format string, args ...any) error {
		return fmt.Errorf("safetensors %s: %s", path, fmt.Sprintf(format, args...))
	}
	if len(data) < 8 {
		return nil, fail("%d bytes, too short", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) {
		return nil, fail("header of %d bytes, file has %d (truncated?)", n, len(data))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &raw); err != nil {
		return nil, fail("header: %v", err)
	}
	body := data[8+n:]
	out := &SafetensorsFile{DTypes: map[string]DType{}}
	type placed struct {
		Tensor
		begin int64
	}
	var ts []placed
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &out.Meta); err != nil {
				return nil, fail("metadata: %v", err)
			}
			continue
		}
		var h tensorHeader
		if err := json.Unmarshal(msg, &h); err != nil {
			return nil, fail("tensor %s: %v", name, err)
		}
		if h.DType != F32 && h.DType != BF16 && h.DType != F16 {
			return nil, fail("tensor %s has dtype %s; ndb reads F32, BF16 and F16", name, h.DType)
		}
		b, e := h.DataOffsets[0], h.DataOffsets[1]
		if b < 0 || e < b || e > int64(len(body)) {
			return nil, fail("tensor %s at [%d, %d) lies outside the %d data bytes (truncated?)", name, b, e, len(body))
		}
		elems := int64(1)
		for _, s := range h.Shape {
			if s < 0 || (s > 0 && elems > (e-b)/int64(s)) {
				return nil, fail("tensor %s has shape %v, too large for its %d bytes", name, h.Shape, e-b)
			}
			elems *= int64(s)
		}
		if elems*int64(h.DType.Size()) != e-b {
			return nil, fail("tensor %s: shape %v of %s needs %d bytes, has %d", name, h.Shape, h.DType, product(h.Shape)*h.DType.Size(), e-b)
		}
		ts = append(ts, placed{Tensor{Name: name, Shape: h.Shape, Data: decode(body[b:e], h.DType)}, b})
		out.DTypes[name] = h.DType
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].begin < ts[j].begin })
	for _, t := range ts {
		out.Tensors = append(out.Tensors, t.Tensor)
	}
	return out, nil
}

// F32ToF16 rounds f to IEEE half precision, to nearest even, with
// subnormals; too large values become infinities, NaN stays NaN.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // a half subnormal, or zero
		if e < -10 {
			return sign
		}
		full := mant | 0x800000
		shift := uint(14 - e)
		m := full >> shift
		rem := full & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && m&1 == 1) {
			m++ // may carry into the smallest normal: still the right bits
		}
		return sign | uint16(m)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent, up to infinity: still right
	}
	return sign | uint16(h)
}

// F16ToF32 widens an IEEE half exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}
