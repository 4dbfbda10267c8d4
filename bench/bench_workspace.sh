#!/usr/bin/env bash
# A workspace's index, measured: `plan`, a cold build (nothing cached), `add` with nothing
# changed, and `add` after one package's version changed in the lock file (CHANGE: a command
# run in the workspace that makes that change; the lock file is put back afterwards).
#
#   bash bench/bench_workspace.sh WORKSPACE NAME [CHANGE]
#
# Writes NAME.log in $OUT (default: a new folder under /tmp): each step's output with its
# elapsed time and peak memory (GNU time), the disk taken by the index and the package cache.
set -euo pipefail
W=$(cd "$1" && pwd) NAME=$2 CHANGE=${3:-}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
RI=${RI:-recitation-index}
export RECITATION_PACKAGE_CACHE=$OUT/cache-$NAME
LOG=$OUT/$NAME.log
timed() { /usr/bin/time -f "elapsed %e s, peak %M KB" "$@"; }
rm -rf "$OUT/idx-$NAME" "$RECITATION_PACKAGE_CACHE"
{ echo "== plan"; timed "$RI" plan "workspace:$W"; } >"$LOG" 2>&1
{ echo "== cold build"; timed "$RI" build "workspace:$W" --out "$OUT/idx-$NAME" --keep-going --quiet; } >>"$LOG" 2>&1
{ echo "== disk (index, package cache)"; du -sb "$OUT/idx-$NAME" "$RECITATION_PACKAGE_CACHE"; } >>"$LOG" 2>&1
{ echo "== add, nothing changed"; timed "$RI" add "$OUT/idx-$NAME" "workspace:$W" --keep-going --quiet; } >>"$LOG" 2>&1
if [[ -n $CHANGE ]]; then
  # the manifests and lock files, to put back after the change
  (cd "$W" && find . -name node_modules -prune -o \( -name '*.lock' -o -name 'package*.json' \
    -o -name 'pnpm-lock.yaml' -o -name 'requirements*.txt' -o -name pyproject.toml \) -print0 |
    tar --null -cf "$OUT/manifests.tar" -T -)
  (cd "$W" && eval "$CHANGE")
  { echo "== add, one package changed: $CHANGE"; timed "$RI" add "$OUT/idx-$NAME" "workspace:$W" --keep-going --quiet; } >>"$LOG" 2>&1 || true
  tar -C "$W" -xf "$OUT/manifests.tar"
fi
echo "log: $LOG"
