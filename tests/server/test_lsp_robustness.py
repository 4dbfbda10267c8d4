"""A missing or broken index, malformed requests, and `recitation/check`."""

from __future__ import annotations

import errno
import os

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from server_helpers import (
    block,
    corpus_text,
    diagnostics_for,
    insert,
    open_doc,
    raw_notify,
    raw_request,
    start_session,
    wait_for,
)

from index_tools import open_index

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")


async def check(client, params):
    return await client.protocol.send_request_async("recitation/check", params)


async def still_answers(client, uri: str) -> None:
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 0)
        )
    )
    assert hover is None


async def test_missing_index_reports_no_index_and_keeps_running(client, workspace):
    a = workspace["a"]
    await start_session(client, index=a / "no-such-index", folders=[a])
    status = (await wait_for(lambda: client.statuses, what="status"))[0]
    assert status["state"] == "no-index"
    assert "no-such-index" in status["message"] and status["scopeUri"] == a.as_uri()
    assert status["index"] is None

    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), HULL)
    await still_answers(client, uri)
    with pytest.raises(JsonRpcException, match="no index"):
        await check(client, {"text": HULL})
    assert await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.rescan", arguments=[uri])
    ) == {"matches": 0}


async def test_an_index_built_later_is_picked_up_on_a_configuration_change(
    client, fixture_index, workspace
):
    a = workspace["a"]
    later = a / "built-later"
    await start_session(client, index=later, folders=[a])
    status = (await wait_for(lambda: client.statuses, what="status"))[0]
    assert status["state"] == "no-index"
    later.symlink_to(fixture_index, target_is_directory=True)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await wait_for(lambda: client.statuses[-1]["state"] == "ready", what="ready")


async def test_broken_index_reports_error(client, workspace, tmp_path):
    a = workspace["a"]
    broken = tmp_path / "broken-index"
    broken.mkdir()
    (broken / "CURRENT").write_text("garbage\n")
    (broken / "data.mdb").write_bytes(b"\x00not an index\x00" * 10)
    await start_session(client, index=broken, folders=[a])
    status = (await wait_for(lambda: client.statuses, what="status"))[0]
    assert status["state"] == "error"
    assert str(broken) in status["message"]
    await still_answers(client, (a / "x.py").as_uri())


async def test_relative_index_path_resolves_against_the_folder(client, fixture_index, workspace):
    a = workspace["a"]
    (a / "idx").symlink_to(fixture_index, target_is_directory=True)
    await start_session(client, index="idx", folders=[a])
    status = (await wait_for(lambda: client.statuses, what="status"))[0]
    assert status["state"] == "ready"


async def test_malformed_params_get_an_error_and_the_server_lives_on(
    client, fixture_index, workspace
):
    a = workspace["a"]
    await start_session(client, index=fixture_index, folders=[a])
    bad_requests = [
        ("textDocument/hover", {"textDocument": 5, "position": "here"}),
        ("textDocument/codeAction", {"textDocument": {"uri": 1}}),
        ("recitation/check", {"text": 5}),
        ("recitation/check", ["not", "an", "object"]),
        ("recitation/check", {"text": "x", "minTokens": 0}),
        ("workspace/executeCommand", {"command": "recitation.dismiss", "arguments": [1]}),
        ("workspace/executeCommand", {"command": "recitation.rescan", "arguments": []}),
        ("workspace/executeCommand", {"command": "recitation.nope", "arguments": []}),
    ]
    for method, params in bad_requests:
        with pytest.raises(JsonRpcException):
            await raw_request(client, method, params)
    # malformed notifications are logged and ignored
    raw_notify(client, "textDocument/didChange", {"textDocument": {"uri": 3}})
    raw_notify(client, "textDocument/didOpen", {"nonsense": True})

    uri = (a / "x.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), HULL)
    await diagnostics_for(client, uri)


async def test_check_request_returns_the_engines_json(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    result = await check(client, {"text": HULL, "context": "import math\n"})
    expected = [m.to_dict() for m in open_index(fixture_index).match(HULL, "import math\n", 60)]
    out = plain_result(result)
    verdicts = [m.pop("verdict") for m in out["matches"]]
    assert out == {"query_words": 221, "suggestion_words": 219, "matches": expected}
    # with the verdict the folder's decisions give (none here: the kind's severity)
    assert verdicts == [
        {
            "action": "warning",
            "state": "open",
            "reason": "severity for recitation: warning",
            "license": "MIT",
            "category": "permissive",
            "completion": None,
            "attribution_line": None,
            "dismissal": None,
        }
    ]
    # minTokens above the span's length: nothing
    result = await check(client, {"text": HULL, "minTokens": 500})
    assert plain_result(result)["matches"] == []


def plain_result(value):
    if hasattr(value, "_asdict"):
        return {k: plain_result(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain_result(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_result(v) for v in value]
    return value


async def test_an_index_path_too_long_for_the_system_gives_an_error_status(client, workspace):
    a = workspace["a"]
    await start_session(client, index="x" * 5000, folders=[a])
    status = (await wait_for(lambda: client.statuses, what="status"))[0]
    assert status["state"] == "error", status
    assert os.strerror(errno.ENAMETOOLONG) in status["message"]
    assert len(status["message"]) < 500


@pytest.mark.parametrize("bad", ["a%00b", "x" * 5000])
async def test_a_uri_no_file_can_have_gets_invalid_params(client, fixture_index, tmp_path, bad):
    folder_uri = f"{tmp_path.as_uri()}/{bad}"
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            initialization_options={"recitation": {"indexPath": str(fixture_index)}},
            workspace_folders=[types.WorkspaceFolder(uri=folder_uri, name="bad")],
        )
    )
    doc = f"{folder_uri}/x.py"
    for method, params in [
        ("recitation/decisions", {"uri": doc}),
        ("recitation/decisions", {"uri": folder_uri}),
        (
            "workspace/executeCommand",
            {"command": "recitation.allowSource", "arguments": [doc, "a/b"]},
        ),
    ]:
        with pytest.raises(JsonRpcException) as info:
            await raw_request(client, method, params)
        assert info.value.code == -32602, (method, info.value)
        assert "Error" not in str(info.value)  # no OSError or ValueError text
    # the folder without a usable path keeps its decisions for the session
    answer = plain_result(await raw_request(client, "recitation/decisions", {}))
    assert answer["file"] is None and answer["exists"] is False
