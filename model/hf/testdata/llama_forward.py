"""Independent reference forward pass over an exported HF Llama folder.

Reads config.json and model.safetensors (or the shards named by
model.safetensors.index.json) with numpy only, runs LlamaForCausalLM's maths
in float64 (RMSNorm, rotary embeddings in HF's rotate_half convention,
causal multi-head attention, SwiGLU MLP, untied lm_head), and writes the
logits (T, V) as little-endian float64 to OUT.

    /usr/bin/python3 llama_forward.py MODEL_DIR TOKENS_JSON OUT

It shares no code with ndb: it is written from transformers' modeling_llama.
"""
import json
import os
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = body[begin:end]
        dtype = info["dtype"]
        if dtype == "F32":
            arr = np.frombuffer(raw, dtype="<f4")
        elif dtype == "F16":
            arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dtype == "BF16":
            arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError("unsupported dtype " + dtype)
        tensors[name] = arr.reshape(info["shape"]).astype(np.float64)
    return tensors


def read_weights(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    weights = {}
    for name in files:
        weights.update(read_safetensors(os.path.join(model_dir, name)))
    return weights


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def forward(cfg, w, tokens):
    C = cfg["hidden_size"]
    H = cfg["num_attention_heads"]
    assert cfg.get("num_key_value_heads", H) == H
    D = C // H
    T = len(tokens)
    eps = cfg["rms_norm_eps"]
    inv_freq = 1.0 / (cfg["rope_theta"] ** (np.arange(0, D, 2, dtype=np.float64) / D))
    freqs = np.outer(np.arange(T, dtype=np.float64), inv_freq)  # (T, D/2)
    emb = np.concatenate([freqs, freqs], axis=-1)  # (T, D)
    cos, sin = np.cos(emb), np.sin(emb)
    mask = np.triu(np.full((T, T), -np.inf), k=1)

    x = w["model.embed_tokens.weight"][tokens]  # (T, C)
    for layer in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % layer
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, D).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(T, H, D).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(T, H, D).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(D) + mask  # (H, T, T)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attn = scores / scores.sum(axis=-1, keepdims=True)
        y = (attn @ v).transpose(1, 0, 2).reshape(T, C)
        x = x + y @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        up = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (gate / (1.0 + np.exp(-gate)) * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight")
    if head is None and cfg.get("tie_word_embeddings"):
        head = w["model.embed_tokens.weight"]
    return x @ head.T  # (T, V)


def main():
    model_dir, tokens_path, out = sys.argv[1:4]
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    assert cfg["model_type"] == "llama" and cfg["hidden_act"] == "silu"
    with open(tokens_path) as f:
        tokens = np.array(json.load(f), dtype=np.int64)
    logits = forward(cfg, read_weights(model_dir), tokens)
    assert logits.shape == (len(tokens), cfg["vocab_size"])
    logits.astype("<f8").tofile(out)


if __name__ == "__main__":
    main()
