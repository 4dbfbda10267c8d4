#!/usr/bin/env bash
# Every test of the project: Python (engine, server with real LSP clients incl. Neovim),
# lint, and the VS Code extension (unit tests, packaging, real VS Code in headless Chromium).
# Installs what it needs first (Python venv, Debian packages, npm packages).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
step() { printf '\n==> %s\n' "$*"; }

step "setup"
bash scripts/setup.sh
bash scripts/system-deps.sh
# the Copilot language server, started through the completion proxy in tests/proxy
if [[ ! -d .cache/copilot-ls/node_modules/@github/copilot-language-server ]]; then
  npm install --silent --no-fund --no-audit --prefix .cache/copilot-ls \
    @github/copilot-language-server >/dev/null
fi

step "lint (ruff)"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

step "python tests"
.venv/bin/python -m pytest -q -p no:cacheprovider

if [[ -f package.json ]]; then
  step "VS Code extension"
  bash scripts/vscode-setup.sh
  npm run --silent lint
  npm run --silent test
  npm run --silent package      # the .vsix, and a test of what it contains
  npm run --silent test:e2e
fi
