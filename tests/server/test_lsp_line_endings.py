"""Ranges follow LSP's line breaks (`\\r\\n`, `\\r` and `\\n`, mixed too), and a
`recitation/check` that names no document uses the workspace's configured index."""

from __future__ import annotations

import pytest
from lsprotocol import types
from server_helpers import (
    block,
    corpus_text,
    diagnostics_for,
    insert,
    open_doc,
    plain,
    start_session,
)

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")


def lsp_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@pytest.mark.parametrize("eol", ["\r", "\r\n", "mixed"])
async def test_ranges_count_every_kind_of_line_break(client, fixture_index, workspace, eol):
    def join(lines: list[str]) -> str:
        if eol != "mixed":
            return eol.join(lines)
        return "".join(line + ("\r", "\n", "\r\n")[i % 3] for i, line in enumerate(lines))[:-1]

    before = join(["import math", "", "class Shapes:", "    pass", "", ""])
    snippet = join(HULL.split("\n"))
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "crlf.py").as_uri()
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position_lsp(before), snippet)
    (diag,) = await diagnostics_for(client, uri)
    text = before + snippet
    lines = lsp_lines(text)
    first = len(lsp_lines(before)) - 1
    assert diag.range.start.line == first
    # the range ends on the snippet's last line, inside it
    assert first < diag.range.end.line <= len(lines) - 1
    assert diag.range.end.character <= len(lines[diag.range.end.line])
    hull_last = HULL.rstrip("\n").split("\n")[-1]
    assert lines[diag.range.end.line].strip() in hull_last


def end_position_lsp(text: str) -> types.Position:
    lines = lsp_lines(text)
    return types.Position(len(lines) - 1, len(lines[-1]))


async def test_check_without_a_document_uses_the_configured_index(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    result = plain(await client.protocol.send_request_async("recitation/check", {"text": HULL}))
    (match,) = result["matches"]
    assert match["sources"][0]["path"] == "src/geo.py"
