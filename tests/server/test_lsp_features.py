"""Hover, code actions and commands on a flagged range."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from server_helpers import (
    block,
    corpus_text,
    diagnostics_for,
    end_position,
    insert,
    line_range,
    open_doc,
    start_session,
    wait_for,
)

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")
ROTATE = block(GEO, "def rotate_about")
HULL_LINES = line_range(GEO, HULL)
HULL_URL = (
    "https://github.com/acme/widgets/blob/4f2a9c1e0b7d/src/geo.py"
    f"#L{HULL_LINES[0]}-L{HULL_LINES[1]}"
)
TABLES = block(corpus_text("parse_tables.py"), "def read_rows")


async def flagged(client, uri: str, before: str, snippet: str, language: str = "python"):
    open_doc(client, uri, before, language)
    insert(client, uri, 2, end_position(before), snippet)
    (diag,) = await diagnostics_for(client, uri)
    return diag


async def hover_at(client, uri: str, position: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )


async def test_hover_shows_source_links_and_why(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "hover.py").as_uri()
    diag = await flagged(client, uri, "import math\n\n", HULL)
    inside = types.Position(diag.range.start.line + 3, 6)
    result = await hover_at(client, uri, inside)
    assert result is not None and result.contents.kind == types.MarkupKind.Markdown
    value = result.contents.value
    assert f"]({HULL_URL})" in value
    assert "acme/widgets src/geo\\.py" in value
    assert "**Sources (1 file):**" in value and "\u00b7 MIT \u00b7 commit" in value
    # the hover adds to the diagnostic's line, it does not repeat it
    assert diag.message not in value and "recitation" not in value.lower()
    assert result.range == diag.range
    # outside the flagged range there is nothing to say
    assert await hover_at(client, uri, types.Position(0, 1)) is None


async def test_hover_escapes_corpus_metadata_and_drops_unsafe_links(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "tables.py").as_uri()
    diag = await flagged(client, uri, "", TABLES)
    assert diag.code_description is None  # the source's link is not http(s)
    result = await hover_at(client, uri, diag.range.start)
    value = result.contents.value
    assert "javascript:" not in value.replace("javascript\\:", "")
    assert "<b>" not in value and "](" not in value
    assert "evil\\_\\[x\\]\\(javascript\\:alert\\(1\\)\\)/\\<b\\>rig\\</b\\>" in value
    assert "parse\\_\\*tables\\*\\.py" in value
    assert "\\`rm \\-rf\\`" in value


async def test_attribution_code_action_in_the_languages_comment_syntax(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "shapes.py").as_uri()
    before = "class Shapes:\n    "
    snippet = HULL.replace("\n", "\n    ").rstrip(" ")
    diag = await flagged(client, uri, before, snippet)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    titles = [a.title for a in actions]
    assert titles[0] == f"Add attribution comment: Adapted from {HULL_URL} (MIT)"
    attribution = actions[0]
    assert attribution.kind == types.CodeActionKind.QuickFix and attribution.is_preferred
    (edit,) = attribution.edit.changes[uri]
    assert edit.range == types.Range(types.Position(1, 0), types.Position(1, 0))
    assert edit.new_text == f"    # Adapted from {HULL_URL} (MIT)\n"
    assert attribution.diagnostics[0].data["id"] == diag.data["id"]
    assert any(t.startswith("Open source: acme/widgets src/geo.py") for t in titles)
    assert titles[1] == "Add SPDX snippet tags (MIT)"
    assert "Allow acme/widgets in this workspace (our own code)" in titles
    assert "Dismiss this quote (recorded in .recitation.toml)" in titles


async def test_attribution_comment_syntax_follows_the_language(client, fixture_index, workspace):
    greet = corpus_text("greet.js")
    cut = greet.index("function greetingFor")
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    results = {}
    for language, name in (("javascript", "g.js"), ("sql", "g.sql"), ("html", "g.html")):
        uri = (workspace["a"] / name).as_uri()
        diag = await flagged(client, uri, greet[:cut], greet[cut:], language)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag]),
            )
        )
        results[language] = actions[0].edit.changes[uri][0].new_text
    url = "https://github.com/intl-co/greeter/blob/9b1c77d0aa21/lib/greet.js"
    assert results["javascript"].startswith(f"// Adapted from {url}#L")
    assert results["sql"].startswith(f"-- Adapted from {url}#L")
    assert results["html"].startswith(f"<!-- Adapted from {url}#L")
    assert results["html"].endswith(" (Apache-2.0) -->\n")


async def test_open_source_asks_the_client_to_show_the_link_externally(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.openSource", arguments=[HULL_URL])
    )
    assert result == {"success": True}
    (shown,) = client.shown_documents
    assert shown.uri == HULL_URL and shown.external is True
    with pytest.raises(JsonRpcException):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command="recitation.openSource", arguments=["javascript:alert(1)"]
            )
        )


async def test_dismiss_clears_the_match_across_the_workspace_folder(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    first = (workspace["a"] / "one.py").as_uri()
    diag = await flagged(client, first, "", HULL)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.dismiss", arguments=[first, diag.data["id"]])
    )
    assert result["dismissed"] == 1 and result["file"].endswith("/.recitation.toml")
    await wait_for(lambda: len(client.diagnostics.get(first, [1])) == 0, what="dismissal")
    assert any("recorded in .recitation.toml" in m.message for m in client.messages)

    # the same snippet in another file of the folder stays quiet; a different one is flagged
    second = (workspace["a"] / "two.py").as_uri()
    open_doc(client, second, "")
    insert(client, second, 2, types.Position(0, 0), HULL)
    text = HULL + "\n\n"
    insert(client, second, 3, end_position(HULL), "\n\n")
    insert(client, second, 4, end_position(text), ROTATE)
    diags = await diagnostics_for(client, second)
    history = [(p.version, [d.data["text"][:40] for d in p.diagnostics]) for p in client.published]
    assert len(diags) == 1 and "rotate_about" in diags[0].data["text"], history
    notes = await wait_for(
        lambda: [n for n in client.match_notes if n["uri"] == second],
        what="the recitation/match note (it follows the diagnostics)",
    )
    assert len(notes) == 1, [n["text"][:40] for n in notes]
    # the note carries the flagged text of the document, not the context before it
    assert notes[0]["text"].startswith("def rotate_about") and HULL[-40:] not in notes[0]["text"]


async def test_rescan_checks_a_whole_document(client, fixture_index, workspace):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "whole.py").as_uri()
    open_doc(client, uri, "import math\n\n" + HULL + "\n\n" + ROTATE)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.rescan", arguments=[uri])
    )
    assert result == {"matches": 1}  # one span: the two functions are adjacent in geo.py
    diags = await diagnostics_for(client, uri)
    assert diags[0].range.start == types.Position(2, 0)
