"""Each document's line table (format 8): the line of every word is the line counted in the
text; a source's lines come from it without reading the text, the same lines as counted in
the text (an index of the format before, which has no table, answers alike); a damaged
table is an error when read, never a wrong line."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from test_damage import _edit_document, flip, reseal
from test_stored_lines import CHARACTERS

from index_tools import BuildOptions, IndexOpenError, build_index, open_index
from index_tools.build import process
from index_tools.match.index import StoredDocument
from index_tools.store import generations as store
from index_tools.store import line_table as line_tables
from index_tools.store.generations import decompress
from index_tools.store.line_table import LineTable, line_table
from index_tools.text.words import word_bounds

TEXT = st.text(alphabet=st.one_of(st.sampled_from("_1(=)\n\n\r\t "), CHARACTERS), max_size=3000)


@settings(max_examples=200, deadline=None)
@given(
    text=TEXT, block_chars=st.integers(1, 300), chunk=st.sampled_from([1, 2, 7, 1024]),
    rng=st.randoms(use_true_random=False), small=st.sampled_from([0, 3, 1024]),
)  # fmt: skip
def test_each_words_line_is_the_line_counted_in_the_text(text, block_chars, chunk, rng, small):
    with pytest.MonkeyPatch.context() as mp:  # (a table is read as the writer's chunks)
        mp.setattr(process, "BLOCK_CHARS", block_chars)
        mp.setattr(line_tables, "CHUNK_LINES", chunk)
        mp.setattr(line_tables, "SMALL_CHUNK", small)  # (chunks read by numpy, Python, both)
        pd = process.process(text)
        starts, ends = word_bounds(text)
        assert pd.words == len(starts)
        assert process.split_blocks(text)[0] == [text[a:b] for a, b in zip(starts, ends)]
        firsts, lines = LineTable(pd.lines, pd.words).rows()
        on = lines[np.searchsorted(firsts, np.arange(pd.words), side="right") - 1]
        assert on.tolist() == [text.count("\n", 0, a) for a in starts.tolist()]
        # a document as the index reads it: its sources' lines, by the table and by the text
        table = np.frombuffer(pd.blocks, dtype="<u4").reshape(-1, 2).astype(np.int64)
        args = (0, None, pd.words, "", 1, [], table[:, 0], table[:, 1])
        counted = StoredDocument(0, decompress(pd.ztext), *args[2:])
        read = []
        tabled = StoredDocument(
            *args, read_text=lambda: read.append(1) or "", stored_lines=pd.lines
        )
        for _ in range(10 if pd.words else 0):
            first = rng.randrange(pd.words)
            last = rng.randrange(first, pd.words)
            assert (
                tabled.word_lines(first, last)
                == counted.word_lines(first, last)
                == (
                    text.count("\n", 0, starts[first]) + 1,
                    text.count("\n", 0, ends[last] - 1) + 1,
                )
            )
        assert read == []  # (the text never read)


def table_of(raw: bytes, words: int) -> list:
    return [a.tolist() for a in LineTable(raw, words).rows()]


@pytest.mark.parametrize("small", [0, 1024])  # chunks read by numpy, by Python's integers
def test_malformed_tables_are_refused(monkeypatch, small):
    monkeypatch.setattr(line_tables, "CHUNK_LINES", 2)  # (chunks of two rows)
    monkeypatch.setattr(line_tables, "SMALL_CHUNK", small)
    good = line_table([0, 3, 9, 10, 11], [0, 2, 3, 5, 9])
    assert table_of(good, 12) == [[0, 3, 9, 10, 11], [0, 2, 3, 5, 9]]
    assert table_of(line_table([], []), 0) == [[], []]

    def chunk_of(firsts, lines):  # a chunk's frame as the writer makes it
        steps = [*np.diff(firsts, prepend=firsts[0]), *np.diff(lines, prepend=lines[0])]
        return zstandard.ZstdCompressor().compress(np.array(steps, dtype="<u4").tobytes())

    zstd = zstandard.ZstdCompressor().compress

    def heads(*rows) -> bytes:
        return np.array([len(rows), *[v for r in rows for v in r]], dtype="<u4").tobytes()

    one, single = chunk_of([0, 3], [0, 2]), chunk_of([0], [0])
    bad = {
        "past the words": (good, 11),
        "words and no table": (line_table([], []), 4),
        "a table and no words": (good, 0),
        "the first line not at the first word": (line_table([1, 3], [0, 1]), 5),
        "first words not rising": (line_table([0, 3, 3], [0, 1, 2]), 5),
        "lines not rising": (line_table([0, 3, 4], [0, 1, 1]), 5),
        "a word's row twice in a chunk": (line_table([0, 0, 5], [0, 1, 2]), 6),
        "a line twice in a chunk": (line_table([0, 2, 5], [0, 0, 2]), 6),
        "a chunk's first row not its head": (
            heads((0, 0, len(z := zstd(np.array([1, 2, 0, 2], dtype="<u4").tobytes())))) + z,
            5,
        ),
        "chunks not rising": (heads((0, 0, len(one)), (0, 2, len(one))) + one + one, 5),
        "a chunk past the next": (heads((0, 0, len(one)), (2, 1, len(one))) + one + one, 9),
        "a short chunk before the last": (
            heads((0, 0, len(single)), (3, 2, len(one))) + single + one,
            9,
        ),
        "bytes past the sizes": (good + b"\0", 12),
        "a count past the bytes": (np.array([1 << 30], dtype="<u4").tobytes(), 12),
        "not zstd": (heads((0, 0, 16)) + b"\x00" * 16, 5),
        "an odd number of bytes": (
            heads((0, 0, len(z := zstandard.ZstdCompressor().compress(b"\0" * 6)))) + z,
            5,
        ),
        "cut": (good[:-2], 12),
    }
    for name, (raw, words) in bad.items():
        with pytest.raises(ValueError):
            table_of(raw, words)
        assert name


# real files: a long one with blank lines and Windows line ends, short ones, one copied
CODE = "".join(
    f"def f{i}(x, y):\r\n\r\n    total = x * {i} + y  # the {i}th\r\n    return total\r\n\n"
    for i in range(400)
)
SHORT = (
    "import os\n\n\nclass Box:\n    def __init__(self, size, name):\n        self.size = size\n"
    "        self.name = name or os.getcwd()\n\n    def area(self):\n"
    "        return self.size * self.size\n"
)


def quotes(text: str, count: int = 12) -> list[str]:
    lines = text.splitlines(keepends=True)
    return ["".join(lines[k : k + count]) for k in range(0, len(lines) - count, len(lines) // 9)]


@pytest.fixture(scope="module")
def tabled(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("lines")
    src = tmp / "src"
    src.mkdir()
    (src / "long.py").write_bytes(CODE.encode())
    (src / "copy.py").write_bytes(CODE.encode())
    (src / "short.py").write_text(SHORT)
    build_index([str(src)], tmp / "idx", BuildOptions(jobs=1, progress=False))
    return tmp / "idx"


def without_tables(idx: Path, dest: Path) -> Path:
    """A copy of the index as the format before stored it: no line tables."""
    shutil.copytree(idx, dest)
    gen = dest / store.current_name(dest)
    env = store.open_env(gen / store.DOCS_NAME, readonly=False, max_dbs=8)
    try:
        lines = env.open_db(b"lines")
        with env.begin(write=True) as txn:
            txn.drop(lines, delete=True)
    finally:
        env.close()
    header = json.loads((gen / store.HEADER_NAME).read_text())
    header["format_version"] = 7
    (gen / store.HEADER_NAME).write_text(json.dumps(header))
    reseal(gen)
    return dest


def answers(idx: Path) -> list:
    with open_index(idx) as index:
        out = []
        for q in [*quotes(CODE), SHORT]:
            out.append([m.to_dict() for m in index.match(q, min_tokens=20)])
        return out


def test_sources_lines_from_the_table_are_those_counted_in_the_text(tabled, tmp_path):
    header = json.loads((tabled / store.current_name(tabled) / store.HEADER_NAME).read_text())
    assert header["format_version"] == store.FORMAT_VERSION == 8
    found = answers(tabled)
    assert all(found) and found == answers(without_tables(tabled, tmp_path / "seven"))
    text = CODE.replace("\r\n", "\n")
    for q, matches in zip(quotes(CODE), found):
        (m,) = matches
        at = CODE.index(q)
        first = CODE.count("\n", 0, at + len(q) - len(q.lstrip())) + 1
        last = CODE.count("\n", 0, at + len(q.rstrip())) + 1
        assert {(s["path"], s["start_line"], s["end_line"]) for s in m["sources"]} == {
            ("long.py", first, last),
            ("copy.py", first, last),
        }
        assert text  # (lines end with \r\n: a line is counted at its \n)


def test_a_lookup_reads_no_text(tabled):
    with open_index(tabled) as index:
        (m,) = index.match(quotes(CODE)[4], min_tokens=20)
        assert m.sources
        docs = [index.document(d) for d in range(index.header.documents)]
        assert all(d.text is None and d.frames is None for d in docs)
        assert docs[0].whole_text() in (CODE, SHORT)  # read when asked (the compare view)


def test_a_damaged_line_table_is_an_error_when_read(tabled, tmp_path, monkeypatch):
    from index_tools.match import index as index_module

    monkeypatch.setattr(index_module, "DIGESTS_ON_OPEN_BYTES", 0)
    good = answers(tabled)
    rng = random.Random(4)
    for k in range(6):
        dest = tmp_path / f"d{k}"
        shutil.copytree(tabled, dest)
        gen = dest / store.current_name(dest)

        def edit(value: bytes, k=k) -> bytes:
            if k < 3:  # a byte of the frame changed: its checksum says so
                at = rng.randrange(len(value))
                return value[:at] + bytes([value[at] ^ 0x20]) + value[at + 1 :]
            firsts, lines = LineTable(value, 10**9).rows()
            if k == 3:  # a line number skipped back: the table of no text
                return line_table(firsts.tolist(), [0, *lines.tolist()[:-1]])
            if k == 4:  # first words past the document's words
                return line_table([0, *(f + 10**6 for f in firsts.tolist()[1:])], lines.tolist())
            return b""  # no table

        _edit_document(gen, b"lines", edit)
        try:
            got = answers(dest)
        except IndexOpenError as e:
            assert "damaged" in str(e) and "line table" in str(e) and "\n" not in str(e)
            continue
        assert got == good, k  # (an edit that leaves a valid table of the same lines)
    assert flip  # (test_damage's byte flips of whole files: digests, checked at open)


def records(idx: Path) -> dict[bytes, list]:
    gen = idx / store.current_name(idx)
    env = store.open_env(gen / store.DOCS_NAME, readonly=True, max_dbs=8)
    try:
        out = {}
        for name in store.DOC_DBS:
            db = env.open_db(name)
            with env.begin() as txn:
                out[name] = list(txn.cursor(db))
        return out
    finally:
        env.close()


def test_reline_index_adds_the_tables_the_builder_writes(tabled, tmp_path):
    """bench/reline_index.py (a large index of format 7 given its line tables without a
    build): every record the builder's, byte for byte."""
    import subprocess
    import sys

    seven = without_tables(tabled, tmp_path / "seven")
    script = Path(__file__).resolve().parents[2] / "bench" / "reline_index.py"
    subprocess.run([sys.executable, str(script), str(seven), str(tmp_path / "eight")], check=True,
                   capture_output=True)  # fmt: skip
    assert records(tmp_path / "eight") == records(tabled)
    assert answers(tmp_path / "eight") == answers(tabled)


def test_add_to_an_index_without_tables_keeps_its_format(tabled, tmp_path):
    """`add` to an index of format 7 keeps it of format 7 (an engine before line tables
    still reads it): the new files' lines are counted in their texts too, and right."""
    from index_tools import add_to_index

    seven = without_tables(tabled, tmp_path / "seven")
    more = tmp_path / "more"
    more.mkdir()
    added = CODE.replace("def f", "def g").replace("total", "amount")
    (more / "added.py").write_bytes(added.encode())
    add_to_index(seven, [str(more)], BuildOptions(jobs=1, progress=False))
    gen = seven / store.current_name(seven)
    assert json.loads((gen / store.HEADER_NAME).read_text())["format_version"] == 7
    with open_index(seven) as index:
        assert index.header.documents == 3
        assert all(index.document(d).stored_lines is None for d in range(3))
        for text, path in ((CODE, "long.py"), (added, "added.py")):
            for q in quotes(text):
                (m,) = index.match(q, min_tokens=20)
                at = text.index(q)
                first = text.count("\n", 0, at + len(q) - len(q.lstrip())) + 1
                last = text.count("\n", 0, at + len(q.rstrip())) + 1
                assert (path, first, last) in {
                    (s.path, s.start_line, s.end_line) for s in m.sources
                }
