"""scripts/setup.sh (what demo.sh and test.sh run first) says what it does while it installs:
a line for each package pip collects and installs, not minutes of silence; a failure shows
the end of pip's log. Run on a copy of the script with a stand-in Python whose pip prints
what pip prints, so that nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

FAKE_PYTHON = r"""#!/bin/sh
# a stand-in: `-c` checks pass, `-m venv DIR` makes DIR/bin/python (this script), pip prints
case "$1" in
  -c) exit 0 ;;
  -m)
    case "$2" in
      venv) mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0 ;;
      pip)
        echo "Requirement already satisfied: pip in ./.venv"
        for p in numpy lmdb zstandard; do echo "Collecting $p"; echo "  Downloading $p-1.0.whl (1 MB)"; done
        echo "Building wheels for collected packages: recitation"
        echo "Installing collected packages: numpy, lmdb, zstandard, recitation"
        if [ -n "$FAIL_PIP" ]; then echo "ERROR: no matching distribution"; exit 1; fi
        echo "Successfully installed lmdb-1.0 numpy-1.0 recitation-0.1 zstandard-1.0"
        exit 0 ;;
    esac ;;
  *) echo "built the kernel"; exit 0 ;;
esac
"""


@pytest.fixture
def checkout(tmp_path) -> Path:
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup.sh", root / "scripts" / "setup.sh")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "index_tools" / "match").mkdir(parents=True)
    (root / "index_tools" / "match" / "kernel.c").write_text("")
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    return root


def setup(root: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(root / "scripts" / "setup.sh")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": str(root.parent / "python"), **env},
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script")
def test_setup_says_each_package_it_installs(checkout):
    r = setup(checkout)
    assert r.returncode == 0, r.stderr
    said = r.stderr.splitlines()
    assert said[0].startswith("setup: installing Recitation")
    for p in ("numpy", "lmdb", "zstandard"):
        assert f"setup: Collecting {p}" in said, said
    assert any(line.startswith("setup: Successfully installed") for line in said)
    assert "setup: building the search kernel for this machine" in said
    again = setup(checkout)  # installed: nothing to say
    assert again.returncode == 0 and "Collecting" not in again.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script")
def test_a_failed_install_shows_the_end_of_the_log(checkout):
    r = setup(checkout, FAIL_PIP="1")
    assert r.returncode == 1
    assert "ERROR: no matching distribution" in r.stderr
    assert "setup: pip install failed (full log: .venv/install.log)" in r.stderr
