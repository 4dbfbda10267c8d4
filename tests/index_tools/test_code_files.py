"""How `check` reads a file: encodings told by their byte order mark or their NUL bytes,
binary files told from text with stray NULs, and windows that cover the file exactly, whose
matches are those of the whole file, each once."""

from __future__ import annotations

import codecs
import random

import pytest
from engine_fixtures import HAVERSINE, make_corpus

from index_tools import BuildOptions, build_index, open_index
from index_tools.cli.code_files import NotText, sniff, window_matches, windows_of
from index_tools.text.words import LineIndex


def chunks(data: bytes, size: int = 7001):
    return iter([data[i : i + size] for i in range(0, len(data), size)])


def read_all(data: bytes, window: int = 1 << 20, margin: int = 1 << 18):
    return list(windows_of(chunks(data), window, margin))


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (codecs.BOM_UTF8 + b"x = 1\n", "utf-8"),
        ("x = 1\n".encode("utf-16"), "utf-16-le"),
        (codecs.BOM_UTF16_BE + "x = 1\n".encode("utf-16-be"), "utf-16-be"),
        ("x = 1\n".encode("utf-32"), "utf-32-le"),
        ("x = 1\n# caf\u00e9\n".encode("utf-16-le"), "utf-16-le"),
        ("x = 1\n".encode("utf-16-be"), "utf-16-be"),
        ("x = 1\n".encode("utf-32-be"), "utf-32-be"),
        (b"x = 1\x00\ny = 2\n", "utf-8"),
    ],
)
def test_the_encoding_is_told_by_the_byte_order_mark_or_the_nul_bytes(data, encoding):
    assert sniff(data)[0] == encoding
    (w,) = read_all(data)
    assert w.text.replace("\0", " ").startswith("x = 1")
    assert "\ufeff" not in w.text and "\0" not in w.text


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n" + random.Random(1).randbytes(4096),
        b"\x7fELF" + b"\0" * 4000 + b"code",
        bytes(4096),
    ],
)
def test_binary_files_are_not_text(data):
    with pytest.raises(NotText):
        read_all(data)


def test_windows_cover_the_file_and_know_their_lines_and_columns():
    rng = random.Random(3)
    lines = []
    for _ in range(3000):
        n = rng.choice([0, 5, 30, 200, 2000])  # some lines longer than a window
        lines.append("".join(rng.choice("ab \u00e9\U0001f600") for _j in range(n)))
    text = "\r\n".join(lines[:1000]) + "\n" + "\r".join(lines[1000:2000]) + "\n".join(lines[2000:])
    windows = read_all(text.encode(), window=1000, margin=300)
    assert len(windows) > 100 and windows[-1].last and windows[0].first
    assert "".join(w.text[: w.end] for w in windows) == text
    where = LineIndex(text)
    for w in windows:
        assert (w.line, w.column) == where.position(w.offset)
        assert w.context == text[max(0, w.offset - 300) : w.offset]
        if not w.last:
            assert w.text == text[w.offset : w.offset + w.end + 300]
            assert not (w.text[w.end - 1] == "\r" and w.text[w.end : w.end + 1] == "\n")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("windows")
    info = make_corpus(tmp)
    build_index(info["repos"], tmp / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp / "idx") as idx:
        yield idx


def test_matches_found_in_windows_are_those_of_the_whole_file_each_once(index):
    pad = "".join(f"value_{i} = {i} * 7\n" for i in range(60))
    rng = random.Random(5)
    for trial in range(12):
        cut = rng.randrange(0, 400)
        text = pad[:cut] + "\n" + HAVERSINE + pad + HAVERSINE + "x = 1\n" + HAVERSINE + pad
        whole = index.match(text, "", min_tokens=20)
        found = [
            w.placed(m)
            for w, m in window_matches(
                index, iter(read_all(text.encode(), window=700, margin=500)), min_tokens=20
            )
        ]
        key = lambda m: (m.range.to_dict(), m.text, m.file_count, m.char_start)  # noqa: E731
        assert [key(m) for m in found] == [key(m) for m in whole], trial
