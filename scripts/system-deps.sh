#!/usr/bin/env bash
# Debian packages the tests use: Neovim (a third-party LSP client in the server tests), git,
# and Java 17 for Spark in local mode (the Spark builder's equivalence test).
set -euo pipefail
need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v git >/dev/null 2>&1 || need+=(git)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
((${#need[@]})) || exit 0
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
echo "system-deps: apt-get install ${need[*]}" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
  --no-install-recommends "${need[@]}" >/dev/null
