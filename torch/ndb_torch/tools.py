"""`python3 -m ndb_torch logits`: logits and greedy continuations of an HF folder in PyTorch.

    python3 -m ndb_torch logits --model HFDIR [--model HFDIR2 ...] --tokens T.json --out PREFIX [--greedy N]

T.json is a list of token-id lists (each one sequence). For model i and
sequence j, PREFIX.i.j.f32 holds the logits (len, V) as little-endian float32,
and PREFIX.json the greedy continuations: {"greedy": [[[ids of model i, seq j]]]}.
The interchange tests compare these with ndb's Go forward pass.
"""
import argparse
import json

import numpy as np
import torch

from .model import load_hf


def greedy(model, prompt, n):
    """greedy appends n argmax tokens to prompt (full forward each step: models here are small)."""
    ids = list(prompt)
    limit = model.config.max_position_embeddings
    with torch.no_grad():
        for _ in range(n):
            if len(ids) >= limit:
                break
            logits, _ = model(torch.tensor([ids], dtype=torch.int64))
            ids.append(int(torch.argmax(logits[0, -1]).item()))
    return ids[len(prompt):]


def logits_main(argv):
    p = argparse.ArgumentParser(prog="python3 -m ndb_torch logits")
    p.add_argument("--model", action="append", required=True, help="HF folder (repeatable)")
    p.add_argument("--tokens", required=True, help="JSON list of token-id lists")
    p.add_argument("--out", required=True, help="output prefix")
    p.add_argument("--greedy", type=int, default=0, help="greedy tokens to generate after each sequence")
    p.add_argument("--dtype", default="float32", help="float32 or float64")
    args = p.parse_args(argv)
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    with open(args.tokens) as f:
        seqs = json.load(f)
    result = {"greedy": []}
    for i, d in enumerate(args.model):
        m = load_hf(d, dtype=dtype).eval()
        gs = []
        for j, seq in enumerate(seqs):
            with torch.no_grad():
                logits, _ = m(torch.tensor([seq], dtype=torch.int64))
            logits[0].float().numpy().astype("<f4").tofile("%s.%d.%d.f32" % (args.out, i, j))
            gs.append(greedy(m, seq, args.greedy) if args.greedy else [])
        result["greedy"].append(gs)
    with open(args.out + ".json", "w") as f:
        json.dump(result, f)
    return 0
