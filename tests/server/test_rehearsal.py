"""A new server rehearses the work of a first warning besides its lookup (rehearsal.py):
the license database and SPDX parser the verdict reads, and the converter's functions for
the editor's messages and for a diagnostic, made at start on a thread of its own, with
nothing sent. The timings are bench_first_lookup.py's; here: what it makes, that nothing
reaches the client, and the log line a real server writes."""

from __future__ import annotations

import re

from lsprotocol import types
from server_helpers import wait_for
from test_lsp_map_ahead import LOGS, logged_client, quoted_then_said, said

from index_tools.judge import license_categories
from server.features import create_server
from server.rehearsal import rehearse

rehearsing_client = logged_client("rehearsal", {})


def test_it_loads_the_license_database_and_parser_and_sends_nothing():
    license_categories._table.cache_clear()
    license_categories._licensing.cache_clear()
    server = create_server()
    sent: list[object] = []
    server.protocol.set_writer(type("Writer", (), {"write": sent.append, "close": lambda: 0})())
    ms = rehearse(server.protocol)
    assert ms > 0
    assert license_categories._table.cache_info().currsize == 1  # the ScanCode database
    assert license_categories._licensing.cache_info().currsize == 1  # the SPDX parser
    assert sent == []
    # the converter reads the editor's didChange as it would (a hook made for it)
    message = {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {
            "textDocument": {"uri": "file:///a.py", "version": 2},
            "contentChanges": [{"text": "x = 1\n"}],
        },
    }
    read = server.protocol._converter.structure(message, types.DidChangeTextDocumentNotification)
    assert read.params.content_changes[0].text == "x = 1\n"


async def test_a_real_server_says_it_rehearsed(rehearsing_client, fixture_index, workspace):
    await quoted_then_said(rehearsing_client, "rehearsal", fixture_index, workspace)
    lines = await wait_for(  # (its own thread: it may end after the quote is found)
        lambda: said(LOGS / "rehearsal.log", "a warning's work rehearsed"), what="the line"
    )
    assert len(lines) == 1 and re.search(r"rehearsed in [\d.]+ ms$", lines[0]), lines
