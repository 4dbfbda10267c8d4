"""One quote, one warning: a pasted region with a nested part held by more files is one
diagnostic, and its hover carries the part with its own count and source."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from lsprotocol import types
from server_helpers import (
    diagnostics_for,
    end_position,
    insert,
    open_doc,
    start_session,
    wait_for,
)

from index_tools import BuildOptions, build_index, tokenize


def statements(first: int, last: int) -> str:
    return "".join(f"v{3 * i} = v{3 * i + 1} + v{3 * i + 2}\n" for i in range(first, last))


def index_with_a_part(tmp_path) -> Path:
    """`statements(0, 20)` in one file, its lines 4-17 in another as well: one quote with
    a nested part."""
    src = tmp_path / "corpus"
    src.mkdir()
    (src / "long.py").write_text(statements(0, 20), encoding="utf-8")
    (src / "short.py").write_text("x = 1\n" + statements(3, 17), encoding="utf-8")
    build_index([str(src)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    return tmp_path / "idx"


async def first_warning(client, uri: str, text: str) -> types.Diagnostic:
    """`text` pasted into a new empty document: the one warning first published on it."""
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), text)
    await diagnostics_for(client, uri)
    (first,) = next(p.diagnostics for p in client.published if p.uri == uri and p.diagnostics)
    return first


async def test_nested_part_is_one_diagnostic_with_the_part_in_its_hover(
    client, workspace, tmp_path
):
    await start_session(client, index=index_with_a_part(tmp_path), folders=[workspace["a"]])
    uri = (workspace["a"] / "paste.py").as_uri()
    before = "import os\n\n"
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position(before), statements(0, 20))
    # at once: the quote, its source and count (the region is its primary span: its parts
    # are searched after the diagnostic, which is published again to say them)
    await diagnostics_for(client, uri)
    (first,) = next(p.diagnostics for p in client.published if p.uri == uri and p.diagnostics)
    assert (first.range.start.line, first.range.end.line) == (2, 21)
    assert first.message.endswith("\u00b7 100 words \u00b7 1 file")
    assert first.data["parts"] is None
    (diag,) = await wait_for(
        lambda: [d for d in client.diagnostics[uri] if "nested part" in d.message],
        what="the diagnostic with its part",
    )
    await asyncio.sleep(0.3)  # a second (stacked) diagnostic would have arrived by now
    assert len(client.diagnostics[uri]) == 1
    assert (diag.range.start.line, diag.range.end.line) == (2, 21)
    assert "\u00b7 100 words \u00b7 1 file \u00b7" in diag.message
    assert diag.message.endswith("1 nested part (up to 2 files)")
    assert [p["file_count"] for p in diag.data["parts"]] == [2]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(10, 2),
        )
    )
    value = hover.contents.value
    assert value.count("**Sources") == 1 and "---" not in value  # one block
    assert "**Parts also found elsewhere:**" in value
    assert "- 70 words (lines 4\u201317) in 2 files \u2014 " in value
    assert "short\\.py" in value


async def test_a_quote_closed_at_once_is_announced_with_its_part(client, workspace, tmp_path):
    """The references log's entry (`recitation/match`) follows the diagnostic once the
    parts are made: a document closed as soon as its warning came still gets it."""
    await start_session(client, index=index_with_a_part(tmp_path), folders=[workspace["a"]])
    uri = (workspace["a"] / "closed.py").as_uri()
    diag = await first_warning(client, uri, statements(0, 20))
    assert diag.data["parts"] is None  # (made after it)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    (note,) = await wait_for(
        lambda: [n for n in client.match_notes if n["uri"] == uri], what="recitation/match"
    )
    (part,) = note["parts"]
    assert part["length"] == 70 and part["fileCount"] == 2
    assert "short.py" in {s["path"] for s in part["sources"]}


async def test_a_hover_before_the_parts_are_searched_shows_them_and_the_warning_says_them(
    client, workspace, tmp_path
):
    """Hovering a quote as soon as its warning comes makes its parts there and then (the
    hover lists them); the warning is still published again to say them."""
    await start_session(client, index=index_with_a_part(tmp_path), folders=[workspace["a"]])
    uri = (workspace["a"] / "hovered.py").as_uri()
    open_doc(client, uri, "")
    insert(client, uri, 2, types.Position(0, 0), statements(0, 20))
    await diagnostics_for(client, uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(5, 2)
        )
    )
    assert "- 70 words (lines 4\u201317) in 2 files \u2014 " in hover.contents.value
    (diag,) = await wait_for(
        lambda: [d for d in client.diagnostics[uri] if "nested part" in d.message],
        what="the diagnostic with its part",
    )
    assert diag.message.endswith("1 nested part (up to 2 files)")


def code(first: int, last: int) -> str:
    """Lines of made-up code, each chosen by its number: assignments, conditions, loops."""
    names = ("alpha", "beta", "gamma", "delta", "total", "count", "limit", "offset", "window")
    out = []
    for i in range(first, last):
        r = random.Random(i)
        a, b, c = (f"{r.choice(names)}{r.randint(0, 9)}" for _ in range(3))
        out.append(
            (
                f"{a} = {b} {r.choice('+-*%')} {c}\n",
                f"if {a} > {b}:\n    {c} = min({a}, {r.randint(2, 99)})\n",
                f"{a}.append({b}[{r.randint(0, 5)}])\n",
                f"for {a} in range({b}, {c}):\n    {b} += {a}\n",
            )[r.randint(0, 3)]
        )
    return "".join(out)


def index_of_two_quotes(tmp_path) -> Path:
    """`code(0, 20)` in src/long.py, `code(15, 30)` in lib/other.py: `code(0, 30)` is one
    region, its primary span long.py's (its 31 lines), a part reaching past it other.py's."""
    src = tmp_path / "corpus"
    (src / "src").mkdir(parents=True)
    (src / "lib").mkdir()
    (src / "src" / "long.py").write_text(code(0, 20), encoding="utf-8")
    (src / "lib" / "other.py").write_text("x = 1\n" + code(15, 30), encoding="utf-8")
    build_index([str(src)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    return tmp_path / "idx"


async def test_a_region_reaching_past_its_primary_span_is_flagged_before_its_parts_are_made(
    client, workspace, tmp_path
):
    """The warning on a region joining two quotes comes with the region's range and the
    primary span's count and source, its parts made after it (then published again to say
    them); an attribution naming the primary span's file only leaves it open, one naming
    both files makes it a hint."""
    await start_session(client, index=index_of_two_quotes(tmp_path), folders=[workspace["a"]])
    uri = (workspace["a"] / "joined.py").as_uri()
    first = await first_warning(client, uri, code(0, 30))
    lines, primary = code(0, 30).count("\n"), code(0, 20).count("\n")
    assert (first.range.start.line, first.range.end.line) == (0, lines - 1)
    assert first.message.startswith(f"Quoted: corpus src/long.py L1\u2013L{primary}")
    region, primary_words = len(tokenize(code(0, 30))), len(tokenize(code(0, 20)))
    assert first.message.endswith(f"{region} words, {primary_words} of them in 1 file")
    assert first.data["parts"] is None and first.severity == types.DiagnosticSeverity.Warning
    (diag,) = await wait_for(
        lambda: [d for d in client.diagnostics[uri] if "nested part" in d.message],
        what="the diagnostic with its part",
    )
    assert diag.message.endswith("1 nested part (up to 1 file)")
    assert [(p["query_start"], p["query_end"]) for p in diag.data["parts"]] == [
        (len(tokenize(code(0, 15))), region)
    ]
    # (a folder's files are named by the folder and their paths in it)
    named_long, named_other = "# Adapted from corpus src/long.py\n", "# and corpus lib/other.py\n"
    for name, above, severity in (
        ("half.py", named_long, types.DiagnosticSeverity.Warning),
        ("both.py", named_long + named_other, types.DiagnosticSeverity.Hint),
    ):
        uri = (workspace["a"] / name).as_uri()
        open_doc(client, uri, above)
        insert(client, uri, 2, end_position(above), code(0, 30))
        (d,) = await diagnostics_for(client, uri)
        assert d.severity == severity, (name, d.message)
        assert d.message.startswith("Attributed: ") is (severity == types.DiagnosticSeverity.Hint)
