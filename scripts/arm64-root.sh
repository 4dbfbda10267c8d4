#!/usr/bin/env bash
# An arm64 Debian root holding Python, for running the linux-arm64 package under qemu's
# user-mode emulation (`qemu-aarch64-static -L ROOT ROOT/usr/bin/python3 ...`), on a
# machine of another architecture and without binfmt_misc.
#
# debootstrap's first (foreign) stage downloads the packages and unpacks the essential
# ones; the second stage would have to run arm64 programs in a chroot, so instead every
# downloaded package is unpacked as it is (no maintainer scripts: Python needs none).
#
# RECITATION_ARM64_ROOT  where the root goes (default: ~/.cache/recitation-arm64-root)
# Prints the root's path. Safe to run again: an existing, working root is reused.
set -euo pipefail
DEST="${RECITATION_ARM64_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/recitation-arm64-root}"
QEMU=qemu-aarch64-static

works() {
  [[ -f "$DEST/.recitation-ready" ]] &&
    "$QEMU" -L "$DEST" "$DEST/usr/bin/python3" -c 'import platform, sys; sys.exit(platform.machine() != "aarch64")' 2>/dev/null
}

if command -v "$QEMU" >/dev/null 2>&1 && works; then
  echo "$DEST"
  exit 0
fi

need=()
command -v "$QEMU" >/dev/null 2>&1 || need+=(qemu-user-static)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if ((${#need[@]})); then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  echo "arm64-root: apt-get install ${need[*]}" >&2
  $SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
    --no-install-recommends "${need[@]}" >/dev/null
fi

# The release and the mirror this machine's apt already uses.
# shellcheck disable=SC1091
SUITE="$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")"
MIRROR="$(grep -hoE '^(URIs:|deb) +https?://[^ ]+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
  grep -v security | head -1 | awk '{print $2}' || true)"

start=$SECONDS
work="$DEST.partial"
rm -rf "$work"
mkdir -p "$(dirname "$DEST")"
echo "arm64-root: debootstrap --arch=arm64 --foreign $SUITE into $work" >&2
debootstrap --arch=arm64 --foreign --variant=minbase --include=python3 \
  "$SUITE" "$work" ${MIRROR:+"$MIRROR"} >"$work.log" 2>&1 || {
  tail -20 "$work.log" >&2
  exit 1
}
for deb in "$work"/var/cache/apt/archives/*.deb; do
  dpkg-deb -x "$deb" "$work"
done
rm -f "$work"/var/cache/apt/archives/*.deb "$work.log"
touch "$work/.recitation-ready"
rm -rf "$DEST"
mv "$work" "$DEST"
if ! works; then
  echo "arm64-root: $DEST/usr/bin/python3 does not run under $QEMU" >&2
  exit 1
fi
echo "arm64-root: ready in $((SECONDS - start)) s ($(du -sh "$DEST" | cut -f1))" >&2
echo "$DEST"
