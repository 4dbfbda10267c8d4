"""Messages are data (issue 26, reproduction 10): only the top-level object of a body is a
message, whatever its params hold; a notification method sent with an id is a request and
gets an answer; every request is answered exactly once. For Recitation's server alone and
behind the relay."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from proxy_helpers import PROXY, SNIPPET_SERVER, RawClient

SERVER = [*PROXY[:-1]]  # python -m server


def command(kind: str, tmp_path: Path) -> list[str]:
    if kind == "server":
        return SERVER
    items = tmp_path / "items.json"
    items.write_text("[]", encoding="utf-8")
    return [*PROXY, "--", *SNIPPET_SERVER, "--items", str(items)]


async def started(kind: str, tmp_path: Path) -> RawClient:
    folder = tmp_path / "ws"
    folder.mkdir(exist_ok=True)
    client = RawClient()
    await client.start(command(kind, tmp_path))
    init = await client.initialize(folder, {"recitation": {"indexPath": str(tmp_path / "none")}})
    assert "result" in init, init
    return client


def answers(client: RawClient, msg_id) -> int:
    return sum(1 for m in client.received if m.get("id") == msg_id and "method" not in m)


# a request the server would answer (an error: its params do not fit), and one it would obey
SHAPED = {
    "jsonrpc": "2.0", "id": "inner", "method": "textDocument/hover", "params": {"position": 1},
}  # fmt: skip
SHUTDOWN = {"jsonrpc": "2.0", "id": "inner", "method": "shutdown", "params": None}


@pytest.mark.parametrize("kind", ["server", "relay"])
async def test_an_object_shaped_like_a_message_inside_params_is_data(tmp_path, kind):
    client = await started(kind, tmp_path)
    try:
        for method, params in [
            ("recitation/check", {"text": "x = 1\n", "note": SHAPED}),
            ("recitation/check", {"text": "x = 1\n", "note": [SHUTDOWN]}),
            ("workspace/executeCommand", {"command": "recitation.rescan", "arguments": [SHAPED]}),
            ("textDocument/hover", {"textDocument": SHAPED, "position": SHUTDOWN}),
        ]:
            client.next_id += 1
            outer = client.next_id
            client.send({"jsonrpc": "2.0", "id": outer, "method": method, "params": params})
            await client.wait(lambda o=outer: client.responses.get(o), f"the answer to {method}")
            # one answer, under the request's own id; none under the nested one
            await client.request("recitation/ping", None)  # everything before it is in
            assert answers(client, outer) == 1
            assert answers(client, "inner") == 0
        # the server did not take the nested `shutdown` as its own: it still works
        hover = await client.request(
            "textDocument/hover",
            {"textDocument": {"uri": (tmp_path / "ws" / "x.py").as_uri()},
             "position": {"line": 0, "character": 0}},
        )  # fmt: skip
        assert "result" in hover, hover
    finally:
        await client.stop()


@pytest.mark.parametrize("kind", ["server", "relay"])
@pytest.mark.parametrize(
    "method", ["textDocument/didSave", "initialized", "workspace/didChangeConfiguration"]
)
async def test_a_notification_sent_with_an_id_is_answered(tmp_path, kind, method):
    client = await started(kind, tmp_path)
    try:
        params = {"settings": None} if "Configuration" in method else {}
        if method == "textDocument/didSave":
            params = {"textDocument": {"uri": (tmp_path / "ws" / "x.py").as_uri()}}
        answer = await client.request(method, params, timeout=30)
        assert answer["error"]["code"] == -32601, answer
        assert "notification" in answer["error"]["message"]
        await client.request("recitation/ping", None)
        assert answers(client, answer["id"]) == 1
    finally:
        await client.stop()


async def test_every_request_of_a_burst_is_answered_once(tmp_path):
    client = await started("server", tmp_path)
    try:
        ids = []
        for i in range(50):
            client.next_id += 1
            ids.append(client.next_id)
            params = [{"text": 5}, {"text": "x"}, None, {"text": "y", "note": SHAPED}][i % 4]
            client.send(
                {"jsonrpc": "2.0", "id": client.next_id, "method": "recitation/check",
                 "params": params}
            )  # fmt: skip
        await client.wait(lambda: all(i in client.responses for i in ids), "every answer")
        await asyncio.sleep(0)
        await client.request("recitation/ping", None)
        assert [answers(client, i) for i in ids] == [1] * len(ids)
    finally:
        await client.stop()
