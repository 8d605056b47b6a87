"""The PyTorch trainer: the Go trainer's loop (model/train) on CPU or CUDA,
single process or torchrun (DDP, or FSDP on torch >= 2.0).

Same data windows, schedule and optimizer as `ndb train` (docs/training.md):
AdamW (betas 0.9/0.95, eps 1e-8, decoupled weight decay on 2-D tensors only),
linear warmup then cosine decay to min_lr, global gradient-norm clipping.
Started from the same weights (--init an `ndb export` folder) on the same
packed data, it gives the Go trainer's losses (torch/interop_test.go).

    python3 -m ndb_torch train --data PACKED --hf-template EXPORT --out RUN \
        [--config small | --config-json F | --init HFDIR] [--steps N | --tokens N | --time S]
    torchrun --nproc_per_node 8 -m ndb_torch train ...      # DDP (add --fsdp to shard)

RUN/ holds checkpoint.pt (resume with --resume), log.jsonl (ndb train's
fields) and hf/ (the HF Llama layout; `ndb import --hf RUN/hf --out m.model`).
"""
import argparse
import contextlib
import inspect
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist

from . import data as D
from . import hf
from .model import CONFIGS, Config, Llama, layout_names

TORCH_VERSION = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2] if x.isdigit())


def lr_at(step, warmup, total, max_lr, min_lr):
    """lr_at is nn.LR: linear warmup, cosine from max_lr to min_lr at total, then min_lr."""
    if step < warmup:
        return max_lr * (step + 1) / warmup
    if step >= total:
        return min_lr
    ratio = (step - warmup) / max(1, total - warmup)
    return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


def parse_count(s):
    """parse_count reads 50M, 2.5G, 1000 as an integer."""
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}.get(s[-1:].lower(), 1)
    return int(float(s[:-1] if mult != 1 else s) * mult)


def build_parser():
    p = argparse.ArgumentParser(prog="python3 -m ndb_torch train",
                                description="Train ndb's network with PyTorch on `ndb pack` output.")
    p.add_argument("--data", required=True, help="folder written by `ndb pack` (meta.json, train.bin, val.bin)")
    p.add_argument("--watch", default="", help="folder where more packed folders appear during the run (added at --refresh-every)")
    p.add_argument("--refresh-every", type=int, default=200, help="steps between looks at --watch")
    p.add_argument("--out", required=True, help="run folder: checkpoint.pt, log.jsonl, hf/")
    p.add_argument("--hf-template", default="", help="an `ndb export` folder whose tokenizer files are copied (default: --init)")
    p.add_argument("--export-dir", default="", help="where the HF layout goes (default OUT/hf)")
    p.add_argument("--export-dtype", default="f32", help="f32, bf16 or f16")
    p.add_argument("--shard-mb", type=float, default=0, help="split exported weights into files of at most this many MiB")
    p.add_argument("--loss-on", default="all", choices=["all", "frames"],
                   help="targets trained on: all tokens, or frames (what the model writes when it debugs; as ndb train --loss-on)")
    p.add_argument("--config", default="tiny", help="tiny, small, base (model/nn Configs)")
    p.add_argument("--config-json", default="", help="HF config.json (or a JSON of its 8 size fields) instead of --config")
    p.add_argument("--init", default="", help="HF folder (e.g. `ndb export`) to start from: its config and weights")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--steps", type=int, default=0, help="optimizer steps (default 1000)")
    g.add_argument("--tokens", default="", help="train on this many tokens (50M, 2.5G)")
    g.add_argument("--time", type=float, default=0, help="wall-clock seconds to train (steps sized from measured step time)")
    p.add_argument("--batch", type=int, default=8, help="sequences per step (all ranks together)")
    p.add_argument("--seq", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--min-lr", type=float, default=3e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--beta1", type=float, default=0.9)
    p.add_argument("--beta2", type=float, default=0.95)
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1, help="batch sampling (SplitMix64) and initial weights")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--eval-windows", type=int, default=64)
    p.add_argument("--save-every", type=int, default=500)
    p.add_argument("--export-every", type=int, default=0, help="also export the HF layout every N steps (0: only at the end)")
    p.add_argument("--resume", action="store_true", help="continue the run saved in OUT/checkpoint.pt")
    p.add_argument("--stop-at", type=int, default=0, help="stop after this step with a checkpoint (as if interrupted)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda")
    p.add_argument("--dtype", default="float32", help="parameter dtype: float32 (default) or float64 (reference checks)")
    p.add_argument("--amp", default="auto", help="autocast: auto (bf16 on CUDA, off on CPU), bf16, fp16, off")
    p.add_argument("--compile", action="store_true", help="torch.compile the model (torch >= 2.0; falls back to eager on failure)")
    p.add_argument("--fsdp", action="store_true", help="shard parameters with FSDP under torchrun (torch >= 2.0)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--log-every", type=int, default=0, help="steps between host syncs for the log (0: 1 on CPU, 10 on CUDA)")
    p.add_argument("--quiet", action="store_true")
    return p


class Dist(object):
    """Dist is the process group view: rank, world, this rank's batch rows."""

    def __init__(self):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.enabled = self.world > 1
        self.device = torch.device("cpu")

    def init(self, device):
        """init joins the process group (after the CUDA device is set, as NCCL wants)."""
        self.device = device
        if self.enabled and not dist.is_initialized():
            dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")

    @property
    def main(self):
        return self.rank == 0

    def rows(self, batch):
        if batch % self.world:
            raise SystemExit("train: --batch %d is not a multiple of the %d processes" % (batch, self.world))
        per = batch // self.world
        return list(range(self.rank * per, (self.rank + 1) * per))

    def mean(self, x):
        """mean averages a float over the ranks."""
        if not self.enabled:
            return x
        t = torch.tensor([x], dtype=torch.float64, device=self.device)
        dist.all_reduce(t)
        return t.item() / self.world

    def sum_tensor(self, t):
        if self.enabled:
            dist.all_reduce(t)
        return t

    def min_int(self, x):
        if not self.enabled:
            return x
        t = torch.tensor([x], dtype=torch.int64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MIN)
        return int(t.item())

    def barrier(self):
        if self.enabled:
            dist.barrier()


def pick_device(arg, dd):
    if arg == "auto":
        arg = "cuda" if torch.cuda.is_available() else "cpu"
    if arg.startswith("cuda"):
        if not torch.cuda.is_available():
            raise SystemExit("train: --device cuda but CUDA is not available")
        idx = dd.local_rank if dd.enabled else (int(arg.split(":")[1]) if ":" in arg else 0)
        torch.cuda.set_device(idx)
        return torch.device("cuda", idx)
    return torch.device("cpu")


def autocast_ctx(device, amp):
    """autocast_ctx: bf16/fp16 autocast on CUDA (torch.autocast exists since 1.10)."""
    if amp == "auto":
        amp = "bf16" if device.type == "cuda" else "off"
    if amp == "off":
        return contextlib.nullcontext, None
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
    if dt is None:
        raise SystemExit("train: --amp %r: want auto, bf16, fp16, off" % amp)
    if device.type == "cpu" and dt is torch.float16:
        raise SystemExit("train: fp16 autocast needs CUDA")
    return (lambda: torch.autocast(device_type=device.type, dtype=dt)), amp


def make_optimizer(params_named, o, device):
    """make_optimizer: torch AdamW, weight decay on 2-D tensors only (as nn.AdamW)."""
    decay = [p for n, p in params_named if p.dim() == 2]
    plain = [p for n, p in params_named if p.dim() != 2]
    groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": plain, "weight_decay": 0.0}]
    kw = dict(lr=o["lr"], betas=(o["beta1"], o["beta2"]), eps=o["eps"])
    sig = inspect.signature(torch.optim.AdamW).parameters
    if device.type == "cuda" and "fused" in sig and TORCH_VERSION >= (2, 0):
        kw["fused"] = True
    elif "foreach" in sig:
        kw["foreach"] = device.type == "cuda"
    return torch.optim.AdamW(groups, **kw)


def model_config(args, vocab):
    if args.init:
        with open(os.path.join(args.init, "config.json")) as f:
            return Config.from_hf(json.load(f))
    if args.config_json:
        with open(args.config_json) as f:
            c = json.load(f)
        c.setdefault("vocab_size", vocab)
        return Config.from_hf(c)
    return Config.named(args.config, vocab)


class Logger(object):
    def __init__(self, path, enabled, quiet):
        self.path, self.enabled, self.quiet = path, enabled, quiet
        self.last_print = 0.0

    def truncate(self, step):
        """truncate keeps the records of steps <= step (a resumed run redoes the rest)."""
        if not self.enabled or not os.path.exists(self.path):
            return
        with open(self.path) as f:
            recs = [l for l in f if l.strip() and json.loads(l)["step"] <= step]
        with open(self.path, "w") as f:
            f.writelines(recs)

    def write(self, rec, total):
        if not self.enabled:
            return
        with open(self.path, "a") as f:
            f.write(json.dumps(rec) + "\n")
        now = time.time()
        if not self.quiet and (now - self.last_print > 2 or rec["step"] == total or "val_loss" in rec):
            self.last_print = now
            extra = " val %.4f" % rec["val_loss"] if "val_loss" in rec else ""
            print("step %d/%s loss %.4f%s lr %.2e %.0f tok/s" % (rec["step"], total if total < 10 ** 9 else "?", rec["loss"], extra,
                                                                rec["lr"], rec["tokens_per_s"]), file=sys.stderr, flush=True)


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    dd = Dist()
    device = pick_device(args.device, dd)
    dd.init(device)
    if device.type == "cuda":
        # TF32 for whatever autocast leaves in float32 (bf16 autocast is the default).
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    pdtype = {"float32": torch.float32, "float64": torch.float64}.get(args.dtype)
    if pdtype is None:
        raise SystemExit("train: --dtype %r: want float32 or float64" % args.dtype)
    autocast, amp = autocast_ctx(device, args.amp)
    export_dtype = hf.parse_dtype(args.export_dtype)
    template = args.hf_template or args.init
    if not template:
        raise SystemExit("train: --hf-template (an `ndb export` folder with the tokenizer) is required unless --init gives one")
    if not os.path.exists(os.path.join(template, "tokenizer.json")):
        raise SystemExit("train: %s has no tokenizer.json" % template)
    if args.fsdp and amp == "fp16":
        raise SystemExit("train: --fsdp with fp16 autocast is not supported (use bf16)")
    if args.fsdp and (not dd.enabled or TORCH_VERSION < (2, 0)):
        raise SystemExit("train: --fsdp needs torchrun with several processes and torch >= 2.0 (this is %s)" % torch.__version__)
    frame_ids = hf.frame_token_ids(template) if args.loss_on == "frames" else None
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "checkpoint.pt")
    export_dir = args.export_dir or os.path.join(args.out, "hf")
    log = Logger(os.path.join(args.out, "log.jsonl"), dd.main, args.quiet)

    # Options: what a checkpoint keeps (ndb train's Options, same names).
    ckpt = None
    if args.resume:
        if not os.path.exists(ckpt_path):
            raise SystemExit("train: --resume: %s does not exist" % ckpt_path)
        # Our own file: torch >= 2.6 loads weights only by default, which also works, but be explicit.
        kw = {"weights_only": False} if "weights_only" in inspect.signature(torch.load).parameters else {}
        ckpt = torch.load(ckpt_path, map_location="cpu", **kw)
        o = ckpt["options"]
        data = D.TrainData(args.data, args.watch or None, ckpt.get("watch_loaded", []), frame_ids)
        m0, m1 = ckpt["data"], data.meta
        if (m0["tokenizer_sha256"], m0["train_tokens"], m0["val_tokens"]) != (m1["tokenizer_sha256"], m1["train_tokens"], m1["val_tokens"]):
            raise SystemExit("train: --resume: the packed data (%d train tokens, tokenizer %.12s) is not what the checkpoint trained on (%d, %.12s)"
                             % (m1["train_tokens"], m1["tokenizer_sha256"], m0["train_tokens"], m0["tokenizer_sha256"]))
        cfg = Config(**ckpt["config"])
        step, tokens_seen, elapsed0 = ckpt["step"], ckpt["tokens"], ckpt["elapsed_s"]
    else:
        data = D.TrainData(args.data, args.watch or None, frame_ids=frame_ids)
        o = dict(batch=args.batch, seq=args.seq, steps=args.steps or 1000, lr=args.lr, min_lr=args.min_lr,
                 warmup=args.warmup, weight_decay=args.weight_decay, beta1=args.beta1, beta2=args.beta2,
                 eps=args.eps, clip_norm=args.clip, seed=args.seed, eval_every=args.eval_every,
                 eval_windows=args.eval_windows, save_every=args.save_every)
        cfg = model_config(args, data.meta["vocab_size"])
        step, tokens_seen, elapsed0 = 0, 0, 0.0
    # A budget given again changes the schedule from here on (as ndb train).
    if args.tokens:
        per = o["batch"] * o["seq"]
        o["steps"] = (parse_count(args.tokens) + per - 1) // per
    elif args.steps and args.resume:
        o["steps"] = args.steps
    if o["warmup"] >= o["steps"]:
        o["warmup"] = o["steps"] // 10
    B, T = o["batch"], o["seq"]
    if not (o["lr"] > 0 and 0 <= o["min_lr"] <= o["lr"]):
        raise SystemExit("train: need 0 <= min_lr <= lr, lr > 0")
    if T > cfg.max_position_embeddings:
        raise SystemExit("train: --seq %d exceeds the config's context of %d" % (T, cfg.max_position_embeddings))
    if cfg.vocab_size < data.meta["vocab_size"]:
        raise SystemExit("train: model vocabulary %d is smaller than the data's %d" % (cfg.vocab_size, data.meta["vocab_size"]))
    tok_vocab = hf.tokenizer_vocab_size(template)
    if tok_vocab != data.meta["vocab_size"]:
        raise SystemExit("train: %s/tokenizer.json has %d ids, the packed data's tokenizer %d" % (template, tok_vocab, data.meta["vocab_size"]))
    if data.n_train < T + 1:
        raise SystemExit("train: %d training tokens cannot fill one window of %d" % (data.n_train, T + 1))
    rows = dd.rows(B)

    torch.manual_seed(o["seed"])
    net = Llama(cfg)
    if ckpt is not None:
        net.load_hf_state({k: v.float().numpy() for k, v in ckpt["model"].items()}, tied_ok=False)
    elif args.init:
        net.load_hf_state(hf.read_weights(args.init))
    net = net.to(device=device, dtype=pdtype)
    if dd.main:
        print("ndb_torch: %s, %d parameters, torch %s on %s%s, %d process(es), amp %s; %s steps of %dx%d tokens; data: %d train / %d val tokens"
              % (cfg, cfg.num_params(), torch.__version__, device, "" if not args.fsdp else " (FSDP)", dd.world, amp,
                 "%.0fs of" % args.time if args.time > 0 else o["steps"], B, T, data.n_train, len(data.val)), file=sys.stderr, flush=True)

    # Wrapping: DDP averages gradients; FSDP shards parameters (use_orig_params
    # keeps per-tensor weight decay).
    model = net
    if args.fsdp:
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp import wrap as fsdp_wrap
        from .model import DecoderLayer
        if hasattr(fsdp_wrap, "ModuleWrapPolicy"):  # torch >= 2.1
            policy = fsdp_wrap.ModuleWrapPolicy({DecoderLayer})
        else:
            import functools
            policy = functools.partial(fsdp_wrap.transformer_auto_wrap_policy, transformer_layer_cls={DecoderLayer})
        # use_orig_params keeps one parameter per tensor: weight decay stays per tensor.
        model = FSDP(net, auto_wrap_policy=policy, use_orig_params=True,
                     device_id=device if device.type == "cuda" else None)
    elif dd.enabled:
        # The only buffers are the rotary tables, equal on every rank: no broadcast.
        model = torch.nn.parallel.DistributedDataParallel(net, device_ids=[device.index] if device.type == "cuda" else None,
                                                          broadcast_buffers=False)
    opt = make_optimizer(list(model.named_parameters()), o, device)
    if ckpt is not None:
        if args.fsdp:
            if hasattr(FSDP, "optim_state_dict_to_load"):
                try:  # torch >= 2.1: (model, optim, state); 2.0: (state, model, optim)
                    osd = FSDP.optim_state_dict_to_load(model, opt, ckpt["optimizer"])
                except TypeError:
                    osd = FSDP.optim_state_dict_to_load(ckpt["optimizer"], model, opt)
            else:
                osd = FSDP.shard_full_optim_state_dict(ckpt["optimizer"], model)
            opt.load_state_dict(osd)
        else:
            opt.load_state_dict(ckpt["optimizer"])
    # fp16 needs loss scaling; for bf16 and float32 the scaler is a no-op.
    if hasattr(torch, "amp") and hasattr(torch.amp, "GradScaler"):  # torch >= 2.3
        scaler = torch.amp.GradScaler(device.type, enabled=(amp == "fp16"))
    else:
        scaler = torch.cuda.amp.GradScaler(enabled=(amp == "fp16"))
    train_model = model
    if args.compile:
        if hasattr(torch, "compile"):
            train_model = torch.compile(model)
        elif dd.main:
            print("ndb_torch: torch %s has no torch.compile; running eager" % torch.__version__, file=sys.stderr)

    def full_state():
        """full_state: {HF name: float32 CPU tensor} gathered on every rank (FSDP: rank 0 only)."""
        if args.fsdp:
            from torch.distributed.fsdp import StateDictType, FullStateDictConfig
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
                sd = model.state_dict()
        else:
            sd = net.state_dict()
        return {k: sd[k].detach().float().cpu() for k in layout_names(cfg) if k in sd}

    def optim_state():
        if args.fsdp:
            if hasattr(FSDP, "optim_state_dict"):
                return FSDP.optim_state_dict(model, opt)
            return FSDP.full_optim_state_dict(model, opt)
        return opt.state_dict()

    def save(st_step):
        sd, osd = full_state(), optim_state()
        if dd.main:
            blob = dict(format="ndb-torch-checkpoint-v1", config=cfg.to_dict(), options=o, step=st_step,
                        tokens=tokens_seen, elapsed_s=elapsed0 + (time.time() - t_start), data=data.meta,
                        watch_loaded=data.loaded, model=sd, optimizer=osd, torch_version=torch.__version__)
            tmp = ckpt_path + ".tmp"
            torch.save(blob, tmp)
            os.replace(tmp, ckpt_path)
        dd.barrier()

    def export(st_step):
        sd = full_state()
        if dd.main:
            files = hf.export(export_dir, {k: v.numpy() for k, v in sd.items()}, cfg, template,
                              export_dtype, int(args.shard_mb * (1 << 20)))
            with open(os.path.join(export_dir, "ndb_torch.json"), "w") as f:
                json.dump({"step": st_step, "tokens": tokens_seen, "options": o, "torch_version": torch.__version__,
                           "files": files}, f, indent=2)
        dd.barrier()

    val_offs = D.val_offsets(len(data.val), T, o["eval_windows"])

    def eval_loss():
        """eval_loss: mean over the validation windows (each rank a share), B at a time."""
        # DDP: the plain module (no collective in forward, ranks may run
        # different counts). FSDP: the wrapper, the same number of forwards
        # on every rank (a rank out of windows repeats one and ignores it).
        em = model if args.fsdp else net
        em.eval()
        mine = val_offs[dd.rank::dd.world]
        iters = -(-(-(-len(val_offs) // dd.world)) // B)
        tot = torch.zeros(2, dtype=torch.float64, device=device)
        with torch.no_grad():
            for it in range(iters):
                chunk = mine[it * B:(it + 1) * B]
                real = len(chunk)
                if not real:
                    if not args.fsdp:
                        break
                    chunk = val_offs[:1]
                x, y = D.windows(data.val, chunk, T, data.val_y)
                with autocast():
                    _, loss = em(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device))
                if real:
                    tot[0] += loss.double() * real
                    tot[1] += real
        dd.sum_tensor(tot)
        em.train()
        return (tot[0] / tot[1]).item()

    if args.resume:
        log.truncate(step)
    elif dd.main and os.path.exists(log.path):
        os.remove(log.path)
    log_every = args.log_every or (10 if device.type == "cuda" else 1)
    deadline = time.time() + args.time if args.time > 0 else None
    calibrate_at = None
    if args.time > 0:
        # The cosine needs the total: time the first steps (within warmup
        # where possible, so no learning rate used so far depends on it; the
        # first half of the window is left out: compilation, caches), then
        # size the run to 95% of the remaining budget.
        calibrate_at = step + max(8, min(o["warmup"], 60))
        o["steps"] = step + 10 ** 9
    t_start = time.time()
    step0 = step
    run_tokens = 0
    pending = []
    t_cal = None
    n_train = dd.min_int(data.n_train)
    stop_reason = "done"
    model.train()
    while step < o["steps"]:
        if deadline is not None and time.time() > deadline:
            stop_reason = "deadline"
            break
        if args.stop_at and step >= args.stop_at:
            stop_reason = "stop-at"
            break
        if data.watch_dir and step % args.refresh_every == 0 and step > 0:
            if data.grow(dd.min_int(len(data.ready()))):
                n_train = dd.min_int(data.n_train)
                if dd.main and not args.quiet:
                    print("ndb_torch: step %d: training data grew to %d tokens (%d folders)" % (step, n_train, len(data.parts)),
                          file=sys.stderr, flush=True)
        offs = D.batch_offsets(o["seed"], step, B, T, n_train, rows)
        x, y = data.train_windows(offs, T)
        x = torch.from_numpy(x).to(device, non_blocking=True)
        y = torch.from_numpy(y).to(device, non_blocking=True)
        lr = lr_at(step, o["warmup"], o["steps"], o["lr"], o["min_lr"])
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        try:
            with autocast():
                _, loss = train_model(x, y)
        except Exception as e:  # torch.compile failing on this machine: run eager
            if train_model is model:
                raise
            if dd.main:
                print("ndb_torch: torch.compile failed (%s: %s); running eager" % (type(e).__name__, str(e)[:200]),
                      file=sys.stderr, flush=True)
            train_model = model
            opt.zero_grad(set_to_none=True)
            with autocast():
                _, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        if args.fsdp:
            gnorm = model.clip_grad_norm_(o["clip_norm"])
        else:
            gnorm = torch.nn.utils.clip_grad_norm_(net.parameters(), o["clip_norm"])
        scaler.step(opt)
        scaler.update()
        step += 1
        tokens_seen += B * T
        run_tokens += B * T
        pending.append((step, lr, loss.detach(), torch.as_tensor(gnorm).detach(), tokens_seen))
        if calibrate_at is not None and step == calibrate_at - (calibrate_at - step0) // 2:
            if device.type == "cuda":
                torch.cuda.synchronize()
            t_cal, s_cal = time.time(), step
        if calibrate_at is not None and step == calibrate_at:
            if device.type == "cuda":
                torch.cuda.synchronize()
            per_step = dd.mean((time.time() - t_cal) / (step - s_cal))
            left = deadline - time.time()
            # Validation and checkpoints take time too; the deadline stops
            # the run if the estimate was optimistic.
            o["steps"] = step + max(1, int(0.95 * left / per_step * (1 - 0.02 * (o["eval_every"] > 0))))
            if o["warmup"] >= o["steps"]:
                o["warmup"] = o["steps"] // 10
            calibrate_at = None
            if dd.main and not args.quiet:
                print("ndb_torch: %.1f ms/step: run sized to %d steps" % (per_step * 1e3, o["steps"]), file=sys.stderr, flush=True)
        do_eval = len(val_offs) > 0 and (step % max(o["eval_every"], 1) == 0 or step == o["steps"])
        if do_eval or len(pending) >= log_every or step == o["steps"]:
            wall = time.time() - t_start
            losses = torch.stack([p[2].double() for p in pending]).cpu()
            norms = torch.stack([p[3].double() for p in pending]).cpu()
            if dd.enabled:
                losses = losses.to(device)
                dd.sum_tensor(losses)
                losses = (losses / dd.world).cpu()
            vloss = eval_loss() if do_eval else None
            for i, (s, lr_s, _, _, tok) in enumerate(pending):
                rec = dict(step=s, tokens=tok, lr=lr_s, loss=losses[i].item(), grad_norm=norms[i].item(),
                           tokens_per_s=run_tokens / max(wall, 1e-9), elapsed_s=elapsed0 + wall)
                if not math.isfinite(rec["loss"]):
                    raise SystemExit("train: step %d: loss is %s (lower --lr?)" % (s, rec["loss"]))
                if vloss is not None and i == len(pending) - 1:
                    rec["val_loss"] = vloss
                log.write(rec, o["steps"])
            pending = []
        if o["save_every"] > 0 and step % o["save_every"] == 0 and step < o["steps"]:
            save(step)
        if args.export_every > 0 and step % args.export_every == 0 and step < o["steps"]:
            export(step)
    if pending:  # stopped between log points
        wall = time.time() - t_start
        for s, lr_s, l, gn, tok in pending:
            log.write(dict(step=s, tokens=tok, lr=lr_s, loss=dd.mean(l.item()), grad_norm=gn.item(),
                           tokens_per_s=run_tokens / max(wall, 1e-9), elapsed_s=elapsed0 + wall), o["steps"])
    save(step)
    export(step)
    if dd.main:
        print("ndb_torch: %s at step %d of %d: %d tokens, %.0f tok/s; checkpoint %s, HF layout %s"
              % (stop_reason, step, o["steps"], tokens_seen, run_tokens / max(time.time() - t_start, 1e-9), ckpt_path, export_dir),
              file=sys.stderr, flush=True)
    if dd.enabled:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
