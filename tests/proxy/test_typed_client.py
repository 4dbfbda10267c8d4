"""The proxy driven by pytest-lsp's client with VS Code's capabilities: what it sends
(merged capabilities, annotated items, `recitation/blocked`) reads as valid LSP through
lsprotocol's types."""

from __future__ import annotations

import asyncio
import json

from lsprotocol import types
from proxy_helpers import AREA, ORIGINAL, SNIPPET_SERVER, env, proxy
from pytest_lsp import client_capabilities, make_test_lsp_client


async def start(tmp_path, index, mode: str):
    items = tmp_path / "items.json"
    items.write_text(
        json.dumps([{"label": "area", "text": AREA}, {"label": "tally", "text": ORIGINAL}]),
        encoding="utf-8",
    )
    folder = tmp_path / "ws"
    folder.mkdir()
    client = make_test_lsp_client()
    blocked: list = []
    arrived = asyncio.Event()

    @client.feature("recitation/blocked")
    def on_blocked(ls, params) -> None:
        blocked.append(params)
        arrived.set()

    command = proxy(*SNIPPET_SERVER, "--items", str(items))
    await client.start_io(command[0], *command[1:], env=env())
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            initialization_options={
                "recitation": {"indexPath": str(index), "completionMode": mode}
            },
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name="ws")],
            root_uri=folder.as_uri(),
        )
    )
    uri = (folder / "app.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text="")
        )
    )
    return client, uri, result, (blocked, arrived)


async def test_vscode_client_reads_annotated_items(tmp_path, widgets_index):
    client, uri, result, _ = await start(tmp_path, widgets_index, "warn")
    try:
        caps = result.capabilities
        assert caps.completion_provider is not None and caps.completion_provider.resolve_provider
        assert "recitation.dismiss" in caps.execute_command_provider.commands
        assert caps.hover_provider
        answer = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(0, 0),
            )
        )
        items = {i.label: i for i in answer.items}
        assert items["area"].label_details.description == "public code \u00b7 MIT \u00b7 widgets"
        assert items["area"].documentation.kind == types.MarkupKind.Markdown
        assert items["tally"].label_details is None
        resolved = await client.completion_item_resolve_async(items["area"])
        assert resolved.detail == "snippet area"
        assert resolved.label_details.description.startswith("public code")
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_vscode_client_is_told_what_was_blocked(tmp_path, widgets_index):
    client, uri, _, (blocked, arrived) = await start(tmp_path, widgets_index, "block")
    try:
        answer = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(0, 0),
            )
        )
        assert [i.label for i in answer.items] == ["tally"]
        # sent before the response: it may be here already
        await asyncio.wait_for(arrived.wait(), 30)
        assert [e.label for e in blocked[0].items] == ["area"]
    finally:
        await client.shutdown_session()
        await client.stop()
