#!/usr/bin/env bash
# The npm registry the package source tests start on loopback (verdaccio), installed from
# npm into the user cache: $RECITATION_VERDACCIO, default ~/.cache/recitation-verdaccio.
# (The PyPI server of those tests, pypiserver, is a Python dev dependency.) Safe to run again.
set -euo pipefail
DEST="${RECITATION_VERDACCIO:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-verdaccio}"
VERSION=6.8.0  # the newest verdaccio that runs on Node 20 (6.9+ needs Node 22)
install_verdaccio() {
  mkdir -p "$DEST"
  # node-fetch is pinned to its CommonJS line, which a dependency asks for by a dist-tag
  # (`cjs`) that registry mirrors do not always carry
  cat >"$DEST/package.json" <<JSON
{
  "private": true,
  "dependencies": { "verdaccio": "$VERSION" },
  "overrides": { "node-fetch": "2.7.0" }
}
JSON
  npm install --silent --no-fund --no-audit --prefix "$DEST" >/dev/null 2>&1 || {
    echo "registry-servers: npm install verdaccio@$VERSION failed" >&2
    exit 1
  }
  touch "$DEST/.version-$VERSION"
}
if [[ ! -x "$DEST/node_modules/.bin/verdaccio" || ! -f "$DEST/.version-$VERSION" ]]; then
  install_verdaccio
fi

# Real packages the workspace tests serve from those registries (a lock file written by
# npm against them, the quotes found in their code): $RECITATION_TEST_PACKAGES, default
# ~/.cache/recitation-test-packages. Fetched once, from the registries npm and pip use.
PACKAGES="${RECITATION_TEST_PACKAGES:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-test-packages}"
mkdir -p "$PACKAGES/npm" "$PACKAGES/pypi"
for spec in lodash@4.17.21 ms@2.1.2 ms@2.1.3; do
  file="$PACKAGES/npm/${spec/@/-}.tgz"
  [[ -s $file ]] && continue
  (cd "$PACKAGES/npm" && npm pack --silent "$spec" >/dev/null 2>&1) || {
    echo "registry-servers: npm pack $spec failed" >&2
    exit 1
  }
done
if [[ ! -s $PACKAGES/pypi/six-1.16.0.tar.gz ]]; then
  python3 -m pip download --quiet --no-deps --no-binary :all: \
    --dest "$PACKAGES/pypi" six==1.16.0 >/dev/null 2>&1 || {
    echo "registry-servers: pip download six==1.16.0 failed" >&2
    exit 1
  }
fi
