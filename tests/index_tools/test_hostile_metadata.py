"""Hostile corpus metadata end to end: credentials in links, escape sequences, bidi
overrides, newlines, encoding declarations and comment terminators in names never reach a
terminal, a CI log, a link or a comment as they are."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize as pytokenize
import unicodedata

import pytest

from index_tools import BuildOptions, build_index, comment_safe, open_index, printable
from index_tools.safe_text import clean_link

CODE = "".join(
    f"    acc_{i} = merge_tables(rows[{i}], columns=[{i}, {i + 1}], strict={i % 2 == 0})\n"
    for i in range(10)
)
FUNCTION = "def build(rows):\n" + CODE + "    return acc_0\n"
HOSTILE_REPO = "evil/repo\x1b]0;pwned\x07\u202e"
HOSTILE_PATH = "src/x.py\nsrc/fake.py:1:1: error: forged line\r\n# -*- coding: latin-1 -*- */ -->"
HOSTILE_LICENSE = "MIT\x1b[2J vim: set ft=sh"
TOKEN_URL = (
    "https://user:SECRET_TOKEN@github.com/evil/repo/blob/abc/x.py?access_token=SECRET2&ref=1"
)


def unsafe_chars(text: str) -> list[str]:
    return [
        ch for ch in text if ch not in "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
    ]


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    row = {
        "content": FUNCTION,
        "max_stars_repo_name": HOSTILE_REPO,
        "max_stars_repo_path": HOSTILE_PATH,
        "max_stars_repo_licenses": HOSTILE_LICENSE,
        "max_stars_repo_head_hexsha": "abc\x1b[31m",
        "url": TOKEN_URL,
        "lang": "Python",
    }
    data = root / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n")
    build_index([str(data)], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def test_links_lose_their_credentials():
    assert clean_link(TOKEN_URL) == "https://github.com/evil/repo/blob/abc/x.py?ref=1"
    assert clean_link("javascript:alert(1)") == ""
    assert clean_link("https://exa mple.com/") == ""
    assert clean_link("https://github.com/a\u202e/b") == ""
    assert clean_link("https://h.example/p?X-Amz-Signature=s&Signature=t&v=2") == (
        "https://h.example/p?v=2"
    )


def test_text_becomes_one_printable_line():
    text = printable(HOSTILE_REPO + HOSTILE_PATH)
    assert "\n" not in text and not unsafe_chars(text)
    assert "\x1b" not in text and "\u202e" not in text


@pytest.mark.parametrize("terminator", ["", "*/", "-->"])
def test_comment_text_cannot_change_the_code(terminator):
    text = comment_safe(HOSTILE_PATH + " coding=utf-16 vim: ft=sh", terminator)
    assert not re.search(r"coding[:=]", text)
    assert "-*-" not in text and "vim:" not in text
    if terminator:
        assert terminator not in text
    # as the first line of a Python file it is no encoding declaration
    source = f"# {text}\nx = 1\n".encode()
    assert pytokenize.detect_encoding(io.BytesIO(source).readline)[0] == "utf-8"


def test_matches_carry_only_safe_metadata(hostile_index):
    with open_index(hostile_index) as idx:
        (m,) = idx.match(FUNCTION)
    data = json.dumps(m.to_dict(), ensure_ascii=False)
    assert "SECRET" not in data
    for s in m.sources:
        for value in (s.repository, s.path, s.license, s.commit, s.url):
            assert "\n" not in value and not unsafe_chars(value), repr(value)
        assert s.url.startswith("https://github.com/evil/repo/blob/abc/x.py?ref=1#L")


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_output_has_no_control_characters_or_forged_lines(hostile_index, tmp_path):
    q = run_cli("query", str(hostile_index), stdin=FUNCTION)
    assert q.returncode == 0, q.stderr
    assert not unsafe_chars(q.stdout) and "SECRET" not in q.stdout
    assert "forged line" in q.stdout  # shown, but on the source's own line
    assert not any(line.startswith("src/fake.py") for line in q.stdout.splitlines())

    # a checked file whose own name holds a newline
    weird = tmp_path / "a\nother.py:9:9: fake.py"
    weird.write_text(FUNCTION)
    c = run_cli("check", str(weird), "--index", str(hostile_index))
    assert c.returncode == 1
    lines = c.stdout.splitlines()
    assert not any(line.startswith("other.py") for line in lines)
    assert not unsafe_chars(c.stdout) and "SECRET" not in c.stdout

    for fmt in ("json", "sarif"):
        out = run_cli("check", str(weird), "--index", str(hostile_index), "--format", fmt)
        assert out.returncode == 1 and "SECRET" not in out.stdout
        json.loads(out.stdout)
