"""A document the editor calls plain text (or names in a language with no grammar here) is
read for its language: a renamed copy pasted into it is found as in a Python file, and the
client's log says how the text was read, once."""

from __future__ import annotations

import re

from lsprotocol import types
from server_helpers import block, corpus_text, diagnostics_for, insert, open_doc, start_session

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")


def renamed(text: str) -> str:
    names = {"points": "pts", "lower": "low_side", "upper": "high_side"}
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


def read_as(client) -> list[str]:
    return [m.message for m in client.log_messages if " is read as " in m.message]


async def test_a_plain_text_document_is_read_as_the_code_it_holds(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    copy = renamed(HULL)
    assert copy != HULL
    uri = (workspace["a"] / "notes.txt").as_uri()
    open_doc(client, uri, "", language="plaintext")
    insert(client, uri, 2, types.Position(0, 0), copy)
    (diag,) = await diagnostics_for(client, uri)
    assert diag.message.startswith("Renamed copy: acme/widgets src/geo.py")
    assert read_as(client) == [
        "Recitation: notes.txt is read as python (a parse of its text; the editor calls it "
        "plaintext)"
    ]
    # a Python document: its language as the editor names it, nothing said
    named = (workspace["a"] / "hull.py").as_uri()
    open_doc(client, named, "", language="python")
    insert(client, named, 2, types.Position(0, 0), copy)
    (diag,) = await diagnostics_for(client, named)
    assert diag.message.startswith("Renamed copy: ")
    assert len(read_as(client)) == 1
