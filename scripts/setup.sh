#!/usr/bin/env bash
# Creates .venv (Python 3.10+) and installs Recitation with its test tools into it.
# Safe to run again: it only installs when pyproject.toml changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "setup: Python 3.10 or newer is needed (found: $("$PYTHON" --version 2>&1))" >&2
  exit 2
fi
if [[ ! -x .venv/bin/python ]]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.recitation-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
  echo "setup: installing Recitation and its dependencies into .venv (a few minutes the" \
    "first time; each package is named as pip collects it)" >&2
  log=.venv/install.log
  # pip's whole output goes to the log; what it is doing, a line a package, to the screen
  if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
         .venv/bin/python -m pip install --disable-pip-version-check -e '.[dev]'; } 2>&1 |
       tee "$log" |
       awk '/^(Collecting|Building wheels?|Installing collected|Successfully installed)/ {
              print "setup: " $0; fflush() }' >&2; then
    tail -30 "$log" >&2
    echo "setup: pip install failed (full log: $log)" >&2
    exit 1
  fi
  touch "$stamp"
fi
# the search kernel (built by the install above): built again when kernel.c changed since
lib=$(ls index_tools/match/libkernel-* 2>/dev/null | head -n 1 || true)
if [[ -z "$lib" || index_tools/match/kernel.c -nt "$lib" ]]; then
  echo "setup: building the search kernel for this machine" >&2
  .venv/bin/python scripts/build_kernel.py host >/dev/null
fi
