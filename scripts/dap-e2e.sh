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
. scripts/e2e-common.sh
e2e_setup dap-e2e
cd dap/e2e
echo "dap-e2e: node $(node --version), npm $(npm --version), $NDB_BIN" >&2
npm ci --no-audit --no-fund --loglevel=error
node --test --test-reporter=spec dap.test.js
