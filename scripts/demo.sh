#!/usr/bin/env bash
# Runs the README's main job: the same pdb command sequence on one call of
# the example program, answered by the real engine (ground truth) and by the
# embedded neural model, which then checks itself against the real run.
set -euo pipefail
ndb=${1:-bin/ndb}
cd "$(dirname "$0")/.."
prog=examples/vowels.py
call="f('banana', 4)"
cmds=examples/vowels.commands
echo "== real engine (the tracer): $(tr '\n' ' ' < "$cmds")on $call in $prog"
"$ndb" debug --engine real --batch --call "$call" "$prog" < "$cmds"
echo
# An unsure jump (a c whose one direct prediction is unsure) is answered by
# up to 24 predicted steps, which the frame's values mostly decide: ndb
# debug's default (engine.InteractiveJumps; docs/engines.md, "Jumps by
# stepping"); --jump-steps 0 answers each jump with one prediction.
echo "== model engine (embedded default model; unsure jumps by steps), same commands, then verify"
{ cat "$cmds"; echo verify; } | "$ndb" debug --engine model --batch --call "$call" "$prog"
