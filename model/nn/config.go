// Package nn is ndb's Llama-style decoder: config, parameters in one flat
// float32 block, forward, backward, AdamW and KV-cache decoding.
//
// The maths is exactly Hugging Face's LlamaForCausalLM (RMSNorm, rotary
// embeddings in the rotate_half convention, SwiGLU MLP, causal multi-head
// attention, no biases, untied lm_head), and every parameter tensor is named
// and shaped as in that layout (weights [out, in], row-major), so export to
// and import from the HF layout is a copy.
package nn

import "fmt"

// Config describes one model. JSON names follow HF's LlamaConfig.
type Config struct {
	Dim       int     `json:"hidden_size"`             // model width C
	HiddenDim int     `json:"intermediate_size"`       // SwiGLU width F
	Layers    int     `json:"num_hidden_layers"`       // L
	Heads     int     `json:"num_attention_heads"`     // H; head size Dh = C/H
	Vocab     int     `json:"vocab_size"`              // V
	MaxSeq    int     `json:"max_position_embeddings"` // longest context T
	RopeTheta float64 `json:"rope_theta"`
	NormEps   float64 `json:"rms_norm_eps"`
}

// Configs are the named sizes (`--config NAME`). Vocab is filled in from the
// tokenizer when a model is created.
var Configs = map[string]Config{
	"tiny":  {Dim: 32, HiddenDim: 96, Layers: 2, Heads: 4, MaxSeq: 256, RopeTheta: 10000, NormEps: 1e-5},
	"mini":  {Dim: 128, HiddenDim: 352, Layers: 4, Heads: 4, MaxSeq: 1024, RopeTheta: 10000, NormEps: 1e-5},
	"small": {Dim: 256, HiddenDim: 688, Layers: 6, Heads: 8, MaxSeq: 1024, RopeTheta: 10000, NormEps: 1e-5},
	"base":  {Dim: 384, HiddenDim: 1024, Layers: 8, Heads: 6, MaxSeq: 2048, RopeTheta: 10000, NormEps: 1e-5},
}

// Validate reports a config that cannot be built.
func (c Config) Validate() error {
	switch {
	case c.Dim <= 0 || c.HiddenDim <= 0 || c.Layers <= 0 || c.Heads <= 0 || c.Vocab <= 0 || c.MaxSeq <= 0:
		return fmt.Errorf("config: every size must be positive: %+v", c)
	case c.Dim%c.Heads != 0:
		return fmt.Errorf("config: hidden_size %d is not a multiple of num_attention_heads %d", c.Dim, c.Heads)
	case (c.Dim/c.Heads)%2 != 0:
		return fmt.Errorf("config: head size %d must be even for rotary embeddings", c.Dim/c.Heads)
	}
	return nil
}

// HeadDim is the size of one attention head, Dh = C/H.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// Tensor is one named parameter tensor inside the flat parameter block:
// Params[Offset : Offset+Size] holds it row-major with the given Shape.
type Tensor struct {
	Name   string
	Shape  []int
	Offset int
	Size   int
}

// Layout lists every parameter tensor with its Hugging Face name and shape
// (weights [out, in]) and its place in the flat block. Within a layer q, k, v
// are adjacent (one [3C, C] matrix for a fused projection) and so are gate
// and up ([2F, C]); the HF export copies each tensor by name.
func (c Config) Layout() []Tensor {
	var ts []Tensor
	off := 0
	add := func(name string, shape ...int) {
		size := 1
		for _, s := range shape {
			size *= s
		}
		ts = append(ts, Tensor{Name: name, Shape: shape, Offset: off, Size: size})
		off += size
	}
	C, F, V := c.Dim, c.HiddenDim, c.Vocab
	add("model.embed_tokens.weight", V, C)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d.", i)
		add(p+"input_layernorm.weight", C)
		add(p+"self_attn.q_proj.weight", C, C)
		add(p+"self_attn.k_proj.weight", C, C)
		add(p+"self_attn.v_proj.weight", C, C)
		add(p+"self_attn.o_proj.weight", C, C)
		add(p+"post_attention_layernorm.weight", C)
		add(p+"mlp.gate_proj.weight", F, C)
		add(p+"mlp.up_proj.weight", F, C)
		add(p+"mlp.down_proj.weight", C, F)
	}
	add("model.norm.weight", C)
	add("lm_head.weight", V, C)
	return ts
}

// NumParams is the total number of parameters, len(Model.Params).
func (c Config) NumParams() int {
	C, F, V := c.Dim, c.HiddenDim, c.Vocab
	return 2*V*C + C + c.Layers*(2*C+4*C*C+3*F*C)
}
