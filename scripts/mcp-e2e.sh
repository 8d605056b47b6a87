#!/usr/bin/env bash
# Drives `ndb mcp` with the official MCP TypeScript SDK client
# (@modelcontextprotocol/sdk from npm, mcp/e2e/mcp.test.js) over stdio and
# Streamable HTTP: list tools, start a session with a breakpoint, evaluate,
# continue, end; the HTTP token; sessions kept across one-shot clients; MCP
# roots confining program files. Installs the npm packages from
# mcp/e2e/package-lock.json (npm ci) and builds bin/ndb (NDB_BIN names
# another binary instead). Skips, exit 0, only when node or npm is missing
# (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/e2e-common.sh
e2e_setup mcp-e2e
cd mcp/e2e
echo "mcp-e2e: node $(node --version), npm $(npm --version), $NDB_BIN" >&2
npm ci --no-audit --no-fund --loglevel=error
node --test --test-reporter=spec mcp.test.js
