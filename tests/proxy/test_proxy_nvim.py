"""Neovim (headless) with `recitation-server --wrap -- pylsp`: pylsp's completion and hover
reach the editor through the proxy, and so does Recitation's diagnostic on quoted code.
Needs `nvim` (apt-get install -y neovim) and python-lsp-server."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from proxy_helpers import AREA, REPO, env

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).with_name("nvim_wrap.lua")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (apt-get install -y neovim)"
)

SOURCE = '''import os


def helper(value):
    """Return the value doubled."""
    return value * 2


result = helper(3)
os.path.jo
'''


def test_neovim_through_the_proxy_with_pylsp(widgets_index, tmp_path):
    pytest.importorskip("pylsp", reason="python-lsp-server is not installed")
    root = tmp_path / "project"
    root.mkdir()
    source = root / "main.py"
    source.write_text(SOURCE)
    out = tmp_path / "nvim-result.json"
    environ = env()
    config = {
        "cmd": [sys.executable, "-m", "server", "--wrap", "--", sys.executable, "-m", "pylsp"],
        "env": {"PYTHONPATH": environ["PYTHONPATH"]},
        "root": str(root),
        "file": str(source),
        "index": str(widgets_index),
        "snippet": AREA.rstrip("\n"),
        "completion_at": {"line": 9, "character": 10},
        "hover_at": {"line": 8, "character": 10},
        "out": str(out),
    }
    environ["RECITATION_NVIM_CONFIG"] = json.dumps(config)
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
        env=environ,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.exists(), f"nvim wrote nothing: {proc.returncode} {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["error"] is None, result
    assert any(label.startswith("join") for label in result["labels"]), result["labels"]
    assert "doubled" in result["hover"]
    assert result["message"].startswith("Quoted: ")
    assert "recitation" in result["sources"]
