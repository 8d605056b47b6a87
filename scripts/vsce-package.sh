#!/usr/bin/env bash
# Packages the VS Code extension (dap/vscode/) into a .vsix with Microsoft's
# packager, @vscode/vsce (from the npm registry, pinned), as CI does: it
# first runs the extension's own tests (node --test extension.test.js), then
# `vsce package` on a copy of the folder, and fails on any error. The .vsix
# lands in out/vsix/ (ignored by git; VSIX_OUT names another folder), never
# in the source tree. Skips, exit 0 with a message, only when node or npm is
# missing (scripts/install-deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
VSCE_VERSION=3.9.1 # the last line of vsce that runs on node 20 (4.x needs node 22)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "vsce-package: SKIPPED: node and npm are not on PATH (scripts/install-deps.sh installs them from Debian)" >&2
  exit 0
fi
root=$(pwd)
out=${VSIX_OUT:-$root/out/vsix}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "vsce-package: node $(node --version), npm $(npm --version), @vscode/vsce $VSCE_VERSION" >&2
(cd dap/vscode && node --test extension.test.js)
cp -R dap/vscode "$tmp/ext"
version=$(node -p 'require("./dap/vscode/package.json").version')
vsix="$out/ndb-debug-$version.vsix"
# The packager goes in its own folder (npm's cache keeps later runs quick);
# --no-dependencies: the extension has none (plain JavaScript, vscode is the host's).
npm install --prefix "$tmp/vsce" --no-audit --no-fund --loglevel=error "@vscode/vsce@$VSCE_VERSION"
(cd "$tmp/ext" && "$tmp/vsce/node_modules/.bin/vsce" package --no-dependencies --out "$vsix" </dev/null)
# What went in: the manifest, the code, README, LICENSE, the icon, and no test.
listing=$(cd "$tmp/ext" && "$tmp/vsce/node_modules/.bin/vsce" ls --no-dependencies </dev/null)
echo "$listing" >&2
for f in package.json extension.js README.md LICENSE icon.png; do
  grep -qx "$f" <<<"$listing" || { echo "vsce-package: $f is missing from the .vsix" >&2; exit 1; }
done
if grep -q 'test' <<<"$listing"; then
  echo "vsce-package: a test file went into the .vsix" >&2
  exit 1
fi
echo "vsce-package: $vsix ($(wc -c <"$vsix") bytes)"
