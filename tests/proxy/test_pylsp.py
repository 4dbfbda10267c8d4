"""A real third-party server, python-lsp-server (pylsp), directly and behind the proxy:
hover, definition and completion results are byte-for-byte the same JSON."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from proxy_helpers import RawClient, proxy

pytest.importorskip(
    "pylsp", reason="python-lsp-server is not installed (pip install python-lsp-server)"
)

SOURCE = '''import os


def helper(value):
    """Return the value doubled."""
    return value * 2


result = helper(3)
os.path.jo
'''
PYLSP = [sys.executable, "-m", "pylsp"]


async def results(command: list[str], folder: Path, uri: str) -> tuple[dict, list[dict]]:
    client = RawClient()
    await client.start(command, cwd=folder)
    try:
        init = await client.initialize(folder)
        client.open(uri, SOURCE)
        doc = {"uri": uri}
        answers = [
            await client.request(method, {"textDocument": doc, "position": pos})
            for method, pos in [
                ("textDocument/hover", {"line": 8, "character": 10}),
                ("textDocument/hover", {"line": 0, "character": 8}),
                ("textDocument/definition", {"line": 8, "character": 10}),
                ("textDocument/completion", {"line": 9, "character": 10}),
            ]
        ]
        return init["result"], [a.get("result", a.get("error")) for a in answers]
    finally:
        await client.stop()


async def test_pylsp_answers_are_identical_through_the_proxy(tmp_path):
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "app.py").write_text(SOURCE, encoding="utf-8")
    uri = (folder / "app.py").as_uri()
    direct_init, direct = await results(PYLSP, folder, uri)
    proxied_init, proxied = await results(proxy(*PYLSP), folder, uri)

    hover, module_hover, definition, completion = direct
    assert "doubled" in str(hover) and definition and completion["items"]
    assert any(i["label"].startswith("join") for i in completion["items"])
    assert proxied == direct

    caps, direct_caps = proxied_init["capabilities"], direct_init["capabilities"]
    for key in ("completionProvider", "definitionProvider", "signatureHelpProvider"):
        assert caps[key] == direct_caps[key]
    assert caps["hoverProvider"]
    commands = caps["executeCommandProvider"]["commands"]
    assert set(direct_caps["executeCommandProvider"]["commands"]) <= set(commands)
    assert "recitation.dismiss" in commands
    assert proxied_init["serverInfo"] == direct_init["serverInfo"]


def test_pylsp_is_on_path_for_editors():
    assert shutil.which("pylsp") or Path(sys.executable).with_name("pylsp").exists()
