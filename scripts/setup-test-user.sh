#!/usr/bin/env bash
# CI's machine set-up for the sandbox test as an ordinary user
# (tracer/unpriv_test.go, TestSandboxUnprivilegedUser): the uidmap package
# (newuidmap/newgidmap), a system user ndbtest, and its 65,536 subordinate
# uids and gids. Idempotent; root only (elsewhere that test skips, saying why).
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "setup-test-user: not root, nothing done" >&2; exit 0; }
if ! command -v newuidmap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends uidmap >/dev/null
fi
id ndbtest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin ndbtest
for f in /etc/subuid /etc/subgid; do
  grep -q '^ndbtest:' "$f" 2>/dev/null || echo ndbtest:200000:65536 >> "$f"
done
