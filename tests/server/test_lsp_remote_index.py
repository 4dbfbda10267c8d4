"""The language server with an index service (a real `recitation-index serve` process over
loopback): as its only index, and with a local index beside it (matches merged); a service
that goes down is a status, the local index keeps working, and it recovers by itself."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, insert, open_doc, plain, start_session, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "index_tools"))
from service_helpers import Service, corpus, snippet  # noqa: E402

from index_tools import BuildOptions, build_index  # noqa: E402


def built(root: Path, *names: str) -> Path:
    out = root / "idx"
    # the folder is the repository: "local" and "remote" sources differ
    build_index([corpus(root / root.name, *names)], out, BuildOptions(jobs=1, progress=False))
    return out


async def check(client, uri: str, text: str) -> dict:
    result = await client.protocol.send_request_async(
        "recitation/check", {"text": text, "uri": uri}
    )
    return plain(result)


def end_of(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(len(lines) - 1, len(lines[-1]))


async def test_an_index_service_gives_the_editor_its_warnings(client, tmp_path, workspace):
    service = await asyncio.to_thread(Service(built(tmp_path / "remote", "beta")).start)
    try:
        a = workspace["a"]
        await start_session(client, index=service.url, folders=[a])
        uri = (a / "x.py").as_uri()
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), snippet("beta"))
        (diag,) = await diagnostics_for(client, uri)
        assert "beta.py" in diag.message
        status = await wait_for(lambda: [s for s in client.statuses if s["state"] == "ready"])
        assert "Index service" in status[-1]["message"]
    finally:
        await asyncio.to_thread(service.stop)
    # down: an error status, and the server goes on answering
    insert(client, uri, 3, end_of(snippet("beta")), "\n" + snippet("beta2"))
    await wait_for(
        lambda: [s for s in client.statuses if s["state"] == "error"], what="error status"
    )
    error = [s for s in client.statuses if s["state"] == "error"][-1]
    assert error["message"].startswith("error: index service unreachable: " + service.url)
    with pytest.raises(Exception, match="unreachable"):
        await asyncio.wait_for(check(client, uri, snippet("beta")), 10)
    # other requests are answered at once (the warnings wait for the service to return)
    await asyncio.wait_for(
        client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
        ),
        10,
    )


async def test_a_local_and_a_remote_index_are_used_together(client, tmp_path, workspace):
    local = built(tmp_path / "local", "alpha", "shared")
    service = await asyncio.to_thread(Service(built(tmp_path / "remote", "beta", "shared")).start)
    try:
        a = workspace["a"]
        await start_session(client, index=local, folders=[a], settings={"remoteIndex": service.url})
        uri = (a / "x.py").as_uri()
        open_doc(client, uri, "")
        text = "\n\n".join(snippet(n) for n in ("alpha", "beta", "shared"))
        insert(client, uri, 2, types.Position(0, 0), text)
        diags = await diagnostics_for(client, uri, count=3)
        assert len(diags) == 3  # one warning per quoted region
        messages = "\n".join(d.message for d in diags)
        assert "alpha.py" in messages and "beta.py" in messages and "shared.py" in messages
        found = (await check(client, uri, snippet("shared")))["matches"]
        assert len(found) == 1  # found in both indexes: one region, the sources of both
        sources = {(s["repository"], s["path"]) for s in found[0]["sources"]}
        assert len(sources) == 2, sources
    finally:
        await asyncio.to_thread(service.stop)


async def test_a_service_down_leaves_the_local_index_working_and_recovers(
    client, tmp_path, workspace
):
    local = built(tmp_path / "local", "alpha", "alpha2")
    service = Service(built(tmp_path / "remote", "beta", "beta2"))
    await asyncio.to_thread(service.start)
    try:
        a = workspace["a"]
        await start_session(client, index=local, folders=[a], settings={"remoteIndex": service.url})
        uri = (a / "x.py").as_uri()
        open_doc(client, uri, "")
        insert(client, uri, 2, types.Position(0, 0), snippet("beta"))
        await diagnostics_for(client, uri)

        await asyncio.to_thread(service.stop)
        text = snippet("beta") + "\n" + snippet("alpha")
        insert(client, uri, 3, end_of(snippet("beta")), "\n" + snippet("alpha"))
        diags = await diagnostics_for(client, uri, count=2)
        assert any("alpha.py" in d.message for d in diags)  # the local index answered
        down = await wait_for(
            lambda: [s for s in client.statuses if "unreachable" in s["message"]],
            what="an unreachable status",
        )
        assert down[-1]["state"] == "ready"  # the local index still serves

        await asyncio.to_thread(service.start)  # the same port: retried with backoff
        await wait_for(
            lambda: (
                "unreachable" not in client.statuses[-1]["message"]
                and "Index service" in client.statuses[-1]["message"]
            ),
            timeout=30,
            what="the service back in the status",
        )
        insert(client, uri, 4, end_of(text), "\n" + snippet("beta2"))
        diags = await diagnostics_for(client, uri, count=3)
        assert any("beta2.py" in d.message for d in diags)
    finally:
        await asyncio.to_thread(service.stop)
