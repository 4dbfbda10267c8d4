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
from urllib.parse import unquote

import pytest

from index_tools import BuildOptions, build_index, comment_safe, open_index, printable
from index_tools.build.sources import (
    CorpusSource,
    DatasetSource,
    FolderSource,
    GitSource,
    SitePackagesSource,
    StdlibSource,
)
from index_tools.model import Document, Origin, clean_origin
from index_tools.safe_text import _replaced, clean_link

CODE = "".join(
    f"    acc_{i} = merge_tables(rows[{i}], columns=[{i}, {i + 1}], strict={i % 2 == 0})\n"
    for i in range(10)
)
FUNCTION = "def build(rows):\n" + CODE + "    return acc_0\n"
HOSTILE_REPO = "evil/repo\x1b]0;pwned\x07\u202e\u2066\u200f\u061c"
HOSTILE_PATH = "src/x.py\nsrc/fake.py:1:1: error: forged line\r\n# -*- coding: latin-1 -*- */ -->"
HOSTILE_LICENSE = "MIT\x1b[2J vim: set ft=sh"
TOKEN_URL = (
    "https://user:SECRET_TOKEN@github.com/evil/repo/blob/abc/x.py?access_token=SECRET2&ref=1"
)
# a second file, found only through its own row: a repository named by a link with a
# password, a `javascript:` link
OTHER = "".join(
    f"    total_{i} = reduce_columns(table[{i}], keys=[{i}, {i + 2}], lenient={i % 3 == 0})\n"
    for i in range(10)
)
OTHER_FUNCTION = "def other(table):\n" + OTHER + "    return total_0\n"


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
    other = {
        "content": OTHER_FUNCTION,
        "repo_name": "https://bot:SECRET_PW@git.example.com/evil/other?private_token=SECRET3",
        "path": "[click](javascript:alert(1)) <img src=x onerror=alert(1)>",
        "url": "javascript:alert(1)//https://github.com/",
        "lang": "Python",
    }
    data = root / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n" + json.dumps(other) + "\n")
    build_index([str(data)], root / "idx", BuildOptions(jobs=1, progress=False))
    return root / "idx"


def test_links_lose_their_credentials():
    assert clean_link(TOKEN_URL) == "https://github.com/evil/repo/blob/abc/x.py?ref=1"
    assert clean_link("javascript:alert(1)") == ""
    assert clean_link("data:text/html,<b>x</b>") == ""
    assert clean_link("file:///etc/passwd") == ""
    assert clean_link("https://exa mple.com/") == ""
    assert clean_link("https://github.com/a\u202e/b") == ""
    assert clean_link("https://h.example/p?X-Amz-Signature=s&Signature=t&v=2") == (
        "https://h.example/p?v=2"
    )
    query = "token=1&private_token=2&sig=3&api_key=4&client_secret=5&author=me"
    assert clean_link(f"HTTPS://:pw@GitLab.com:8443/a/b?{query}#frag") == (
        "https://gitlab.com:8443/a/b?author=me"
    )
    # browsers read a backslash as a slash: `github.com\@evil.com` is not one link to check
    assert clean_link("https://github.com\\@evil.com/") == ""
    assert clean_link('https://github.com/a"onmouseover="x') == ""
    plain = "https://github.com/python/cpython/blob/v3.12.0/Lib/json/decoder.py"
    assert clean_link(plain) == plain


def test_every_source_cleans_its_origins_in_one_place():
    for cls in (DatasetSource, FolderSource, GitSource, StdlibSource, SitePackagesSource):
        assert cls.documents is CorpusSource.documents, cls

    class Hostile(CorpusSource):
        def _documents(self):
            yield Document(
                FUNCTION,
                Origin(
                    repository="https://u:SECRET@h.example/r",
                    path="x.py?token=SECRET",
                    link=TOKEN_URL,
                ),
            )

    (doc,) = Hostile("hostile").documents()
    assert "SECRET" not in json.dumps(doc.origin.to_dict())
    assert doc.origin.link == "https://github.com/evil/repo/blob/abc/x.py?ref=1"
    clean = Origin("a/b", "x.py", link="https://github.com/a/b/blob/c/x.py")
    assert clean_origin(clean) is clean


def test_text_becomes_one_printable_line():
    text = printable(HOSTILE_REPO + HOSTILE_PATH)
    assert "\n" not in text and not unsafe_chars(text)
    assert "\x1b" not in text and "\u202e" not in text


def test_printable_text_of_every_script_is_kept_as_it_is():
    # (`printable` skips the replacing for text Python calls printable: nothing in it is
    # whitespace but the space, nor unsafe)
    kept = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isprintable())
    assert _replaced(kept) == kept
    assert printable("Quoted: a/b x.py L1\u2013L9 \u00b7 MIT \u00b7 \u4e2d\u6587") == (
        "Quoted: a/b x.py L1\u2013L9 \u00b7 MIT \u00b7 \u4e2d\u6587"
    )
    assert printable("a\u00a0b\u2028c\u200ed\ue000") == "a b c\ufffdd\ue000"


def test_text_loses_credentials_of_links_inside_it():
    text = printable("see https://bot:SECRET@h.example/r?access_token=SECRET2&x=1 ok")
    assert "SECRET" not in text and "https://h.example/r?access_token=" in text


@pytest.mark.parametrize("terminator", ["", "*/", "-->", "?>"])
def test_comment_text_cannot_change_the_code(terminator):
    text = comment_safe(HOSTILE_PATH + " coding=utf-16 vim: ft=sh --- ----> ?> */", terminator)
    assert not re.search(r"coding[:=]", text)
    assert "-*-" not in text and "vim:" not in text
    if terminator:
        assert terminator not in text
    if terminator == "-->":
        assert "--" not in text
    # as the first line of a Python file it is no encoding declaration
    source = f"# {text}\nx = 1\n".encode()
    assert pytokenize.detect_encoding(io.BytesIO(source).readline)[0] == "utf-8"


# how each tool finds its directive in a comment line (from their sources and docs)
LINT_DIRECTIVES = {
    "flake8 / ruff": r"#\s*noqa|flake8[:=]\s*noqa|ruff\s*:\s*noqa",
    "pylint": r"\bpylint:",
    "mypy / pyright": r"type:\s*ignore|mypy:|pyright:",
    "bandit": r"#\s*nosec",
    "eslint and friends": r"(eslint|stylelint|prettier|biome|deno-lint)-(disable|enable|ignore)",
    "typescript": r"@ts-(ignore|nocheck|expect-error)",
    "clang-tidy": r"NOLINT",
    "golangci-lint": r"//nolint",
    "coverage.py": r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)",
    "rubocop": r"rubocop\s*:\s*(disable|enable|todo)",
    "black / isort": r"fmt:\s*(off|skip)|isort:\s*skip",
    "sonar": r"NOSONAR",
    "istanbul / c8": r"(istanbul|c8)\s+ignore",
}
DIRECTIVES_IN_METADATA = (
    "acme/x # noqa: E501 flake8: noqa ruff: noqa pylint: disable=all type: ignore[misc] "
    "mypy: ignore-errors # nosec eslint-disable-next-line prettier-ignore @ts-ignore "
    "// NOLINT //nolint # pragma: no cover rubocop:disable all fmt: off isort: skip_file "
    "NOSONAR /* istanbul ignore next */ c8 ignore next"
)


@pytest.mark.parametrize("terminator", ["", "*/", "-->"])
def test_linter_directives_in_metadata_never_enter_a_comment(terminator):
    """A repository or path holding `flake8: noqa` or `eslint-disable` once wrote it into
    the attribution comment, switching the linters off for the line or the file."""
    text = comment_safe(DIRECTIVES_IN_METADATA, terminator, max_len=1000)
    for tool, pattern in LINT_DIRECTIVES.items():
        line = f"# {text}" if terminator != "*/" else f"/* {text} */"
        assert not re.search(pattern, "// " + line), (tool, text)
    assert text.startswith("acme/x ") and "E501" in text  # still readable
    # ordinary metadata is left alone
    plain = "Adapted from https://github.com/eslint/eslint/blob/main/lib/linter.js (MIT)"
    assert comment_safe(plain) == plain


@pytest.mark.parametrize("tail", ["\\", "a\\ \\\\", "??/", "x ??/ "])
def test_a_line_comment_never_continues_onto_the_next_line(tail):
    # in C and C++ a `//` comment ending in a backslash (or its trigraph) swallows the next
    # line: the quoted code below the comment would become part of it
    text = comment_safe("Adapted from x " + tail)
    assert not text.endswith("\\") and "??/" not in text


def assert_safe_matches(index) -> None:
    with open_index(index) as idx:
        (m,) = idx.match(FUNCTION)
        (o,) = idx.match(OTHER_FUNCTION)
    data = json.dumps([m.to_dict(), o.to_dict()], ensure_ascii=False)
    assert "SECRET" not in data and "javascript" not in (o.sources[0].url + m.sources[0].url)
    for s in m.sources + o.sources:
        for value in (s.repository, s.path, s.license, s.commit, s.url):
            assert "\n" not in value and not unsafe_chars(value), repr(value)
    assert m.sources[0].url.startswith("https://github.com/evil/repo/blob/abc/x.py?ref=1#L")
    assert o.sources[0].url == ""


def test_matches_carry_only_safe_metadata(hostile_index):
    assert_safe_matches(hostile_index)


def test_an_index_built_before_links_were_cleaned_shows_them_clean(tmp_path, monkeypatch):
    # build as an older version did: links and names stored as the dataset gave them
    import index_tools.build.sources.base as base
    import index_tools.build.sources.datasets as datasets

    monkeypatch.setattr(base, "clean_origin", lambda origin: origin)
    monkeypatch.setattr(
        datasets, "clean_link", lambda v: v.strip() if str(v).startswith("https://") else ""
    )
    row = {"content": FUNCTION, "repo_name": HOSTILE_REPO, "path": HOSTILE_PATH}
    other = {"content": OTHER_FUNCTION, "repo_name": "https://u:SECRET4@h.example/r"}
    (tmp_path / "rows.jsonl").write_text(
        json.dumps({**row, "url": TOKEN_URL}) + "\n" + json.dumps(other) + "\n"
    )
    build_index([str(tmp_path / "rows.jsonl")], tmp_path / "idx", BuildOptions(jobs=1))
    monkeypatch.undo()
    with open_index(tmp_path / "idx") as idx:
        stored = json.dumps([o.to_dict() for d in range(2) for o in idx.document(d).origins])
    assert "SECRET_TOKEN" in stored and "SECRET4" in stored  # the old index holds them
    assert_safe_matches(tmp_path / "idx")


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

    # a checked file whose own name holds a newline and an escape sequence
    weird = tmp_path / "a\nother.py:9:9: \x1b]0;pwned\x07fake\u202e.py"
    weird.write_text(FUNCTION + "\n\n" + OTHER_FUNCTION)
    c = run_cli("check", str(weird), "--index", str(hostile_index), "--fail-on", "hint")
    assert c.returncode == 1
    lines = c.stdout.splitlines()
    where = printable(str(weird), 1000)
    assert "\n" not in where and len([ln for ln in lines if ln.startswith(where)]) == 2
    # every line is a finding of the checked file or an indented detail of one
    assert all(ln.startswith((where + ":", "  ")) for ln in lines), lines
    assert not any(line.startswith("other.py") for line in lines)
    assert not unsafe_chars(c.stdout + c.stderr) and "SECRET" not in c.stdout

    for fmt in ("json", "sarif"):
        out = run_cli(
            "check", str(weird), "--index", str(hostile_index), "--format", fmt, "--fail-on", "hint"
        )
        assert out.returncode == 1 and "SECRET" not in out.stdout
        report = json.loads(out.stdout)
        # the `javascript:` name is text; no link is anything but http(s)
        urls = re.findall(r'"url": "([^"]*)"', json.dumps(report))
        assert urls and all(u == "" or u.startswith("https://github.com/") for u in urls)
    for result in report["runs"][0]["results"]:
        # SARIF: a percent-encoded URI naming exactly the file, messages on one clean line
        (loc,) = result["locations"]
        uri = loc["physicalLocation"]["artifactLocation"]["uri"]
        assert not unsafe_chars(uri) and " " not in uri and "\n" not in uri
        assert unquote(uri) == str(weird).lstrip("/") or unquote(uri).endswith(weird.name)
        text = result["message"]["text"]
        assert "\n" not in text and not unsafe_chars(text)
        assert "SECRET" not in text and not re.search(r"://[^/\s]*@", text)


def test_cli_errors_naming_a_hostile_file_stay_one_printable_line(hostile_index, tmp_path):
    name = tmp_path / "dir\nforged.py:1:1: error\x1b]0;pwned\x07"  # no such file
    c = run_cli("check", str(name), "--index", str(hostile_index))
    assert c.returncode == 2
    assert len(c.stderr.splitlines()) == 1 and not unsafe_chars(c.stderr), c.stderr


def test_stats_shows_names_from_the_index_printable(tmp_path):
    """A folder named with escape sequences and a bell: `stats` prints its name escaped,
    and the index's own path the same way."""
    folder = tmp_path / "lib\x1b]0;pwned\x07\x1b[31mred\u202e"
    folder.mkdir()
    (folder / "a.py").write_text(FUNCTION)
    out = tmp_path / "idx\x1b[2J"
    build_index([str(folder)], out, BuildOptions(jobs=1, progress=False))
    s = run_cli("stats", str(out))
    assert s.returncode == 0, s.stderr
    assert not unsafe_chars(s.stdout), s.stdout
    assert "red" in s.stdout.splitlines()[0]  # the name is shown, escaped
