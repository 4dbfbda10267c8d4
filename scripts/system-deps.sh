#!/usr/bin/env bash
# Debian packages the tests use: Neovim (a third-party LSP client in the server tests), git,
# Java 17 for Spark in local mode (the Spark builder's equivalence test), and for the
# linux-arm64 package: its strip (debug sections out of the arm64 libraries), qemu's
# user-mode emulation and debootstrap (an arm64 root to run it in, scripts/arm64-root.sh);
# for the search kernel's tests (tests/native): Wine to run the windows-x64 build, the arm64
# C library for the linux-arm64 one under qemu, gcc for the sanitizer run; the Go, Java
# and Rust standard libraries' sources (the toolchain sources' tests: go:stdlib, the JDK's
# lib/src.zip, rust:stdlib).
set -euo pipefail
need=()
command -v nvim >/dev/null 2>&1 || need+=(neovim)
command -v git >/dev/null 2>&1 || need+=(git)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
command -v aarch64-linux-gnu-strip >/dev/null 2>&1 || need+=(binutils-aarch64-linux-gnu)
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v wine >/dev/null 2>&1 || need+=(wine wine64)
[[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ]] || need+=(libc6-arm64-cross)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
command -v go >/dev/null 2>&1 || need+=(golang-go)
[[ -e /usr/lib/jvm/openjdk-17/lib/src.zip ]] || need+=(openjdk-17-source)
compgen -G "/usr/src/rustc-*/library/std" >/dev/null || need+=(rust-src)
((${#need[@]})) || exit 0
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
echo "system-deps: apt-get install ${need[*]}" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=900 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
  --no-install-recommends "${need[@]}" >/dev/null
