#!/usr/bin/env bash
# Reproduces stage 9, the CPU-trained model before the shipped stage 10
# (stage 10 comes from torch/gpu_recipe.sh on a GPU; docs/default-model.md),
# on a 2-core CPU: generate trajectories, train the tokenizer, train the
# `mini` config, grow it to 8 layers and train on, strip the optimizer state
# (export + import), and evaluate.
# Usage: scripts/train-default.sh [WORKDIR]   (default /tmp/ndb-default)
# About 5.2 hours of training on 2 cores; see docs/default-model.md.
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
# Four stages on the same packed data (docs/default-model.md): a 1600-step
# run, 200 steps of a 1200-step schedule at a lower peak, then two more
# schedules from those weights (--init: fresh optimizer and schedule).
train() { # out steps lr min-lr warmup seed [more flags]
  local out=$1 steps=$2 lr=$3 minlr=$4 warmup=$5 seed=$6; shift 6
  "$ndb" train --data "$work/gen" --pack-dir "$work/pack" --tokenizer "$work/tok.json" \
    --out "$work/$out.model" --config mini --batch 16 --seq 512 --steps "$steps" \
    --lr "$lr" --min-lr "$minlr" --warmup "$warmup" --seed "$seed" --save-every 100 --eval-every 300 "$@"
}
train stage1 1600 0.003 0.0003 100 1
train stage2 1200 0.001 0.0001 50 2 --init "$work/stage1.model" --stop-at 200
train stage3 450 0.0006 0.00005 20 3 --init "$work/stage2.model"
train stage4 2408 0.0008 0.00005 50 4 --init "$work/stage3.model"

# Stages 7 and 8 (5 and 6 were experiments outside this lineage): new data,
# 4 trajectories per trace, breakpoints on lines still reached, a third of
# the entries deep and half of the CruxEval-shaped functions without their
# main() call site; loss on the predicted frames only.
fresh() { # seed source n
  "$ndb" gen --source "$2" --n "$3" --seed "$1" --out "$work/gen$1/$2" --per-trace 4 \
    --max-chars 3500 --max-steps 24 --repr-limit 200 --deep 0.3 --unwrap 0.5 --bp-hit 0.7 --quiet
}
for seed in 9 10 11; do
  fresh $seed synthetic 120000
  fresh $seed mbppplus 70000
  fresh $seed mbpp 25000
  fresh $seed humaneval 15000
done
"$ndb" train --data "$work/gen9" --pack-dir "$work/pack9" --init "$work/stage4.model" \
  --out "$work/stage7.model" --config mini --batch 16 --seq 512 --steps 12600 \
  --lr 0.0006 --min-lr 0.00003 --warmup 50 --seed 9 --save-every 300 --eval-every 300 --loss-on frames
# Stage 8: the same recipe on fresh data (seed 10), at half the peak LR.
"$ndb" train --data "$work/gen10" --pack-dir "$work/pack10" --init "$work/stage7.model" \
  --out "$work/stage8.model" --config mini --batch 16 --seq 512 --steps 11000 \
  --lr 0.0003 --min-lr 0.00002 --warmup 50 --seed 10 --save-every 300 --eval-every 500 --loss-on frames
# Stage 9: the stage-8 model made deeper (4 -> 8 layers, the new blocks start
# as the identity: nn.GrowDepth), trained on fresh data (seed 11).
"$ndb" grow --model "$work/stage8.model" --layers 8 --out "$work/grow8.model"
"$ndb" train --data "$work/gen11" --pack-dir "$work/pack11" --init "$work/grow8.model" \
  --out "$work/stage9.model" --batch 16 --seq 512 --steps 7247 \
  --lr 0.0004 --min-lr 0.00003 --warmup 100 --seed 11 --save-every 300 --eval-every 500 --loss-on frames
cp "$work/stage9.model" "$work/default.model"

# The shipped file holds weights, config and tokenizer only.
rm -rf "$work/hf"
"$ndb" export --model "$work/default.model" --out "$work/hf"
"$ndb" import --hf "$work/hf" --out "$work/stage9.model"
echo "stage 9: $work/stage9.model; evaluate with scripts/eval-default.sh $work/stage9.model OUTDIR"
