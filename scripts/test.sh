#!/usr/bin/env bash
# Every test of the project: Python (engine, server with real LSP clients incl. Neovim),
# lint, and the VS Code extension (unit tests, the package of every platform with the
# linux-arm64 one run under emulation, real VS Code in headless Chromium).
# Installs what it needs first (Python venv, Debian packages, npm packages); the large
# downloads are cached in ~/.cache (README: "What the tests install").
# Ends with a summary (scripts/test_summary.py): each step's outcome and time, the tests
# passed, and every skipped test with the reason; the logs it reads stay in build/test-logs
# (RECITATION_TEST_LOGS moves them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOGS="${RECITATION_TEST_LOGS:-$ROOT/build/test-logs}"
mkdir -p "$LOGS" && rm -f "$LOGS"/steps.tsv "$LOGS"/pytest.xml "$LOGS"/*.log
current="" started=0
# a step ends when the next begins (ok) or when the script exits (ok, or FAILED)
end_step() {
  if [[ -n $current ]]; then
    printf '%s\t%s\t%s\n' "$current" "$1" "$((SECONDS - started))" >>"$LOGS/steps.tsv"
  fi
  current=""
}
step() {
  end_step ok
  current="$1" started=$SECONDS
  printf '\n==> %s\n' "$*"
}
finish() {
  local status=$?
  if ((status == 0)); then end_step ok; else end_step FAILED; fi
  local py=python3
  [[ -x .venv/bin/python ]] && py=.venv/bin/python
  "$py" scripts/test_summary.py "$LOGS" || true
  exit "$status"
}
trap finish EXIT

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
pytest_cmd=(.venv/bin/python -m pytest -q -p no:cacheprovider -rs --junitxml="$LOGS/pytest.xml")
if command -v setsid >/dev/null; then
  pytest_cmd=(setsid "${pytest_cmd[@]}")
fi
( trap '' INT; exec "${pytest_cmd[@]}" ) </dev/null &
pytest_pid=$!
trap 'kill -TERM -- "-$pytest_pid" 2>/dev/null || kill -TERM "$pytest_pid" 2>/dev/null || true' INT TERM
wait "$pytest_pid"
trap - INT TERM

if [[ -f package.json ]]; then
  step "extension lint"
  bash scripts/vscode-setup.sh
  npm run --silent lint
  step "extension unit tests"
  npm run --silent test 2>&1 | tee "$LOGS/extension-unit.log"
  step "packaging"
  # the .vsix of every platform and a test of what each contains; linux-arm64 runs for real
  RECITATION_ARM64_REQUIRED=1 npm run --silent package 2>&1 | tee "$LOGS/packaging.log"
  step "VS Code end-to-end"
  npm run --silent test:e2e 2>&1 | tee "$LOGS/e2e.log"
fi
