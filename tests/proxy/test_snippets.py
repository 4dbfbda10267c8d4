"""A snippet server behind the proxy: items quoting indexed code are annotated (`warn`),
removed and reported (`block`) or left alone (`off`); inline completions likewise; its
diagnostics are merged with ours."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proxy_helpers import AREA, CLAMP, ORIGINAL, SNIPPET_SERVER, RawClient, proxy

ITEMS = [
    {"label": "area", "text": AREA},
    {"label": "clamp", "text": CLAMP},
    {"label": "tally", "text": ORIGINAL},
    {"label": "x", "text": "x"},
]
BEFORE = "import math\n\n"
END = {"line": 2, "character": 0}
QUOTED = {"area", "clamp"}


async def session(tmp_path: Path, index: Path, mode: str) -> tuple[RawClient, str]:
    items = tmp_path / "items.json"
    items.write_text(json.dumps(ITEMS), encoding="utf-8")
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    client = RawClient()
    await client.start(proxy(*SNIPPET_SERVER, "--items", str(items)))
    options = {"recitation": {"indexPath": str(index), "completionMode": mode}}
    await client.initialize(folder, options)
    uri = (folder / "app.py").as_uri()
    client.open(uri, BEFORE)
    return client, uri


def position(uri: str) -> dict:
    return {"textDocument": {"uri": uri}, "position": END}


@pytest.mark.parametrize("mode", ["warn", "block", "off"])
async def test_completion_items(tmp_path, widgets_index, mode):
    client, uri = await session(tmp_path, widgets_index, mode)
    try:
        result = (await client.request("textDocument/completion", position(uri)))["result"]
        items = {item["label"]: item for item in result["items"]}
        untouched = {"tally", "x"}
        for label in untouched:
            assert "labelDetails" not in items[label] and "sortText" not in items[label]
        if mode == "off":
            assert set(items) == QUOTED | untouched
            assert all("labelDetails" not in i for i in items.values())
        elif mode == "warn":
            assert set(items) == QUOTED | untouched
            for label in QUOTED:
                item = items[label]
                assert (
                    item["labelDetails"]["description"] == "public code \u00b7 MIT \u00b7 widgets"
                )
                assert item["documentation"]["kind"] == "markdown"
                assert "Quoted: " in item["documentation"]["value"].replace("\\", "")
                assert "widgets shapes.py" in item["documentation"]["value"].replace("\\", "")
                assert item["sortText"] > "z" + label
                assert item["insertText"] == next(i["text"] for i in ITEMS if i["label"] == label)
            # resolving an annotated item: the upstream resolves it, the result stays annotated
            resolved = (await client.request("completionItem/resolve", items["area"]))["result"]
            assert resolved["detail"] == "snippet area"
            assert resolved["labelDetails"] == items["area"]["labelDetails"]
        else:
            assert set(items) == untouched
            (note,) = await client.wait(
                lambda: client.notes("recitation/blocked"), "recitation/blocked"
            )
            assert note["uri"] == uri and note["method"] == "textDocument/completion"
            assert {e["label"] for e in note["items"]} == QUOTED
            for entry in note["items"]:
                assert entry["match"]["kind"] == "recitation"
                assert entry["match"]["sources"][0]["license"] == "MIT"
                assert entry["match"]["description"].startswith("Quoted: ")
        assert mode == "block" or not client.notes("recitation/blocked")
    finally:
        await client.stop()


@pytest.mark.parametrize("mode", ["warn", "block", "off"])
async def test_inline_completions(tmp_path, widgets_index, mode):
    client, uri = await session(tmp_path, widgets_index, mode)
    try:
        params = {**position(uri), "context": {"triggerKind": 1}}
        result = (await client.request("textDocument/inlineCompletion", params))["result"]
        texts = [item["insertText"] for item in result]
        if mode == "block":
            assert texts == [ORIGINAL, "x"]
            (note,) = await client.wait(
                lambda: client.notes("recitation/blocked"), "recitation/blocked"
            )
            assert note["method"] == "textDocument/inlineCompletion"
            assert [e["text"] for e in note["items"]] == [AREA, CLAMP]
        else:
            assert texts == [AREA, CLAMP, ORIGINAL, "x"]  # ghost text is never rewritten
        if mode == "warn":
            (note,) = await client.wait(
                lambda: client.notes("recitation/flagged"), "recitation/flagged"
            )
            assert [e["text"] for e in note["items"]] == [AREA, CLAMP]
            assert note["mode"] == "warn"
        if mode == "off":
            assert not client.notes("recitation/flagged")
            assert not client.notes("recitation/blocked")
    finally:
        await client.stop()


async def test_diagnostics_of_both_servers_are_merged(tmp_path, widgets_index):
    client, uri = await session(tmp_path, widgets_index, "warn")
    try:

        def sources() -> set[str] | None:
            for params in reversed(client.notes("textDocument/publishDiagnostics")):
                if params["uri"] == uri:
                    return {d.get("source") for d in params["diagnostics"]}
            return None

        await client.wait(lambda: sources() == {"snippets"}, "the snippet server's diagnostic")
        # the accepted item arrives as an insertion: our diagnostic joins the upstream's
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"range": {"start": END, "end": END}, "text": AREA}],
            },
        )
        await client.wait(lambda: sources() == {"snippets", "recitation"}, "merged diagnostics")
    finally:
        await client.stop()


async def test_short_item_that_completes_quoted_code_is_flagged(tmp_path, widgets_index):
    """An item shorter than minTokens is flagged when, with the code before it, it
    completes a quoted span (the span counts the part reaching back into the context)."""
    cut = AREA.index("return abs(area)")
    before, rest = AREA[:cut], AREA[cut:]
    items = tmp_path / "items.json"
    items.write_text(json.dumps([{"label": "ret", "text": rest}]), encoding="utf-8")
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    client = RawClient()
    await client.start(proxy(*SNIPPET_SERVER, "--items", str(items)))
    try:
        await client.initialize(folder, {"recitation": {"indexPath": str(widgets_index)}})
        uri = (folder / "app.py").as_uri()
        client.open(uri, before)
        lines = before.split("\n")
        at = {"line": len(lines) - 1, "character": len(lines[-1])}
        result = await client.request(
            "textDocument/completion", {"textDocument": {"uri": uri}, "position": at}
        )
        (item,) = result["result"]["items"]
        assert item["labelDetails"]["description"] == "public code \u00b7 MIT \u00b7 widgets"
        # the same item after code that is not quoted stays as it is
        client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": "import math\n\n" + ORIGINAL + "    "}],
            },
        )
        at = {"line": ORIGINAL.count("\n") + 2, "character": 4}
        result = await client.request(
            "textDocument/completion", {"textDocument": {"uri": uri}, "position": at}
        )
        (item,) = result["result"]["items"]
        assert "labelDetails" not in item
    finally:
        await client.stop()


async def test_the_folders_policy_decides_per_item(tmp_path, widgets_index):
    """`[policy.completions]` in the folder's decisions file beats `completionMode`: MIT
    quotes are blocked here while the setting says warn; an allowed source passes."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / ".recitation.toml").write_text('[policy.completions]\npermissive = "block"\n')
    client, uri = await session(tmp_path, widgets_index, "warn")
    try:
        result = (await client.request("textDocument/completion", position(uri)))["result"]
        assert {item["label"] for item in result["items"]} == {"tally", "x"}
        (note,) = await client.wait(lambda: client.notes("recitation/blocked"), "blocked")
        assert {e["label"] for e in note["items"]} == QUOTED and note["mode"] == "block"
        (folder / ".recitation.toml").write_text('[allow]\nsources = ["widgets"]\n')
        result = (await client.request("textDocument/completion", position(uri)))["result"]
        items = {item["label"]: item for item in result["items"]}
        assert set(items) == QUOTED | {"tally", "x"}
        assert all("labelDetails" not in i for i in items.values())  # our own code: untouched
    finally:
        await client.stop()
