#!/usr/bin/env bash
# Fills client-vscode/bundled/ for the .vsix: the Python packages `server` and
# `index_tools` (bundled/tool) and their third-party dependencies for each supported
# Python minor version (bundled/libs/cpXY), as binary wheels for linux-x64, so that a
# user needs only a Python interpreter. The extension picks the folder that matches
# the interpreter it finds.
#
# RECITATION_VSIX_PYTHONS  Python versions to carry (default: 3.10 3.11 3.12 3.13 3.14)
# RECITATION_PIP_PYTHON    Python whose pip downloads the wheels (default: the repo's .venv, else python3)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
OUT="$HERE/bundled"
VERSIONS="${RECITATION_VSIX_PYTHONS:-3.10 3.11 3.12 3.13 3.14}"
PLATFORM_TAG="linux-x64"

if [[ -n "${RECITATION_PIP_PYTHON:-}" ]]; then
  PY="$RECITATION_PIP_PYTHON"
elif [[ -x "$ROOT/.venv/bin/python" ]]; then
  PY="$ROOT/.venv/bin/python"
else
  PY="python3"
fi

# The runtime dependencies, as the project declares them (no extras).
mapfile -t DEPS < <("$PY" - "$ROOT/pyproject.toml" <<'PYEOF'
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
with open(sys.argv[1], "rb") as f:
    for dep in tomllib.load(f)["project"]["dependencies"]:
        print(dep)
PYEOF
)

rm -rf "$OUT"
mkdir -p "$OUT/tool" "$OUT/libs"

for pkg in server index_tools; do
  cp -r "$ROOT/$pkg" "$OUT/tool/$pkg"
done

for version in $VERSIONS; do
  tag="cp${version/./}"
  echo "[bundle-python] Python $version: ${DEPS[*]}" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$OUT/libs/$tag" \
    --python-version "$version" --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_27_x86_64 --platform manylinux_2_28_x86_64 \
    --only-binary=:all: \
    "${DEPS[@]}"
  # Console scripts and test suites are not needed at run time.
  rm -rf "$OUT/libs/$tag/bin"
  find "$OUT/libs/$tag" -type d \( -name tests -path '*/numpy/*' \) -prune -exec rm -rf {} +
  # Extension modules ship with debug sections (zstandard's are 12 MB each): drop them.
  # The libraries vendored into *.libs folders are left as they are.
  if command -v strip >/dev/null 2>&1; then
    find "$OUT/libs/$tag" -name '*.so' -not -path '*.libs/*' -exec strip --strip-debug {} +
  fi
done

find "$OUT" -name __pycache__ -type d -prune -exec rm -rf {} +
find "$OUT" -name '*.pyc' -delete

"$PY" - "$OUT/manifest.json" "$PLATFORM_TAG" $VERSIONS <<'PYEOF'
import json
import sys
path, platform, *versions = sys.argv[1:]
with open(path, "w") as f:
    json.dump({"platform": platform, "pythons": versions}, f, indent=2)
    f.write("\n")
PYEOF
echo "[bundle-python] $(du -sh "$OUT" | cut -f1) in $OUT" >&2
