#!/usr/bin/env bash
# Measures a model the way docs/default-model.md reports it: next-state exact
# match per action and field on held-out real programs (per source) and MBPP+ functions (forward and
# inverse, 800 per action, horizon curves; exact match@5 on 50 per action), and CruxEval-O by
# step_return and by breakpoint, CruxEval-I by inv_step_call with k=8
# test-time scaling. Reports (Markdown, JSON, PNG) go to OUTDIR.
# Usage: scripts/eval-default.sh [MODEL] [OUTDIR]   (default: the embedded model, docs/results)
set -euo pipefail
cd "$(dirname "$0")/.."
ndb=${NDB:-bin/ndb}
[ -x "$ndb" ] || go build -o "$ndb" ./cmd/ndb
model=${1:-}
out=${2:-docs/results}
args=(--engine model --quiet --json)
[ -n "$model" ] && args+=(--model "$model")
mkdir -p "$out"
# The headline: programs users debug, none seen in training (held-out TheAlgorithms files as
# doctest calls and as whole scripts, held-out synthetic scripts, the hand-written eval/scripts).
"$ndb" eval next-state "${args[@]}" --source thealgorithms-functions,thealgorithms-scripts,synthetic-scripts \
  --programs eval/scripts --n 200 --report "$out/real-programs" | tail -1 > "$out/real-programs.json"
"$ndb" eval next-state "${args[@]}" --source mbppplus --n 800 --horizon-n 400 \
  --report "$out/next-state" | tail -1 > "$out/next-state.json"
# exact match@5 (temperature 0.6, top-p 0.95) on a smaller sample: k samples cost k decodes
"$ndb" eval next-state "${args[@]}" --source mbppplus --n 50 --k 5 \
  --report "$out/next-state-k5" | tail -1 > "$out/next-state-k5.json"
"$ndb" eval cruxeval "${args[@]}" --task output --action step_return --max-tokens 64 \
  --report "$out/cruxeval-o-step_return" --dump "$out/cruxeval-o-step_return.items.jsonl" | tail -1 > "$out/cruxeval-o-step_return.json"
"$ndb" eval cruxeval "${args[@]}" --task output --action breakpoint --max-tokens 64 \
  --report "$out/cruxeval-o-breakpoint" --dump "$out/cruxeval-o-breakpoint.items.jsonl" | tail -1 > "$out/cruxeval-o-breakpoint.json"
"$ndb" eval cruxeval "${args[@]}" --task input --k 8 --max-tokens 96 \
  --report "$out/cruxeval-i" --dump "$out/cruxeval-i.items.jsonl" | tail -1 > "$out/cruxeval-i.json"
echo "reports in $out"
