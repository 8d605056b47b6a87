#!/usr/bin/env bash
# Installs what ndb's build and tests need on a fresh Debian machine, and
# nothing when it is already there. Go itself must be on PATH (1.26+).
set -euo pipefail
need=()
# bubblewrap: the kernel sandbox every traced or scored program runs in (docs/tracer.md)
for pkg in bubblewrap libopenblas-dev python3-numpy python3-torch; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
command -v python3 >/dev/null 2>&1 || need+=(python3)
# nodejs, npm: the DAP end-to-end test (scripts/dap-e2e.sh, @vscode/debugadapter-testsupport).
# By command, not by package: a NodeSource nodejs carries its own npm and conflicts with Debian's.
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
command -v go >/dev/null 2>&1 || { echo "install-deps: Go 1.26+ is required on PATH (https://go.dev/dl)" >&2; exit 1; }
go mod download
