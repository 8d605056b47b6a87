#!/usr/bin/env bash
# gpu_recipe.sh: train ndb's network on one GPU for a fixed wall-clock budget
# while the machine's CPU cores generate fresh trajectories, and leave the
# exported model (BF16 by default, files of at most 15 MiB) in $OUT.
#
#   torch/gpu_recipe.sh --prepare (--model M.model | --tokenizer TOK.json) [--gen-python PY]   # here: fills torch/.carry
#   torch/gpu_recipe.sh [--minutes 8] [--config small] ...                  # there: the run
#   torch/gpu_recipe.sh --dry-run                                            # here: CPU, tiny budget
#
# With the `device` tool: run(command="torch/gpu_recipe.sh", carry=["torch/.carry"], timeout_s=600).
# docs/scaleout.md says how to import and evaluate the result here.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRY="$ROOT/torch/.carry"
MODE=run
MODEL="" TOKENIZER="" GEN_PYTHON="" DATA_DIR="${NDB_DATA_DIR:-$ROOT/../shared/data}"
MINUTES=8 CONFIG=small BATCH=64 SEQ=512 LR=3e-3 MIN_LR=3e-4 WARMUP=200
DEVICE=auto EXPORT_DTYPE=bf16 SHARD_MB=15 COMPILE=1 LOSS_ON=all CONFIG_JSON=""
SOURCES="synthetic,mbppplus"          # round r uses source r mod the list (repeat a name to weight it)
GEN_FLAGS=""                          # more `ndb gen` flags, e.g. "--per-trace 4 --max-chars 6000"
FIRST_ROUND_S=20 ROUND_S=40 GEN_WORKERS="" EVAL_EVERY=250 REFRESH_EVERY=200
MAX_GEN_GB=4                          # stop generating past this much packed data (RAM, disk)
WORK="${NDB_RECIPE_WORK:-/tmp/ndb-gpu-recipe}"
OUT_DIR="${OUT:-}"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prepare) MODE=prepare ;;
    --dry-run) MODE=dry ;;
    --model) MODEL="$2"; shift ;;
    --tokenizer) TOKENIZER="$2"; shift ;;
    --gen-python) GEN_PYTHON="$2"; shift ;;
    --data-dir) DATA_DIR="$2"; shift ;;
    --carry) CARRY="$2"; shift ;;
    --minutes) MINUTES="$2"; shift ;;
    --config) CONFIG="$2"; shift ;;
    --config-json) CONFIG_JSON="$2"; shift ;;
    --loss-on) LOSS_ON="$2"; shift ;;
    --batch) BATCH="$2"; shift ;;
    --seq) SEQ="$2"; shift ;;
    --lr) LR="$2"; shift ;;
    --min-lr) MIN_LR="$2"; shift ;;
    --warmup) WARMUP="$2"; shift ;;
    --device) DEVICE="$2"; shift ;;
    --export-dtype) EXPORT_DTYPE="$2"; shift ;;
    --no-compile) COMPILE=0 ;;
    --sources) SOURCES="$2"; shift ;;
    --gen-flags) GEN_FLAGS="$2"; shift ;;
    --first-round-seconds) FIRST_ROUND_S="$2"; shift ;;
    --round-seconds) ROUND_S="$2"; shift ;;
    --gen-workers) GEN_WORKERS="$2"; shift ;;
    --eval-every) EVAL_EVERY="$2"; shift ;;
    --refresh-every) REFRESH_EVERY="$2"; shift ;;
    --max-gen-gb) MAX_GEN_GB="$2"; shift ;;
    --work) WORK="$2"; shift ;;
    --out) OUT_DIR="$2"; shift ;;
    -h|--help) usage 0 ;;
    *) echo "gpu_recipe: unknown argument $1" >&2; usage 2 ;;
  esac
  shift
done
log() { echo "gpu_recipe: $(date -u +%H:%M:%S) $*" >&2; }

# prepare: what travels (about 20 MB): a static Linux x86-64 ndb (pure Go, no
# OpenBLAS needed there), the tokenizer (ndb format + HF template), and the
# two data files `ndb gen` reads (CruxEval for de-duplication, MBPP+).
prepare() {
  local carry="$1"
  [ -n "$MODEL$TOKENIZER" ] || { echo "gpu_recipe: --prepare needs --model M.model or --tokenizer TOK.json (the CPU model's tokenizer, so the two models compare)" >&2; exit 2; }
  mkdir -p "$carry/data"
  log "building a static linux/amd64 ndb into $carry"
  local src="$ROOT"
  if [ -f "$ROOT/model/defaultmodel/model/ndb.model" ]; then
    # The repo (which travels anyway) holds the shipped model; a binary
    # embedding it again could push what travels past 64 MiB, and gen, pack
    # and import do not use it: build from a copy without it.
    src="$(mktemp -d)"
    tar -C "$ROOT" --exclude=./.git --exclude=./torch/.carry --exclude=./model/defaultmodel/model/ndb.model -cf - . | tar -C "$src" -xf -
  fi
  (cd "$src" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags "-s -w" -o "$carry/ndb" ./cmd/ndb)
  [ "$src" = "$ROOT" ] || rm -rf "$src"
  if [ -n "$MODEL" ]; then
    (cd "$ROOT" && go run ./torch/carryprep --model "$(realpath "$MODEL")" --out "$carry")
  else
    (cd "$ROOT" && go run ./torch/carryprep --tokenizer "$(realpath "$TOKENIZER")" --out "$carry")
  fi
  for f in cruxeval.jsonl mbppplus.json mbpp.jsonl HumanEval.jsonl.gz; do
    cp "$DATA_DIR/$f" "$carry/data/$f"
  done
  [ -d "$DATA_DIR/thealgorithms" ] && cp -r "$DATA_DIR/thealgorithms" "$carry/data/"
  [ -d "$DATA_DIR/realworld" ] && cp -r "$DATA_DIR/realworld" "$carry/data/"
  # --gen-python: the interpreter whose traces are the ground truth (the one
  # ndb evaluates on here), packed without site-packages, tests and caches
  # (~13 MB xz), so the GPU machine's own Python (another version: 3.12
  # inlines comprehensions, 3.11 gives them a frame) does not change the data.
  rm -f "$carry/python.tar.xz" "$carry/python.exe"
  if [ -n "$GEN_PYTHON" ]; then
    local exe prefix ver
    exe="$("$GEN_PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))')"
    prefix="$("$GEN_PYTHON" -c 'import sys; print(sys.base_prefix)')"
    ver="$("$GEN_PYTHON" -c 'import sys; print("python%d.%d" % sys.version_info[:2])')"
    log "packing $exe ($prefix, $ver) for ndb gen there"
    tar -C / --exclude="${prefix#/}/lib/$ver/site-packages" --exclude="${prefix#/}/lib/$ver/test" \
      --exclude='*/tests' --exclude='*/idle_test' --exclude='__pycache__' \
      --exclude="${prefix#/}/lib/$ver/idlelib" --exclude="${prefix#/}/lib/$ver/tkinter" \
      --exclude="${prefix#/}/lib/$ver/ensurepip" --exclude="${prefix#/}/lib/$ver/lib2to3" \
      --exclude="${prefix#/}/lib/$ver/config-*" \
      -cf - "${exe#/}" $(cd / && ls -d "${prefix#/}"/lib/lib*.so* 2>/dev/null) "${prefix#/}/lib/$ver" | xz -T2 -6 > "$carry/python.tar.xz"
    echo "$exe" > "$carry/python.exe"
  fi
  du -sh "$carry" >&2
}

# gen_python: the interpreter ndb gen traces with there: the carried one
# (unpacked at its own path, as its shared library is found by that path)
# when it runs, else the trainer's.
gen_python() {
  local exe
  if [ -f "$CARRY/python.exe" ]; then
    exe="$(cat "$CARRY/python.exe")"
    [ -x "$exe" ] || tar -C / -xJf "$CARRY/python.tar.xz" 2>/dev/null || true
    if "$exe" -c 'import ctypes, json, marshal; assert sum(x for x in range(3)) == 3' 2>/dev/null; then
      echo "$exe"; return
    fi
    log "the carried interpreter $exe does not run here; tracing with $PY"
  fi
  echo "$PY"
}

# gen_round R SECONDS DIR: one round of `ndb gen` (source and seed from R),
# stopped after SECONDS; complete shards stay (ndb gen writes each shard
# atomically), so the round is packed as it is.
gen_round() {
  local r="$1" secs="$2" dir="$3"
  local IFS=, srcs
  read -r -a srcs <<< "$SOURCES"
  IFS=$' \t\n'   # $GEN_FLAGS splits on spaces
  local src="${srcs[$((r % ${#srcs[@]}))]}"
  # --n is a ceiling (the round is timed); a far larger one makes ndb gen plan for long.
  # TERM, not INT: background jobs of a script start with SIGINT ignored.
  # The GPU machine has no bubblewrap: the data sets' own programs (and the
  # synthetic ones) run unsandboxed there, on a machine that is thrown away.
  NDB_UNSAFE_NO_SANDBOX=1 timeout "$secs" "$CARRY/ndb" gen --source "$src" --n 5000000 --seed $((1000 + r)) --out "$dir" \
    --workers "$GEN_WORKERS" --shard-units 32 --data-dir "$CARRY/data" --python "$GEN_PY" $GEN_FLAGS --quiet >/dev/null 2>"$dir.log" &
  local pid=$!
  echo "$pid" > "$WORK/gen.pid"
  wait "$pid" || true
  rm -f "$WORK/gen.pid"   # reaped: its PID must not be signalled any more
  ls "$dir"/*.jsonl >/dev/null 2>&1
}

# pack_round DIR PACKDIR: tokenize a round into PACKDIR (written under a
# dot-name, then renamed: the trainer only sees complete folders).
pack_round() {
  local dir="$1" pack="$2" tmp
  tmp="$(dirname "$pack")/.tmp-$(basename "$pack")"
  rm -rf "$tmp"
  "$CARRY/ndb" pack --data "$dir" --tokenizer "$CARRY/tokenizer.ndb.json" --out "$tmp" >"$tmp.log" 2>&1 && mv "$tmp" "$pack"
}

run_recipe() {
  [ -x "$CARRY/ndb" ] && [ -f "$CARRY/tokenizer.ndb.json" ] && [ -d "$CARRY/template" ] || {
    echo "gpu_recipe: $CARRY is not prepared: run torch/gpu_recipe.sh --prepare --model M.model here first" >&2; exit 2; }
  [ -n "$OUT_DIR" ] || { echo "gpu_recipe: no \$OUT (or --out DIR)" >&2; exit 2; }
  # The Python with torch: $NDB_TORCH_PYTHON, else python3 if it has torch
  # (the GPU machine's), else Debian's /usr/bin/python3. ndb gen traces with it too.
  PY="${NDB_TORCH_PYTHON:-}"
  if [ -z "$PY" ]; then
    PY="$(command -v python3)"
    # From /: the repo root holds a torch/ folder that `import torch` would find.
    (cd / && "$PY" -c 'import torch; torch.zeros(1)') 2>/dev/null || PY=/usr/bin/python3
  fi
  local py="$PY"
  GEN_PY="$(gen_python)"
  log "ndb gen traces with $GEN_PY ($("$GEN_PY" -c 'import sys; print(sys.version.split()[0])'))"
  local t0; t0=$(date +%s)
  local cores; cores=$(nproc)
  # Leave cores to the trainer; 8 workers already write far more tokens per
  # second than a small model trains on (measured here: 2 workers ~3 MB/s of text).
  if [ -z "$GEN_WORKERS" ]; then
    GEN_WORKERS=$(( cores > 4 ? cores - 3 : 1 )); [ "$GEN_WORKERS" -le 8 ] || GEN_WORKERS=8
  fi
  rm -rf "$WORK"; mkdir -p "$WORK/gen" "$WORK/watch" "$OUT_DIR"
  log "$(uname -m), $cores cores, $("$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")')"
  log "round 0: generating for ${FIRST_ROUND_S}s with $GEN_WORKERS workers"
  gen_round 0 "$FIRST_ROUND_S" "$WORK/gen/r0000" || { echo "gpu_recipe: round 0 produced no shard; see $WORK/gen/r0000.log:" >&2; cat "$WORK/gen/r0000.log" >&2; exit 1; }
  pack_round "$WORK/gen/r0000" "$WORK/first" || { cat "$WORK/.tmp-first.log" >&2; exit 1; }
  log "round 0 packed: $(grep -h -E '"(train|val)_tokens"' "$WORK/first/meta.json" | tr -d ' \n')"

  # Generator loop in the background: round r, pack, publish, next round,
  # until the trainer is done (stop file).
  (
    r=1
    while [ ! -e "$WORK/stop" ]; do
      if [ "$(du -sk "$WORK/watch" | cut -f1)" -gt $(awk -v g="$MAX_GEN_GB" 'BEGIN { print int(g * 1048576) }') ]; then
        sleep 2; continue   # enough data: idle until the trainer is done
      fi
      d=$(printf "%s/gen/r%04d" "$WORK" "$r")
      if gen_round "$r" "$ROUND_S" "$d"; then
        pack_round "$d" "$(printf "%s/watch/r%04d" "$WORK" "$r")" || true
      fi
      rm -rf "$d"   # the packed tokens are all the trainer needs; keep the disk free
      r=$((r + 1))
    done
  ) &
  local gen_pid=$!

  local budget; budget=$(awk -v m="$MINUTES" 'BEGIN { print int(m * 60) }')
  local args=(train --data "$WORK/first" --watch "$WORK/watch" --refresh-every "$REFRESH_EVERY"
    --out "$WORK/run" --hf-template "$CARRY/template" --export-dir "$WORK/export"
    --export-dtype "$EXPORT_DTYPE" --shard-mb "$SHARD_MB" --config "$CONFIG" --time "$budget"
    --batch "$BATCH" --seq "$SEQ" --lr "$LR" --min-lr "$MIN_LR" --warmup "$WARMUP"
    --eval-every "$EVAL_EVERY" --eval-windows 64 --save-every 0 --device "$DEVICE" --loss-on "$LOSS_ON")
  [ -n "$CONFIG_JSON" ] && args+=(--config-json "$ROOT/$CONFIG_JSON")
  [ "$COMPILE" = 1 ] && args+=(--compile)
  log "training $CONFIG for ${budget}s on $DEVICE"
  local rc=0
  (cd "$ROOT/torch" && PYTHONUNBUFFERED=1 "$py" -m ndb_torch "${args[@]}") || rc=$?
  # Stop the generator: no new round, and the running `timeout ndb gen`
  # (its PID in gen.pid) ends now; timeout passes TERM on to ndb gen.
  touch "$WORK/stop"
  [ -f "$WORK/gen.pid" ] && kill -TERM "$(cat "$WORK/gen.pid")" 2>/dev/null || true
  wait "$gen_pid" 2>/dev/null || true
  [ "$rc" = 0 ] || { echo "gpu_recipe: the trainer failed ($rc)" >&2; exit "$rc"; }

  # $OUT: at most 8 files of 16 MiB come back. The weights, config.json,
  # tokenizer.json (ndb import needs it) and the index go to $OUT/model; the
  # other tokenizer files are the template's, restored here from torch/.carry.
  mkdir -p "$OUT_DIR/model"
  cp "$WORK/export"/config.json "$WORK/export"/tokenizer.json "$WORK/export"/*.safetensors "$OUT_DIR/model/"
  [ -f "$WORK/export/model.safetensors.index.json" ] && cp "$WORK/export/model.safetensors.index.json" "$OUT_DIR/model/"
  cp "$WORK/run/log.jsonl" "$OUT_DIR/log.jsonl"
  "$py" - "$WORK" "$OUT_DIR/summary.json" "$t0" <<'EOF'
import json, os, sys, time
work, out, t0 = sys.argv[1], sys.argv[2], float(sys.argv[3])
recs = [json.loads(l) for l in open(os.path.join(work, "run", "log.jsonl")) if l.strip()]
vals = [r for r in recs if "val_loss" in r]
info = json.load(open(os.path.join(work, "export", "ndb_torch.json")))
watch = [d for d in os.listdir(os.path.join(work, "watch")) if not d.startswith(".")]
def tokens(d):
    m = json.load(open(os.path.join(d, "meta.json")))
    return m["train_tokens"]
gen_tokens = tokens(os.path.join(work, "first")) + sum(tokens(os.path.join(work, "watch", d)) for d in watch)
s = {"steps": info["step"], "tokens_trained": info["tokens"], "options": info["options"], "torch": info["torch_version"],
     "final_loss": recs[-1]["loss"] if recs else None, "tokens_per_s": recs[-1]["tokens_per_s"] if recs else None,
     "val_loss": vals[-1]["val_loss"] if vals else None, "train_s": recs[-1]["elapsed_s"] if recs else None,
     "rounds_packed": 1 + len(watch), "train_tokens_generated": gen_tokens, "wall_s": time.time() - t0}
try:
    import torch
    s["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
except Exception:
    pass
json.dump(s, open(out, "w"), indent=2)
print(json.dumps(s))
EOF
  local n; n=$(find "$OUT_DIR" -type f | wc -l)
  local big; big=$(find "$OUT_DIR" -type f -size +16M | wc -l)
  ls -la "$OUT_DIR" "$OUT_DIR/model" >&2
  if [ "$n" -gt 8 ] || [ "$big" -gt 0 ]; then
    echo "gpu_recipe: \$OUT holds $n files ($big over 16 MiB): more than comes back; use a smaller --config or --export-dtype bf16" >&2
    exit 1
  fi
  log "done in $(( $(date +%s) - t0 ))s: $OUT_DIR"
}

case "$MODE" in
  prepare) prepare "$CARRY" ;;
  run) run_recipe ;;
  dry)
    # The whole recipe on this machine's CPU with a tiny budget: prepare into
    # a scratch carry (a small tokenizer trained on a quick synthetic round
    # unless --model/--tokenizer is given), run, import the result with ndb.
    DRY="${NDB_RECIPE_DRY:-/tmp/ndb-gpu-recipe-dry}"
    rm -rf "$DRY"; mkdir -p "$DRY"
    CARRY="$DRY/carry"
    if [ -z "$MODEL$TOKENIZER" ]; then
      (cd "$ROOT" && go build -o "$DRY/ndb-host" ./cmd/ndb)
      "$DRY/ndb-host" gen --source synthetic --n 300 --seed 1 --out "$DRY/tokdata" --workers 2 --quiet --data-dir "$DATA_DIR" >/dev/null
      "$DRY/ndb-host" tokenizer train --data "$DRY/tokdata" --vocab 512 --out "$DRY/tok.json" >/dev/null
      TOKENIZER="$DRY/tok.json"
    fi
    prepare "$CARRY"
    OUT_DIR="$DRY/out" WORK="$DRY/work"
    MINUTES=0.5 CONFIG=tiny BATCH=8 SEQ=128 WARMUP=20 DEVICE=cpu COMPILE=0
    FIRST_ROUND_S=5 ROUND_S=5 GEN_WORKERS=1 EVAL_EVERY=50 REFRESH_EVERY=20 SHARD_MB=0.1
    run_recipe
    "$CARRY/ndb" import --hf "$OUT_DIR/model" --out "$DRY/imported.model"
    log "dry run passed: $DRY/imported.model"
    ;;
esac
