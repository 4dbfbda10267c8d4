"""Hostile corpus metadata through a real server: the diagnostic, its link, the hover and
the attribution comment carry no credential, no control or bidi character, and the comment
cannot change the code (no encoding declaration, no early end of the comment)."""

from __future__ import annotations

import io
import json
import re
import tokenize
import unicodedata

import pytest
from lsprotocol import types
from server_helpers import diagnostics_for, end_position, insert, open_doc, start_session

from index_tools import BuildOptions, build_index

CODE = "".join(
    f"    acc_{i} = merge_tables(rows[{i}], columns=[{i}, {i + 1}], strict={i % 2 == 0})\n"
    for i in range(10)
)
FUNCTION = "def build(rows):\n" + CODE + "    return acc_0\n"
ROW = {
    "content": FUNCTION,
    "max_stars_repo_name": "evil/repo\x1b]0;pwned\x07\u202e",
    "max_stars_repo_path": "x.py\n# -*- coding: latin-1 -*- */ --> [link](javascript:alert(1))",
    "max_stars_repo_licenses": "MIT\u2066 vim: set ft=sh",
    "url": "https://user:SECRET_TOKEN@github.com/evil/repo/blob/abc/x.py?private_token=S2",
    "lang": "Python",
}


def unsafe(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-server")
    (root / "rows.jsonl").write_text(json.dumps(ROW) + "\n")
    build_index([str(root / "rows.jsonl")], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


@pytest.mark.parametrize(
    ("language", "name"), [("python", "a.py"), ("c", "a.c"), ("html", "a.html")]
)
async def test_hostile_metadata_stays_inert(client, hostile_index, workspace, language, name):
    await start_session(client, index=hostile_index, folders=[workspace["a"]])
    uri = (workspace["a"] / name).as_uri()
    open_doc(client, uri, "", language)
    insert(client, uri, 2, end_position(""), FUNCTION)
    (diag,) = await diagnostics_for(client, uri)
    for text in (diag.message, json.dumps(diag.data)):
        assert "SECRET" not in text and not unsafe(text)
    href = diag.code_description.href
    assert href.startswith("https://github.com/evil/repo/blob/abc/x.py#L") and "S2" not in href

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=diag.range.start
        )
    )
    md = hover.contents.value
    assert "SECRET" not in md and "private_token" not in md and not unsafe(md)
    assert "](javascript:" not in md

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diag.range,
            context=types.CodeActionContext(diagnostics=[diag]),
        )
    )
    (edit,) = actions[0].edit.changes[uri]
    comment = edit.new_text
    assert comment.count("\n") == 1 and comment.endswith("\n")
    assert "SECRET" not in comment and not unsafe(comment)
    assert not re.search(r"coding[:=]", comment) and "vim:" not in comment
    if language == "c":
        assert comment.startswith("// ")
    if language == "html":
        body = comment[len("<!-- ") : -len(" -->\n")]
        assert "--" not in body and comment.rstrip().endswith("-->")
    if language == "python":
        # inserted as the first line of the file it is no encoding declaration
        edited = (comment + FUNCTION).encode()
        assert tokenize.detect_encoding(io.BytesIO(edited).readline)[0] == "utf-8"
        compile(comment + FUNCTION, "a.py", "exec")
