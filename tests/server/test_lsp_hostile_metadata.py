"""Hostile corpus metadata through a real server: the diagnostic, its link, the hover, the
code action titles and the attribution comment carry no credential, no control or bidi
character, and the comment cannot change the code (no encoding declaration, no early end
of the comment, no continuation onto the quoted line)."""

from __future__ import annotations

import io
import json
import re
import tokenize
import unicodedata

import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, end_position, insert, open_doc, start_session

from index_tools import BuildOptions, Match, build_index, judge
from server.code_actions import attribution_comment, code_actions
from server.diagnostics import StoredMatch, to_diagnostic
from server.documents import TextDocument
from server.hover import hover_markdown, hover_plaintext


def function(name: str, var: str, call: str) -> str:
    body = "".join(
        f"    {var}_{i} = {call}(rows[{i}], columns=[{i}, {i + 1}], strict={i % 2 == 0})\n"
        for i in range(10)
    )
    return f"def {name}(rows):\n{body}    return {var}_0\n"


# found through its names (its link is `javascript:`): they end up in the comment
NAMED = function("named", "total", "reduce_columns")
# found through a link that holds credentials
LINKED = function("linked", "acc", "merge_tables")
HOSTILE_PATH = (
    "x.py\n# -*- coding: latin-1 -*- */ --> --- ?> \\\\\n"
    "[link](javascript:alert(1)) <script>alert(1)</script>"
)
ROWS = [
    {
        "content": NAMED,
        "max_stars_repo_name": "evil/repo\x1b]0;pwned\x07\u202e https://bot:SECRET_PW@h.example/r",
        "max_stars_repo_path": HOSTILE_PATH,
        "max_stars_repo_licenses": "MIT\u2066\u200f\u061c coding=utf-16 vim: set ft=sh",
        "url": "javascript:alert(1)//https://github.com/",
        "lang": "Python",
    },
    {
        "content": LINKED,
        "max_stars_repo_name": "evil/linked\x1b[2J",
        "max_stars_repo_path": "y.py",
        "max_stars_repo_licenses": "MIT",
        "url": "https://user:SECRET_TOKEN@github.com/evil/repo/blob/abc/x.py?private_token=S2",
        "lang": "Python",
    },
]


def unsafe(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def assert_inert_text(text: str) -> None:
    assert "SECRET" not in text and "S2" not in text and not unsafe(text), repr(text)


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-server")
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    build_index([str(root / "rows.jsonl")], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def apply(text: str, edit: types.TextEdit) -> str:
    lines = text.splitlines(keepends=True)
    start = edit.range.start
    assert edit.range.start == edit.range.end and start.character == 0
    return "".join(lines[: start.line]) + edit.new_text + "".join(lines[start.line :])


def assert_comment_is_inert(comment: str, language: str) -> None:
    """One comment line that the language and the editor read as nothing but a comment."""
    assert comment.count("\n") == 1 and comment.endswith("\n")
    assert_inert_text(comment)
    line = comment.rstrip("\n")
    assert not re.search(r"coding[:=]", line) and "vim:" not in line and "-*-" not in line
    assert not line.endswith("\\") and "??/" not in line  # C: no continuation
    if language in ("c", "php"):
        assert line.startswith("// ")
    if language == "php":
        assert "?>" not in line  # would leave PHP mode
    if language == "css":
        assert line.startswith("/* ") and line.endswith(" */")
        assert "*/" not in line[3:-3]
    if language == "html":
        assert line.startswith("<!-- ") and line.endswith(" -->")
        # the HTML rules for comment text: no `--` (so no `-->`, `--!>`, `<!--`)
        assert "--" not in line[5:-4] and not line[5:-4].endswith("<!-")


@pytest.mark.parametrize(
    ("language", "name"),
    [("python", "a.py"), ("c", "a.c"), ("css", "a.css"), ("html", "a.html"), ("php", "a.php")],
)
async def test_hostile_metadata_stays_inert(client, hostile_index, workspace, language, name):
    await start_session(client, index=hostile_index, folders=[workspace["a"]])
    uri = (workspace["a"] / name).as_uri()
    text = NAMED + "\n\n" + LINKED
    open_doc(client, uri, "", language)
    insert(client, uri, 2, end_position(""), text)
    diags = await diagnostics_for(client, uri, count=2)
    named, linked = sorted(diags, key=lambda d: d.range.start.line)
    assert named.range.start.line == 0  # its comment lands on line 1

    for diag in (named, linked):
        assert_inert_text(diag.message + json.dumps(diag.data, ensure_ascii=False))
    assert named.code_description is None  # `javascript:` is no link
    href = linked.code_description.href
    assert href.startswith("https://github.com/evil/repo/blob/abc/x.py#L") and "token" not in href

    for diag in (named, linked):
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=diag.range.start
            )
        )
        md = hover.contents.value
        assert_inert_text(md)
        # no credentials in names, no raw HTML (`<` is escaped)
        assert "private_token" not in md and not re.search(r"(?<!\\)<", md)
        # the only link targets are cleaned http(s) links
        targets = re.findall(r"\]\(([^)]*)\)", md)
        assert all(t.startswith("https://github.com/evil/repo/") for t in targets), targets
        if diag is linked:
            assert targets

    edited = text
    for diag in (linked, named):  # bottom up, so the first edit does not move the second
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag]),
            )
        )
        for action in actions:
            assert_inert_text(action.title)
        (edit,) = actions[0].edit.changes[uri]
        assert_comment_is_inert(edit.new_text, language)
        edited = apply(edited, edit)

    if language == "python":
        # the comment is now line 1 of the file: it is no encoding declaration, and the file
        # still compiles to the same code with the comments added
        assert edited.startswith("# Adapted from ")
        assert tokenize.detect_encoding(io.BytesIO(edited.encode()).readline)[0] == "utf-8"
        compile(edited, name, "exec")
        assert [ln for ln in edited.splitlines() if not ln.startswith("# ")] == text.splitlines()


def test_matches_from_an_older_engine_or_a_client_are_shown_inert():
    """What the server renders is cleaned again: a match dict whose metadata nobody cleaned
    (an older engine, a client echoing diagnostic data) still gives inert output."""
    match = {
        "kind": "recitation",
        "length": 60,
        "file_count": 1,
        "file_count_exact": True,
        "exact": True,
        "range": None,
        "text": "x",
        "sources": [
            {
                "url": "https://u:SECRET@github.com/e/r/blob/c/x.py?token=SECRET2#L1-L9",
                "repository": "e/r\x1b]0;pwned\x07\u202e https://u:SECRET3@h.example/",
                "path": HOSTILE_PATH,
                "license": "MIT\u2066 coding: latin-1",
                "commit": "abc\x1b[31m",
                "start_line": 1,
                "end_line": 9,
            }
        ],
        "renamed": [{"from": "a\u202e", "to": "b\x1b"}],
    }
    stored = StoredMatch.create(Match.from_dict(match), 0, len(NAMED), ())
    doc = TextDocument("file:///a.py", NAMED, 1, "python")
    verdict = judge(stored.match, stored.identity, None, lambda kind: "warning")
    diag = to_diagnostic(doc, stored, verdict)
    assert_inert_text(diag.message)
    assert diag.code_description is None  # a link with credentials is not shown at all
    md, plain = hover_markdown([(stored, verdict)]), hover_plaintext([(stored, verdict)])
    for text in (md, plain):
        assert_inert_text(text)
        assert "https://u:" not in text
    assert not re.findall(r"\]\(([^)]*)\)", md)  # no link at all (the only one had a password)
    for language in ("python", "c", "css", "html", "php"):
        assert_comment_is_inert(attribution_comment(stored, language) + "\n", language)
    for style in ("comment", "spdx"):
        for action in code_actions(doc, [(stored, verdict)], [diag], style):
            assert_inert_text(action.title)
            for edit in action.edit.changes[doc.uri] if action.edit else ():
                for line in edit.new_text.splitlines(keepends=True):
                    if line.strip():
                        assert_comment_is_inert(line.lstrip(), "python")
    for action in code_actions(doc, [(stored, verdict)], [diag]):
        assert_inert_text(action.title)
