"""Neovim (headless) as a third-party LSP client: insert a snippet, read the diagnostic, the
hover and the code actions. Needs `nvim` (Debian/Ubuntu: `apt-get install -y neovim`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import REPO, block, corpus_text, line_range, server_env

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).with_name("nvim_session.lua")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (apt-get install -y neovim)"
)

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")


def test_neovim_sees_the_diagnostic_hover_and_actions(fixture_index, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    source = root / "main.py"
    source.write_text("")
    out = tmp_path / "nvim-result.json"
    env = server_env()
    config = {
        "cmd": [sys.executable, "-m", "server"],
        "env": {"PYTHONPATH": env["PYTHONPATH"]},
        "root": str(root),
        "file": str(source),
        "index": str(fixture_index),
        "snippet": HULL.rstrip("\n"),
        "out": str(out),
    }
    env["RECITATION_NVIM_CONFIG"] = json.dumps(config)
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), f"nvim wrote nothing: {proc.returncode} {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["error"] is None, result
    assert result["statuses"][0]["state"] == "ready"

    first, last = line_range(GEO, HULL)
    diag = result["diagnostic"]
    # line 0 is the file's empty line; the snippet starts on line 1
    assert (diag["lnum"], diag["col"]) == (1, 0)
    assert diag["end_lnum"] == 1 + HULL.rstrip("\n").count("\n")
    assert diag["end_col"] == len(HULL.rstrip("\n").rsplit("\n", 1)[-1])
    assert diag["message"] == (
        f"Quoted: acme/widgets src/geo.py L{first}\u2013L{last} \u00b7 MIT \u00b7 219 words "
        "\u00b7 1 file"
    )
    assert diag["source"] == "recitation"
    url = f"https://github.com/acme/widgets/blob/4f2a9c1e0b7d/src/geo.py#L{first}-L{last}"
    assert f"]({url})" in result["hover"]
    assert result["actions"][0] == f"Add attribution comment: Adapted from {url} (MIT)"
    assert result["matches"][0]["uri"] == source.as_uri()
    assert os.path.basename(result["matches"][0]["uri"]) == "main.py"


COMPARE_SCRIPT = Path(__file__).with_name("nvim_compare.lua")


def readme_compare_example() -> str:
    """The README's Neovim snippet for "Compare with source", as written there."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```lua\n(.*?)```", readme, re.S)
    (example,) = [b for b in blocks if 'vim.lsp.commands["recitation.compareWithSource"]' in b]
    return "\n".join(line[2:] if line.startswith("  ") else line for line in example.split("\n"))


def test_the_readme_neovim_example_opens_the_source_in_a_split(fixture_index, tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    source = root / "main.py"
    source.write_text("")
    example = tmp_path / "compare.lua"
    example.write_text(readme_compare_example())
    out = tmp_path / "nvim-compare.json"
    env = server_env()
    config = {
        "cmd": [sys.executable, "-m", "server"],
        "env": {"PYTHONPATH": env["PYTHONPATH"]},
        "root": str(root),
        "file": str(source),
        "index": str(fixture_index),
        "snippet": HULL.rstrip("\n"),
        "example": str(example),
        "out": str(out),
    }
    env["RECITATION_NVIM_CONFIG"] = json.dumps(config)
    proc = subprocess.run(
        [NVIM, "--headless", "--clean", "-u", "NONE", "-c", f"luafile {COMPARE_SCRIPT}"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.exists(), f"nvim wrote nothing: {proc.returncode} {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result["error"] is None, result
    first, last = line_range(GEO, HULL)
    assert result["action"] == f"Compare with source: acme/widgets src/geo.py L{first}\u2013L{last}"
    # the split: the source's lines from three before the quote, the cursor on its first line
    assert result["split_is_new"] is True
    lines = GEO.split("\n")
    assert result["lines"] == lines[first - 4 : last + 3]
    assert result["cursor"] == [4, 0]
    assert result["name"].endswith(
        f"recitation://acme/widgets src/geo.py L{first}\u2013L{last} \u00b7 MIT from line {first - 3}"
    )
    assert result["modifiable"] is False and result["filetype"] == "python"
    assert result["highlights"] >= 1
