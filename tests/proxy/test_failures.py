"""The upstream crashing, hanging, writing garbage or not starting: the editor is told, and
Recitation's own diagnostics on insertion keep working."""

from __future__ import annotations

import json
from pathlib import Path

from proxy_helpers import AREA, SNIPPET_SERVER, RawClient, proxy

END = {"line": 2, "character": 0}
BEFORE = "import math\n\n"


async def start(tmp_path: Path, index: Path, upstream: list[str], timeout: float | None = None):
    items = tmp_path / "items.json"
    items.write_text(json.dumps([{"label": "area", "text": AREA}]), encoding="utf-8")
    folder = tmp_path / "ws"
    folder.mkdir()
    client = RawClient()
    command = [*upstream, "--items", str(items)] if upstream[:1] == SNIPPET_SERVER[:1] else upstream
    await client.start(proxy(*command, timeout=timeout))
    init = await client.initialize(folder, {"recitation": {"indexPath": str(index)}})
    uri = (folder / "app.py").as_uri()
    client.open(uri, BEFORE)
    return client, uri, init


def insert_quote(client: RawClient, uri: str) -> None:
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": END, "end": END}, "text": AREA}],
        },
    )


async def our_diagnostic(client: RawClient, uri: str) -> dict:
    def found():
        for params in reversed(client.notes("textDocument/publishDiagnostics")):
            if params["uri"] == uri:
                ours = [d for d in params["diagnostics"] if d.get("source") == "recitation"]
                return ours or None
        return None

    (diag,) = await client.wait(found, "Recitation's diagnostic")
    return diag


async def message(client: RawClient, words: str) -> dict:
    return await client.wait(
        lambda: next(
            (m for m in client.notes("window/showMessage") if words in m["message"]), None
        ),
        f"a message saying {words!r}",
    )


async def test_upstream_crash(tmp_path, widgets_index):
    client, uri, _ = await start(
        tmp_path, widgets_index, [*SNIPPET_SERVER, "--crash-on", "completion"]
    )
    try:
        resp = await client.request(
            "textDocument/completion", {"textDocument": {"uri": uri}, "position": END}
        )
        assert "error" in resp and "not running" in resp["error"]["message"]
        note = await message(client, "stopped (exit code 3)")
        assert note["type"] == 1 and "Recitation's own checks keep running" in note["message"]
        insert_quote(client, uri)
        diag = await our_diagnostic(client, uri)
        assert diag["message"].startswith("Quoted: ")
        # requests for the upstream are answered at once, with an error
        resp = await client.request(
            "textDocument/definition", {"textDocument": {"uri": uri}, "position": END}
        )
        assert resp["error"]["code"] == -32803
    finally:
        await client.stop()


async def test_upstream_hangs(tmp_path, widgets_index):
    client, uri, _ = await start(
        tmp_path, widgets_index, [*SNIPPET_SERVER, "--hang-on", "hover"], timeout=1.0
    )
    try:
        at = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 1}}
        resp = await client.request("textDocument/hover", at)
        assert resp["result"] is None  # ours has nothing there; the upstream never answers
        note = await message(client, "has not answered `textDocument/hover`")
        assert note["type"] == 2
        insert_quote(client, uri)
        diag = await our_diagnostic(client, uri)
        # a hover on the quoted range comes from Recitation alone
        inside = {"textDocument": {"uri": uri}, "position": diag["range"]["start"]}
        resp = await client.request("textDocument/hover", inside)
        assert "shapes.py" in resp["result"]["contents"]["value"].replace("\\", "")
    finally:
        await client.stop()


async def test_upstream_writes_garbage(tmp_path, widgets_index):
    client, uri, _ = await start(tmp_path, widgets_index, [*SNIPPET_SERVER, "--garbage-on", "open"])
    try:
        note = await message(client, "output that is not LSP")
        assert note["type"] == 2
        # the upstream keeps working after the bad output
        resp = await client.request(
            "textDocument/completion", {"textDocument": {"uri": uri}, "position": END}
        )
        assert [i["label"] for i in resp["result"]["items"]] == ["area"]
        insert_quote(client, uri)
        await our_diagnostic(client, uri)
    finally:
        await client.stop()


async def test_upstream_that_cannot_start(tmp_path, widgets_index):
    missing = str(tmp_path / "no-such-language-server")
    client, uri, init = await start(tmp_path, widgets_index, [missing])
    try:
        await message(client, "could not start the wrapped language server")
        caps = init["result"]["capabilities"]
        assert "recitation.dismiss" in caps["executeCommandProvider"]["commands"]
        insert_quote(client, uri)
        await our_diagnostic(client, uri)
    finally:
        assert await client.stop() == 0
