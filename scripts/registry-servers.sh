#!/usr/bin/env bash
# The npm registry the package source tests start on loopback (verdaccio), installed from
# npm into the user cache: $RECITATION_VERDACCIO, default ~/.cache/recitation-verdaccio.
# (The PyPI server of those tests, pypiserver, is a Python dev dependency.) Safe to run again.
set -euo pipefail
DEST="${RECITATION_VERDACCIO:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-verdaccio}"
VERSION=6.8.0  # the newest verdaccio that runs on Node 20 (6.9+ needs Node 22)
if [[ -x "$DEST/node_modules/.bin/verdaccio" && -f "$DEST/.version-$VERSION" ]]; then
  exit 0
fi
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
