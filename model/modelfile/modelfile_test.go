package modelfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"ndb/model/nn"
	"ndb/model/tokenizer"
)

func testTokenizer(t testing.TB) *tokenizer.Tokenizer {
	t.Helper()
	texts := []string{"def f(n):\n    return n + 1\n", "<|frame_sep|><|line_sep|><|arg_sep|>{\"n\": \"5\"}"}
	tok, err := tokenizer.Train(slices.Values(texts), 300, tokenizer.SpecialTokens)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func testModel(t testing.TB, cfg nn.Config, withTrain bool) *Model {
	t.Helper()
	tok := testTokenizer(t)
	cfg.Vocab = tok.VocabSize()
	w := make([]float32, cfg.NumParams())
	for i := range w {
		w[i] = float32(math.Sin(float64(i))) * 0.1
	}
	w[3] = float32(math.NaN()) // any bit pattern survives
	w[4] = float32(math.Inf(-1))
	m := &Model{Config: cfg, Tokenizer: tok, Weights: w, Meta: map[string]string{"source": "test"}}
	if withTrain {
		m.Train = &TrainState{
			Step:   1234,
			Floats: map[string][]float32{"adam_m": slices.Clone(w[:100]), "adam_v": make([]float32, len(w))},
			Blobs:  map[string][]byte{"rng": {1, 2, 3}, "data_position": []byte(`{"shard":2,"offset":77}`), "empty": {}},
		}
	}
	return m
}

var tiny = nn.Configs["tiny"]

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestRoundTrip(t *testing.T) {
	for _, withTrain := range []bool{false, true} {
		m := testModel(t, tiny, withTrain)
		dir := t.TempDir()
		path := filepath.Join(dir, "m.ndb")
		if err := Save(path, m); err != nil {
			t.Fatal(err)
		}
		back, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if back.Config != m.Config || !sameBits(back.Weights, m.Weights) || !reflect.DeepEqual(back.Meta, m.Meta) {
			t.Fatalf("round trip changed config, weights or meta")
		}
		if back.Tokenizer.VocabSize() != m.Tokenizer.VocabSize() ||
			!slices.Equal(back.Tokenizer.Encode("def f(n): return 5"), m.Tokenizer.Encode("def f(n): return 5")) {
			t.Fatal("round trip changed the tokenizer")
		}
		if !withTrain {
			if back.Train != nil {
				t.Fatal("training state appeared from nowhere")
			}
			continue
		}
		if back.Train.Step != 1234 || !reflect.DeepEqual(back.Train.Blobs, m.Train.Blobs) ||
			!sameBits(back.Train.Floats["adam_m"], m.Train.Floats["adam_m"]) || !sameBits(back.Train.Floats["adam_v"], m.Train.Floats["adam_v"]) {
			t.Fatalf("round trip changed the training state: %+v", back.Train.Blobs)
		}
		// Saving over an existing file leaves no temporary files behind.
		if err := Save(path, back); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("folder holds %d entries after two saves, want 1", len(entries))
		}
	}
}

func TestLoadErrors(t *testing.T) {
	m := testModel(t, tiny, true)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ndb")
	if err := Save(good, m); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	headerLen := int(binary.LittleEndian.Uint32(data[12:]))
	flip := func(at int) []byte { d := slices.Clone(data); d[at] ^= 0x40; return d }
	version := slices.Clone(data)
	binary.LittleEndian.PutUint32(version[8:], Version+1)

	cases := []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrNotModelFile, "magic"},
		{"text", []byte("hello, world, not a model"), ErrNotModelFile, "magic"},
		{"magic only", data[:10], ErrTruncated, ""},
		{"cut in header", data[:16+headerLen/2], ErrTruncated, "header"},
		{"cut in weights", data[:len(data)/2], ErrTruncated, "bytes"},
		{"last byte missing", data[:len(data)-1], ErrTruncated, "bytes"},
		{"trailing data", append(slices.Clone(data), 0), ErrCorrupt, "trailing"},
		{"newer version", version, ErrVersion, "version"},
		{"flipped weight bit", flip(len(data) / 2), ErrCorrupt, "checksum"},
		{"flipped checksum bit", flip(len(data) - 1), ErrCorrupt, "checksum"},
		{"broken header", flip(16), ErrCorrupt, "header"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: Load error %v, want %v mentioning %q", c.name, err, c.want, c.msg)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// Saving over a folder names the folder and leaves no temporary file.
	sub := filepath.Join(dir, "folder")
	os.Mkdir(sub, 0o755)
	if err := Save(sub, m); err == nil || !strings.Contains(err.Error(), sub+" is a directory") {
		t.Errorf("Save over a folder: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".folder.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestMismatch(t *testing.T) {
	dir := t.TempDir()
	short := testModel(t, tiny, false)
	short.Weights = short.Weights[:len(short.Weights)-1]
	if err := Save(filepath.Join(dir, "x"), short); !errors.Is(err, ErrMismatch) {
		t.Errorf("Save of short weights: %v, want ErrMismatch", err)
	}
	// A file whose weights do not fit its config (written without the check).
	path := filepath.Join(dir, "short.ndb")
	if err := save(path, short); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "needs") {
		t.Errorf("Load of short weights: %v, want ErrMismatch", err)
	}
	// A config vocab smaller than the tokenizer's.
	small := testModel(t, tiny, false)
	small.Config.Vocab--
	small.Weights = make([]float32, small.Config.NumParams())
	if err := save(path, small); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "vocab") {
		t.Errorf("Load of small vocab: %v, want ErrMismatch about vocab", err)
	}
	// A config that cannot be built.
	bad := testModel(t, tiny, false)
	bad.Config.Heads = 5
	if err := Save(path, bad); !errors.Is(err, ErrMismatch) {
		t.Errorf("Save of a bad config: %v, want ErrMismatch", err)
	}
}

func TestNetwork(t *testing.T) {
	m := testModel(t, tiny, false)
	net, err := m.Network()
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(net.Params, m.Weights) {
		t.Fatal("Network did not copy the weights")
	}
}

// BenchmarkLoad loads the stage-10 size (6.6M parameters) and a 27M one
// (width 512, 8 layers) with each weight type: the file sizes and load times
// behind docs/tokenizer.md's "Model file".
func BenchmarkLoad(b *testing.B) {
	stage10 := nn.Config{Dim: 256, HiddenDim: 688, Layers: 7, Heads: 8, Vocab: 2048, MaxSeq: 2048, RopeTheta: 10000, NormEps: 1e-5}
	wide := stage10
	wide.Dim, wide.HiddenDim, wide.Layers = 512, 1376, 8
	for _, cfg := range []nn.Config{stage10, wide} {
		m := testModel(b, cfg, false)
		m.Config = cfg
		m.Weights = make([]float32, cfg.NumParams())
		for i := range m.Weights {
			m.Weights[i] = float32(math.Sin(float64(i))) / 10
		}
		for _, d := range []DType{F32, BF16, Q8} {
			b.Run(fmt.Sprintf("%.1fM/%s", float64(cfg.NumParams())/1e6, d), func(b *testing.B) {
				m.DType = d
				path := filepath.Join(b.TempDir(), "m.ndb")
				if err := Save(path, m); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					if _, err := Load(path); err != nil {
						b.Fatal(err)
					}
				}
				fi, _ := os.Stat(path)
				b.ReportMetric(float64(fi.Size())/1e6, "MB")
			})
		}
	}
}

// FuzzParse builds files around a fuzzed header and body with a correct
// checksum (random bytes would only ever fail the checksum) and checks that
// Parse returns a valid model or an error, never a panic.
func FuzzParse(f *testing.F) {
	small := nn.Config{Dim: 4, HiddenDim: 8, Layers: 1, Heads: 2, MaxSeq: 8, RopeTheta: 10000, NormEps: 1e-5}
	for _, d := range []DType{F32, BF16, Q8} {
		m := testModel(f, small, d == F32)
		m.DType, m.Weights[3], m.Weights[4] = d, 1, 2 // q8 stores finite weights only
		path := filepath.Join(f.TempDir(), "m.ndb")
		if err := Save(path, m); err != nil {
			f.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		headerLen := binary.LittleEndian.Uint32(data[12:])
		f.Add(data[16:16+headerLen], data[16+headerLen:len(data)-sumSize])
	}
	f.Add([]byte(`{"config":{},"params":0,"file_size":0,"sections":[{"name":"weights","kind":"f32","offset":64,"size":9223372036854775807}]}`), []byte{})
	f.Fuzz(func(t *testing.T, header, body []byte) {
		file := append([]byte(Magic), 0, 0, 0, 0, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(file[8:], Version)
		binary.LittleEndian.PutUint32(file[12:], uint32(len(header)))
		file = append(append(file, header...), body...)
		sum := sha256Sum(file)
		file = append(file, sum[:]...)
		got, err := Parse(file)
		if err == nil {
			if verr := got.Validate(); verr != nil {
				t.Fatalf("Parse accepted an invalid model: %v", verr)
			}
		}
	})
}
