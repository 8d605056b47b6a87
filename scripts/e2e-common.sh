# Sourced by the npm-driven end-to-end scripts (dap-e2e.sh, mcp-e2e.sh,
# gguf-e2e.sh) from the repository root: e2e_setup NAME exits 0, saying
# SKIPPED, when node or npm is missing (scripts/install-deps.sh installs
# them), builds bin/ndb unless NDB_BIN names another binary, and exports
# NDB_BIN as an absolute path.
e2e_setup() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "$1: SKIPPED: node and npm are not on PATH (scripts/install-deps.sh installs them from Debian)" >&2
    exit 0
  fi
  if [ -z "${NDB_BIN:-}" ]; then
    "${GO:-go}" build -o bin/ndb ./cmd/ndb # up to date in a moment when nothing changed
    NDB_BIN=bin/ndb
  fi
  NDB_BIN=$(cd "$(dirname "$NDB_BIN")" && pwd)/$(basename "$NDB_BIN")
  export NDB_BIN
}
