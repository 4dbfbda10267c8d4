"""The wheel set of a .vsix target: dependency markers evaluated for the target, not for the
machine that packages (client-vscode/scripts/bundle_python.py)."""

from __future__ import annotations

import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bundle():
    path = ROOT / "client-vscode" / "scripts" / "bundle_python.py"
    spec = importlib.util.spec_from_file_location("bundle_python", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def fake_wheel(folder: Path, name: str, requires: list[str]) -> Path:
    wheel = folder / f"{name}-1.0-py3-none-any.whl"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{name}-1.0.dist-info/METADATA", metadata)
    return wheel


@pytest.fixture
def wheels(tmp_path, bundle):
    made = [
        fake_wheel(tmp_path, "tqdm", ['colorama; platform_system == "Windows"']),
        fake_wheel(
            tmp_path,
            "cattrs",
            ["attrs>=24", 'exceptiongroup>=1.1; python_version < "3.11"', "typing_extensions"],
        ),
        fake_wheel(tmp_path, "attrs", ['hypothesis; extra == "tests"']),
        fake_wheel(tmp_path, "typing_extensions", []),
        fake_wheel(tmp_path, "exceptiongroup", []),
    ]
    return {bundle.wheel_name(w): w for w in made}


def test_windows_needs_colorama_even_when_packaged_on_linux(bundle, wheels):
    env = bundle.marker_env(bundle.TARGETS["win32-x64"], "3.12")
    needed, missing = bundle.closure(wheels, ["tqdm>=4.60", "cattrs"], env)
    assert missing == {"colorama"}
    assert needed == {"tqdm", "cattrs", "attrs", "typing-extensions"}


def test_linux_and_macos_do_not(bundle, wheels):
    for target in ("linux-arm64", "darwin-arm64"):
        env = bundle.marker_env(bundle.TARGETS[target], "3.12")
        needed, missing = bundle.closure(wheels, ["tqdm>=4.60", "cattrs"], env)
        assert missing == set()
        assert "colorama" not in needed


def test_python_version_markers_are_the_target_version(bundle, wheels):
    linux = bundle.TARGETS["linux-x64"]
    old, _ = bundle.closure(wheels, ["cattrs"], bundle.marker_env(linux, "3.10"))
    new, _ = bundle.closure(wheels, ["cattrs"], bundle.marker_env(linux, "3.13"))
    assert "exceptiongroup" in old
    assert "exceptiongroup" not in new


def test_pip_is_asked_for_the_target_platform_and_abi(bundle):
    flags = bundle.pip_flags(bundle.TARGETS["win32-arm64"], "3.11")
    assert flags[:5] == [
        "--only-binary=:all:",
        "--python-version",
        "3.11",
        "--implementation",
        "cp",
    ]
    assert flags[5:] == [
        "--abi",
        "cp311",
        "--abi",
        "abi3",
        "--abi",
        "none",
        "--platform",
        "win_arm64",
    ]
