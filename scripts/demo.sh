#!/usr/bin/env bash
# The main job on a fresh machine: install, build the embedded default index (the Python
# standard library) and attribute a real suggestion that quotes it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
echo "demo: setting up .venv (scripts/setup.sh)"
bash scripts/setup.sh
BIN=.venv/bin
if ! $BIN/recitation-index stats >/dev/null 2>&1; then
  echo "demo: building the default index, the Python standard library ($($BIN/python -c \
'import sys; print(".".join(map(str, sys.version_info[:3])))'))"
  $BIN/recitation-index build --default
else
  echo "default index already built:"
  $BIN/recitation-index stats | head -3
fi
# A suggestion as an assistant might write it: the standard library's own JSON string
# scanner, after a line of the user's code.
suggestion=$(mktemp)
context=$(mktemp)
trap 'rm -f "$suggestion" "$context"' EXIT
$BIN/python - "$suggestion" "$context" <<'PY'
import inspect, json.decoder, sys
src = inspect.getsource(json.decoder.py_scanstring)
open(sys.argv[1], "w").write(src)
open(sys.argv[2], "w").write("import re\n\nBACKSLASH = {}\n\n")
PY
echo
echo "--- suggestion ($(wc -l <"$suggestion") lines) ---"
head -5 "$suggestion"
echo "    ..."
echo "--- attribution ---"
$BIN/recitation-index query --context-file "$context" <"$suggestion"
