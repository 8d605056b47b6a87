package hf

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"ndb/internal/atomicfile"
	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

// GGUF export: the model as one llama.cpp file (GGUF version 3), the way
// llama.cpp's convert_hf_to_gguf.py writes an HF Llama folder: architecture
// "llama", tensors under llama.cpp's names with q_proj and k_proj rows
// permuted, and the byte-level BPE tokenizer as tokenizer.ggml.* ("gpt2",
// pre-tokenizer GGUFPreTokenizerOf).
// llama.cpp then computes ndb's network (docs/interop.md, "GGUF for llama.cpp").

// GGUF value types (gguf.h's gguf_type).
const (
	ggufUint8   = 0
	ggufInt8    = 1
	ggufUint16  = 2
	ggufInt16   = 3
	ggufUint32  = 4
	ggufInt32   = 5
	ggufFloat32 = 6
	ggufBool    = 7
	ggufString  = 8
	ggufArray   = 9
	ggufUint64  = 10
	ggufInt64   = 11
	ggufFloat64 = 12
)

// ggml tensor types (ggml.h's ggml_type) of the dtypes we write.
const (
	ggmlF32  = 0
	ggmlF16  = 1
	ggmlBF16 = 30
)

// llama.cpp's token types (llama_token_type in tokenizer.ggml.token_type).
const (
	GGUFTokenNormal      = 1
	GGUFTokenControl     = 3
	GGUFTokenUserDefined = 4
	GGUFTokenUnused      = 5
)

// GGUFMagic opens every GGUF file; GGUFVersion is the version written.
const (
	GGUFMagic     = "GGUF"
	GGUFVersion   = 3
	GGUFAlignment = 32 // general.alignment's default: tensor data offsets are multiples of it
)

// GGUFPreTokenizer is tokenizer.ggml.pre for a tokenizer with ndb's
// pre-tokenizer. llama.cpp refuses names it does not know and runs a fixed
// regex per name; none is tokenizer.PretokenizePattern (identifiers with '_'
// and digits, indentation joined to its newline), so no name makes
// llama.cpp split text as ndb does. "gpt-2" comes closest: on 20 MBPP
// trajectories llama.cpp reproduced 91.7% of ndb's tokens with it (llama-bpe
// 89.3%, deepseek-coder 86.3%, default 12.9%; docs/interop.md) but no
// trajectory whole. Token ids sent to llama.cpp (openai.Config.TokenIDs)
// bypass it.
const GGUFPreTokenizer = "gpt-2"

// GGUFLlama3PreTokenizer is tokenizer.ggml.pre for a tokenizer trained with
// tokenizer.PretokenizerLlama3: llama.cpp's "llama-bpe" splits text with
// that regex (its hand-written splitter, which ndb's follows) and takes a
// piece that is one token as that token, as ndb does with it, so llama.cpp
// tokenizes text as ndb does.
const GGUFLlama3PreTokenizer = "llama-bpe"

// GGUFPreTokenizerOf returns tokenizer.ggml.pre for tok: llama-bpe for the
// llama3 pre-tokenizer, gpt-2 for ndb's.
func GGUFPreTokenizerOf(tok *tokenizer.Tokenizer) string {
	if tok.Pretokenizer() == tokenizer.PretokenizerLlama3 {
		return GGUFLlama3PreTokenizer
	}
	return GGUFPreTokenizer
}

// GGUFOptions choose the element type and the pre-tokenizer name.
type GGUFOptions struct {
	DType DType  // F32 (default when empty), F16 or BF16
	Pre   string // tokenizer.ggml.pre; "" means GGUFPreTokenizerOf(the model's tokenizer)
	Name  string // general.name; "" means "ndb"
}

// GGUFTensorName maps an HF tensor name of nn.Config.Layout to llama.cpp's
// (convert_hf_to_gguf's tensor map for LLAMA).
func GGUFTensorName(hfName string) (string, error) {
	switch hfName {
	case "model.embed_tokens.weight":
		return "token_embd.weight", nil
	case "model.norm.weight":
		return "output_norm.weight", nil
	case "lm_head.weight":
		return "output.weight", nil
	}
	var layer int
	var rest string
	if _, err := fmt.Sscanf(hfName, "model.layers.%d.%s", &layer, &rest); err == nil {
		if n, ok := ggufLayerNames[rest]; ok {
			return fmt.Sprintf("blk.%d.%s", layer, n), nil
		}
	}
	return "", fmt.Errorf("gguf: no llama.cpp name for tensor %q", hfName)
}

var ggufLayerNames = map[string]string{
	"input_layernorm.weight":          "attn_norm.weight",
	"self_attn.q_proj.weight":         "attn_q.weight",
	"self_attn.k_proj.weight":         "attn_k.weight",
	"self_attn.v_proj.weight":         "attn_v.weight",
	"self_attn.o_proj.weight":         "attn_output.weight",
	"post_attention_layernorm.weight": "ffn_norm.weight",
	"mlp.gate_proj.weight":            "ffn_gate.weight",
	"mlp.up_proj.weight":              "ffn_up.weight",
	"mlp.down_proj.weight":            "ffn_down.weight",
}

// PermuteQK reorders the rows of a q_proj or k_proj weight ([heads*dh, in],
// row-major) as convert_hf_to_gguf's LlamaModel.permute does: HF rotates
// the two halves of each head (rotate_half), llama.cpp rotates adjacent
// pairs, so within each head row i of the first half goes to 2i and row i
// of the second half to 2i+1. UnpermuteQK is its inverse.
func PermuteQK(w []float32, heads, in int) []float32 { return permuteQK(w, heads, in, false) }

// UnpermuteQK undoes PermuteQK.
func UnpermuteQK(w []float32, heads, in int) []float32 { return permuteQK(w, heads, in, true) }

func permuteQK(w []float32, heads, in int, inverse bool) []float32 {
	rows := len(w) / in
	dh := rows / heads
	out := make([]float32, len(w))
	for h := range heads {
		for half := range 2 {
			for i := range dh / 2 {
				hf := h*dh + half*dh/2 + i // row in the HF layout
				gg := h*dh + 2*i + half    // row in llama.cpp's
				src, dst := hf, gg
				if inverse {
					src, dst = gg, hf
				}
				copy(out[dst*in:(dst+1)*in], w[src*in:(src+1)*in])
			}
		}
	}
	return out
}

// GGUFTokens returns tokenizer.ggml.tokens, token_type and merges for a
// model of vocab ids: the tokenizer's tokens in GPT-2's byte-level spelling
// (as in tokenizer.json), its merges as "a b", and "[PAD<id>]" (unused)
// for ids past the tokenizer that a padded vocabulary has.
//
// Special tokens are user-defined, except <|begin_of_text|> and
// <|end_of_text|>, which are control tokens: llama.cpp matches user-defined
// tokens in any text (ndb's Encode does too) and always prints them, so a
// server's completion shows <|action_sep|> and its stop sequences work.
func GGUFTokens(tok *tokenizer.Tokenizer, vocab int) (tokens []string, types []int32, merges []string, err error) {
	if vocab < tok.VocabSize() {
		return nil, nil, nil, fmt.Errorf("gguf: vocab %d is smaller than the tokenizer's %d tokens", vocab, tok.VocabSize())
	}
	// tokenizer.json is the one place that spells tokens byte-level.
	data, err := tok.HFJSON()
	if err != nil {
		return nil, nil, nil, err
	}
	var f struct {
		Model struct {
			Vocab  map[string]int32 `json:"vocab"`
			Merges []string         `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, nil, err
	}
	tokens = make([]string, vocab)
	types = make([]int32, vocab)
	for text, id := range f.Model.Vocab {
		if id < 0 || int(id) >= vocab || tok.IsSpecial(id) {
			return nil, nil, nil, fmt.Errorf("gguf: tokenizer.json token %q has id %d", text, id)
		}
		tokens[id], types[id] = text, GGUFTokenNormal
	}
	for _, s := range tok.Specials() {
		id, _ := tok.SpecialID(s)
		tokens[id], types[id] = s, GGUFTokenUserDefined
		if s == tokenizer.BeginOfText || s == tokenizer.EndOfText {
			types[id] = GGUFTokenControl
		}
	}
	for id := range tokens {
		if types[id] == 0 {
			if id < tok.VocabSize() {
				return nil, nil, nil, fmt.Errorf("gguf: token %d missing from tokenizer.json", id)
			}
			tokens[id], types[id] = fmt.Sprintf("[PAD%d]", id), GGUFTokenUnused
		}
	}
	return tokens, types, f.Model.Merges, nil
}

// ggufFileType is general.file_type (llama_ftype) for a dtype.
func ggufFileType(d DType) (fileType uint32, tensorType uint32) {
	switch d {
	case F16:
		return 1, ggmlF16 // LLAMA_FTYPE_MOSTLY_F16
	case BF16:
		return 32, ggmlBF16 // LLAMA_FTYPE_MOSTLY_BF16
	}
	return 0, ggmlF32 // LLAMA_FTYPE_ALL_F32
}

// ExportGGUF writes m to path as a GGUF file (atomically: a reader never sees
// half a file). Norm weights stay F32 whatever the dtype, as llama.cpp's
// converter keeps 1-D tensors.
func ExportGGUF(path string, m *modelfile.Model, opts GGUFOptions) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), atomicfile.TempPattern(path))
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	w := bufio.NewWriterSize(f, 1<<20)
	err = WriteGGUF(w, m, opts)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ggufTensor is one tensor to write: llama.cpp's name, ggml dims (fastest
// first, the reverse of the HF shape) and its data.
type ggufTensor struct {
	name  string
	dims  []uint64
	typ   uint32
	data  []byte
	elems int
}

// WriteGGUF writes the GGUF file of m to w.
func WriteGGUF(w io.Writer, m *modelfile.Model, opts GGUFOptions) error {
	d := opts.DType
	if d == "" {
		d = F32
	}
	if _, err := ParseDType(string(d)); err != nil {
		return err
	}
	if opts.Pre == "" {
		opts.Pre = GGUFPreTokenizerOf(m.Tokenizer)
	}
	if opts.Name == "" {
		opts.Name = "ndb"
	}
	cfg := m.Config
	tokens, types, merges, err := GGUFTokens(m.Tokenizer, cfg.Vocab)
	if err != nil {
		return err
	}
	bos, _ := m.Tokenizer.SpecialID(tokenizer.BeginOfText)
	eos, _ := m.Tokenizer.SpecialID(tokenizer.EndOfText)
	fileType, matType := ggufFileType(d)

	var tensors []ggufTensor
	for _, t := range cfg.Layout() {
		name, err := GGUFTensorName(t.Name)
		if err != nil {
			return err
		}
		data := m.Weights[t.Offset : t.Offset+t.Size]
		if strings.HasSuffix(name, "attn_q.weight") || strings.HasSuffix(name, "attn_k.weight") {
			data = PermuteQK(data, cfg.Heads, t.Shape[1])
		}
		gt := ggufTensor{name: name, elems: t.Size}
		for i := len(t.Shape) - 1; i >= 0; i-- {
			gt.dims = append(gt.dims, uint64(t.Shape[i]))
		}
		if len(t.Shape) == 1 {
			gt.typ, gt.data = ggmlF32, encode(data, F32)
		} else {
			gt.typ, gt.data = matType, encode(data, d)
		}
		tensors = append(tensors, gt)
	}

	e := &ggufEncoder{w: w}
	kvs := ggufMetadata(cfg, opts, fileType, tokens, types, merges, bos, eos)
	e.raw([]byte(GGUFMagic))
	e.u32(GGUFVersion)
	e.u64(uint64(len(tensors)))
	e.u64(uint64(len(kvs)))
	for _, kv := range kvs {
		e.str(kv.key)
		e.value(kv.val)
	}
	var off uint64
	for _, t := range tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, dim := range t.dims {
			e.u64(dim)
		}
		e.u32(t.typ)
		e.u64(off)
		off = alignUp(off+uint64(len(t.data)), GGUFAlignment)
	}
	e.pad()
	start := e.n
	for _, t := range tensors {
		e.raw(t.data)
		for (e.n-start)%GGUFAlignment != 0 {
			e.raw([]byte{0})
		}
	}
	return e.err
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

type ggufKV struct {
	key string
	val any // uint32, float32, bool, string, []string, []int32
}

// ggufMetadata lists the key-value pairs llama.cpp's llama loader reads
// (llama-arch.cpp's LLM_KV names), in convert_hf_to_gguf's order.
func ggufMetadata(cfg nn.Config, opts GGUFOptions, fileType uint32, tokens []string, types []int32, merges []string, bos, eos int32) []ggufKV {
	return []ggufKV{
		{"general.architecture", "llama"},
		{"general.name", opts.Name},
		{"general.file_type", fileType},
		{"general.alignment", uint32(GGUFAlignment)},
		{"llama.vocab_size", uint32(cfg.Vocab)},
		{"llama.context_length", uint32(cfg.MaxSeq)},
		{"llama.embedding_length", uint32(cfg.Dim)},
		{"llama.block_count", uint32(cfg.Layers)},
		{"llama.feed_forward_length", uint32(cfg.HiddenDim)},
		{"llama.rope.dimension_count", uint32(cfg.HeadDim())},
		{"llama.attention.head_count", uint32(cfg.Heads)},
		{"llama.attention.head_count_kv", uint32(cfg.Heads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(cfg.NormEps)},
		{"llama.rope.freq_base", float32(cfg.RopeTheta)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", opts.Pre},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
		{"tokenizer.ggml.bos_token_id", uint32(bos)},
		{"tokenizer.ggml.eos_token_id", uint32(eos)},
		// Trajectory texts carry their own <|begin_of_text|>.
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
	}
}

// ggufEncoder writes little-endian GGUF values, keeping the first error.
type ggufEncoder struct {
	w   io.Writer
	n   uint64
	err error
	buf [8]byte
}

func (e *ggufEncoder) raw(b []byte) {
	if e.err != nil {
		return
	}
	_, e.err = e.w.Write(b)
	e.n += uint64(len(b))
}

func (e *ggufEncoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], v)
	e.raw(e.buf[:4])
}

func (e *ggufEncoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], v)
	e.raw(e.buf[:8])
}

func (e *ggufEncoder) str(s string) {
	e.u64(uint64(len(s)))
	e.raw([]byte(s))
}

// pad fills to the next multiple of the alignment (where tensor data starts).
func (e *ggufEncoder) pad() {
	for e.n%GGUFAlignment != 0 {
		e.raw([]byte{0})
	}
}

func (e *ggufEncoder) value(v any) {
	switch v := v.(type) {
	case uint32:
		e.u32(ggufUint32)
		e.u32(v)
	case float32:
		e.u32(ggufFloat32)
		e.u32(math.Float32bits(v))
	case bool:
		e.u32(ggufBool)
		b := byte(0)
		if v {
			b = 1
		}
		e.raw([]byte{b})
	case string:
		e.u32(ggufString)
		e.str(v)
	case []string:
		e.u32(ggufArray)
		e.u32(ggufString)
		e.u64(uint64(len(v)))
		for _, s := range v {
			e.str(s)
		}
	case []int32:
		e.u32(ggufArray)
		e.u32(ggufInt32)
		e.u64(uint64(len(v)))
		for _, x := range v {
			e.u32(uint32(x))
		}
	default:
		if e.err == nil {
			e.err = fmt.Errorf("gguf: cannot write a %T", v)
		}
	}
}
