"""Independent numpy reference of HF LlamaForCausalLM's forward pass.

Usage: /usr/bin/python3 ref.py DIR
Reads DIR/case.json (config, layout, B, T, tokens, targets) and DIR/params.bin
(float32, flat, in layout order); computes logits and the mean cross-entropy
(targets < 0 ignored) in float64 and writes DIR/ref_logits.bin (float64) and
DIR/ref_out.json {"loss": ...}. Written from the HF modeling_llama maths, not
from the Go code.
"""
import json
import sys

import numpy as np


def main(d):
    case = json.load(open(f"{d}/case.json"))
    cfg = case["config"]
    flat = np.fromfile(f"{d}/params.bin", dtype=np.float32).astype(np.float64)
    P = {t["Name"]: flat[t["Offset"]:t["Offset"] + t["Size"]].reshape(t["Shape"]) for t in case["layout"]}
    B, T = case["B"], case["T"]
    C, H, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    Dh, eps, theta = C // H, cfg["rms_norm_eps"], cfg["rope_theta"]
    tokens = np.array(case["tokens"]).reshape(B, T)

    def rmsnorm(x, w):
        return w * (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps))

    inv_freq = 1.0 / theta ** (np.arange(0, Dh, 2) / Dh)
    freqs = np.arange(T)[:, None] * inv_freq[None, :]  # (T, Dh/2)
    emb = np.concatenate([freqs, freqs], -1)  # (T, Dh)
    cos, sin = np.cos(emb), np.sin(emb)

    def rotate_half(x):
        h = x.shape[-1] // 2
        return np.concatenate([-x[..., h:], x[..., :h]], -1)

    x = P["model.embed_tokens.weight"][tokens]  # (B, T, C)
    mask = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(L):
        p = f"model.layers.{i}."
        h = rmsnorm(x, P[p + "input_layernorm.weight"])
        q, k, v = (
            (h @ P[p + f"self_attn.{n}_proj.weight"].T).reshape(B, T, H, Dh).transpose(0, 2, 1, 3)
            for n in "qkv"
        )  # (B, H, T, Dh)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(Dh) + mask  # (B, H, T, T)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        y = (s @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        x = x + y @ P[p + "self_attn.o_proj.weight"].T
        h = rmsnorm(x, P[p + "post_attention_layernorm.weight"])
        g = h @ P[p + "mlp.gate_proj.weight"].T
        u = h @ P[p + "mlp.up_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ P[p + "mlp.down_proj.weight"].T
    logits = rmsnorm(x, P["model.norm.weight"]) @ P["lm_head.weight"].T  # (B, T, V)
    logits = logits.reshape(B * T, -1)
    targets = np.array(case["targets"])
    keep = targets >= 0
    m = logits.max(-1, keepdims=True)
    lse = (m + np.log(np.exp(logits - m).sum(-1, keepdims=True)))[:, 0]
    loss = float((lse[keep] - logits[keep, targets[keep]]).mean())
    logits.astype(np.float64).tofile(f"{d}/ref_logits.bin")
    json.dump({"loss": loss}, open(f"{d}/ref_out.json", "w"))


if __name__ == "__main__":
    main(sys.argv[1])
