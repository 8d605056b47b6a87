"""`ndb pack` output and the Go trainer's batch sampling (docs/training.md).

Training windows: step s, row b starts at splitmix64(seed, s*B + b + 1) % (N - T)
of train.bin (N tokens); the window is train[off : off+T+1], inputs its first
T ids, targets its last T. Validation windows: offsets 0, T, 2T, ... while a
whole window fits, at most eval_windows of them (0: all).
"""
import json
import os

import numpy as np

PACK_FORMAT = "ndb-packed-v1"
M64 = (1 << 64) - 1


def splitmix64(seed, k):
    """splitmix64 is the k-th output (k >= 1) of SplitMix64 seeded with seed."""
    z = (seed + k * 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def batch_offsets(seed, step, batch, seq, n, rows=None):
    """batch_offsets: the window starts of training step `step` (rows: the
    subset of 0..batch-1 this process trains, default all)."""
    if n < seq + 1:
        raise ValueError("%d training tokens cannot fill one window of %d" % (n, seq + 1))
    span = n - seq
    rows = range(batch) if rows is None else rows
    return [splitmix64(seed, step * batch + b + 1) % span for b in rows]


def val_offsets(n, seq, max_windows):
    """val_offsets: starts 0, T, 2T, ... while a window of T+1 fits (at most max_windows, 0: all)."""
    offs = []
    off = 0
    while off + seq + 1 <= n:
        if max_windows > 0 and len(offs) == max_windows:
            break
        offs.append(off)
        off += seq
    return offs


IGNORE = -100  # model.IGNORE_INDEX: a target the loss skips


def frame_targets(tokens, bos, frame_sep, action_sep):
    """frame_targets is model/train's FrameTargets, vectorised: a token is a
    target when the last of <|begin_of_text|>, <|frame_sep|>, <|action_sep|>
    strictly before it is <|frame_sep|> and it is neither of the first two
    (so each frame is marked from the token after its <|frame_sep|> through
    its <|action_sep|>, the end tokens of the last frame included)."""
    t = np.asarray(tokens)
    n = len(t)
    if n == 0:
        return np.zeros(0, dtype=bool)
    ctrl = (t == bos) | (t == frame_sep) | (t == action_sep)
    last = np.maximum.accumulate(np.where(ctrl, np.arange(n, dtype=np.int64), -1))
    prev = np.empty(n, dtype=np.int64)
    prev[0] = -1
    prev[1:] = last[:-1]
    return (prev >= 0) & (t[np.maximum(prev, 0)] == frame_sep) & (t != bos) & (t != frame_sep)


def masked_targets(tokens, frame_ids):
    """masked_targets: the target stream of `--loss-on frames` (int32: the
    token where frame_targets marks it, IGNORE elsewhere), or None (all)."""
    if frame_ids is None:
        return None
    return np.where(frame_targets(tokens, *frame_ids), np.asarray(tokens).astype(np.int32), np.int32(IGNORE))


def windows(tokens, offs, seq, targets=None):
    """windows returns (inputs, targets), int64 arrays (len(offs), seq);
    targets come from the `targets` stream when given (masked_targets)."""
    idx = np.asarray(offs, dtype=np.int64)[:, None] + np.arange(seq + 1, dtype=np.int64)[None, :]
    w = tokens[idx].astype(np.int64)
    if targets is None:
        return w[:, :-1], w[:, 1:]
    return w[:, :-1], targets[idx[:, 1:]].astype(np.int64)


class Packed(object):
    """Packed is one folder written by `ndb pack`: meta, train and val ids."""

    def __init__(self, path, frame_ids=None):
        self.path = path
        try:
            with open(os.path.join(path, "meta.json")) as f:
                self.meta = json.load(f)
        except (OSError, ValueError) as e:
            raise ValueError("packed data %s: meta.json: %s" % (path, e))
        if self.meta.get("format") != PACK_FORMAT:
            raise ValueError("packed data %s: format %r, want %r" % (path, self.meta.get("format"), PACK_FORMAT))
        if self.meta.get("dtype", "uint32le") != "uint32le":
            raise ValueError("packed data %s: dtype %r, want uint32le" % (path, self.meta.get("dtype")))
        self.vocab_size = int(self.meta["vocab_size"])
        self.train = self._read("train.bin", self.meta["train_tokens"])
        self.val = self._read("val.bin", self.meta["val_tokens"])
        self.train_y = masked_targets(self.train, frame_ids)
        self.val_y = masked_targets(self.val, frame_ids)

    def _read(self, name, want):
        p = os.path.join(self.path, name)
        size = os.path.getsize(p)
        if size != 4 * int(want):
            raise ValueError("packed data: %s has %d bytes, meta.json says %d tokens" % (p, size, want))
        ids = np.fromfile(p, dtype="<u4")
        if ids.size and int(ids.max()) >= self.vocab_size:
            bad = int(np.argmax(ids >= self.vocab_size))
            raise ValueError("packed data: %s: token %d at %d outside the vocabulary (%d)"
                             % (p, int(ids[bad]), bad, self.vocab_size))
        return ids


class TrainData(object):
    """TrainData is the token stream trained on: one packed folder, plus
    (watch mode) the folders that appear under a watch directory while the
    run goes on, concatenated in name order. The validation set is the first
    folder's val.bin only, so validation losses stay comparable."""

    def __init__(self, first, watch_dir=None, loaded=(), frame_ids=None):
        self.frame_ids = frame_ids
        self.parts = [Packed(first, frame_ids)]
        self.meta = self.parts[0].meta
        self.watch_dir = watch_dir
        self.val = self.parts[0].val
        self.val_y = self.parts[0].val_y
        self._rebuild()
        for name in loaded:
            self._add(os.path.join(watch_dir, name))
        if loaded:
            self._rebuild()

    @property
    def loaded(self):
        """loaded names the watch folders in use, in order (saved in checkpoints)."""
        return [os.path.basename(p.path) for p in self.parts[1:]]

    def _rebuild(self):
        # The stream is the parts end to end, never copied into one array
        # (it grows to gigabytes on a GPU run): starts[i] is part i's offset.
        self.starts = np.cumsum([0] + [len(p.train) for p in self.parts])
        self.n_train = int(self.starts[-1])

    def train_windows(self, offs, seq):
        """train_windows: (inputs, targets) of the windows at offs of the
        concatenated stream, as windows() over one array would give."""
        if len(self.parts) == 1:
            return windows(self.parts[0].train, offs, seq, self.parts[0].train_y)
        rows = np.empty((len(offs), seq + 1), dtype=np.int64)
        ys = np.empty((len(offs), seq + 1), dtype=np.int64) if self.frame_ids is not None else None
        for r, off in enumerate(offs):
            i = int(np.searchsorted(self.starts, off, side="right")) - 1
            got = 0
            while got < seq + 1:  # a window may cross into the next part(s)
                part = self.parts[i].train
                lo = off + got - int(self.starts[i])
                take = min(seq + 1 - got, len(part) - lo)
                rows[r, got:got + take] = part[lo:lo + take]
                if ys is not None:
                    ys[r, got:got + take] = self.parts[i].train_y[lo:lo + take]
                got += take
                i += 1
        return rows[:, :-1], (ys if ys is not None else rows)[:, 1:]

    def _add(self, path):
        p = Packed(path, self.frame_ids)
        if p.meta.get("tokenizer_sha256") != self.meta.get("tokenizer_sha256"):
            raise ValueError("packed data %s was made with another tokenizer than %s" % (path, self.parts[0].path))
        self.parts.append(p)

    def ready(self):
        """ready lists the complete folders under the watch dir (name order)."""
        if not self.watch_dir or not os.path.isdir(self.watch_dir):
            return []
        names = sorted(n for n in os.listdir(self.watch_dir)
                       if not n.startswith(".") and os.path.exists(os.path.join(self.watch_dir, n, "meta.json")))
        return names

    def grow(self, count):
        """grow loads the first `count` ready folders not loaded yet; returns how many it added."""
        names = self.ready()[:count]
        have = set(self.loaded)
        added = 0
        for n in names:
            if n not in have:
                self._add(os.path.join(self.watch_dir, n))
                added += 1
        if added:
            self._rebuild()
        return added
