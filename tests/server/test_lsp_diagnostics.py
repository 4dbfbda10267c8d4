"""Insertions become diagnostics with the exact range and message; they follow edits."""

from __future__ import annotations

import re

from lsprotocol import types
from server_helpers import (
    block,
    corpus_text,
    diagnostics_for,
    end_position,
    insert,
    line_range,
    open_doc,
    start_session,
    utf16_position,
    wait_for,
)

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")
HULL_LINES = line_range(GEO, HULL)
HULL_URL = (
    "https://github.com/acme/widgets/blob/4f2a9c1e0b7d/src/geo.py"
    f"#L{HULL_LINES[0]}-L{HULL_LINES[1]}"
)


def quoted_range(doc_text: str, inserted: str, at: int) -> types.Range:
    """From the first word of the insertion to the end of its last word."""
    body = inserted.strip()
    start = at + inserted.index(body)
    return types.Range(utf16_position(doc_text, start), utf16_position(doc_text, start + len(body)))


async def test_insertion_gives_diagnostic_with_exact_range_and_message(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "app.py").as_uri()
    before = "import math\n\n\n"
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position(before), HULL)

    (diag,) = await diagnostics_for(client, uri)
    text = before + HULL
    assert diag.range == quoted_range(text, HULL, len(before))
    assert diag.message == (
        f"Quoted: acme/widgets src/geo.py L{HULL_LINES[0]}\u2013L{HULL_LINES[1]} "
        "\u00b7 MIT \u00b7 219 words \u00b7 1 file"
    )
    assert diag.source == "recitation"
    assert diag.code == "recitation"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.code_description.href == HULL_URL
    assert diag.data["id"] and diag.data["length"] == 219
    assert diag.data["sources"][0]["repository"] == "acme/widgets"

    note = await wait_for(lambda: client.match_notes, what="recitation/match")
    assert note[0]["uri"] == uri
    assert note[0]["range"] == {
        "start": {"line": diag.range.start.line, "character": diag.range.start.character},
        "end": {"line": diag.range.end.line, "character": diag.range.end.character},
    }
    assert note[0]["kind"] == "recitation" and note[0]["length"] == 219
    assert note[0]["fileCount"] == 1 and note[0]["fileCountExact"] is True
    assert note[0]["sources"][0]["url"] == HULL_URL
    assert note[0]["time"].endswith("+00:00")


async def test_small_insertions_and_typing_are_not_checked(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "typed.py").as_uri()
    open_doc(client, uri, "")
    text = ""
    version = 1
    # type the snippet one short piece at a time: never an insertion of >= 10 words
    for piece in HULL.split(" "):
        version += 1
        insert(client, uri, version, end_position(text), piece + " ")
        text += piece + " "
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.rescan", arguments=[uri])
    )
    # the explicit rescan finds it; typing alone did not
    assert result == {"matches": 1}
    assert not [n for n in client.match_notes if n["uri"] == uri][:-1]


async def test_ranges_follow_edits_and_vanish_when_quoted_text_changes(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "moving.py").as_uri()
    before = "x = 1\n"
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position(before), HULL)
    (diag,) = await diagnostics_for(client, uri)
    start_line = diag.range.start.line

    # a line inserted above moves the warning down by one line
    insert(client, uri, 3, types.Position(0, 0), "# a comment above\n")
    moved = await wait_for(
        lambda: [
            d for d in client.diagnostics.get(uri, []) if d.range.start.line == start_line + 1
        ],
        what="the diagnostic to move",
    )
    assert moved[0].range.end.line == diag.range.end.line + 1

    # re-indenting inside the quoted text keeps it (same words)
    line = moved[0].range.start.line + 2
    insert(client, uri, 4, types.Position(line, 0), "  ")
    # renaming a word inside the quoted text removes the warning
    hull_line = moved[0].range.start.line
    rename = types.Range(types.Position(hull_line, 4), types.Position(hull_line, 15))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=5),
            content_changes=[types.TextDocumentContentChangePartial(range=rename, text="hull")],
        )
    )
    await wait_for(lambda: len(client.diagnostics.get(uri, [1])) == 0, what="the diagnostic to go")
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions[-1] == 5
    # the re-indent alone did not remove it
    assert any(p.version == 4 and p.diagnostics for p in client.published if p.uri == uri)


async def test_non_ascii_text_before_the_insertion_on_the_same_line(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "emoji.py").as_uri()
    before = "# Grüße 🎉🚀 𝔘𝔫𝔦𝔠𝔬𝔡𝔢\nlabel = '👋 hé'; "
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position(before), HULL)
    (diag,) = await diagnostics_for(client, uri)
    text = before + HULL
    expected = quoted_range(text, HULL, len(before))
    assert diag.range == expected
    # "label = '👋 hé'; " is 16 code points but 17 UTF-16 code units
    assert expected.start == types.Position(1, 17)


async def test_non_ascii_inside_the_quoted_code(client, fixture_index, workspace):
    greet = corpus_text("greet.js")
    cut = greet.index("function greetingFor")
    context, suggestion = greet[:cut], greet[cut:]
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "greet.js").as_uri()
    open_doc(client, uri, context, language="javascript")
    insert(client, uri, 2, end_position(context), suggestion)
    (diag,) = await diagnostics_for(client, uri)
    # the match reaches back into the context (261 words) but underlines the insertion only
    assert diag.data["length"] == 261
    assert diag.range == quoted_range(greet, suggestion, cut)
    assert "intl-co/greeter lib/greet.js" in diag.message
    assert "\u00b7 Apache-2.0 \u00b7" in diag.message


async def test_edits_right_after_the_insertion_rebase_the_result(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    await wait_for(lambda: client.statuses, what="index ready")
    uri = (workspace["a"] / "quick.py").as_uri()
    open_doc(client, uri, "")
    # the insertion and two edits above it are sent together: the lookup finishes before
    # or after the edits arrive (its result is then re-based); either way the warning
    # must end up on the quoted text, and no publish may point at the wrong text
    insert(client, uri, 2, types.Position(0, 0), HULL)
    insert(client, uri, 3, types.Position(0, 0), "import math\n")
    insert(client, uri, 4, types.Position(0, 0), "# 🎉 header\n")
    texts = {2: HULL, 3: "import math\n" + HULL, 4: "# 🎉 header\nimport math\n" + HULL}
    final = await wait_for(
        lambda: [p for p in client.published if p.uri == uri and p.version == 4 and p.diagnostics],
        what="diagnostics on version 4",
    )
    assert final[-1].diagnostics[0].range == quoted_range(texts[4], HULL, texts[4].index(HULL))
    for p in client.published:
        if p.uri == uri and p.diagnostics:
            text = texts[p.version]
            assert p.diagnostics[0].range == quoted_range(text, HULL, text.index(HULL))


async def test_whole_document_changes_are_detected_too(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "full.py").as_uri()
    before = "import math\n"
    open_doc(client, uri, before)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=before + HULL)],
        )
    )
    (diag,) = await diagnostics_for(client, uri)
    assert diag.range == quoted_range(before + HULL, HULL, len(before))


async def test_utf8_position_encoding_when_the_client_prefers_it(client, fixture_index, workspace):
    caps = types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
        )
    )
    result = await start_session(
        client, index=fixture_index, folders=[workspace["a"]], capabilities=caps
    )
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    uri = (workspace["a"] / "bytes.py").as_uri()
    before = "label = '👋 hé'; "  # 16 code points, 17 UTF-16 units, 20 UTF-8 bytes
    open_doc(client, uri, before)
    insert(client, uri, 2, types.Position(0, len(before.encode("utf-8"))), HULL)
    (diag,) = await diagnostics_for(client, uri)
    assert diag.range.start == types.Position(0, 20)
    last = HULL.rstrip().rsplit("\n", 1)[-1]
    assert diag.range.end == types.Position(HULL.rstrip().count("\n"), len(last.encode()))


async def test_a_copy_with_renamed_identifiers_is_flagged_as_such(client, fixture_index, workspace):
    renamed = HULL
    for old, new in (("unique", "uniq"), ("lower", "lo"), ("upper", "hi"), ("point", "pt")):
        renamed = re.sub(rf"\b{old}\b", new, renamed)
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "renamed.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), renamed)
    (diag,) = await diagnostics_for(client, uri)
    assert diag.message.startswith("Renamed copy: ")
    assert "acme/widgets src/geo.py" in diag.message
    assert diag.data["exact"] is False
    assert {"from": "unique", "to": "uniq"} in diag.data["renamed"]
