package hf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"ndb/model/defaultmodel"
	"ndb/model/modelfile"
	"ndb/model/tokenizer"
)

// ggufFile is what readGGUF parses: a reader written from the GGUF spec
// (ggml/docs/gguf.md), independent of the writer's code paths.
type ggufFile struct {
	version uint32
	kv      map[string]any
	order   []string // keys in file order
	tensors map[string]ggufRead
	names   []string // tensors in file order
}

type ggufRead struct {
	dims []uint64
	typ  uint32
	data []float32
}

type ggufReader struct {
	b   []byte
	off int
	err error
}

func (r *ggufReader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("truncated at byte %d (need %d more)", r.off, n)
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *ggufReader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *ggufReader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *ggufReader) str() string { return string(r.take(r.u64())) }

func (r *ggufReader) value(typ uint32) any {
	switch typ {
	case ggufUint32:
		return r.u32()
	case ggufInt32:
		return int32(r.u32())
	case ggufFloat32:
		return math.Float32frombits(r.u32())
	case ggufUint64:
		return r.u64()
	case ggufBool:
		b := r.take(1)
		if b == nil {
			return nil
		}
		if b[0] > 1 {
			r.err = fmt.Errorf("bool %d", b[0])
		}
		return b[0] == 1
	case ggufString:
		return r.str()
	case ggufArray:
		et, n := r.u32(), r.u64()
		if n > uint64(len(r.b)) { // every element takes at least a byte
			r.err = fmt.Errorf("array of %d elements in a %d-byte file", n, len(r.b))
			return nil
		}
		switch et {
		case ggufString:
			out := make([]string, 0, n)
			for range n {
				out = append(out, r.str())
			}
			return out
		case ggufInt32:
			out := make([]int32, 0, n)
			for range n {
				out = append(out, int32(r.u32()))
			}
			return out
		}
		r.err = fmt.Errorf("array of type %d", et)
	default:
		r.err = fmt.Errorf("value type %d", typ)
	}
	return nil
}

func readGGUF(b []byte) (*ggufFile, error) {
	r := &ggufReader{b: b}
	if string(r.take(4)) != GGUFMagic {
		return nil, errors.New("no GGUF magic")
	}
	f := &ggufFile{version: r.u32(), kv: map[string]any{}, tensors: map[string]ggufRead{}}
	nt, nkv := r.u64(), r.u64()
	if nt > uint64(len(b)) || nkv > uint64(len(b)) {
		return nil, fmt.Errorf("%d tensors, %d keys in %d bytes", nt, nkv, len(b))
	}
	for range nkv {
		k := r.str()
		if _, dup := f.kv[k]; dup {
			return nil, fmt.Errorf("key %q twice", k)
		}
		f.kv[k] = r.value(r.u32())
		f.order = append(f.order, k)
	}
	type info struct {
		name string
		dims []uint64
		typ  uint32
		off  uint64
	}
	var infos []info
	for range nt {
		in := info{name: r.str()}
		nd := r.u32()
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("tensor %q has %d dims", in.name, nd)
		}
		for range nd {
			in.dims = append(in.dims, r.u64())
		}
		in.typ, in.off = r.u32(), r.u64()
		infos = append(infos, in)
	}
	if r.err != nil {
		return nil, r.err
	}
	align := uint64(32)
	if a, ok := f.kv["general.alignment"].(uint32); ok {
		align = uint64(a)
	}
	start := (uint64(r.off) + align - 1) / align * align
	for _, in := range infos {
		n := uint64(1)
		for _, d := range in.dims {
			if d == 0 || d > 1<<32 || n*d > 1<<40 {
				return nil, fmt.Errorf("tensor %q dims %v", in.name, in.dims)
			}
			n *= d
		}
		size := map[uint32]uint64{ggmlF32: 4, ggmlF16: 2, ggmlBF16: 2}[in.typ]
		if size == 0 {
			return nil, fmt.Errorf("tensor %q type %d", in.name, in.typ)
		}
		if in.off%align != 0 || start+in.off+n*size > uint64(len(b)) {
			return nil, fmt.Errorf("tensor %q at offset %d (%d bytes) outside the %d-byte file or unaligned", in.name, in.off, n*size, len(b))
		}
		raw := b[start+in.off : start+in.off+n*size]
		data := make([]float32, n)
		for i := range data {
			switch in.typ {
			case ggmlF32:
				data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			case ggmlF16:
				data[i] = F16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
			case ggmlBF16:
				data[i] = modelfile.BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
			}
		}
		if _, dup := f.tensors[in.name]; dup {
			return nil, fmt.Errorf("tensor %q twice", in.name)
		}
		f.tensors[in.name] = ggufRead{dims: in.dims, typ: in.typ, data: data}
		f.names = append(f.names, in.name)
	}
	return f, nil
}

func writeGGUFBytes(t testing.TB, m *modelfile.Model, d DType) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteGGUF(&buf, m, GGUFOptions{DType: d}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGGUFRoundTrip writes a model with random weights everywhere and a
// padded vocabulary, reads the file back with the spec-based reader, and
// checks every tensor (q and k with the permutation undone) and the
// metadata llama.cpp reads.
func TestGGUFRoundTrip(t *testing.T) {
	m := testModel(t)
	cfg := m.Config
	for _, tc := range []struct {
		d       DType
		fileTyp uint32
		matTyp  uint32
		round   func(float32) float32
	}{
		{F32, 0, ggmlF32, func(f float32) float32 { return f }},
		{F16, 1, ggmlF16, func(f float32) float32 { return F16ToF32(F32ToF16(f)) }},
		{BF16, 32, ggmlBF16, func(f float32) float32 { return modelfile.BF16ToF32(modelfile.F32ToBF16(f)) }},
	} {
		t.Run(string(tc.d), func(t *testing.T) {
			f, err := readGGUF(writeGGUFBytes(t, m, tc.d))
			if err != nil {
				t.Fatal(err)
			}
			if f.version != 3 {
				t.Errorf("version %d", f.version)
			}
			bos := uint32(m.Tokenizer.MustSpecialID(tokenizer.BeginOfText))
			eos := uint32(m.Tokenizer.MustSpecialID(tokenizer.EndOfText))
			want := map[string]any{
				"general.architecture":                   "llama",
				"general.name":                           "ndb",
				"general.file_type":                      tc.fileTyp,
				"general.alignment":                      uint32(32),
				"llama.vocab_size":                       uint32(cfg.Vocab),
				"llama.context_length":                   uint32(256),
				"llama.embedding_length":                 uint32(32),
				"llama.block_count":                      uint32(2),
				"llama.feed_forward_length":              uint32(96),
				"llama.rope.dimension_count":             uint32(8),
				"llama.attention.head_count":             uint32(4),
				"llama.attention.head_count_kv":          uint32(4),
				"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
				"llama.rope.freq_base":                   float32(10000),
				"tokenizer.ggml.model":                   "gpt2",
				"tokenizer.ggml.pre":                     "gpt-2",
				"tokenizer.ggml.bos_token_id":            bos,
				"tokenizer.ggml.eos_token_id":            eos,
				"tokenizer.ggml.add_bos_token":           false,
				"tokenizer.ggml.add_eos_token":           false,
			}
			for k, v := range want {
				if f.kv[k] != v {
					t.Errorf("%s = %#v, want %#v", k, f.kv[k], v)
				}
			}
			if f.order[0] != "general.architecture" {
				t.Errorf("first key %q (llama.cpp reads the architecture first)", f.order[0])
			}
			checkGGUFTokenizer(t, f, m.Tokenizer, cfg.Vocab)

			layout := cfg.Layout()
			if len(f.names) != len(layout) {
				t.Fatalf("%d tensors, want %d", len(f.names), len(layout))
			}
			for i, lt := range layout {
				name, _ := GGUFTensorName(lt.Name)
				if f.names[i] != name {
					t.Errorf("tensor %d is %q, want %q", i, f.names[i], name)
				}
				got := f.tensors[name]
				wantDims := []uint64{uint64(lt.Shape[len(lt.Shape)-1])}
				if len(lt.Shape) == 2 {
					wantDims = append(wantDims, uint64(lt.Shape[0]))
				}
				if !slices.Equal(got.dims, wantDims) {
					t.Errorf("%s dims %v, want %v", name, got.dims, wantDims)
				}
				wantTyp, round := tc.matTyp, tc.round
				if len(lt.Shape) == 1 {
					wantTyp, round = ggmlF32, func(f float32) float32 { return f }
				}
				if got.typ != wantTyp {
					t.Errorf("%s type %d, want %d", name, got.typ, wantTyp)
				}
				data := got.data
				if strings.Contains(name, "attn_q") || strings.Contains(name, "attn_k") {
					if orig := m.Weights[lt.Offset : lt.Offset+lt.Size]; slices.Equal(data, orig) && tc.d == F32 {
						t.Errorf("%s is not permuted", name)
					}
					data = UnpermuteQK(data, cfg.Heads, lt.Shape[1])
				}
				for j, x := range data {
					if w := round(m.Weights[lt.Offset+j]); math.Float32bits(x) != math.Float32bits(w) {
						t.Fatalf("%s[%d] = %v, want %v", name, j, x, w)
					}
				}
			}
		})
	}
}

func checkGGUFTokenizer(t *testing.T, f *ggufFile, tok *tokenizer.Tokenizer, vocab int) {
	t.Helper()
	tokens, _ := f.kv["tokenizer.ggml.tokens"].([]string)
	types, _ := f.kv["tokenizer.ggml.token_type"].([]int32)
	merges, _ := f.kv["tokenizer.ggml.merges"].([]string)
	if len(tokens) != vocab || len(types) != vocab || len(merges) != tok.NumMerges() {
		t.Fatalf("%d tokens, %d types, %d merges; want %d, %d, %d", len(tokens), len(types), len(merges), vocab, vocab, tok.NumMerges())
	}
	// The tokens and merges are tokenizer.json's: rebuilding a tokenizer
	// from them must give the same ids.
	hf, err := tok.HFJSON()
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Model struct {
			Vocab  map[string]int32
			Merges []string
		}
	}
	json.Unmarshal(hf, &j)
	if !slices.Equal(merges, j.Model.Merges) {
		t.Error("merges differ from tokenizer.json's")
	}
	for id := range vocab {
		text, typ := tokens[id], types[id]
		switch {
		case id >= tok.VocabSize():
			if text != fmt.Sprintf("[PAD%d]", id) || typ != GGUFTokenUnused {
				t.Errorf("padding id %d: %q type %d", id, text, typ)
			}
		case tok.IsSpecial(int32(id)):
			s, _ := tok.Token(int32(id))
			wantTyp := int32(GGUFTokenUserDefined)
			if s == tokenizer.BeginOfText || s == tokenizer.EndOfText {
				wantTyp = GGUFTokenControl
			}
			if text != s || typ != wantTyp {
				t.Errorf("special %d: %q type %d, want %q type %d", id, text, typ, s, wantTyp)
			}
		default:
			if j.Model.Vocab[text] != int32(id) || typ != GGUFTokenNormal {
				t.Errorf("token %d: %q type %d (tokenizer.json has %q -> %d)", id, text, typ, text, j.Model.Vocab[text])
			}
		}
	}
	if tokens[' '] != "Ġ" || tokens['\n'] != "Ċ" || tokens['a'] != "a" {
		t.Errorf("byte tokens are not GPT-2's byte-level spelling: %q %q %q", tokens[' '], tokens['\n'], tokens['a'])
	}
}

// TestPermuteQKMatchesRope checks the permutation's direction against the
// two rotary conventions: HF's rotate_half on a head's q equals llama.cpp's
// adjacent-pair rotation on the permuted q, permuted the same way. (A wrong
// direction passes the round trip, which only checks Unpermute(Permute(w)).)
func TestPermuteQKMatchesRope(t *testing.T) {
	const heads, dh, in, pos = 3, 8, 5, 7
	rng := rand.New(rand.NewPCG(1, 2))
	w := make([]float32, heads*dh*in)
	x := make([]float32, in)
	for i := range w {
		w[i] = float32(rng.NormFloat64())
	}
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	matvec := func(w []float32) []float64 {
		out := make([]float64, len(w)/in)
		for r := range out {
			for c := range in {
				out[r] += float64(w[r*in+c]) * float64(x[c])
			}
		}
		return out
	}
	angle := func(i int) float64 { return pos * math.Pow(10000, -float64(2*i)/dh) }
	q := matvec(w)
	hfRope := make([]float64, len(q)) // rotate_half: pairs (i, i+dh/2)
	for h := range heads {
		for i := range dh / 2 {
			a, b := q[h*dh+i], q[h*dh+i+dh/2]
			c, s := math.Cos(angle(i)), math.Sin(angle(i))
			hfRope[h*dh+i], hfRope[h*dh+i+dh/2] = a*c-b*s, b*c+a*s
		}
	}
	qp := matvec(PermuteQK(w, heads, in))
	ggRope := make([]float32, len(qp)) // llama.cpp's LLAMA rope: pairs (2i, 2i+1)
	for h := range heads {
		for i := range dh / 2 {
			a, b := qp[h*dh+2*i], qp[h*dh+2*i+1]
			c, s := math.Cos(angle(i)), math.Sin(angle(i))
			ggRope[h*dh+2*i], ggRope[h*dh+2*i+1] = float32(a*c-b*s), float32(b*c+a*s)
		}
	}
	// Unpermute works on rows of any width: here rows of one value.
	back := UnpermuteQK(ggRope, heads, 1)
	for i := range back {
		if math.Abs(float64(back[i])-hfRope[i]) > 1e-5 {
			t.Fatalf("row %d: llama.cpp rope of the permuted q gives %v, HF rope %v", i, back[i], hfRope[i])
		}
	}
}

func TestGGUFErrors(t *testing.T) {
	m := testModel(t)
	dir := t.TempDir()
	if err := ExportGGUF(filepath.Join(dir, "x.gguf"), m, GGUFOptions{DType: "F64"}); err == nil {
		t.Error("dtype F64 accepted")
	}
	small := *m
	small.Config.Vocab = m.Tokenizer.VocabSize() - 1
	small.Weights = make([]float32, small.Config.NumParams())
	if err := ExportGGUF(filepath.Join(dir, "y.gguf"), &small, GGUFOptions{}); err == nil {
		t.Error("a vocab smaller than the tokenizer's was accepted")
	}
	if _, err := os.Stat(filepath.Join(dir, "y.gguf")); err == nil {
		t.Error("a failed export left a file")
	}
	if _, err := GGUFTensorName("model.layers.0.self_attn.rotary_emb.inv_freq"); err == nil {
		t.Error("unknown tensor got a name")
	}
	// ExportGGUF writes what WriteGGUF writes.
	path := filepath.Join(dir, "m.gguf")
	if err := ExportGGUF(path, m, GGUFOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, writeGGUFBytes(t, m, F32)) {
		t.Error("ExportGGUF and WriteGGUF differ")
	}
	// Every truncation of the file is refused by the reader, so the reader
	// checks bounds (and the round trip above is not vacuous).
	for _, n := range []int{0, 3, 20, len(got) / 2, len(got) - 1} {
		if _, err := readGGUF(got[:n]); err == nil {
			t.Errorf("reader accepted the first %d of %d bytes", n, len(got))
		}
	}
}

// E2EEnv names the folder TestGGUFFixture writes for scripts/gguf-e2e.sh.
const e2eEnv = "NDB_GGUF_E2E_DIR"

// TestGGUFFixture writes, when $NDB_GGUF_E2E_DIR is set, expect.json for
// the embedded default model (scripts/gguf-e2e.sh puts its `ndb export
// --gguf` next to it): fixed prompts as ndb's token
// ids, each followed by ndb's greedy continuation, with ndb's next-token
// probabilities (full vocabulary) at every position from the prompt's last
// token on. scripts/gguf-e2e.sh loads the GGUF in llama.cpp and compares.
func TestGGUFFixture(t *testing.T) {
	dir := os.Getenv(e2eEnv)
	if dir == "" {
		t.Skip("set " + e2eEnv + " (scripts/gguf-e2e.sh does)")
	}
	raw, err := defaultmodel.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	m, err := modelfile.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	net, err := m.Network()
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		Text     string      `json:"text"`
		IDs      []int32     `json:"ids"`      // prompt + greedy continuation
		From     int         `json:"from"`     // first position whose next-token probabilities are given
		Probs    [][]float32 `json:"probs"`    // probs[i]: after ids[from+i]
		Decoded  string      `json:"decoded"`  // ndb's Decode of ids (llama.cpp's detokenize must agree)
		Specials []int32     `json:"specials"` // ids of special tokens in ids
	}
	var checks []check
	for _, text := range e2ePrompts() {
		ids := m.Tokenizer.Encode(text)
		const extra = 24
		cache, err := net.NewKVCache(1, len(ids)+extra)
		if err != nil {
			t.Fatal(err)
		}
		c := check{Text: text, From: len(ids) - 1}
		logits, err := net.Decode(ids, cache)
		if err != nil {
			t.Fatal(err)
		}
		last := logits[(len(ids)-1)*m.Config.Vocab:]
		for range extra {
			p := softmax(last)
			c.Probs = append(c.Probs, p)
			next := int32(argmax(p))
			ids = append(ids, next)
			if last, err = net.Decode([]int32{next}, cache); err != nil {
				t.Fatal(err)
			}
		}
		c.IDs = ids[:len(ids)-1] // the last token's distribution is not checked
		c.Decoded = m.Tokenizer.Decode(c.IDs)
		for _, id := range c.IDs {
			if m.Tokenizer.IsSpecial(id) && !slices.Contains(c.Specials, id) {
				c.Specials = append(c.Specials, id)
			}
		}
		checks = append(checks, c)
	}
	data, err := json.Marshal(map[string]any{"vocab": m.Config.Vocab, "checks": checks})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "expect.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s/expect.json (%d prompts)", dir, len(checks))
}

// e2ePrompts are trajectory prefixes ending where ndb predicts a frame.
func e2ePrompts() []string {
	var out []string
	parts := strings.SplitAfter(trajectory, "<|frame_sep|>")
	for _, n := range []int{2, 3, 4, 5} {
		out = append(out, strings.Join(parts[:n], ""))
	}
	return append(out,
		"<|begin_of_text|><|trace_context_start|>def g(xs):\n    total = 0\n    for x in xs:\n        total += x * 2\n    return total\n\ndef main():\n    return g([1, 2, 3])\n<|frame_sep|>",
		// Non-ASCII: byte-level tokens that split characters.
		"<|begin_of_text|><|trace_context_start|>def h(s):\n    return s.upper() + '✓'\n\ndef main():\n    return h('héllo wörld 日本')\n<|frame_sep|>")
}

func softmax(logits []float32) []float32 {
	mx := math.Inf(-1)
	for _, x := range logits {
		mx = math.Max(mx, float64(x))
	}
	var sum float64
	for _, x := range logits {
		sum += math.Exp(float64(x) - mx)
	}
	out := make([]float32, len(logits))
	for i, x := range logits {
		out[i] = float32(math.Exp(float64(x)-mx) / sum)
	}
	return out
}

func argmax(p []float32) int {
	best := 0
	for i, x := range p {
		if x > p[best] {
			best = i
		}
	}
	return best
}

// FuzzReadGGUF: the test's reader, which checks every file above, takes
// any bytes without panicking, and what it accepts is consistent.
func FuzzReadGGUF(f *testing.F) {
	m := testModel(f)
	m.Config.Layers = 1
	m.Weights = m.Weights[:m.Config.NumParams()]
	f.Add(writeGGUFBytes(f, m, BF16))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := readGGUF(b)
		if err != nil {
			return
		}
		for name, tn := range g.tensors {
			n := uint64(1)
			for _, d := range tn.dims {
				n *= d
			}
			if uint64(len(tn.data)) != n {
				t.Fatalf("%s: %d values for dims %v", name, len(tn.data), tn.dims)
			}
		}
	})
}
