#!/usr/bin/env bash
# Runs the README's main job: the same pdb command sequence on the example
# program, answered by the real engine (ground truth) and by the neural model.
set -euo pipefail
ndb=${1:-bin/ndb}
cd "$(dirname "$0")/.."
cmds=examples/primes.commands
echo "== real engine (the tracer): $cmds on examples/primes.py"
"$ndb" debug --engine real --batch examples/primes.py < "$cmds"
echo
echo "== model engine (embedded default model), same commands"
"$ndb" debug --engine model --batch examples/primes.py < "$cmds"
