// Package hf exports ndb models to the Hugging Face Llama layout and imports
// them back: model.safetensors (F32, BF16 or F16, optionally split into
// shards with model.safetensors.index.json), config.json for
// LlamaForCausalLM, tokenizer.json, tokenizer_config.json and
// special_tokens_map.json. transformers, vLLM and ndb's PyTorch trainer read
// these files; ndb reads what they write in the same layout. ExportGGUF
// writes the same model as one GGUF file for llama.cpp (gguf.go).
//
// Tensor names and shapes are nn.Config.Layout's, which are HF's, so export
// and import are copies. F32 round-trips bit for bit.
package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"ndb/model/modelfile"
	"ndb/model/nn"
	"ndb/model/tokenizer"
)

// File names of the layout.
const (
	ConfigFile          = "config.json"
	WeightsFile         = "model.safetensors"
	WeightsIndexFile    = "model.safetensors.index.json"
	TokenizerFile       = "tokenizer.json"
	TokenizerConfigFile = "tokenizer_config.json"
	SpecialTokensFile   = "special_tokens_map.json"
	GenerationFile      = "generation_config.json"
)

// ExportOptions chooses the export's element type and sharding.
type ExportOptions struct {
	DType DType // F32 (the default when empty), BF16 or F16
	// MaxShardBytes splits the weights into model-0000i-of-0000n.safetensors
	// files of at most this many bytes of tensor data each (a tensor larger
	// than that gets a file of its own) plus model.safetensors.index.json.
	// 0 writes one model.safetensors.
	MaxShardBytes int64
}

// LlamaConfig is config.json as written by Export: nn.Config's fields (HF
// names) and the fields transformers needs to build LlamaForCausalLM.
type LlamaConfig struct {
	nn.Config
	Architectures     []string `json:"architectures"`
	ModelType         string   `json:"model_type"`
	NumKeyValueHeads  int      `json:"num_key_value_heads"`
	HeadDim           int      `json:"head_dim"`
	HiddenAct         string   `json:"hidden_act"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"`
	AttentionBias     bool     `json:"attention_bias"`
	MLPBias           bool     `json:"mlp_bias"`
	RopeScaling       any      `json:"rope_scaling"`
	BosTokenID        int32    `json:"bos_token_id"`
	EosTokenID        int32    `json:"eos_token_id"`
	TorchDType        string   `json:"torch_dtype"`
	InitializerRange  float64  `json:"initializer_range"`
	PretrainingTP     int      `json:"pretraining_tp"`
	UseCache          bool     `json:"use_cache"`
	AttentionDropout  float64  `json:"attention_dropout"`
}

// NewLlamaConfig returns config.json's content for a model stored as d.
func NewLlamaConfig(cfg nn.Config, tok *tokenizer.Tokenizer, d DType) LlamaConfig {
	bos, _ := tok.SpecialID(tokenizer.BeginOfText)
	eos, _ := tok.SpecialID(tokenizer.EndOfText)
	return LlamaConfig{
		Config:           cfg,
		Architectures:    []string{"LlamaForCausalLM"},
		ModelType:        "llama",
		NumKeyValueHeads: cfg.Heads,
		HeadDim:          cfg.HeadDim(),
		HiddenAct:        "silu",
		BosTokenID:       bos,
		EosTokenID:       eos,
		TorchDType:       d.torchName(),
		InitializerRange: 0.02,
		PretrainingTP:    1,
		UseCache:         true,
	}
}

// Export writes m to dir (created if needed) in the HF Llama layout.
func Export(dir string, m *modelfile.Model, opts ExportOptions) error {
	if err := m.Validate(); err != nil {
		return err
	}
	d := opts.DType
	if d == "" {
		d = F32
	}
	if _, err := ParseDType(string(d)); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var tensors []Tensor
	for _, t := range m.Config.Layout() {
		tensors = append(tensors, Tensor{Name: t.Name, Shape: t.Shape, Data: m.Weights[t.Offset : t.Offset+t.Size]})
	}
	if err := writeWeights(dir, tensors, d, opts.MaxShardBytes); err != nil {
		return err
	}
	cfg := NewLlamaConfig(m.Config, m.Tokenizer, d)
	tokJSON, err := m.Tokenizer.HFJSON()
	if err != nil {
		return err
	}
	files := map[string]any{
		ConfigFile:          cfg,
		TokenizerConfigFile: tokenizerConfig(m.Tokenizer),
		SpecialTokensFile:   specialTokensMap(m.Tokenizer),
		GenerationFile:      map[string]any{"bos_token_id": cfg.BosTokenID, "eos_token_id": cfg.EosTokenID, "do_sample": false},
	}
	for name, v := range files {
		data, err := tokenizer.MarshalIndentNoEscape(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, TokenizerFile), append(tokJSON, '\n'), 0o644)
}

// writeWeights writes one model.safetensors, or shards and their index.
func writeWeights(dir string, tensors []Tensor, d DType, maxShard int64) error {
	meta := map[string]string{"format": "pt"}
	if maxShard <= 0 {
		// A stale index would make loaders read old shards.
		os.Remove(filepath.Join(dir, WeightsIndexFile))
		return WriteSafetensors(filepath.Join(dir, WeightsFile), tensors, d, meta)
	}
	var shards [][]Tensor
	var size int64
	for _, t := range tensors {
		n := int64(len(t.Data) * d.Size())
		if len(shards) == 0 || size+n > maxShard {
			shards = append(shards, nil)
			size = 0
		}
		shards[len(shards)-1] = append(shards[len(shards)-1], t)
		size += n
	}
	index := struct {
		Metadata  map[string]int64  `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}{map[string]int64{"total_size": 0}, map[string]string{}}
	for i, shard := range shards {
		name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
		if err := WriteSafetensors(filepath.Join(dir, name), shard, d, meta); err != nil {
			return err
		}
		for _, t := range shard {
			index.WeightMap[t.Name] = name
			index.Metadata["total_size"] += int64(len(t.Data) * d.Size())
		}
	}
	os.Remove(filepath.Join(dir, WeightsFile))
	data, err := json.MarshalIndent(index, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, WeightsIndexFile), append(data, '\n'), 0o644)
}

func tokenizerConfig(tok *tokenizer.Tokenizer) map[string]any {
	decl := map[string]any{}
	for _, s := range tok.Specials() {
		id, _ := tok.SpecialID(s)
		decl[fmt.Sprint(id)] = map[string]any{
			"content": s, "lstrip": false, "rstrip": false, "normalized": false, "single_word": false, "special": true,
		}
	}
	return map[string]any{
		"tokenizer_class":              "PreTrainedTokenizerFast",
		"bos_token":                    tokenizer.BeginOfText,
		"eos_token":                    tokenizer.EndOfText,
		"add_bos_token":                false,
		"add_eos_token":                false,
		"clean_up_tokenization_spaces": false,
		"model_max_length":             1 << 20,
		"added_tokens_decoder":         decl,
		"additional_special_tokens":    tok.Specials(),
	}
}

func specialTokensMap(tok *tokenizer.Tokenizer) map[string]any {
	return map[string]any{
		"bos_token":                 tokenizer.BeginOfText,
		"eos_token":                 tokenizer.EndOfText,
		"additional_special_tokens": tok.Specials(),
	}
}

// Import reads an HF Llama folder (as Export writes it, or as another tool
// writes the same layout: F32/BF16/F16, one file or shards) into a model.
// Weights stored as BF16 or F16 are widened exactly to float32.
func Import(dir string) (*modelfile.Model, error) {
	cfg, err := readConfig(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, err
	}
	tokJSON, err := os.ReadFile(filepath.Join(dir, TokenizerFile))
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromHFJSON(tokJSON)
	if err != nil {
		return nil, err
	}
	files, err := weightFiles(dir)
	if err != nil {
		return nil, err
	}
	byName := map[string]Tensor{}
	for _, f := range files {
		st, err := ReadSafetensors(f)
		if err != nil {
			return nil, err
		}
		for _, t := range st.Tensors {
			if _, dup := byName[t.Name]; dup {
				return nil, fmt.Errorf("%s: tensor %s appears twice", dir, t.Name)
			}
			byName[t.Name] = t
		}
	}
	if _, ok := byName["lm_head.weight"]; !ok && cfg.tied {
		byName["lm_head.weight"] = byName["model.embed_tokens.weight"]
	}
	// The files bound the config: a config.json asking for more parameters
	// than the files hold is refused before anything is allocated for it.
	held := 0
	for name, t := range byName {
		if !strings.HasSuffix(name, "rotary_emb.inv_freq") {
			held += len(t.Data)
		}
	}
	if need := cfg.NumParams(); need > held || need <= 0 {
		return nil, fmt.Errorf("%s: config.json needs %d parameters, the safetensors files hold %d: a tensor is missing or has another shape", dir, need, held)
	}
	layout := cfg.Layout()
	known := make(map[string]bool, len(layout))
	for _, t := range layout {
		known[t.Name] = true
	}
	weights := make([]float32, cfg.NumParams())
	for _, want := range layout {
		t, ok := byName[want.Name]
		if !ok {
			return nil, fmt.Errorf("%s: tensor %s is missing", dir, want.Name)
		}
		if !equalShape(t.Shape, want.Shape) {
			return nil, fmt.Errorf("%s: tensor %s has shape %v, config needs %v", dir, want.Name, t.Shape, want.Shape)
		}
		copy(weights[want.Offset:want.Offset+want.Size], t.Data)
	}
	var extra []string
	for name := range byName {
		// Older transformers saved the rotary tables as buffers; they are
		// derived from the config, so they are dropped.
		if !known[name] && !strings.HasSuffix(name, "rotary_emb.inv_freq") {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("%s: tensors this architecture does not have: %v", dir, extra)
	}
	m := &modelfile.Model{Config: cfg.Config, Tokenizer: tok, Weights: weights, Meta: map[string]string{"imported_from": dir}}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

type importedConfig struct {
	nn.Config
	tied bool
}

// readConfig reads config.json and refuses what ndb's network cannot run.
func readConfig(path string) (importedConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return importedConfig{}, err
	}
	var c struct {
		nn.Config
		ModelType         string          `json:"model_type"`
		NumKeyValueHeads  *int            `json:"num_key_value_heads"`
		HeadDim           *int            `json:"head_dim"`
		HiddenAct         string          `json:"hidden_act"`
		TieWordEmbeddings bool            `json:"tie_word_embeddings"`
		AttentionBias     bool            `json:"attention_bias"`
		MLPBias           bool            `json:"mlp_bias"`
		RopeScaling       json.RawMessage `json:"rope_scaling"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return importedConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	var problems []error
	if c.ModelType != "llama" {
		problems = append(problems, fmt.Errorf("model_type %q, want \"llama\"", c.ModelType))
	}
	if c.NumKeyValueHeads != nil && *c.NumKeyValueHeads != c.Heads {
		problems = append(problems, fmt.Errorf("num_key_value_heads %d differs from num_attention_heads %d (grouped-query attention is not supported)", *c.NumKeyValueHeads, c.Heads))
	}
	if c.HeadDim != nil && c.Heads > 0 && *c.HeadDim != c.Dim/c.Heads {
		problems = append(problems, fmt.Errorf("head_dim %d is not hidden_size/num_attention_heads", *c.HeadDim))
	}
	if c.HiddenAct != "" && c.HiddenAct != "silu" {
		problems = append(problems, fmt.Errorf("hidden_act %q, want \"silu\"", c.HiddenAct))
	}
	if c.AttentionBias || c.MLPBias {
		problems = append(problems, errors.New("biases are not supported"))
	}
	if len(c.RopeScaling) > 0 && string(c.RopeScaling) != "null" {
		problems = append(problems, fmt.Errorf("rope_scaling %s is not supported", c.RopeScaling))
	}
	if err := c.Config.Validate(); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return importedConfig{}, fmt.Errorf("%s: %w", path, errors.Join(problems...))
	}
	return importedConfig{c.Config, c.TieWordEmbeddings}, nil
}

// weightFiles lists the safetensors files of dir: the shards named by the
// index when there is one, else model.safetensors.
func weightFiles(dir string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, WeightsIndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return []string{filepath.Join(dir, WeightsFile)}, nil
	}
	if err != nil {
		return nil, err
	}
	var index struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(data, &index); err != nil {
		return nil, fmt.Errorf("%s: %w", WeightsIndexFile, err)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range index.WeightMap {
		if f != filepath.Base(f) {
			return nil, fmt.Errorf("%s: shard %q is not a file name in the folder", WeightsIndexFile, f)
		}
		if !seen[f] {
			seen[f] = true
			files = append(files, filepath.Join(dir, f))
		}
	}
	sort.Strings(files)
	return files, nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
