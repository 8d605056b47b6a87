"""ndb's network in PyTorch: exactly model/nn (HF LlamaForCausalLM maths).

    x = embed_tokens[tokens]                                   (B, T, C)
    per layer:
      h = RMSNorm(x) * input_layernorm.weight
      q, k, v = h Wq^T, h Wk^T, h Wv^T                         (B, H, T, Dh)
      q, k = rope(q), rope(k)          rotate_half, angle = pos / theta^(2i/Dh)
      x = x + softmax(q k^T / sqrt(Dh) + causal) v Wo^T
      h = RMSNorm(x) * post_attention_layernorm.weight
      x = x + (silu(h Wgate^T) * (h Wup^T)) Wdown^T
    logits = (RMSNorm(x) * norm.weight) lm_head^T              (B, T, V)

No biases, untied lm_head; state_dict() keys are the HF tensor names, in
model/nn's Layout order, so export is a copy per tensor.
"""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

# The named sizes of model/nn (nn.Configs); vocab comes from the tokenizer.
CONFIGS = {
    "tiny": dict(hidden_size=32, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                 max_position_embeddings=256, rope_theta=10000.0, rms_norm_eps=1e-5),
    "small": dict(hidden_size=256, intermediate_size=688, num_hidden_layers=6, num_attention_heads=8,
                  max_position_embeddings=1024, rope_theta=10000.0, rms_norm_eps=1e-5),
    "base": dict(hidden_size=384, intermediate_size=1024, num_hidden_layers=8, num_attention_heads=6,
                 max_position_embeddings=2048, rope_theta=10000.0, rms_norm_eps=1e-5),
}

CONFIG_FIELDS = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                 "vocab_size", "max_position_embeddings", "rope_theta", "rms_norm_eps")

IGNORE_INDEX = -100


class Config(object):
    """Config is nn.Config with HF LlamaConfig's field names."""

    def __init__(self, **kw):
        missing = [k for k in CONFIG_FIELDS if k not in kw]
        if missing:
            raise ValueError("config: missing %s" % ", ".join(missing))
        for k in CONFIG_FIELDS:
            setattr(self, k, kw[k])
        for k in CONFIG_FIELDS[:6]:
            v = getattr(self, k)
            if int(v) != v or v <= 0:
                raise ValueError("config: %s must be a positive integer, got %r" % (k, v))
            setattr(self, k, int(v))
        self.rope_theta, self.rms_norm_eps = float(self.rope_theta), float(self.rms_norm_eps)
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("config: hidden_size %d is not a multiple of num_attention_heads %d"
                             % (self.hidden_size, self.num_attention_heads))
        if (self.hidden_size // self.num_attention_heads) % 2:
            raise ValueError("config: head size must be even for rotary embeddings")

    @classmethod
    def named(cls, name, vocab_size):
        if name not in CONFIGS:
            raise ValueError("unknown config %r (want one of %s)" % (name, ", ".join(sorted(CONFIGS))))
        return cls(vocab_size=vocab_size, **CONFIGS[name])

    @classmethod
    def from_hf(cls, conf):
        """from_hf reads a config.json dict and refuses what ndb cannot run."""
        problems = []
        if conf.get("model_type", "llama") != "llama":
            problems.append("model_type %r, want llama" % conf.get("model_type"))
        heads = conf.get("num_attention_heads")
        if conf.get("num_key_value_heads", heads) != heads:
            problems.append("grouped-query attention is not supported")
        if conf.get("hidden_act", "silu") != "silu":
            problems.append("hidden_act %r, want silu" % conf.get("hidden_act"))
        if conf.get("attention_bias") or conf.get("mlp_bias"):
            problems.append("biases are not supported")
        if conf.get("rope_scaling") is not None:
            problems.append("rope_scaling is not supported")
        if problems:
            raise ValueError("config.json: " + "; ".join(problems))
        return cls(**{k: conf[k] for k in CONFIG_FIELDS if k in conf})

    def to_dict(self):
        return {k: getattr(self, k) for k in CONFIG_FIELDS}

    def num_params(self):
        C, Fd, V = self.hidden_size, self.intermediate_size, self.vocab_size
        return 2 * V * C + C + self.num_hidden_layers * (2 * C + 4 * C * C + 3 * Fd * C)

    def __repr__(self):
        return "Config(%s)" % json.dumps(self.to_dict())


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        # As HF: normalise in float32 whatever the autocast dtype.
        dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


_HAS_SDPA = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C = cfg.hidden_size
        self.heads = cfg.num_attention_heads
        self.head_dim = C // self.heads
        self.q_proj = nn.Linear(C, C, bias=False)
        self.k_proj = nn.Linear(C, C, bias=False)
        self.v_proj = nn.Linear(C, C, bias=False)
        self.o_proj = nn.Linear(C, C, bias=False)

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        H, D = self.heads, self.head_dim
        q = self.q_proj(x).view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        k = self.k_proj(x).view(B, T, H, D).transpose(1, 2)
        v = self.v_proj(x).view(B, T, H, D).transpose(1, 2)
        cos, sin = cos[:T].to(q.dtype), sin[:T].to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if _HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(D)  # (B, H, T, T)
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
            p = torch.softmax(scores.float(), dim=-1).to(v.dtype)
            y = torch.matmul(p, v)
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        C, Fd = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(C, Fd, bias=False)
        self.up_proj = nn.Linear(C, Fd, bias=False)
        self.down_proj = nn.Linear(Fd, C, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)


class Llama(nn.Module):
    """Llama is ndb's network; state_dict keys are HF's LlamaForCausalLM names."""

    def __init__(self, cfg):
        super().__init__()
        self.config = cfg
        self.model = Backbone(cfg)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        D = cfg.hidden_size // cfg.num_attention_heads
        # Rotary tables in float64, rounded once (ndb's Go tables are float64 too).
        inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
        freqs = torch.outer(torch.arange(cfg.max_position_embeddings, dtype=torch.float64), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)  # (T, D)
        # Not persistent: not part of the HF tensors (old transformers saved inv_freq).
        self.register_buffer("rope_cos", emb.cos().float(), persistent=False)
        self.register_buffer("rope_sin", emb.sin().float(), persistent=False)
        self.reset_parameters()

    def reset_parameters(self):
        """reset_parameters: every matrix from normal(0, 0.02) (HF's
        initializer_range, as nn.New), every norm weight 1."""
        for name, p in self.named_parameters():
            with torch.no_grad():
                if p.dim() == 2:
                    p.normal_(0.0, 0.02)
                else:
                    p.fill_(1.0)

    def forward(self, tokens, targets=None):
        """forward: tokens (B, T) int64 -> logits (B, T, V); with targets
        (B, T), also the mean cross-entropy over targets != -100."""
        T = tokens.shape[1]
        if T > self.config.max_position_embeddings:
            raise ValueError("sequence of %d tokens exceeds max_position_embeddings %d"
                             % (T, self.config.max_position_embeddings))
        x = self.model.embed_tokens(tokens)
        cos, sin = self.rope_cos, self.rope_sin
        if cos.dtype != x.dtype and not torch.is_autocast_enabled():
            cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.model.norm(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1),
                               ignore_index=IGNORE_INDEX)
        return logits, loss

    def hf_state(self):
        """hf_state returns {HF name: float32 numpy array} in model/nn's Layout order."""
        sd = self.state_dict()
        return {name: sd[name].detach().float().cpu().numpy() for name in layout_names(self.config)}

    def load_hf_state(self, weights, tied_ok=True):
        """load_hf_state copies {HF name: array} into the parameters; every
        tensor must be there with its shape (lm_head may be tied to the
        embeddings when tied_ok), and no other tensor may be."""
        want = layout_names(self.config)
        weights = dict(weights)
        for k in list(weights):
            if k.endswith("rotary_emb.inv_freq"):
                del weights[k]
        if "lm_head.weight" not in weights and tied_ok and "model.embed_tokens.weight" in weights:
            weights["lm_head.weight"] = weights["model.embed_tokens.weight"]
        missing = [n for n in want if n not in weights]
        extra = sorted(set(weights) - set(want))
        if missing or extra:
            raise ValueError("weights: missing %s; unexpected %s" % (missing[:5], extra[:5]))
        sd = self.state_dict()
        with torch.no_grad():
            for n in want:
                src = torch.as_tensor(weights[n])
                if tuple(src.shape) != tuple(sd[n].shape):
                    raise ValueError("weights: %s has shape %s, want %s" % (n, tuple(src.shape), tuple(sd[n].shape)))
                sd[n].copy_(src.to(sd[n].dtype))


def layout_names(cfg):
    """layout_names lists the HF tensor names in model/nn's Layout order."""
    names = ["model.embed_tokens.weight"]
    for i in range(cfg.num_hidden_layers):
        p = "model.layers.%d." % i
        names += [p + "input_layernorm.weight", p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
                  p + "self_attn.v_proj.weight", p + "self_attn.o_proj.weight",
                  p + "post_attention_layernorm.weight", p + "mlp.gate_proj.weight",
                  p + "mlp.up_proj.weight", p + "mlp.down_proj.weight"]
    return names + ["model.norm.weight", "lm_head.weight"]


def load_hf(model_dir, dtype=torch.float32, device="cpu"):
    """load_hf builds a Llama from an HF folder (config.json + safetensors)."""
    from . import hf
    import os
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = Config.from_hf(json.load(f))
    m = Llama(cfg)
    m.load_hf_state(hf.read_weights(model_dir), tied_ok=True)
    return m.to(device=device, dtype=dtype)
