"""The upstream crashing, hanging, writing garbage or not starting: the editor is told, and
Recitation's own diagnostics on insertion keep working."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from proxy_helpers import AREA, DEAF_SERVER, SNIPPET_SERVER, RawClient, peak_memory, proxy

END = {"line": 2, "character": 0}
BEFORE = "import math\n\n"


async def start(
    tmp_path: Path,
    index: Path,
    upstream: list[str],
    timeout: float | None = None,
    options: tuple[str, ...] = (),
):
    items = tmp_path / "items.json"
    items.write_text(json.dumps([{"label": "area", "text": AREA}]), encoding="utf-8")
    folder = tmp_path / "ws"
    folder.mkdir()
    client = RawClient()
    snippets = upstream[:2] == SNIPPET_SERVER
    command = [*upstream, "--items", str(items)] if snippets else upstream
    await client.start(proxy(*command, timeout=timeout, options=options))
    init = await client.initialize(folder, {"recitation": {"indexPath": str(index)}})
    uri = (folder / "app.py").as_uri()
    client.open(uri, BEFORE)
    return client, uri, init


def insert_quote(client: RawClient, uri: str, version: int = 2) -> None:
    client.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": version},
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


def upstream_diagnostics(client: RawClient, uri: str) -> int:
    """How many times the upstream's own diagnostic was published for `uri`."""
    return sum(
        1
        for params in client.notes("textDocument/publishDiagnostics")
        if params["uri"] == uri
        and any(d.get("source") == "snippets" for d in params["diagnostics"])
    )


async def test_upstream_crash_is_restarted_with_backoff(tmp_path, widgets_index):
    client, uri, _ = await start(
        tmp_path, widgets_index, [*SNIPPET_SERVER, "--crash-on", "completion"]
    )
    try:
        await client.wait(lambda: upstream_diagnostics(client, uri), "the upstream's diagnostic")
        at = {"textDocument": {"uri": uri}, "position": END}
        resp = await client.request("textDocument/completion", at)
        assert "error" in resp and "not running" in resp["error"]["message"]
        note = await message(client, "stopped (exit code 3)")
        assert note["type"] == 1 and "Recitation's own checks keep running" in note["message"]
        assert "restarting it in 1 s" in note["message"]
        insert_quote(client, uri)
        diag = await our_diagnostic(client, uri)
        assert diag["message"].startswith("Quoted: ")
        # restarted: initialized again, told of the open document (with its edits) and
        # answering as before
        await message(client, "was restarted")
        await client.wait(lambda: upstream_diagnostics(client, uri) >= 2, "a re-opened document")
        hover = await client.request("textDocument/hover", at)
        assert "snippet hover" in json.dumps(hover["result"])
        # a second crash soon after: a longer wait before the next start
        resp = await client.request("textDocument/completion", at)
        assert "error" in resp
        note = await message(client, "restarting it in 2 s")
        assert "stopped (exit code 3)" in note["message"]
    finally:
        await client.stop()


async def test_a_request_the_upstream_never_answers_gets_an_error(tmp_path, widgets_index):
    client, uri, _ = await start(
        tmp_path,
        widgets_index,
        [*SNIPPET_SERVER, "--ignore", "definition"],
        options=("--request-timeout", "1"),
    )
    try:
        at = {"textDocument": {"uri": uri}, "position": END}
        t = time.monotonic()
        resp = await client.request("textDocument/definition", at)
        assert resp["error"]["code"] == -32803, resp
        assert "did not answer" in resp["error"]["message"]
        assert time.monotonic() - t < 10
        # the upstream is not blamed for the one request: it answers the next ones
        hover = await client.request("textDocument/hover", at)
        assert "snippet hover" in json.dumps(hover["result"])
    finally:
        await client.stop()


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
async def test_an_upstream_that_stops_reading_holds_the_relay_back(tmp_path, widgets_index):
    """300 changes of 1 MB to an upstream that reads none of them: the relay buffers a
    bounded amount, waits, then restarts the upstream; its memory stays bounded."""
    client, uri, _ = await start(tmp_path, widgets_index, DEAF_SERVER, timeout=1.0)
    try:
        assert client.proc is not None and client.proc.stdin is not None
        big = "a" * (1 << 20)
        for version in range(2, 302):
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version},
                 "contentChanges": [{"text": big}]},
            )  # fmt: skip
            await client.proc.stdin.drain()  # as fast as the relay reads
        peak = peak_memory(client.proc.pid)
        assert peak < 160 << 20, f"the relay grew to {peak >> 20} MiB"
        note = await message(client, "does not read what it is sent")
        assert note["type"] == 1
        # Recitation's own checks went on
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 302}, "contentChanges": [{"text": BEFORE}]},
        )
        insert_quote(client, uri, 303)
        await our_diagnostic(client, uri)
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


def child_pids(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
async def test_our_server_crashing_is_restarted(tmp_path, widgets_index):
    client, uri, _ = await start(tmp_path, widgets_index, [*SNIPPET_SERVER])
    try:
        assert client.proc is not None
        ours = [
            pid
            for pid in child_pids(client.proc.pid)
            if b"snippet_server" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        ]
        assert len(ours) == 1, ours
        os.kill(ours[0], signal.SIGKILL)
        note = await message(client, "Recitation's checks stopped")
        assert "restarting it in 1 s" in note["message"]
        await message(client, "Recitation's server was restarted")
        # it has the document again, edits included, and checks what comes in
        insert_quote(client, uri)
        diag = await our_diagnostic(client, uri)
        assert diag["message"].startswith("Quoted: ")
    finally:
        await client.stop()
