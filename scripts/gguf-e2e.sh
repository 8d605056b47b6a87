#!/usr/bin/env bash
# The GGUF round trip in llama.cpp (docs/interop.md, "GGUF"): `ndb export
# --gguf` of the embedded model, loaded by llama.cpp through the npm package
# node-llama-cpp (its prebuilt CPU binary, @node-llama-cpp/linux-x64), fed
# ndb's token ids for fixed prompts; llama.cpp's next-token probabilities over
# the whole vocabulary must equal ndb's within 1e-4 (NDB_GGUF_TOLERANCE), and
# its detokenizer must give ndb's text back. Then text tokenization: a tiny
# model whose tokenizer is trained with --pretokenizer llama3 (ndb gen
# synthetic shards, ndb train --steps 1) is exported to GGUF (pre llama-bpe)
# and llama.cpp must tokenize held-out trajectories exactly as ndb does
# (model/hf/gguf-e2e/tokenize.mjs). Exits non-zero on a mismatch.
# Installs the npm packages from model/hf/gguf-e2e/package-lock.json (npm ci,
# no optional packages, no install scripts: nothing is downloaded or built
# besides the npm packages) and builds bin/ndb (NDB_BIN names another binary).
# Skips, exit 0, only when node or npm is missing or the machine is not
# linux-x64 (the only prebuilt binary installed).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "gguf-e2e: SKIPPED: only linux-x64's llama.cpp binary is installed, this is $(uname -s)-$(uname -m)" >&2
  exit 0
fi
GO=${GO:-go}
. scripts/e2e-common.sh
e2e_setup gguf-e2e
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The embedded model, as both sides must use the same one.
unset NDB_MODEL
"$NDB_BIN" export --gguf "$work/model.gguf"
NDB_GGUF_E2E_DIR="$work" "$GO" test -count=1 -run '^TestGGUFFixture$' ./model/hf >/dev/null
cd model/hf/gguf-e2e
echo "gguf-e2e: node $(node --version), npm $(npm --version), $NDB_BIN" >&2
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error
node compare.mjs "$work" "${NDB_GGUF_TOLERANCE:-1e-4}"

# Text tokenization with the llama3 pre-tokenizer.
cd ../../..
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; return 1; }; }
quiet "$NDB_BIN" gen --source synthetic --n 200 --seed 1 --out "$work/gen"
quiet "$NDB_BIN" gen --source synthetic --n 60 --seed 2 --out "$work/held"
quiet "$NDB_BIN" train --data "$work/gen" --out "$work/llama3.ndb" --config tiny --steps 1 --vocab 1024 \
  --pretokenizer llama3 --quiet
quiet "$NDB_BIN" export --gguf "$work/llama3.gguf" --model "$work/llama3.ndb"
cd model/hf/gguf-e2e
node tokenize.mjs "$work/llama3.gguf" "$work/llama3.ndb" "$NDB_BIN" "$work"/held/*.jsonl
