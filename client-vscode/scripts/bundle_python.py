"""Fills client-vscode/bundled/ for the .vsix of one target platform.

bundled/tool         the Python packages `server` and `index_tools`, the same on every target
                     but for the search kernel built for the target (scripts/build_kernel.py)
bundled/libs/cpXY    the runtime dependencies for Python X.Y, as the target's binary wheels
bundled/manifest.json  the target, the Python versions carried and the ones left out (why)

Wheels are downloaded once per target and Python version into a cache outside the work tree
(RECITATION_WHEEL_CACHE, default ~/.cache/recitation-wheels) and installed from there without
the network. A cached set is reused as it is (delete its folder to take newer releases); a
version found without wheels is asked about again after a day. pip evaluates dependency
markers (`sys_platform == "win32"`) for the machine it runs on, so the set of wheels is
completed here with the markers of the target.

usage: python bundle_python.py TARGET [--pythons 3.10 3.11 ...]
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ModuleNotFoundError:
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

HERE = Path(__file__).resolve().parent.parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "scripts"))
import build_kernel  # noqa: E402

PYTHONS = ["3.10", "3.11", "3.12", "3.13", "3.14"]
RECHECK_MISSING_S = 24 * 3600


@dataclass(frozen=True)
class Target:
    """A VS Code target platform: the wheel platform tags it takes and its marker values."""

    platforms: tuple[str, ...]
    sys_platform: str
    platform_system: str
    os_name: str
    machine: str
    strip: str | None = None


def _manylinux(arch: str) -> tuple[str, ...]:
    return tuple(
        f"{tag}_{arch}"
        for tag in ("manylinux2014", "manylinux_2_17", "manylinux_2_27", "manylinux_2_28")
    )


# pip widens a macosx_11_0 tag to the older macOS versions and to universal2 by itself.
TARGETS: dict[str, Target] = {
    "linux-x64": Target(_manylinux("x86_64"), "linux", "Linux", "posix", "x86_64", "strip"),
    "linux-arm64": Target(
        _manylinux("aarch64"), "linux", "Linux", "posix", "aarch64", "aarch64-linux-gnu-strip"
    ),
    "darwin-x64": Target(("macosx_11_0_x86_64",), "darwin", "Darwin", "posix", "x86_64"),
    "darwin-arm64": Target(("macosx_11_0_arm64",), "darwin", "Darwin", "posix", "arm64"),
    "win32-x64": Target(("win_amd64",), "win32", "Windows", "nt", "AMD64"),
    "win32-arm64": Target(("win_arm64",), "win32", "Windows", "nt", "ARM64"),
}


def marker_env(target: Target, version: str) -> dict[str, str]:
    return {
        "sys_platform": target.sys_platform,
        "platform_system": target.platform_system,
        "os_name": target.os_name,
        "platform_machine": target.machine,
        "python_version": version,
        "python_full_version": f"{version}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def project_dependencies() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["project"]["dependencies"])


def pip_flags(target: Target, version: str) -> list[str]:
    tag = "cp" + version.replace(".", "")
    flags = ["--only-binary=:all:", "--python-version", version, "--implementation", "cp"]
    for abi in (tag, "abi3", "none"):
        flags += ["--abi", abi]
    for platform in target.platforms:
        flags += ["--platform", platform]
    return flags


def pip(*args: str, quiet: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check"]
    if quiet:
        cmd.append("--quiet")
    return subprocess.run(cmd, capture_output=True, text=True)


def wheel_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.BytesParser().parsebytes(z.read(name))


def wheel_name(wheel: Path) -> str:
    return canonicalize_name(wheel.name.split("-")[0])


def closure(
    wheels: dict[str, Path], deps: list[str], env: dict[str, str]
) -> tuple[set[str], set[str]]:
    """The wheels the target needs (markers evaluated for it) and the requirements missing."""
    needed: set[str] = set()
    seen: set[tuple[str, tuple[str, ...]]] = set()
    missing: set[str] = set()
    todo = [(Requirement(d), "") for d in deps]
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({**env, "extra": extra}):
            continue
        name = canonicalize_name(req.name)
        extras = tuple(sorted(req.extras))
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        if name not in wheels:
            missing.add(str(req).split(";")[0].strip())
            continue
        needed.add(name)
        for line in wheel_metadata(wheels[name]).get_all("Requires-Dist") or []:
            todo += [(Requirement(line), e) for e in ("", *extras)]
    return needed, missing


def wheel_folder(target: str, version: str) -> Path:
    cache = os.environ.get("RECITATION_WHEEL_CACHE") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "recitation-wheels"
    )
    return Path(cache, target, "cp" + version.replace(".", ""))


def download(name: str, target: Target, version: str, deps: list[str]) -> dict:
    """Downloads (or finds in the cache) the wheels of one Python version for `target`.

    Returns {"wheels": [paths]} or {"missing": [requirements without a wheel]}.
    """
    flags = pip_flags(target, version)
    env = marker_env(target, version)
    # pip evaluates markers for this machine: a requirement the target goes without (its
    # marker false there) is left out here, one it alone needs is fetched below
    deps = [d for d in deps if not Requirement(d).marker or Requirement(d).marker.evaluate(env)]
    key = hashlib.sha256(json.dumps([deps, flags]).encode()).hexdigest()[:16]
    folder = wheel_folder(name, version)
    stamp = folder / f"complete-{key}.json"
    if stamp.is_file():
        result = json.loads(stamp.read_text())
        if "missing" in result:
            if time.time() - stamp.stat().st_mtime < RECHECK_MISSING_S:
                return result
        elif all((folder / w).is_file() for w in result["wheels"]):
            return result
    folder.mkdir(parents=True, exist_ok=True)
    print(f"[bundle-python] {name} Python {version}: downloading wheels", file=sys.stderr)
    run = pip("download", *flags, "-d", str(folder), *deps)
    if run.returncode != 0:
        # Which requirements have no wheel: each one alone, without its dependencies.
        missing = [
            d for d in deps if pip("download", *flags, "--no-deps", "-d", str(folder), d).returncode
        ]
        result = {"missing": missing or [run.stderr.strip().splitlines()[-1]]}
        stamp.write_text(json.dumps(result) + "\n")
        return result
    while True:
        wheels = {wheel_name(w): w for w in folder.glob("*.whl")}
        needed, missing = closure(wheels, deps, env)
        if not missing:
            break
        # Needed on the target only (a marker that is false here): fetch those too.
        fetch = pip("download", *flags, "--no-deps", "-d", str(folder), *sorted(missing))
        if fetch.returncode != 0:
            result = {"missing": sorted(missing)}
            stamp.write_text(json.dumps(result) + "\n")
            return result
    result = {"wheels": sorted(wheels[n].name for n in needed)}
    stamp.write_text(json.dumps(result) + "\n")
    return result


def install(wheels: list[Path], out: Path, target: Target, version: str) -> None:
    run = pip(
        "install", "--no-index", "--no-deps", "--no-compile", "--no-warn-script-location",
        "--target", str(out), *pip_flags(target, version), *map(str, wheels),
    )  # fmt: skip
    if run.returncode != 0:
        sys.exit(f"[bundle-python] installing into {out} failed:\n{run.stderr}")
    # pip records the wheel's local path (the cache on this machine): not for the package.
    for direct_url in out.glob("*.dist-info/direct_url.json"):
        direct_url.unlink()
        record = direct_url.with_name("RECORD")
        lines = record.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if not line.split(",")[0].endswith("/direct_url.json")]
        record.write_text("".join(kept), encoding="utf-8")
    # Console scripts and test suites are not needed at run time.
    shutil.rmtree(out / "bin", ignore_errors=True)
    for tests in out.glob("numpy/**/tests"):
        shutil.rmtree(tests, ignore_errors=True)


def strip_debug(folder: Path, strip: str | None) -> None:
    """Extension modules ship with debug sections (zstandard's are 12 MB each): drop them.

    The libraries vendored into *.libs folders are left as they are."""
    if not strip or not shutil.which(strip):
        if strip:
            print(f"[bundle-python] {strip} not found: debug sections kept", file=sys.stderr)
        return
    files = [str(p) for p in folder.rglob("*.so") if not any(q.endswith(".libs") for q in p.parts)]
    if files:
        subprocess.run([strip, "--strip-debug", *files], check=True)


def clean(folder: Path) -> None:
    for cache in list(folder.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)
    for pyc in folder.rglob("*.pyc"):
        pyc.unlink()


def bundle(name: str, versions: list[str], out: Path) -> dict:
    target = TARGETS[name]
    deps = project_dependencies()
    shutil.rmtree(out, ignore_errors=True)
    (out / "libs").mkdir(parents=True)
    for pkg in ("server", "index_tools"):  # (this machine's kernel left out: see below)
        shutil.copytree(
            ROOT / pkg, out / "tool" / pkg, ignore=shutil.ignore_patterns("libkernel-*")
        )
    build_kernel.compile_for(name, out / "tool" / "index_tools" / "match")
    carried: list[str] = []
    left_out: dict[str, list[str]] = {}
    for version in versions:
        result = download(name, target, version, deps)
        if "missing" in result:
            left_out[version] = result["missing"]
            print(f"[bundle-python] {name} Python {version}: no wheel for "
                  f"{', '.join(result['missing'])}: left out", file=sys.stderr)  # fmt: skip
            continue
        folder = out / "libs" / ("cp" + version.replace(".", ""))
        wheels = [wheel_folder(name, version) / w for w in result["wheels"]]
        install(wheels, folder, target, version)
        strip_debug(folder, target.strip)
        carried.append(version)
    clean(out)
    if not carried:
        sys.exit(f"[bundle-python] {name}: no Python version has wheels for every dependency")
    manifest = {"platform": name, "pythons": carried, "missing": left_out}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--pythons", nargs="+", default=PYTHONS, metavar="X.Y")
    parser.add_argument("--out", type=Path, default=HERE / "bundled")
    args = parser.parse_args(argv)
    for v in args.pythons:
        if not re.fullmatch(r"3\.\d+", v):
            parser.error(f"not a Python minor version: {v}")
    manifest = bundle(args.target, args.pythons, args.out)
    print(
        f"[bundle-python] {args.target}: Python {', '.join(manifest['pythons'])}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
