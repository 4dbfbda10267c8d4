#!/usr/bin/env bash
# Every test of the project: Python (engine, server with real LSP clients incl. Neovim),
# lint, and the VS Code extension (unit tests, the package of every platform with the
# linux-arm64 one run under emulation, real VS Code in headless Chromium).
# Installs what it needs first (Python venv, Debian packages, npm packages); the large
# downloads are cached in ~/.cache (README: "What the tests install").
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
step() { printf '\n==> %s\n' "$*"; }

step "setup"
bash scripts/setup.sh
bash scripts/system-deps.sh
# the Copilot language server, started through the completion proxy in tests/proxy
export RECITATION_COPILOT_LS="${RECITATION_COPILOT_LS:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-copilot-ls}"
if [[ ! -d "$RECITATION_COPILOT_LS/node_modules/@github/copilot-language-server" ]]; then
  npm install --silent --no-fund --no-audit --prefix "$RECITATION_COPILOT_LS" \
    @github/copilot-language-server >/dev/null
fi
# an arm64 Debian root, in which the linux-arm64 package runs under emulation
bash scripts/arm64-root.sh >/dev/null
# verdaccio, the npm registry the package source tests start on loopback
bash scripts/registry-servers.sh

step "lint (ruff)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

step "python tests"
# the search kernel's tests run every target they can here (qemu, Wine): none may skip
export RECITATION_NATIVE_REQUIRED=1
# As CI runs them: in the background, where the shell makes them ignore SIGINT, with no
# stdin and (setsid) no controlling terminal, so a test that depends on the terminal or on
# the signal dispositions it inherits fails here too. Ctrl-C still stops the run.
pytest_cmd=(.venv/bin/python -m pytest -q -p no:cacheprovider)
if command -v setsid >/dev/null; then
  pytest_cmd=(setsid "${pytest_cmd[@]}")
fi
( trap '' INT; exec "${pytest_cmd[@]}" ) </dev/null &
pytest_pid=$!
trap 'kill -TERM -- "-$pytest_pid" 2>/dev/null || kill -TERM "$pytest_pid" 2>/dev/null || true' INT TERM
wait "$pytest_pid"
trap - INT TERM

if [[ -f package.json ]]; then
  step "VS Code extension"
  bash scripts/vscode-setup.sh
  npm run --silent lint
  npm run --silent test
  # the .vsix of every platform and a test of what each contains; linux-arm64 runs for real
  RECITATION_ARM64_REQUIRED=1 npm run --silent package
  npm run --silent test:e2e
fi
