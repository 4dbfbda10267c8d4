"""`recitation/source` over stdio: a source's lines beside the quote, the common words marked
on both sides, for an exact and a renamed copy; the "Compare with source" quick fix and hover
link for a client that runs the compare; an index rebuilt in between (the source moved, or
removed); hostile metadata and text; malformed requests."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

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
    manifest,
    open_doc,
    plain,
    raw_request,
)

from index_tools import BuildOptions, build_index, tokenize

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")
HULL_LINES = line_range(GEO, HULL)
RENAMES = {"unique": "pts", "lower": "below", "upper": "above", "point": "p"}
COMPARE = "recitation.compareWithSource"


def rename(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


def words(text: str) -> list[str]:
    return [w.text for w in tokenize(text)]


def offset(text: str, pos: dict) -> int:
    """String offset of a UTF-16 position in `text` (lines split at \\n only here)."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: pos["line"]])
    line = lines[pos["line"]] if pos["line"] < len(lines) else ""
    units, i = pos["character"], 0
    while units > 0 and i < len(line):
        units -= len(line[i].encode("utf-16-le")) // 2
        i += 1
    return start + i


def marked(text: str, marks: list[dict], kind: str | None = None) -> list[str]:
    """The words of `text` under the marks (of one kind)."""
    out = []
    for m in marks:
        if kind is None or m["kind"] == kind:
            r = m["range"]
            out += words(text[offset(text, r["start"]) : offset(text, r["end"])])
    return out


async def start(client, index, folder: Path, compare: bool = True):
    from pytest_lsp import client_capabilities

    options = {"recitation": {"indexPath": str(index)}}
    if compare:
        options["clientCommands"] = [COMPARE]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual_studio_code"),
            initialization_options=options,
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
        )
    )


async def flag(client, uri: str, before: str, snippet: str, language: str = "python"):
    open_doc(client, uri, before, language)
    insert(client, uri, 2, end_position(before), snippet)
    (diag,) = await diagnostics_for(client, uri)
    return diag


async def source(client, params: dict) -> dict:
    return plain(await client.protocol.send_request_async("recitation/source", params))


async def actions_at(client, uri: str, diag: types.Diagnostic) -> list:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )


async def test_the_source_beside_an_exact_quote(client, fixture_index, workspace):
    await start(client, fixture_index, workspace["a"])
    uri = (workspace["a"] / "hull.py").as_uri()
    before = "import math\n\n"
    diag = await flag(client, uri, before, HULL)
    view = await source(client, {"uri": uri, "id": diag.data["id"]})
    assert view["status"] == "ok" and view["generationChanged"] is False
    assert (
        view["title"]
        == f"acme/widgets src/geo.py L{HULL_LINES[0]}\u2013L{HULL_LINES[1]} \u00b7 MIT"
    )
    src = view["source"]
    assert (src["startLine"], src["endLine"]) == HULL_LINES
    assert src["repository"] == "acme/widgets" and src["commit"] == "4f2a9c1e0b7d"
    assert src["lineCount"] == GEO.count("\n") + 1
    # the source's lines: the quoted ones and three on each side, as the file has them
    lines = GEO.split("\n")
    first = HULL_LINES[0] - 3
    assert view["firstLine"] == first
    assert view["text"] == "\n".join(lines[first - 1 : HULL_LINES[1] + 3]) + "\n"
    quoted = view["quoted"]
    assert quoted["start"] == {"line": 3, "character": 0}
    assert quoted["end"]["line"] == HULL_LINES[1] - first
    # exactly the quote's words are marked, on both sides
    assert marked(view["text"], view["marks"]) == words(HULL)
    assert view["exact"] is True and view["renamed"] == []
    assert view["alignedWords"] == view["quoteWords"] == len(words(HULL))
    yours = view["yours"]
    assert yours["uri"] == uri and yours["firstLine"] == 1
    assert yours["text"] == before + HULL
    assert marked(yours["text"], yours["marks"]) == words(HULL)
    assert yours["quoted"]["start"] == {"line": 2, "character": 0}
    # three lines of context asked: none; the whole source's quoted lines only
    bare = await source(client, {"uri": uri, "id": diag.data["id"], "contextLines": 0})
    assert bare["firstLine"] == HULL_LINES[0] and bare["text"] == HULL


async def test_compare_quick_fix_and_hover_link(client, fixture_index, workspace):
    await start(client, fixture_index, workspace["a"])
    uri = (workspace["a"] / "hull.py").as_uri()
    diag = await flag(client, uri, "import math\n\n", HULL)
    actions = await actions_at(client, uri, diag)
    (compare,) = [a for a in actions if a.title.startswith("Compare with source")]
    assert (
        compare.title
        == f"Compare with source: acme/widgets src/geo.py L{HULL_LINES[0]}\u2013L{HULL_LINES[1]}"
    )
    assert compare.command.command == COMPARE
    (args,) = plain(compare.command.arguments)
    assert args["uri"] == uri and args["id"] == diag.data["id"]
    assert args["choices"] == [
        {
            "label": f"acme/widgets src/geo.py L{HULL_LINES[0]}\u2013L{HULL_LINES[1]}",
            "description": "MIT",
            "detail": f"{len(words(HULL))} words",
            "source": 0,
        }
    ]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), diag.range.start)
    )
    link = re.search(r"\[Compare with source\]\((command:[^)]*)\)", hover.contents.value)
    assert link and link.group(1).startswith(f"command:{COMPARE}?")
    assert json.loads(unquote(link.group(1).split("?", 1)[1])) == [args]
    # what the command does: the request with one of the choices
    view = await source(client, {"uri": uri, "id": args["id"], "source": 0})
    assert view["status"] == "ok"


async def test_no_compare_for_clients_that_cannot_run_it(client, fixture_index, workspace):
    await start(client, fixture_index, workspace["a"], compare=False)
    uri = (workspace["a"] / "hull.py").as_uri()
    diag = await flag(client, uri, "", HULL)
    actions = await actions_at(client, uri, diag)
    assert not [a for a in actions if "Compare" in a.title]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), diag.range.start)
    )
    assert "Compare" not in hover.contents.value and "command:" not in hover.contents.value
    # the request itself works for any client
    assert (await source(client, {"uri": uri, "id": diag.data["id"]}))["status"] == "ok"


async def test_a_renamed_copy_shows_the_renaming(client, fixture_index, workspace):
    await start(client, fixture_index, workspace["a"])
    uri = (workspace["a"] / "renamed.py").as_uri()
    copy = rename(HULL, RENAMES)
    diag = await flag(client, uri, "", copy)
    assert diag.message.startswith("Renamed copy")
    view = await source(client, {"uri": uri, "id": diag.data["id"]})
    assert view["status"] == "ok" and view["exact"] is False
    # ("from" is a keyword: the client side names it positionally)
    assert {tuple(r.values()) for r in view["renamed"]} == set(RENAMES.items())
    # the source's names are marked renamed where the copy has others; the rest is the same
    theirs = marked(view["text"], view["marks"], "renamed")
    assert set(theirs) == set(RENAMES) and len(theirs) == sum(words(HULL).count(n) for n in RENAMES)
    mine = marked(view["yours"]["text"], view["yours"]["marks"], "renamed")
    assert set(mine) == set(RENAMES.values()) and len(mine) == len(theirs)
    same = marked(view["text"], view["marks"], "same")
    assert len(same) + len(theirs) == len(words(HULL))
    assert (view["source"]["startLine"], view["source"]["endLine"]) == HULL_LINES


async def test_a_quote_no_longer_in_the_document_is_asked_by_its_source(
    client, fixture_index, workspace
):
    """The references log's entries: the match may be gone; the source and text are sent."""
    await start(client, fixture_index, workspace["a"])
    uri = (workspace["a"] / "gone.py").as_uri()
    with pytest.raises(JsonRpcException, match="no longer flagged"):
        await source(client, {"uri": uri, "id": "0123456789ab"})
    meta = manifest()["geo.py"]
    src = {**meta, "start_line": HULL_LINES[0], "end_line": HULL_LINES[1]}
    view = await source(
        client,
        {"uri": uri, "id": "0123456789ab", "source": src, "text": HULL, "language": "python",
         "range": {"start": {"line": 40, "character": 0}, "end": {"line": 61, "character": 0}}},
    )  # fmt: skip
    assert view["status"] == "ok" and marked(view["text"], view["marks"]) == words(HULL)
    assert view["yours"]["text"] == HULL and view["yours"]["firstLine"] == 41


@pytest.mark.parametrize(
    "params",
    [
        [1, 2],
        {"uri": 5},
        {"uri": "file:///x.py"},
        {"source": {"repository": "a/b"}},  # no text
        {"source": {"repository": 3, "path": "x"}, "text": "x"},
        {"source": {"path": "x", "start_line": -1}, "text": "x"},
        {"source": True, "text": "x"},
        {"source": {"path": "x"}, "text": "x", "contextLines": 10_000},
        {"source": {"path": "x"}, "text": "x", "exact": "yes"},
    ],
)
async def test_malformed_requests_are_invalid_params(client, fixture_index, workspace, params):
    await start(client, fixture_index, workspace["a"])
    with pytest.raises(JsonRpcException) as err:
        await raw_request(client, "recitation/source", params)
    assert err.value.code == -32602


# -- the index changes between the warning and the request --------------------------------------


def corpus(root: Path, geo: str, other: bool = True) -> str:
    """The fixture's geo.py (or another version of it) as a dataset row of acme/widgets."""
    root.mkdir(parents=True, exist_ok=True)
    rows = [{**manifest()["geo.py"], "content": geo}]
    if other:
        rows.append({"repository": "acme/other", "path": "x.py", "commit": "1", "license": "MIT",
                     "content": "def unrelated():\n    return 1\n"})  # fmt: skip
    path = root / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def build(path: str, out: Path) -> None:
    build_index([path], out, BuildOptions(jobs=1, progress=False))


async def after_rebuild(client, params: dict, generation: str) -> dict:
    """The answer once the server uses the newly published generation (a lookup switches
    to it at most a second after it is published)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while True:
        view = await source(client, params)
        if view["generation"] != generation:
            return view
        assert loop.time() < deadline, "the new generation was not used"
        await asyncio.sleep(0.05)


async def test_an_index_rebuilt_in_between_still_shows_the_moved_source(
    client, tmp_path, workspace
):
    idx = tmp_path / "idx"
    build(corpus(tmp_path / "v1", GEO), idx)
    await start(client, idx, workspace["a"])
    uri = (workspace["a"] / "hull.py").as_uri()
    diag = await flag(client, uri, "", HULL)
    first = await source(client, {"uri": uri, "id": diag.data["id"]})
    generation = first["generation"]
    assert first["requestedGeneration"] == generation and not first["generationChanged"]
    # the same file, ten lines lower, in a new generation
    moved = "# a header\n" * 10 + GEO
    build(corpus(tmp_path / "v2", moved), idx)
    view = await after_rebuild(client, {"uri": uri, "id": diag.data["id"]}, generation)
    assert view["status"] == "ok"
    assert view["generationChanged"] is True and view["requestedGeneration"] == generation
    assert view["generation"] != generation
    assert "index changed" in view["message"]
    assert (view["source"]["startLine"], view["source"]["endLine"]) == (
        HULL_LINES[0] + 10,
        HULL_LINES[1] + 10,
    )
    assert marked(view["text"], view["marks"]) == words(HULL)


async def test_a_source_removed_since_says_so(client, tmp_path, workspace):
    idx = tmp_path / "idx"
    build(corpus(tmp_path / "v1", GEO), idx)
    await start(client, idx, workspace["a"])
    uri = (workspace["a"] / "hull.py").as_uri()
    diag = await flag(client, uri, "", HULL)
    generation = (await source(client, {"uri": uri, "id": diag.data["id"]}))["generation"]
    # a new generation without acme/widgets src/geo.py (a file of another repository only)
    rows = tmp_path / "v2" / "corpus.jsonl"
    rows.parent.mkdir()
    rows.write_text(json.dumps({"repository": "acme/other", "path": "x.py", "commit": "1",
                                "license": "MIT", "content": "x = 1\n"}) + "\n")  # fmt: skip
    build(str(rows), idx)
    view = await after_rebuild(client, {"uri": uri, "id": diag.data["id"]}, generation)
    assert view["status"] == "removed" and view["generationChanged"] is True
    assert view["message"] == (
        "acme/widgets src/geo.py is no longer in the index "
        "(it was rebuilt since this quote was found)."
    )
    assert "text" not in view and view["source"]["path"] == "src/geo.py"


# -- hostile metadata and text ----------------------------------------------------------------

HOSTILE_TEXT = (
    "def drain(queue, limit):\n"
    "    # \x1b]0;owned\x07\x1b[2J  \u202eevil\u202c comment \u2066x\u2069\n"
    + "".join(
        f"    item_{i} = queue.pop(limit - {i}) or queue.peek({i}, strict=True)\n" for i in range(8)
    )
    + "    return item_0\n"
)
HOSTILE_ROW = {
    "content": "# header\n" + HOSTILE_TEXT,
    "max_stars_repo_name": "evil/repo\x1b]0;pwned\x07\u202e https://bot:SECRET_PW@h.example/r",
    "max_stars_repo_path": "x.py\n# -*- coding: latin-1 -*- ../../etc/passwd \u202e",
    "max_stars_repo_licenses": "MIT\u2066\u200f",
    "lang": "Python",
}


def unsafe(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


async def test_hostile_metadata_is_printable_and_the_text_comes_as_stored(
    client, tmp_path, workspace
):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(HOSTILE_ROW) + "\n")
    build(str(rows), tmp_path / "idx")
    await start(client, tmp_path / "idx", workspace["a"])
    uri = (workspace["a"] / "drain.py").as_uri()
    diag = await flag(client, uri, "", HOSTILE_TEXT)
    view = await source(client, {"uri": uri, "id": diag.data["id"]})
    assert view["status"] == "ok"
    for value in (view["title"], *view["source"].values()):
        if isinstance(value, str):
            assert not unsafe(value) and "SECRET" not in value, repr(value)
    assert "\n" not in view["source"]["path"] and "../../etc/passwd" in view["source"]["path"]
    # the text is the file's, untouched (a client shows it as text, never as markup)
    assert view["text"] == "# header\n" + HOSTILE_TEXT
    assert marked(view["text"], view["marks"]) == words(HOSTILE_TEXT)
    # asking by a hostile origin sent back as the match showed it finds the same file
    (src,) = diag.data["sources"]
    again = await source(client, {"source": src, "text": HOSTILE_TEXT, "uri": uri})
    assert again["status"] == "ok" and again["text"] == view["text"]
    # a path that names nothing in the index is "removed", whatever it holds
    ghost = {**src, "path": "../../../../etc/passwd\x00"}
    gone = await source(client, {"source": ghost, "text": HOSTILE_TEXT, "uri": uri})
    assert gone["status"] == "removed" and not unsafe(gone["message"])


# -- through an index service -------------------------------------------------------------------


async def test_the_source_through_an_index_service(client, fixture_index, workspace):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "index_tools"))
    from service_helpers import Service

    service = await asyncio.to_thread(Service(fixture_index).start)
    try:
        await start(client, service.url, workspace["a"])
        uri = (workspace["a"] / "hull.py").as_uri()
        diag = await flag(client, uri, "", HULL)
        view = await source(client, {"uri": uri, "id": diag.data["id"]})
        assert view["status"] == "ok" and view["generation"].startswith("gen-")
        assert (view["source"]["startLine"], view["source"]["endLine"]) == HULL_LINES
        assert marked(view["text"], view["marks"]) == words(HULL)
        assert marked(view["yours"]["text"], view["yours"]["marks"]) == words(HULL)
        # a source the service does not hold
        ghost = {"repository": "acme/widgets", "path": "src/none.py", "commit": "x"}
        gone = await source(client, {"source": ghost, "text": HULL, "uri": uri})
        assert gone["status"] == "removed"
    finally:
        await asyncio.to_thread(service.stop)
    # the service gone: a clear error, not a hang
    with pytest.raises(JsonRpcException):
        await asyncio.wait_for(source(client, {"uri": uri, "id": diag.data["id"]}), 30)
