"""Builds the search kernel (index_tools/match/kernel.c) for one or more targets with Zig's
C compiler (the `ziglang` package): the six VS Code platforms cross-compiled from any of them.

usage: python scripts/build_kernel.py [TARGET...] [--out DIR] [--driver]
  TARGET   linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64, or `host`
           (default: host)
  --out    where the libraries go (default: beside kernel.c, where the engine loads them)
  --driver build tests/native/driver.c for the targets instead (the replay of kernel cases)

Linux builds link against glibc 2.17, so they run on every distribution of the last decade.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "index_tools" / "match" / "kernel.c"
DRIVER = ROOT / "tests" / "native" / "driver.c"
ZIG_TARGETS = {
    "linux-x64": "x86_64-linux-gnu.2.17",
    "linux-arm64": "aarch64-linux-gnu.2.17",
    "darwin-x64": "x86_64-macos",
    "darwin-arm64": "aarch64-macos",
    "win32-x64": "x86_64-windows-gnu",
    "win32-arm64": "aarch64-windows-gnu",
}
SUFFIXES = {"linux": ".so", "darwin": ".dylib", "win32": ".dll"}
FLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-fno-strict-aliasing"]


def library_name(target: str) -> str:
    """The name the engine loads (index_tools/match/kernel.py `library_name`)."""
    return f"libkernel-{target}{SUFFIXES[target.split('-')[0]]}"


def host_target() -> str | None:
    import platform

    system = {"linux": "linux", "darwin": "darwin", "win32": "win32"}.get(sys.platform)
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    return f"{system}-{arch}" if system and arch else None


def zig_cc() -> list[str]:
    """The command of Zig's C compiler (the `ziglang` package of this Python, else `zig`)."""
    try:
        import ziglang  # noqa: F401
    except ImportError:
        zig = shutil.which("zig")
        if zig is None:
            raise SystemExit("build_kernel: Zig is missing: pip install ziglang") from None
        return [zig, "cc"]
    return [sys.executable, "-m", "ziglang", "cc"]


def compile_for(
    target: str, out: Path, extra: list[str] | None = None, driver: bool = False
) -> Path:
    """Compile the kernel (or the driver) for `target` into `out`; returns the file."""
    out.mkdir(parents=True, exist_ok=True)
    system = target.split("-")[0]
    if driver:
        dest = out / (f"driver-{target}" + (".exe" if system == "win32" else ""))
        args = [str(DRIVER), "-o", str(dest)] + (["-ldl"] if system == "linux" else [])
    else:
        dest = out / library_name(target)
        args = ["-shared", str(SOURCE), "-o", str(dest)]
        if system != "win32":
            args.insert(0, "-fPIC")
    # Zig keeps its cache in the home folder by default: a read-only home or a sandboxed
    # build (pip's isolated build) gets one of its own
    env = dict(os.environ)
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "recitation-zig"))
    env.setdefault("ZIG_LOCAL_CACHE_DIR", env["ZIG_GLOBAL_CACHE_DIR"])
    cmd = zig_cc() + ["-target", ZIG_TARGETS[target], *FLAGS, *(extra or []), *args]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"build_kernel: {target}: {done.stderr.strip() or 'failed'}")
    for leftover in (dest.with_suffix(".pdb"), dest.with_suffix(".lib"), out / "kernel.lib"):
        leftover.unlink(missing_ok=True)  # Windows import library and symbols: not needed
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", default=["host"], metavar="TARGET")
    parser.add_argument("--out", type=Path, default=SOURCE.parent)
    parser.add_argument("--driver", action="store_true")
    args = parser.parse_args(argv)
    targets = list(ZIG_TARGETS) if args.targets == ["all"] else args.targets
    for t in targets:
        if t == "host":
            t = host_target()
            if t is None:
                raise SystemExit("build_kernel: this machine is none of the six targets")
        if t not in ZIG_TARGETS:
            parser.error(f"unknown target {t} (one of: {', '.join(ZIG_TARGETS)}, host, all)")
        print(compile_for(t, args.out, driver=args.driver))
    return 0


if __name__ == "__main__":
    sys.exit(main())
