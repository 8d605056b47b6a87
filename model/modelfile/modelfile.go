// Package modelfile is ndb's model file: one file that holds a model's config,
// tokenizer and weights, optionally the training state needed to resume
// exactly, with a format version and a checksum.
//
// Layout (all integers little-endian):
//
//	0   magic "NDBMODEL" (8 bytes)
//	8   uint32 format version (Version)
//	12  uint32 header length H
//	16  header: H bytes of JSON (config, sections, training step, metadata)
//	    zero padding to a multiple of 64
//	    sections, each starting at a multiple of 64: the tokenizer (its JSON),
//	    the weights (nn.Config.Layout order: float32, or bfloat16 or int8
//	    rows with a scale each, see DType), training sections
//	end SHA-256 of every byte before it (32 bytes)
//
// Load reads the file once, checks magic, version, length, checksum and
// that the weights fit the config, and copies the floats out; a 6M-parameter
// model loads in tens of milliseconds.
package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"unsafe"

	"ndb/model/nn"
	"ndb/model/tokenizer"
)

// Magic starts every model file; Version is the newest format version this
// package writes and reads. Version 2 added weights stored as BF16 or Q8;
// files with float32 weights are still written as version 1, so that an
// older ndb reads them.
const (
	Magic   = "NDBMODEL"
	Version = 2
)

const (
	prefixSize = 16
	align      = 64
	sumSize    = sha256.Size
)

// Model is everything one model file holds.
type Model struct {
	Config    nn.Config
	Tokenizer *tokenizer.Tokenizer
	Weights   []float32         // Config.NumParams() floats, placed by Config.Layout()
	DType     DType             // how Save stores Weights ("": F32); Load sets the file's
	Train     *TrainState       // nil when the file holds no training state
	Meta      map[string]string // free-form notes (source, created, ...); may be nil
}

// TrainState is what a trainer needs to resume exactly. The trainer decides
// what goes in it; this package only stores it.
type TrainState struct {
	Step   int64
	Floats map[string][]float32 // e.g. AdamW moments, in the weights' layout
	Blobs  map[string][]byte    // e.g. RNG state, data position, schedule
}

// Errors a caller may want to tell apart (match with errors.Is).
var (
	ErrNotModelFile = errors.New("not an ndb model file")
	ErrVersion      = errors.New("unsupported model file version")
	ErrTruncated    = errors.New("model file is truncated")
	ErrCorrupt      = errors.New("model file is corrupt")
	ErrMismatch     = errors.New("model file does not fit its config")
)

// section kinds
const (
	kindJSON  = "json"
	kindF32   = "f32"
	kindBytes = "bytes"
)

type sectionJSON struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"` // bytes
}

type headerJSON struct {
	Config    nn.Config         `json:"config"`
	Params    int64             `json:"params"`
	FileSize  int64             `json:"file_size"`
	TrainStep *int64            `json:"train_step,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
	Sections  []sectionJSON     `json:"sections"`
}

const (
	secTokenizer = "tokenizer"
	secWeights   = "weights"
	trainFloat   = "train.f32."
	trainBlob    = "train.bytes."
)

// Validate reports a model whose parts do not fit together.
func (m *Model) Validate() error {
	if err := m.Config.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrMismatch, err)
	}
	if m.Tokenizer == nil {
		return fmt.Errorf("%w: no tokenizer", ErrMismatch)
	}
	if v := m.Tokenizer.VocabSize(); v > m.Config.Vocab {
		return fmt.Errorf("%w: tokenizer has %d tokens, config vocab_size is %d", ErrMismatch, v, m.Config.Vocab)
	}
	if want := m.Config.NumParams(); len(m.Weights) != want {
		return fmt.Errorf("%w: %d weights, config %+v needs %d", ErrMismatch, len(m.Weights), m.Config, want)
	}
	d, err := ParseDType(string(m.DType))
	if err != nil {
		return err
	}
	if d != F32 && m.Train != nil {
		return fmt.Errorf("a model file with training state keeps its weights in f32, not %s (drop the state to store them smaller)", d)
	}
	return nil
}

// Network returns an nn.Model holding a copy of the weights.
func (m *Model) Network() (*nn.Model, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	net, err := nn.New(m.Config, 0)
	if err != nil {
		return nil, err
	}
	copy(net.Params, m.Weights)
	return net, nil
}

// Save writes m to path atomically: a temporary file in the same folder,
// synced, then renamed over path.
func Save(path string, m *Model) error {
	if err := m.Validate(); err != nil {
		return err
	}
	// The rename would fail only after the whole file was written, with
	// "file exists" naming the temporary file.
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a model file path", path)
	}
	return save(path, m)
}

// save writes m without validating it (tests write bad files with it).
func save(path string, m *Model) error {
	tokJSON, err := m.Tokenizer.MarshalJSON()
	if err != nil {
		return err
	}
	dtype, version := F32, uint32(1)
	if m.DType != "" && m.DType != F32 {
		dtype, version = m.DType, Version
	}
	weights, err := encodeWeights(m.Weights, dtype, m.Config)
	if err != nil {
		return err
	}
	type payload struct {
		sec   sectionJSON
		bytes []byte
	}
	payloads := []payload{
		{sectionJSON{Name: secTokenizer, Kind: kindJSON}, tokJSON},
		{sectionJSON{Name: secWeights, Kind: string(dtype)}, weights},
	}
	h := headerJSON{Config: m.Config, Params: int64(len(m.Weights)), Meta: m.Meta}
	if m.Train != nil {
		step := m.Train.Step
		h.TrainStep = &step
		for _, name := range slices.Sorted(maps.Keys(m.Train.Floats)) {
			payloads = append(payloads, payload{sectionJSON{Name: trainFloat + name, Kind: kindF32}, floatBytes(m.Train.Floats[name])})
		}
		for _, name := range slices.Sorted(maps.Keys(m.Train.Blobs)) {
			payloads = append(payloads, payload{sectionJSON{Name: trainBlob + name, Kind: kindBytes}, m.Train.Blobs[name]})
		}
	}
	// Offsets depend on the header's length, which depends on the offsets'
	// digits: lay out until the length is stable.
	var header []byte
	for headerLen := -1; ; {
		off := roundUp(int64(prefixSize + max(headerLen, 0)))
		h.Sections = h.Sections[:0]
		for _, p := range payloads {
			p.sec.Offset, p.sec.Size = off, int64(len(p.bytes))
			h.Sections = append(h.Sections, p.sec)
			off = roundUp(off + p.sec.Size)
		}
		h.FileSize = off + sumSize
		if header, err = json.Marshal(h); err != nil {
			return err
		}
		if len(header) == headerLen {
			break
		}
		headerLen = len(header)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	sum := sha256.New()
	w := &countingWriter{file: tmp, sum: sum}
	var prefix [prefixSize]byte
	copy(prefix[:], Magic)
	binary.LittleEndian.PutUint32(prefix[8:], version)
	binary.LittleEndian.PutUint32(prefix[12:], uint32(len(header)))
	w.write(prefix[:])
	w.write(header)
	for i, p := range payloads {
		w.pad(h.Sections[i].Offset)
		w.write(p.bytes)
	}
	w.pad(h.FileSize - sumSize)
	if w.err == nil {
		_, w.err = tmp.Write(sum.Sum(nil))
	}
	if w.err == nil {
		w.err = tmp.Chmod(0o644) // CreateTemp makes 0600 files
	}
	if w.err == nil {
		w.err = tmp.Sync()
	}
	if err := tmp.Close(); w.err == nil {
		w.err = err
	}
	if w.err != nil {
		return fmt.Errorf("write %s: %w", path, w.err)
	}
	return os.Rename(tmp.Name(), path)
}

type countingWriter struct {
	file interface{ Write([]byte) (int, error) }
	sum  interface{ Write([]byte) (int, error) }
	n    int64
	err  error
}

func (w *countingWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	w.sum.Write(b)
	_, w.err = w.file.Write(b)
	w.n += int64(len(b))
}

func (w *countingWriter) pad(to int64) {
	if to > w.n {
		w.write(make([]byte, to-w.n))
	}
}

func roundUp(n int64) int64 { return (n + align - 1) / align * align }

// Load reads a model file written by Save. A file that is not a model file,
// has another version, is truncated, fails its checksum or whose weights do
// not fit its config gives an error naming the problem (errors.Is with
// ErrNotModelFile, ErrVersion, ErrTruncated, ErrCorrupt, ErrMismatch).
func Load(path string) (*Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Parse reads a model file's bytes (see Load).
func Parse(data []byte) (*Model, error) {
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w (no %q magic)", ErrNotModelFile, Magic)
	}
	if len(data) < prefixSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTruncated, len(data))
	}
	version := binary.LittleEndian.Uint32(data[8:])
	if version < 1 || version > Version {
		return nil, fmt.Errorf("%w: file version %d, this ndb reads versions 1 to %d", ErrVersion, version, Version)
	}
	headerLen := int64(binary.LittleEndian.Uint32(data[12:]))
	if prefixSize+headerLen > int64(len(data)) {
		return nil, fmt.Errorf("%w: header of %d bytes, file has %d", ErrTruncated, headerLen, len(data))
	}
	var h headerJSON
	dec := json.NewDecoder(bytes.NewReader(data[prefixSize : prefixSize+headerLen]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrCorrupt, err)
	}
	if h.FileSize != int64(len(data)) {
		if h.FileSize > int64(len(data)) {
			return nil, fmt.Errorf("%w: header says %d bytes, file has %d", ErrTruncated, h.FileSize, len(data))
		}
		return nil, fmt.Errorf("%w: header says %d bytes, file has %d (trailing data)", ErrCorrupt, h.FileSize, len(data))
	}
	body := data[:len(data)-sumSize]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], data[len(body):]) {
		return nil, fmt.Errorf("%w: SHA-256 checksum mismatch", ErrCorrupt)
	}

	var err error
	m := &Model{Config: h.Config, Meta: h.Meta}
	if h.TrainStep != nil {
		m.Train = &TrainState{Step: *h.TrainStep, Floats: map[string][]float32{}, Blobs: map[string][]byte{}}
	}
	for _, s := range h.Sections {
		if s.Offset < prefixSize+headerLen || s.Offset > int64(len(body)) || s.Size < 0 || s.Size > int64(len(body))-s.Offset {
			return nil, fmt.Errorf("%w: section %q at %d+%d lies outside the file", ErrCorrupt, s.Name, s.Offset, s.Size)
		}
		raw := body[s.Offset : s.Offset+s.Size]
		want := map[string]string{secTokenizer: kindJSON, secWeights: kindF32}[s.Name]
		if s.Name == secWeights && version >= 2 && (s.Kind == string(BF16) || s.Kind == string(Q8)) {
			want = s.Kind
		}
		switch {
		case len(s.Name) > len(trainFloat) && s.Name[:len(trainFloat)] == trainFloat:
			want = kindF32
		case len(s.Name) > len(trainBlob) && s.Name[:len(trainBlob)] == trainBlob:
			want = kindBytes
		}
		if want == "" || s.Kind != want {
			return nil, fmt.Errorf("%w: unknown section %q of kind %q", ErrCorrupt, s.Name, s.Kind)
		}
		if s.Kind == kindF32 && s.Size%4 != 0 {
			return nil, fmt.Errorf("%w: float section %q has %d bytes", ErrCorrupt, s.Name, s.Size)
		}
		isTrain := s.Name != secTokenizer && s.Name != secWeights
		if isTrain && m.Train == nil {
			return nil, fmt.Errorf("%w: training section %q without a training step", ErrCorrupt, s.Name)
		}
		switch {
		case s.Name == secTokenizer:
			if m.Tokenizer, err = tokenizer.Parse(raw); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
		case s.Name == secWeights:
			m.DType = DType(s.Kind)
			if m.Weights, err = decodeWeights(raw, m.DType, h.Config); err != nil {
				return nil, err
			}
		case s.Kind == kindF32:
			m.Train.Floats[s.Name[len(trainFloat):]] = bytesFloats(raw)
		default:
			m.Train.Blobs[s.Name[len(trainBlob):]] = slices.Clone(raw)
		}
	}
	if m.Weights == nil || m.Tokenizer == nil {
		return nil, fmt.Errorf("%w: no weights or no tokenizer section", ErrCorrupt)
	}
	if int64(len(m.Weights)) != h.Params {
		return nil, fmt.Errorf("%w: header says %d weights, section has %d", ErrCorrupt, h.Params, len(m.Weights))
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// littleEndian is true on hosts where a float32's memory is its
// little-endian encoding, so floats are copied as bytes.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
	}
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func bytesFloats(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	if littleEndian && len(f) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), len(b)), b)
		return f
	}
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// FloatBytes returns the little-endian bytes of f (a view of f's memory on
// little-endian hosts: do not modify it). The HF export uses it too.
func FloatBytes(f []float32) []byte { return floatBytes(f) }

// BytesFloats decodes little-endian float32 bytes into a new slice.
func BytesFloats(b []byte) []float32 { return bytesFloats(b) }

func sha256Sum(b []byte) [sumSize]byte { return sha256.Sum256(b) }
