"""PyTorch Llama matching HF LlamaForCausalLM, for reference checks and the
training benchmark (`ndb bench train --vs-torch`).

  /usr/bin/python3 torch_llama.py ref DIR
      float64: gradients of the loss for every tensor (DIR/ref_grads.bin, layout
      order) and the losses of steps AdamW steps with clipping and the given
      learning rates (DIR/ref_steps.json), starting from DIR/params.bin.
  /usr/bin/python3 torch_llama.py bench CONFIG_JSON B T STEPS THREADS
      float32 training speed on random tokens; prints {"tokens_per_s": ...}.
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F


def attend(q, k, v):
    """Causal attention (B, H, T, Dh); torch >= 2 has it fused, 1.13 does not."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    T = q.shape[-2]
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


class Llama(torch.nn.Module):
    def __init__(self, cfg, dtype):
        super().__init__()
        C, Fd, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
        self.cfg = cfg
        self.H, self.L = cfg["num_attention_heads"], cfg["num_hidden_layers"]
        self.eps, self.theta = cfg["rms_norm_eps"], cfg["rope_theta"]
        P = torch.nn.ParameterDict()

        def add(name, *shape):
            P[name.replace(".", "__")] = torch.nn.Parameter(torch.empty(*shape, dtype=dtype).normal_(0, 0.02) if len(shape) == 2 else torch.ones(*shape, dtype=dtype))
            self.names.append(name)

        self.names = []
        add("model.embed_tokens.weight", V, C)
        for i in range(self.L):
            p = f"model.layers.{i}."
            add(p + "input_layernorm.weight", C)
            for n in "qkvo":
                add(p + f"self_attn.{n}_proj.weight", C, C)
            add(p + "post_attention_layernorm.weight", C)
            add(p + "mlp.gate_proj.weight", Fd, C)
            add(p + "mlp.up_proj.weight", Fd, C)
            add(p + "mlp.down_proj.weight", C, Fd)
        add("model.norm.weight", C)
        add("lm_head.weight", V, C)
        self.P = P

    def w(self, name):
        return self.P[name.replace(".", "__")]

    def rms(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def forward(self, idx, targets):
        B, T = idx.shape
        C = self.cfg["hidden_size"]
        Dh = C // self.H
        inv_freq = 1.0 / (self.theta ** (torch.arange(0, Dh, 2, dtype=torch.float64) / Dh))
        emb = torch.arange(T, dtype=torch.float64)[:, None] * inv_freq[None]
        emb = torch.cat([emb, emb], -1)
        dt = self.w("model.norm.weight").dtype
        cos, sin = emb.cos().to(dt), emb.sin().to(dt)

        def rot(x):
            x1, x2 = x.chunk(2, -1)
            return x * cos + torch.cat([-x2, x1], -1) * sin

        x = F.embedding(idx, self.w("model.embed_tokens.weight"))
        for i in range(self.L):
            p = f"model.layers.{i}."
            h = self.rms(x, self.w(p + "input_layernorm.weight"))
            q, k, v = (F.linear(h, self.w(p + f"self_attn.{n}_proj.weight")).view(B, T, self.H, Dh).transpose(1, 2) for n in "qkv")
            y = attend(rot(q), rot(k), v)
            x = x + F.linear(y.transpose(1, 2).reshape(B, T, C), self.w(p + "self_attn.o_proj.weight"))
            h = self.rms(x, self.w(p + "post_attention_layernorm.weight"))
            x = x + F.linear(F.silu(F.linear(h, self.w(p + "mlp.gate_proj.weight"))) * F.linear(h, self.w(p + "mlp.up_proj.weight")), self.w(p + "mlp.down_proj.weight"))
        logits = F.linear(self.rms(x, self.w("model.norm.weight")), self.w("lm_head.weight"))
        return F.cross_entropy(logits.view(B * T, -1), targets.view(-1), ignore_index=-100)

    def optimizer(self, lr):
        decay = [p for n, p in zip(self.names, self.params()) if p.dim() == 2]
        other = [p for n, p in zip(self.names, self.params()) if p.dim() != 2]
        return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.95), eps=1e-8)

    def params(self):
        return [self.w(n) for n in self.names]


def ref(d):
    import numpy as np
    case = json.load(open(f"{d}/case.json"))
    cfg = case["config"]
    torch.manual_seed(0)
    m = Llama(cfg, torch.float64)
    flat = np.fromfile(f"{d}/params.bin", dtype=np.float32)
    with torch.no_grad():
        for t in case["layout"]:
            m.w(t["Name"]).copy_(torch.from_numpy(flat[t["Offset"]:t["Offset"] + t["Size"]].astype(np.float64).reshape(t["Shape"])))
    B, T = case["B"], case["T"]
    idx = torch.tensor(case["tokens"]).view(B, T)
    tgt = torch.tensor(case["targets"]).view(B, T)
    opt = m.optimizer(0.0)
    losses, norms = [], []
    for step, lr in enumerate(case["lrs"]):
        opt.zero_grad()
        loss = m(idx, tgt)
        loss.backward()
        if step == 0:
            torch.cat([m.w(t["Name"]).grad.reshape(-1) for t in case["layout"]]).numpy().tofile(f"{d}/ref_grads.bin")
        norms.append(float(torch.nn.utils.clip_grad_norm_(m.params(), case["clip"])))
        for g in opt.param_groups:
            g["lr"] = lr
        opt.step()
        losses.append(float(loss))
    json.dump({"losses": losses, "norms": norms}, open(f"{d}/ref_steps.json", "w"))


def bench(cfg_json, B, T, steps, threads):
    torch.set_num_threads(threads)
    cfg = json.loads(cfg_json)
    torch.manual_seed(0)
    m = Llama(cfg, torch.float32)
    opt = m.optimizer(3e-4)
    V = cfg["vocab_size"]
    idx = torch.randint(0, V, (B, T))
    tgt = torch.randint(0, V, (B, T))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = m(idx, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.params(), 1.0)
        opt.step()
        return float(loss)

    import resource

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    step()  # warm-up
    t0, c0 = time.perf_counter(), cpu()
    for _ in range(steps):
        step()
    dt, dc = time.perf_counter() - t0, cpu() - c0
    print(json.dumps({"tokens_per_s": B * T * steps / dt, "tokens_per_cpu_s": B * T * steps / dc,
                      "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    if sys.argv[1] == "ref":
        ref(sys.argv[2])
    elif sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
    else:
        sys.exit("usage: torch_llama.py ref DIR | bench CONFIG_JSON B T STEPS THREADS")
