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
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "mcp-e2e: SKIPPED: node and npm are not on PATH (scripts/install-deps.sh installs them from Debian)" >&2
  exit 0
fi
if [ -z "${NDB_BIN:-}" ]; then
  "${GO:-go}" build -o bin/ndb ./cmd/ndb # up to date in a moment when nothing changed
  NDB_BIN=bin/ndb
fi
NDB_BIN=$(cd "$(dirname "$NDB_BIN")" && pwd)/$(basename "$NDB_BIN")
export NDB_BIN
cd mcp/e2e
echo "mcp-e2e: node $(node --version), npm $(npm --version), $NDB_BIN" >&2
npm ci --no-audit --no-fund --loglevel=error
node --test --test-reporter=spec mcp.test.js
