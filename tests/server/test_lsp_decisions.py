"""Decisions that last: attribution resolves a warning, dismissals and allowed sources are
written to the folder's `.recitation.toml`, the license policy applies live, all of it
survives a restart of the server; insertions made before an index exists are checked once
it is built."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from lsprotocol import types
from server_helpers import (
    SERVER_COMMAND,
    block,
    corpus_text,
    diagnostics_for,
    end_position,
    end_session,
    insert,
    make_client,
    open_doc,
    plain,
    raw_request,
    server_env,
    start_session,
    wait_for,
    write_corpus_jsonl,
)

from index_tools import build_index

GEO = corpus_text("geo.py")
HULL = block(GEO, "def convex_hull", "\n\ndef rotate_about")
TABLES = block(corpus_text("parse_tables.py"), "def read_rows")
BEFORE = "import math\n\n"


async def flagged(client, uri: str, before: str, snippet: str) -> types.Diagnostic:
    open_doc(client, uri, before)
    insert(client, uri, 2, end_position(before), snippet)
    (diag,) = await diagnostics_for(client, uri)
    return diag


async def actions_for(client, uri: str, diag: types.Diagnostic) -> list:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )


def apply(client, uri: str, version: int, edits: list[types.TextEdit]) -> int:
    """Apply a quick fix's edits as an editor does (the last one first)."""
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text)
                ],
            )
        )
        version += 1
    return version


def apply_to_text(text: str, edits: list[types.TextEdit]) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: e.range.start.line)[::-1]:
        at = edit.range.start
        line = lines[at.line] if at.line < len(lines) else ""
        joined = line[: at.character] + edit.new_text + line[at.character :]
        lines[at.line : at.line + 1] = joined.split("\n")
    return "\n".join(lines)


@contextlib.asynccontextmanager
async def restarted(index, folder, settings=None):
    """A second server, as after "Restart Server": it knows only what is on disk."""
    client = make_client()
    await client.start_io(*SERVER_COMMAND, env=server_env())
    try:
        await start_session(
            client, index=index, folders=[folder], settings={"scanOnOpen": True, **(settings or {})}
        )
        await wait_for(lambda: client.statuses, what="index status")
        yield client
    finally:
        await end_session(client)
        await client.stop()


async def first_shown(client, uri: str) -> list[types.Diagnostic]:
    """The diagnostics of the first publish for `uri` that shows any: the whole-document
    scan's (settings pulled while the scan runs publish the document first, with nothing
    found yet)."""
    params = await wait_for(
        lambda: next((p for p in client.published if p.uri == uri and p.diagnostics), None),
        what=f"diagnostics of {uri}",
    )
    return params.diagnostics


async def test_an_attribution_resolves_the_warning_also_after_a_restart(
    client, fixture_index, workspace
):
    await start_session(client, index=fixture_index, folders=[workspace["a"]])
    uri = (workspace["a"] / "hull.py").as_uri()
    diag = await flagged(client, uri, BEFORE, HULL)
    assert diag.severity == types.DiagnosticSeverity.Warning
    (fix,) = [a for a in await actions_for(client, uri, diag) if a.is_preferred]
    edits = fix.edit.changes[uri]
    apply(client, uri, 3, edits)
    hint = await wait_for(
        lambda: next(
            (d for d in client.diagnostics.get(uri, []) if d.message.startswith("Attributed: ")),
            None,
        ),
        what="the attributed hint",
    )
    assert hint.severity == types.DiagnosticSeverity.Hint
    assert len(client.diagnostics[uri]) == 1
    assert hint.data["verdict"]["attribution_line"] == 2

    text = apply_to_text(BEFORE + HULL, edits)
    async with restarted(fixture_index, workspace["a"]) as again:
        open_doc(again, uri, text)
        (after,) = await first_shown(again, uri)
        assert after.severity == types.DiagnosticSeverity.Hint
        assert after.message.startswith("Attributed: acme/widgets src/geo.py")


async def test_spdx_snippet_tags_attribute_the_quote(client, fixture_index, workspace):
    await start_session(
        client,
        index=fixture_index,
        folders=[workspace["a"]],
        settings={"attributionStyle": "spdx"},
    )
    uri = (workspace["a"] / "spdx.py").as_uri()
    diag = await flagged(client, uri, BEFORE, HULL)
    (fix,) = [a for a in await actions_for(client, uri, diag) if a.is_preferred]
    assert fix.title == "Add SPDX snippet tags (MIT)"
    edits = fix.edit.changes[uri]
    text = apply_to_text(BEFORE + HULL, edits)
    lines = text.split("\n")
    assert lines[2:5] == [
        "# SPDX-SnippetBegin",
        "# SPDX-License-Identifier: MIT",
        f"# SPDX-SnippetComment: Adapted from {diag.code_description.href} (MIT)",
    ]
    assert lines[5].startswith("def convex_hull")
    assert "# SPDX-SnippetEnd" in lines[-3:]
    apply(client, uri, 3, edits)
    await wait_for(
        lambda: (
            [d.severity for d in client.diagnostics.get(uri, [])] == [types.DiagnosticSeverity.Hint]
        ),
        what="the attributed hint",
    )


async def test_dismiss_writes_the_file_lasts_after_a_restart_and_undo_restores(
    client, fixture_index, workspace
):
    folder = workspace["a"]
    await start_session(client, index=fixture_index, folders=[folder])
    uri = (folder / "one.py").as_uri()
    diag = await flagged(client, uri, BEFORE, HULL)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.dismiss", arguments=[uri, diag.data["id"]])
    )
    quote_id = diag.data["quoteId"]
    assert result["dismissed"] == 1 and result["quoteId"] == quote_id
    await wait_for(lambda: len(client.diagnostics.get(uri, [1])) == 0, what="the dismissal")
    text = (folder / ".recitation.toml").read_text()
    assert f'id = "{quote_id}"' in text and 'quote = "def convex_hull(points):"' in text
    assert 'source = "acme/widgets src/geo.py"' in text and 'license = "MIT"' in text
    assert any("recorded in .recitation.toml" in m.message for m in client.messages)

    async with restarted(fixture_index, folder) as again:
        # the same quote in another file, with other code around it: still dismissed
        other = (folder / "two.py").as_uri()
        between = "\n\nprint('unrelated code between the two quotes')\n\n"
        open_doc(again, other, "import os\n\nx = 1\n\n" + HULL + between + TABLES)
        remaining = await first_shown(again, other)
        assert [d.data["text"].split("(")[0] for d in remaining] == ["def read_rows"]
        listed = plain(await raw_request(again, "recitation/decisions", {"uri": other}))
        assert [d["id"] for d in listed["dismissed"]] == [quote_id]
        assert listed["file"] == (folder / ".recitation.toml").as_uri()
        undone = plain(
            await raw_request(
                again, "recitation/decisions", {"uri": other, "remove": {"dismissed": quote_id}}
            )
        )
        assert undone["removed"] is True and undone["dismissed"] == []
        await wait_for(
            lambda: len(again.diagnostics.get(other, [])) == 2, what="the quote flagged again"
        )
    assert quote_id not in (folder / ".recitation.toml").read_text()


async def test_policy_edits_apply_live_and_a_broken_file_keeps_the_last_good_one(
    client, fixture_index, workspace
):
    folder = workspace["a"]
    await start_session(client, index=fixture_index, folders=[folder])
    uri = (folder / "policy.py").as_uri()
    await flagged(client, uri, BEFORE, HULL)

    def severities():
        return [d.severity for d in client.diagnostics.get(uri, [])]

    decisions = folder / ".recitation.toml"
    decisions.write_text('[policy]\npermissive = "error"\n')
    await wait_for(lambda: severities() == [types.DiagnosticSeverity.Error], what="error")
    (diag,) = client.diagnostics[uri]
    assert diag.data["verdict"]["reason"] == "license policy for permissive: error"

    decisions.write_text('[policy]\npermissive = "error"\nMIT = "sometimes"\n')
    warning = await wait_for(
        lambda: next(
            (m for m in client.messages if ".recitation.toml: line 3:" in m.message), None
        ),
        what="the error report",
    )
    assert "stay in force" in warning.message and warning.type == types.MessageType.Warning
    await asyncio.sleep(1.5)
    assert severities() == [types.DiagnosticSeverity.Error]  # the last good file holds

    decisions.write_text('[policy]\npermissive = "error"\n"MIT" = "information"\n')
    await wait_for(lambda: severities() == [types.DiagnosticSeverity.Information], what="info")
    decisions.unlink()
    await wait_for(lambda: severities() == [types.DiagnosticSeverity.Warning], what="default")


async def test_an_allowed_repository_is_never_a_warning(client, fixture_index, workspace):
    folder = workspace["a"]
    (folder / ".recitation.toml").write_text('[allow]\nsources = ["github.com/acme/*"]\n')
    await start_session(client, index=fixture_index, folders=[folder])
    uri = (folder / "own.py").as_uri()
    open_doc(client, uri, BEFORE)
    insert(client, uri, 2, end_position(BEFORE), HULL)
    await wait_for(lambda: any(p.uri == uri for p in client.published), what="a publish")
    text = BEFORE + HULL + "\n\n"
    insert(client, uri, 3, end_position(BEFORE + HULL), "\n\n" + TABLES)
    (diag,) = await diagnostics_for(client, uri)  # another repository's code still is
    assert diag.severity == types.DiagnosticSeverity.Warning and len(text) > 0

    # the quick fix allows a repository by writing the file, even one named with glob
    # characters (it is matched literally)
    other = (folder / "other.py").as_uri()
    diag = await flagged(client, other, "", TABLES)
    actions = await actions_for(client, other, diag)
    (allow,) = [a for a in actions if a.title.startswith("Allow ")]
    assert allow.title.startswith("Allow evil_[x](javascript:alert(1))/")
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=allow.command.command, arguments=allow.command.arguments)
    )
    await wait_for(lambda: len(client.diagnostics.get(other, [1])) == 0, what="allowed")
    written = (folder / ".recitation.toml").read_text()
    assert '"github.com/acme/*", "evil_[[]x](javascript:alert(1))/<b>rig</b>"' in written


async def test_code_pasted_before_an_index_exists_is_checked_once_it_is_built(
    client, tmp_path, workspace
):
    index = tmp_path / "later-index"
    await start_session(client, index=index, folders=[workspace["a"]])
    await wait_for(lambda: any(s["state"] == "no-index" for s in client.statuses), what="no index")
    uri = (workspace["a"] / "early.py").as_uri()
    open_doc(client, uri, BEFORE)
    insert(client, uri, 2, end_position(BEFORE), HULL)
    insert(client, uri, 3, types.Position(0, 0), "# pasted before the index existed\n")
    await asyncio.sleep(0.5)
    assert not client.diagnostics.get(uri)

    corpus = write_corpus_jsonl(tmp_path / "corpus.jsonl")
    done = threading.Event()

    def build():
        build_index([str(corpus)], index)
        done.set()

    await asyncio.get_running_loop().run_in_executor(None, build)
    (diag,) = await diagnostics_for(client, uri, what="the kept insertion, checked")
    assert diag.range.start.line == 3  # moved by the edit made while it waited
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert any(s["state"] == "ready" for s in client.statuses)


async def test_underline_first_line_only(client, fixture_index, workspace):
    await start_session(
        client, index=fixture_index, folders=[workspace["a"]], settings={"underline": "firstLine"}
    )
    uri = (workspace["a"] / "long.py").as_uri()
    diag = await flagged(client, uri, BEFORE, HULL)
    first = HULL.split("\n", 1)[0]
    assert diag.range == types.Range(types.Position(2, 0), types.Position(2, len(first)))
    # the hover still answers anywhere in the quote
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(8, 4)
        )
    )
    assert hover is not None and hover.range.end.line > 8


async def test_a_quick_fix_never_replaces_a_special_decisions_file_and_says_so(
    client, fixture_index, workspace
):
    """Dismiss once replaced a dangling link at .recitation.toml with a new file (and a
    link to a shared file with a copy of it)."""
    folder = workspace["a"]
    decisions = folder / ".recitation.toml"
    decisions.symlink_to("missing.toml")
    await start_session(client, index=fixture_index, folders=[folder])
    uri = (folder / "linked.py").as_uri()
    diag = await flagged(client, uri, BEFORE, HULL)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.dismiss", arguments=[uri, diag.data["id"]])
    )
    said = f"{decisions}: cannot write: a link to a missing file"
    assert result == {"dismissed": 0, "error": said}
    error = await wait_for(
        lambda: next((m for m in client.messages if said in m.message), None), what="the error"
    )
    assert error.type == types.MessageType.Error
    assert decisions.is_symlink() and not (folder / "missing.toml").exists()
    assert len(client.diagnostics[uri]) == 1  # still flagged


async def test_a_decisions_file_nested_too_deeply_is_reported_with_its_name(
    client, fixture_index, workspace
):
    """`a = [[[[…` 100,000 deep once showed an error without the file's name
    (RecursionError)."""
    folder = workspace["a"]
    decisions = folder / ".recitation.toml"
    decisions.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    await start_session(client, index=fixture_index, folders=[folder])
    uri = (folder / "deep.py").as_uri()
    await flagged(client, uri, BEFORE, HULL)  # checked, with the defaults
    said = (
        f"{decisions}: line 1: arrays, tables or dotted keys nested too deeply to read "
        "(over 64 levels)"
    )
    warning = await wait_for(
        lambda: next((m for m in client.messages if said in m.message), None),
        what="the nesting reported with the file's name",
    )
    assert warning.type == types.MessageType.Warning
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="recitation.allowSource", arguments=[uri, "acme"])
    )
    assert result == {"allowed": False, "error": said}
    assert decisions.read_text().startswith("a = [[[")
