#!/usr/bin/env bash
# Builds the .vsix of each target platform (the bundled extension, the server and the
# Python libraries of that platform), then checks what each one carries.
#
# usage: package.sh [--target TARGET]... [--no-test]
#   TARGET: linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64 (default: all)
#   --no-test: skip the packaging tests (test/packaging)
# Output: build/recitation-TARGET.vsix at the repo root. RECITATION_VSIX names the file when
# one target is built. client-vscode/bundled is left holding the last target built (linux-x64
# when all are built), which the end-to-end test uses.
#
# RECITATION_PIP_PYTHON  Python whose pip downloads the wheels (default: the repo's .venv, else python3)
# Wheels are cached in ~/.cache/recitation-wheels (RECITATION_WHEEL_CACHE overrides).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
ALL=(win32-x64 win32-arm64 darwin-x64 darwin-arm64 linux-arm64 linux-x64)

targets=()
run_tests=1
while (($#)); do
  case "$1" in
    --target) targets+=("${2:?--target needs a value}"); shift 2 ;;
    --target=*) targets+=("${1#--target=}"); shift ;;
    --no-test) run_tests=0; shift ;;
    *) echo "usage: package.sh [--target TARGET]... [--no-test]" >&2; exit 2 ;;
  esac
done
((${#targets[@]})) || targets=("${ALL[@]}")
for t in "${targets[@]}"; do
  [[ " ${ALL[*]} " == *" $t "* ]] || { echo "package: unknown target $t (one of: ${ALL[*]})" >&2; exit 2; }
done
if [[ -n "${RECITATION_VSIX:-}" && ${#targets[@]} -ne 1 ]]; then
  echo "package: RECITATION_VSIX names one file: build one --target" >&2
  exit 2
fi

if [[ -n "${RECITATION_PIP_PYTHON:-}" ]]; then
  PY="$RECITATION_PIP_PYTHON"
elif [[ -x "$ROOT/.venv/bin/python" ]]; then
  PY="$ROOT/.venv/bin/python"
else
  PY="python3"
fi

"$PY" "$ROOT/scripts/version.py" --check
cd "$HERE"
cp "$ROOT/LICENSE" LICENSE.txt  # the project's license, kept in one place
node esbuild.mjs --production
mkdir -p "$ROOT/build"
# Relative links of the readme (the screenshot in docs/) point into the repository: vsce's own
# guess ignores the package's folder in it, so the bases are given with that folder.
read -r CONTENT_URL IMAGES_URL < <(node -e '
  const r = require("./package.json").repository;
  const base = r.url.replace(/\.git$/, "") + "/%s/HEAD/" + r.directory;
  console.log(base.replace("%s", "blob"), base.replace("%s", "raw"));')
start=$SECONDS
for t in "${targets[@]}"; do
  out="${RECITATION_VSIX:-$ROOT/build/recitation-$t.vsix}"
  "$PY" scripts/bundle_python.py "$t"
  # --no-dependencies: esbuild has already bundled the JavaScript dependencies into
  # dist/extension.js, so node_modules is not packed.
  # --allow-package-all-secrets: vsce's secret scan reads each of the 4,000-odd files of
  # the bundled third-party wheels: about 2 minutes per target here instead of 20 s (13
  # minutes for all six). What is packed is our own sources and published wheels, and
  # test/packaging checks the list of files.
  npx vsce package --no-dependencies --allow-package-all-secrets \
    --baseContentUrl "$CONTENT_URL" --baseImagesUrl "$IMAGES_URL" --target "$t" -o "$out"
  echo "[package] $(du -h "$out" | cut -f1) $out" >&2
done
echo "[package] ${#targets[@]} target(s) in $((SECONDS - start)) s" >&2

if ((run_tests)); then
  RECITATION_TARGETS="${targets[*]}" npm run --silent test:package
fi
