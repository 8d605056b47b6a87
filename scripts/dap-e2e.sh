#!/usr/bin/env bash
# Drives `ndb dap` over stdio with the npm package @vscode/debugadapter-testsupport
# (dap/e2e/dap.test.js) on the real and model engines: breakpoint, stack,
# variables, steps, evaluate (real), stepBack, continue to the end, a malformed
# request, disconnect; and pause of an endless loop on the real engine (live).
# Installs the npm packages from dap/e2e/package-lock.json (npm ci) and builds
# bin/ndb (NDB_BIN names another binary instead). Skips, exit 0, only when node
# or npm is missing (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "dap-e2e: SKIPPED: node and npm are not on PATH (scripts/install-deps.sh installs them from Debian)" >&2
  exit 0
fi
if [ -z "${NDB_BIN:-}" ]; then
  "${GO:-go}" build -o bin/ndb ./cmd/ndb # up to date in a moment when nothing changed
  NDB_BIN=bin/ndb
fi
NDB_BIN=$(cd "$(dirname "$NDB_BIN")" && pwd)/$(basename "$NDB_BIN")
export NDB_BIN
cd dap/e2e
echo "dap-e2e: node $(node --version), npm $(npm --version), $NDB_BIN" >&2
npm ci --no-audit --no-fund --loglevel=error
node --test --test-reporter=spec dap.test.js
