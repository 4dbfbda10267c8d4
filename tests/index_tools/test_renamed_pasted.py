"""Renamed copies as people paste them (#38): a real function (the standard library's
`zipfile.ZipInfo.from_file`, indexed from this interpreter's own `zipfile.py`) with one, two
and five local names renamed, pasted between the user's own code — after an import line
ending in a name, inside a class before the class's next `def`, mid-line — is one match
whose primary span is the renamed whole, stopped where the copy stops, its renames said in
every output, the exact runs inside it its parts."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from index_tools import BuildOptions, build_index, describe_match, open_index, tokenize
from index_tools.cli.sarif import sarif_report
from index_tools.cli.text_report import match_details

pytestmark = pytest.mark.usefixtures("search_path")  # both search paths

SOURCE, FIRST = inspect.getsourcelines(zipfile.ZipInfo.from_file)  # from `@classmethod`
METHOD = "".join(SOURCE[1:])  # from `def from_file(`
DEF_LINE = FIRST + 1
LAST_LINE = FIRST + len(SOURCE) - 1  # `return zinfo`
ZIPFILE = Path(inspect.getsourcefile(zipfile))
NEXT_DEF = ZIPFILE.read_text(encoding="utf-8").splitlines()[LAST_LINE:]

RENAMES = {
    1: {"zinfo": "info"},
    2: {"arcname": "name_in_archive", "zinfo": "info"},
    5: {
        "arcname": "name_in_archive",
        "st": "stats",
        "isdir": "is_folder",
        "date_time": "stamp",
        "zinfo": "info",
    },
}


def renamed(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


def pairs_in_order(names: dict[str, str]) -> list[tuple[str, str]]:
    """The renames as a match lists them: by where each source name first occurs."""
    words = [w.text for w in tokenize(METHOD)]
    first = {n: min(i for i, w in enumerate(words) if w == n) for n in names}
    return [(n, names[n]) for n in sorted(names, key=first.__getitem__)]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory) -> Path:
    # the next method of the class follows `from_file` in the file (the `def` the user's
    # own next `def` faces)
    follows = next(line.strip() for line in NEXT_DEF if line.strip())
    if not follows.startswith("def ") or SOURCE[0].strip() != "@classmethod":
        pytest.skip("this Python's zipfile.ZipInfo.from_file is laid out otherwise")
    tmp = tmp_path_factory.mktemp("pasted")
    (tmp / "src").mkdir()
    shutil.copy(ZIPFILE, tmp / "src" / "zipfile.py")
    build_index([str(tmp / "src")], tmp / "idx", BuildOptions(jobs=1, progress=False))
    return tmp / "idx"


@pytest.fixture(scope="module")
def index(index_dir):
    with open_index(index_dir) as idx:
        yield idx


# The user's file around the pasted method: (before, after). `main` and `names` are the
# user's own `def`s after it: in the rename-insensitive view any name equals any name, so
# `def main(` faces the source's next `def is_dir(` — the renamed copy ends where the copy
# ends, before the `def` both have (a lone word of the user's next definition); the same
# paste unrenamed is an exact run, and a run is reported whole: it takes the `def` in.
AFTER_IMPORT = (
    "import os, stat, time\nfrom zipfile import ZipInfo\n",
    "\ndef main(self):\n    return 1\n",
)
IN_CLASS = (
    "class Bundle:\n    compression = 8\n\n    @classmethod\n",
    "\n    def names(self):\n        return []\n",
)
MID_LINE = ("import os, stat, time\nx = 1; ", "\n\ndef main(self):\n    return x\n")

CASES = {  # id: (renames, placing, first word, last word, source lines of the primary span,
    # the exact runs of 60 words or more inside it)
    "one-after-import": (1, AFTER_IMPORT, "def", "info", (DEF_LINE, LAST_LINE), 1),
    "two-in-class": (2, IN_CLASS, "@", "info", (FIRST, LAST_LINE), 1),
    "five-mid-line": (5, MID_LINE, "def", "info", (DEF_LINE, LAST_LINE), 0),
}


def pasted(case: str) -> tuple[str, str, dict[str, str]]:
    """(the user's file, the pasted text, its renames)."""
    n, (before, after), *_ = CASES[case]
    body = METHOD if case == "two-in-class" else textwrap.dedent(METHOD)  # a function
    text = renamed(body, RENAMES[n])
    return before + text + after, text, RENAMES[n]


@pytest.mark.parametrize("case", list(CASES))
def test_the_renamed_whole_is_the_quote_and_stops_where_the_copy_stops(index, case):
    file, text, names = pasted(case)
    _, (before, _), first, last, lines, runs = CASES[case]
    (m,) = index.match(file, language="python")  # as `check` reads a file
    assert m.exact is False
    assert m.renamed == pairs_in_order(names)  # no pair of the user's own names
    # the range: the whole paste, nothing of the code before or after
    quoted = tokenize(m.text)
    assert (quoted[0].text, quoted[-1].text) == (first, last)
    start = file.index(text) if first == "def" else file.index("@classmethod")
    assert m.char_start == start
    assert m.text == file[m.char_start : m.char_end]
    assert (m.range.start.line, m.range.start.character) == (
        file[:start].count("\n"),
        start - (file.rfind("\n", 0, start) + 1),
    )
    # the primary span is the whole, with its source lines
    assert (m.primary_start, m.primary_end) == (m.query_start, m.query_end)
    (src,) = m.sources
    assert (src.path, src.start_line, src.end_line) == ("zipfile.py", *lines)
    assert src.words == m.length
    # the exact runs inside it are its parts, copied unchanged, in the same file
    assert len(m.parts) == runs and all(p.exact and p.renamed == [] for p in m.parts)
    for p in m.parts:
        assert m.query_start <= p.query_start and p.query_end <= m.query_end
        assert p.length >= 60 and p.file_count == 1
        assert p.sources[0].path == "zipfile.py"
    # the same paste unrenamed: one exact match, the common run whole (the `def` both have
    # next is in it: the guarantee reports every common run maximal)
    back = {b: a for a, b in names.items()}
    (exact,) = index.match(file.replace(text, renamed(text, back)), language="python")
    assert exact.exact is True and exact.renamed == [] and exact.parts == []
    quoted = tokenize(exact.text)
    assert (quoted[0].text, quoted[-1].text) == (first, "def")
    assert (exact.sources[0].start_line, exact.sources[0].end_line) == (lines[0], LAST_LINE + 2)


def test_a_fragment_keeps_a_name_used_once_past_a_spill(index):
    """Code around a copy equals the source's by chance for a few words only: a renamed
    name used once further in than `SPILL` words from the edge (a fragment's last line
    binds it) is the copy's, and stays."""
    head = textwrap.dedent(METHOD).split("\n    zinfo.external_attr")[0]
    assert head.endswith("zinfo = cls(arcname, date_time)")
    names = {"st": "stats", "isdir": "is_folder", "zinfo": "info"}  # `zinfo` once, last
    file = "import os, stat, time\nx = 1\n" + renamed(head, names) + "\n"
    (m,) = index.match(file, language="python")
    assert m.exact is False and m.renamed == pairs_in_order(names)
    quoted = tokenize(m.text)
    assert (quoted[0].text, quoted[-1].text) == ("def", ")")


def test_the_renames_are_said_in_text_json_and_sarif(index):
    file, _, names = pasted("two-in-class")
    (m,) = index.match(file, language="python")
    said = ", ".join(f"{a} \u2192 {b}" for a, b in pairs_in_order(names))
    assert said == "arcname \u2192 name_in_archive, zinfo \u2192 info"
    head = describe_match(m)
    assert head.startswith(f"Renamed copy: src zipfile.py L{FIRST}\u2013L{LAST_LINE} \u00b7 ")
    assert f"renamed {said}" in head
    details = match_details(m)
    assert f"\n  renamed copy: {said}\n" in details
    assert "; recitation; copied unchanged" in details  # its exact runs
    d = json.loads(json.dumps(m.to_dict()))
    assert d["exact"] is False
    assert d["renamed"] == [{"from": a, "to": b} for a, b in pairs_in_order(names)]
    assert (d["primary_start"], d["primary_end"]) == (d["query_start"], d["query_end"])
    assert d["sources"][0]["start_line"] == FIRST
    assert all(p["exact"] for p in d["parts"])
    (result,) = sarif_report([("bundle.py", m)], "0")["runs"][0]["results"]
    assert result["message"]["text"].startswith(head)
    assert result["properties"]["renamed"] == d["renamed"]
    assert result["properties"]["exact"] is False
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 4
    assert all("copied unchanged" in loc["message"]["text"] for loc in result["relatedLocations"])


def test_the_renames_are_said_in_the_diagnostic_and_the_hover(index):
    from server.diagnostics import StoredMatch, message_for
    from server.hover import hover_markdown, hover_plaintext

    file, _, names = pasted("five-mid-line")
    (m,) = index.match(file, language="python")
    message = message_for(m)
    assert message.startswith(f"Renamed copy: src zipfile.py L{DEF_LINE}\u2013L{LAST_LINE} \u00b7 ")
    assert "renamed arcname \u2192 name_in_archive, st \u2192 stats" in message
    stored = StoredMatch.create(m, m.char_start, m.char_end, ("x",))
    plain = hover_plaintext([(stored, None)])
    said = ", ".join(f"{a} \u2192 {b}" for a, b in pairs_in_order(names))
    assert f"Renamed copy: {said}" in plain
    assert f"Sources (1 file):\n- src zipfile.py L{DEF_LINE}\u2013L{LAST_LINE} " in plain
    markdown = hover_markdown([(stored, None)])
    assert "**Renamed copy:** arcname \u2192 name\\_in\\_archive" in markdown
    # a renamed copy's exact runs: its parts, copied unchanged
    file, _, _ = pasted("one-after-import")
    (m,) = index.match(file, language="python")
    assert message_for(m).endswith(
        "\u00b7 renamed zinfo \u2192 info \u00b7 1 nested part (up to 1 file)"
    )
    stored = StoredMatch.create(m, m.char_start, m.char_end, ("x",))
    markdown = hover_markdown([(stored, None)])
    assert "**Parts:**\n- " in markdown
    assert ", copied unchanged in 1 file \u2014 src zipfile\\.py L" in markdown
    assert "**Renamed copy:** zinfo \u2192 info" in markdown


def cli(*args, stdin: str = "", cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *map(str, args)],
        input=stdin, capture_output=True, text=True, timeout=300, cwd=cwd,
    )  # fmt: skip


def test_check_says_the_renamed_copy_first(index_dir, tmp_path):
    file, _, _ = pasted("one-after-import")
    (tmp_path / "bundle.py").write_text(file, encoding="utf-8")
    r = cli("check", "bundle.py", "--index", index_dir, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    head, *details = r.stdout.splitlines()
    assert head.startswith(
        f"bundle.py:3:1: warning: Renamed copy: src zipfile.py L{DEF_LINE}\u2013L{LAST_LINE} "
    ), head
    assert "\u00b7 renamed zinfo \u2192 info \u00b7 1 nested part (up to 1 file)" in head
    assert "  renamed copy: zinfo \u2192 info" in details
    assert any(line.endswith("; recitation; copied unchanged") for line in details)
    r = cli("check", "bundle.py", "--index", index_dir, "--format", "json", cwd=tmp_path)
    (m,) = json.loads(r.stdout)["results"]
    assert m["file"] == "bundle.py" and m["exact"] is False
    assert m["renamed"] == [{"from": "zinfo", "to": "info"}]  # on the match itself
    assert m["sources"][0]["start_line"] == DEF_LINE


@pytest.mark.parametrize("how", ["stdin", "file", "--index file", "default index"])
def test_show_shows_the_renamed_copy_first(index_dir, tmp_path, monkeypatch, how):
    """`show` marks the whole renamed copy and lists its renames: the language is the
    file's when it is named; with neither a name nor --language, the renamed view comes
    first because it is the longer quote."""
    file, _, _ = pasted("two-in-class")
    path = tmp_path / "bundle.py"
    path.write_text(file, encoding="utf-8")
    args = {
        "stdin": (index_dir, "--match", "1"),
        "file": (index_dir, path),
        "--index file": ("--index", index_dir, path),
        "default index": (path,),
    }[how]
    if how == "default index":
        monkeypatch.setenv("RECITATION_INDEX", str(index_dir))
    r = cli("show", *args, "--color", "never", stdin=file if how == "stdin" else "")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"src zipfile.py L{FIRST}\u2013L{LAST_LINE} \u00b7 ")
    assert lines[1] == "renamed copy: arcname \u2192 name_in_archive, zinfo \u2192 info"
    marked = [int(line.split("|")[0][1:]) for line in lines[2:] if line.startswith(">")]
    assert marked[0] == FIRST and marked[-1] == LAST_LINE
    if how == "stdin":  # without renames, the exact view and no renames, as before
        before, after = IN_CLASS
        r = cli("show", index_dir, "--color", "never", stdin=before + METHOD + after)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines[0].startswith(f"src zipfile.py L{FIRST}\u2013L{LAST_LINE + 2} \u00b7 ")
        assert not any(line.startswith("renamed") for line in lines)
