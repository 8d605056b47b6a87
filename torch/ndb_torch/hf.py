"""The Hugging Face Llama layout, read and written without safetensors/transformers.

safetensors: an 8-byte little-endian header length, a JSON header (sorted
keys, padded with spaces to a multiple of 8, as ndb's Go writer does), then
the raw little-endian tensor data. BF16 is the upper half of the float32,
rounded to nearest even; F16 is IEEE half (numpy's rounding, nearest even).
"""
import json
import os
import shutil
import struct

import numpy as np

WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
CONFIG_FILE = "config.json"
# Files copied verbatim from an `ndb export` folder: the tokenizer and its
# settings are ndb's, the trainer never changes them.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                   "generation_config.json")

DTYPE_SIZE = {"F32": 4, "BF16": 2, "F16": 2}
TORCH_DTYPE_NAME = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}


def parse_dtype(s):
    """parse_dtype maps f32|bf16|f16 (any case) to the safetensors name."""
    d = {"f32": "F32", "float32": "F32", "bf16": "BF16", "bfloat16": "BF16",
         "f16": "F16", "float16": "F16", "fp16": "F16"}.get(s.lower())
    if d is None:
        raise ValueError("dtype %r: want f32, bf16 or f16" % s)
    return d


def f32_to_bf16_bits(a):
    """f32_to_bf16_bits rounds float32 values to bfloat16 (nearest even), as uint16."""
    bits = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    out = rounded.astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():  # keep NaN a NaN (rounding could carry it into inf)
        out[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return out


def encode(a, dtype):
    """encode returns the little-endian bytes of float32 array a stored as dtype."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        with np.errstate(over="ignore"):
            return a.astype("<f2").tobytes()
    if dtype == "BF16":
        return f32_to_bf16_bits(a).astype("<u2").tobytes()
    raise ValueError("unsupported dtype " + dtype)


def decode(raw, dtype, shape):
    """decode widens raw safetensors data to a float32 array of shape."""
    if dtype == "F32":
        arr = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    elif dtype == "F16":
        arr = np.frombuffer(raw, dtype="<f2").astype(np.float32)
    elif dtype == "BF16":
        arr = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
    else:
        raise ValueError("unsupported dtype %s" % dtype)
    return arr.reshape(shape)


def write_safetensors(path, tensors, dtype):
    """write_safetensors writes [(name, float32 array)] in order as dtype."""
    header = {"__metadata__": {"format": "pt"}}
    off = 0
    for name, a in tensors:
        n = int(a.size) * DTYPE_SIZE[dtype]
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, a in tensors:
            f.write(encode(a, dtype))
    os.replace(tmp, path)


def read_safetensors(path):
    """read_safetensors returns {name: float32 array} of one file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: truncated safetensors file" % path)
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError("%s: header of %d bytes past the end" % (path, n))
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        if e > len(body) or e - b != int(np.prod(info["shape"], dtype=np.int64)) * DTYPE_SIZE.get(info["dtype"], 0):
            raise ValueError("%s: tensor %s does not fit the file" % (path, name))
        out[name] = decode(body[b:e], info["dtype"], info["shape"])
    return out


def read_weights(model_dir):
    """read_weights reads model.safetensors or the shards of its index."""
    index = os.path.join(model_dir, INDEX_FILE)
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = [WEIGHTS_FILE]
    weights = {}
    for name in files:
        weights.update(read_safetensors(os.path.join(model_dir, name)))
    return weights


def write_weights(out_dir, tensors, dtype, shard_bytes=0):
    """write_weights writes one model.safetensors, or shards of at most
    shard_bytes of tensor data each (a larger tensor gets a file of its own)
    plus model.safetensors.index.json: the same split as `ndb export`."""
    os.makedirs(out_dir, exist_ok=True)
    if shard_bytes <= 0:
        if os.path.exists(os.path.join(out_dir, INDEX_FILE)):
            os.remove(os.path.join(out_dir, INDEX_FILE))
        write_safetensors(os.path.join(out_dir, WEIGHTS_FILE), tensors, dtype)
        return [WEIGHTS_FILE]
    shards, size = [], 0
    for name, a in tensors:
        n = int(a.size) * DTYPE_SIZE[dtype]
        if not shards or size + n > shard_bytes:
            shards.append([])
            size = 0
        shards[-1].append((name, a))
        size += n
    index = {"metadata": {"total_size": 0}, "weight_map": {}}
    names = []
    for i, shard in enumerate(shards):
        fname = "model-%05d-of-%05d.safetensors" % (i + 1, len(shards))
        write_safetensors(os.path.join(out_dir, fname), shard, dtype)
        names.append(fname)
        for name, a in shard:
            index["weight_map"][name] = fname
            index["metadata"]["total_size"] += int(a.size) * DTYPE_SIZE[dtype]
    if os.path.exists(os.path.join(out_dir, WEIGHTS_FILE)):
        os.remove(os.path.join(out_dir, WEIGHTS_FILE))
    with open(os.path.join(out_dir, INDEX_FILE), "w") as f:
        json.dump(index, f, indent=2, sort_keys=True)
        f.write("\n")
    return names


def llama_config_json(cfg, bos_id, eos_id, dtype):
    """llama_config_json is config.json as `ndb export` writes it."""
    return {
        "hidden_size": cfg.hidden_size,
        "intermediate_size": cfg.intermediate_size,
        "num_hidden_layers": cfg.num_hidden_layers,
        "num_attention_heads": cfg.num_attention_heads,
        "vocab_size": cfg.vocab_size,
        "max_position_embeddings": cfg.max_position_embeddings,
        "rope_theta": cfg.rope_theta,
        "rms_norm_eps": cfg.rms_norm_eps,
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "num_key_value_heads": cfg.num_attention_heads,
        "head_dim": cfg.hidden_size // cfg.num_attention_heads,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
        "rope_scaling": None,
        "bos_token_id": bos_id,
        "eos_token_id": eos_id,
        "torch_dtype": TORCH_DTYPE_NAME[dtype],
        "initializer_range": 0.02,
        "pretraining_tp": 1,
        "use_cache": True,
        "attention_dropout": 0,
    }


def special_ids(template_dir):
    """special_ids returns (bos, eos) ids from a template's config.json, or
    from its tokenizer.json's added tokens."""
    cfg_path = os.path.join(template_dir, CONFIG_FILE)
    if os.path.exists(cfg_path):
        with open(cfg_path) as f:
            c = json.load(f)
        if "bos_token_id" in c and "eos_token_id" in c:
            return c["bos_token_id"], c["eos_token_id"]
    with open(os.path.join(template_dir, "tokenizer.json")) as f:
        tok = json.load(f)
    ids = {t["content"]: t["id"] for t in tok.get("added_tokens", [])}
    return ids.get("<|begin_of_text|>"), ids.get("<|end_of_text|>")


def frame_token_ids(template_dir):
    """frame_token_ids: the ids of <|begin_of_text|>, <|frame_sep|> and
    <|action_sep|> in the template's tokenizer.json (data.frame_targets)."""
    with open(os.path.join(template_dir, "tokenizer.json")) as f:
        tok = json.load(f)
    ids = {t["content"]: t["id"] for t in tok.get("added_tokens", [])}
    names = ("<|begin_of_text|>", "<|frame_sep|>", "<|action_sep|>")
    missing = [n for n in names if n not in ids]
    if missing:
        raise SystemExit("train: %s/tokenizer.json lacks %s (needed by --loss-on frames)" % (template_dir, ", ".join(missing)))
    return tuple(ids[n] for n in names)


def tokenizer_vocab_size(template_dir):
    """tokenizer_vocab_size is the number of ids of the template's tokenizer.json."""
    with open(os.path.join(template_dir, "tokenizer.json")) as f:
        tok = json.load(f)
    ids = list(tok["model"]["vocab"].values()) + [t["id"] for t in tok.get("added_tokens", [])]
    return max(ids) + 1


def export(out_dir, state, cfg, template_dir, dtype="F32", shard_bytes=0):
    """export writes the HF Llama layout: weights (state: name -> float32
    array, in the model's order), config.json, and the tokenizer files copied
    from template_dir (an `ndb export` folder with the same tokenizer)."""
    os.makedirs(out_dir, exist_ok=True)
    files = write_weights(out_dir, list(state.items()), dtype, shard_bytes)
    bos, eos = special_ids(template_dir)
    conf = llama_config_json(cfg, bos, eos, dtype)
    tmp = os.path.join(out_dir, CONFIG_FILE + ".tmp")
    with open(tmp, "w") as f:
        json.dump(conf, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(out_dir, CONFIG_FILE))
    for name in TOKENIZER_FILES:
        src = os.path.join(template_dir, name)
        if os.path.exists(src) and os.path.abspath(src) != os.path.abspath(os.path.join(out_dir, name)):
            shutil.copyfile(src, os.path.join(out_dir, name))
    return files
