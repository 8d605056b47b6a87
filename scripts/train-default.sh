#!/usr/bin/env bash
# Reproduces the embedded default model (model/defaultmodel/model/ndb.model)
# on a 2-core CPU: generate trajectories, train the tokenizer, train the
# `mini` config, strip the optimizer state (export + import), and evaluate.
# Usage: scripts/train-default.sh [WORKDIR]   (default /tmp/ndb-default)
# About 1 hour of training on 2 cores; see docs/default-model.md.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/ndb-default}
ndb=${NDB:-bin/ndb}
[ -x "$ndb" ] || go build -o "$ndb" ./cmd/ndb
mkdir -p "$work"

gen() { # source n
  "$ndb" gen --source "$1" --n "$2" --seed 7 --out "$work/gen/$1" \
    --max-chars 3500 --max-steps 24 --repr-limit 200 --quiet
}
gen synthetic 80000
gen mbppplus 50000
gen mbpp 12000
gen humaneval 6000

"$ndb" tokenizer train --data "$work/gen" --vocab 2048 --out "$work/tok.json"
"$ndb" train --data "$work/gen" --pack-dir "$work/pack" --tokenizer "$work/tok.json" \
  --out "$work/default.model" --config mini --steps 1600 --batch 16 --seq 512 \
  --warmup 100 --eval-every 200 --save-every 100 --seed 1

# The shipped file holds weights, config and tokenizer only.
rm -rf "$work/hf"
"$ndb" export --model "$work/default.model" --out "$work/hf"
"$ndb" import --hf "$work/hf" --out model/defaultmodel/model/ndb.model
echo "default model: model/defaultmodel/model/ndb.model; evaluate with docs/default-model.md's commands"
