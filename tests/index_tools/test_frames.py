"""A long document's text stored in frames of whole blocks: its words, their offsets and
their lines read from one frame are those of the whole text; a lookup in a long file reads
the frame it needs, not the file (in an index without line tables, which read none:
test_line_table.py); an index of the format before (one frame a document) is still read,
with the same answers; a damaged frame or frame table is an error when read."""

from __future__ import annotations

import argparse
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_damage import _edit_document, flip, keep_mtime
from test_line_table import without_tables
from test_stored_lines import CHARACTERS

from index_tools import BuildOptions, IndexOpenError, build_index, open_index
from index_tools.build import process
from index_tools.match.index import StoredDocument, frames_of
from index_tools.match.source_texts import source_texts
from index_tools.store import generations as store
from index_tools.store.generations import decompress
from index_tools.text.words import word_bounds

TEXT = st.text(alphabet=st.one_of(st.sampled_from("_1(=)\n"), CHARACTERS), max_size=3000)


def stored(text: str, frame_chars: int, monkeypatch) -> StoredDocument:
    """`text` as the builder stores it and the index reads it back."""
    monkeypatch.setattr(process, "FRAME_CHARS", frame_chars)
    monkeypatch.setattr(process, "BLOCK_CHARS", 40)
    pd = process.process(text)
    table = np.frombuffer(pd.blocks, dtype="<u4").reshape(-1, 2).astype(np.int64)
    args = (0, None, pd.words, "", 1, [], table[:, 0], table[:, 1])
    if not pd.frames:
        return StoredDocument(0, decompress(pd.ztext), *args[2:])
    rows = [list(f) for f in pd.frames]
    frames = frames_of(
        0, rows, table[:, 0], 0, len(pd.ztext), lambda at, n: decompress(pd.ztext[at : at + n])
    )
    return StoredDocument(*args, frames=frames)


@settings(max_examples=150, deadline=None)
@given(text=TEXT, frame_chars=st.integers(1, 400), rng=st.randoms(use_true_random=False))
def test_words_offsets_and_lines_of_frames_are_those_of_the_whole_text(
    text, frame_chars, rng, monkeypatch_module
):
    doc = stored(text, frame_chars, monkeypatch_module)
    starts, ends = word_bounds(text)
    assert doc.words == len(starts)
    assert doc.word_texts(0, doc.words) == [text[a:b] for a, b in zip(starts, ends)]
    positions = list(range(doc.words))
    rng.shuffle(positions)  # (frames read in any order)
    for pos in positions:
        assert doc.word_offsets(pos) == (starts[pos], ends[pos])
    asks = [rng.randrange(len(text) + 1) for _ in range(20)] + [len(text)]
    # in any order, and each with the offsets just before it (then nearer a line known after
    # them, in its frame): counted from the nearest line known in the frame
    for offset in (max(0, a - d) for a in asks for d in (0, 1, 2, 9)):
        assert doc.line_of(offset) == text.count("\n", 0, offset) + 1
    assert doc.whole_text() == text


def test_lines_in_a_frame_are_counted_from_the_nearest_line_known_in_it(monkeypatch):
    """A match asks lines close together (its sources', its parts'), in any order: each is
    counted from the nearest line known in its frame, before or after it."""
    doc = stored(LONG, FRAME_CHARS, monkeypatch)
    assert doc.frames is not None and len(doc.frames.firsts) > 10
    rng, offset = random.Random(5), 0
    for _ in range(300):  # anywhere, or a little before or after the offset asked before
        near = min(len(LONG), max(0, offset + rng.randrange(-300, 300)))
        offset = rng.randrange(len(LONG) + 1) if rng.random() < 0.2 else near
        assert doc.line_of(offset) == LONG.count("\n", 0, offset) + 1
    assert any(len(at) > 2 for at, _ in doc.frames.line_points.values())


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


# a real long file: the standard library's argparse (about 100 KB)
LONG = Path(argparse.__file__).read_text(encoding="utf-8")
LINES = LONG.splitlines(keepends=True)
FRAME_CHARS = 4096  # (in frames of about 4 KB)
WHERE = [0.02, 0.3, 0.55, 0.8, 0.97]  # quotes at these fractions of the file
EVERY = [i / 80 for i in range(80)]  # quotes in file order, from every frame


def quote(at: float, count: int = 14) -> str:
    """`count` lines of LONG from the fraction `at` of its lines, as a suggestion holds them."""
    first = int(len(LINES) * at)
    return "".join(LINES[first : first + count])


def lines_in_long(text: str) -> tuple[int, int]:
    """The lines of the first and last words of `text` in LONG."""
    at = LONG.index(text)
    first, last = at + len(text) - len(text.lstrip()), at + len(text.rstrip())
    return LONG.count("\n", 0, first) + 1, LONG.count("\n", 0, last) + 1


def build(tmp: Path, monkeypatch, frame_chars: int) -> Path:
    src = tmp / "src"
    src.mkdir(parents=True)
    (src / "long.py").write_text(LONG)
    (src / "short.py").write_text("def other():\n    return 1\n")
    monkeypatch.setattr(process, "FRAME_CHARS", frame_chars)
    build_index([str(src)], tmp / "idx", BuildOptions(jobs=1, progress=False))
    return tmp / "idx"


def answers(idx: Path) -> list:
    out = []
    with open_index(idx) as index:
        for at in WHERE:
            (m,) = index.match(quote(at))
            out.append(
                (m.length, m.file_count, [(s.path, s.start_line, s.end_line) for s in m.sources])
            )
    return out


@pytest.fixture(scope="module")
def framed(tmp_path_factory) -> Path:
    with pytest.MonkeyPatch.context() as mp:
        return build(tmp_path_factory.mktemp("framed"), mp, FRAME_CHARS)


def framed_metas(idx: Path) -> list[dict]:
    """The stored records of the documents kept in frames."""
    gen = idx / store.current_name(idx)
    env = store.open_env(gen / store.DOCS_NAME, readonly=True, max_dbs=8)
    try:
        meta = env.open_db(b"meta")
        with env.begin() as txn:
            metas = [json.loads(v) for _, v in txn.cursor(meta)]
    finally:
        env.close()
    return [m for m in metas if "f" in m]


def test_a_long_file_is_stored_in_frames_and_its_sources_lines_are_right(framed):
    (meta,) = framed_metas(framed)
    assert len(meta["f"]) >= 8 and sum(f[1] for f in meta["f"]) == meta["z"]
    header = json.loads((framed / store.current_name(framed) / store.HEADER_NAME).read_text())
    assert header["format_version"] == store.FORMAT_VERSION
    for at, (length, files, sources) in zip(WHERE, answers(framed)):
        text = quote(at)
        assert length == len(word_bounds(text)[0]) and files == 1
        assert sources == [("long.py", *lines_in_long(text))]


@pytest.fixture(scope="module")
def counted(framed, tmp_path_factory) -> Path:
    """The framed index without line tables: a source's lines counted in its frames."""
    return without_tables(framed, tmp_path_factory.mktemp("counted") / "idx")


def test_a_lookup_reads_the_frames_of_its_lines_not_the_file(framed, counted):
    assert answers(counted) == answers(framed)
    for idx, frames_read in ((counted, (1, 2)), (framed, (0, 0))):
        with open_index(idx) as index:
            (m,) = index.match(quote(0.55))
            (doc,) = [index.document(d) for d in range(index.header.documents)
                      if index.document(d).frames is not None]  # fmt: skip
            read = sorted(doc.frames._texts)
            assert frames_read[0] <= len(read) <= frames_read[1] < len(doc.frames.firsts)
            (src,) = source_texts(index, m.sources[0].repository, "long.py", m.sources[0].commit)
            assert src.text == LONG  # the compare view: the whole file, every frame


def test_an_index_of_the_format_before_is_read_with_the_same_answers(framed, tmp_path, monkeypatch):
    """Format 6 stored every text in one frame: such an index opens and answers alike."""
    before = build(tmp_path, monkeypatch, 1 << 40)
    gen = before / store.current_name(before)
    header = json.loads((gen / store.HEADER_NAME).read_text())
    header["format_version"] = 6
    (gen / store.HEADER_NAME).write_text(json.dumps(header))
    assert framed_metas(before) == []
    assert answers(before) == answers(framed)


def located(idx: Path) -> list:
    """The first line of each of EVERY's quotes found, in file order, or the error said."""
    out = []
    with open_index(idx) as index:
        for at in EVERY:
            try:
                out.append([m.sources[0].start_line for m in index.match(quote(at))])
            except IndexOpenError as e:
                assert "damaged" in str(e) and "\n" not in str(e)
                out.append("error")
    return out


def test_a_damaged_frame_is_an_error_when_read(counted, tmp_path, monkeypatch):
    """A large index is opened without reading every digest: a changed byte of a frame is
    found by the frame's checksum when a lookup reads it (for its lines, in an index
    without line tables), and said."""
    from index_tools.match import index as index_module

    monkeypatch.setattr(index_module, "DIGESTS_ON_OPEN_BYTES", 0)
    good = located(counted)
    assert "error" not in good and sum(map(bool, good)) >= 30
    (meta,) = framed_metas(counted)
    for f in random.Random(3).sample(range(1, len(meta["f"])), 3):
        dest = tmp_path / f"f{f}"
        shutil.copytree(counted, dest)
        gen = dest / store.current_name(dest)
        at = meta["o"] + sum(r[1] for r in meta["f"][:f]) + meta["f"][f][1] // 2
        keep_mtime(gen / store.TEXT_NAME, lambda p, at=at: flip(p, at, 0x40))
        damaged = located(dest)
        assert "error" in damaged  # the quotes in that frame
        assert all(d in ("error", g) for d, g in zip(damaged, good))


def _frames_edit(edit):
    def apply(value: bytes) -> bytes:
        meta = json.loads(value)
        if "f" in meta:
            edit(meta)
        return json.dumps(meta).encode()

    return apply


FRAME_EDITS = {
    "lines before a frame one more": lambda m: m["f"][3].__setitem__(2, m["f"][3][2] + 1),
    "a frame starting a block later": lambda m: m["f"][2].__setitem__(0, m["f"][2][0] + 1),
    "sizes not the text's": lambda m: m["f"][1].__setitem__(1, m["f"][1][1] + 1),
    "frames out of order": lambda m: m["f"].reverse(),
    "a frame of two numbers": lambda m: m["f"][1].pop(),
    "frames a number": lambda m: m.update(f=7),
    "one frame": lambda m: m.update(f=m["f"][:1]),
}


@pytest.mark.parametrize("case", sorted(FRAME_EDITS))
def test_a_frame_table_of_the_wrong_shape_is_an_error(counted, tmp_path, case):
    """Until the first lookup that reads the damage (in file order), answers are right;
    that one says the index is damaged."""
    good = located(counted)
    dest = tmp_path / "idx"
    shutil.copytree(counted, dest)
    _edit_document(dest / store.current_name(dest), b"meta", _frames_edit(FRAME_EDITS[case]))
    damaged = located(dest)
    assert "error" in damaged
    first = damaged.index("error")
    assert damaged[:first] == good[:first]


def test_warming_rehearses_on_a_document_in_frames(framed):
    """An index warms by looking up the start of its first long document: here one kept
    in frames (its first frame read)."""
    with open_index(framed) as index:
        doc = index._rehearsal_document()
        assert doc.frames is not None
        assert index.warm() > 0
        assert list(doc.frames._texts) == [0]


def test_add_keeps_the_frames_and_stores_a_new_long_file_in_frames(framed, tmp_path, monkeypatch):
    from index_tools import add_to_index

    good = located(framed)
    dest = tmp_path / "idx"
    shutil.copytree(framed, dest)
    more = tmp_path / "more"
    more.mkdir()
    other = Path(argparse.__file__).with_name("typing.py").read_text(encoding="utf-8")
    (more / "typing_copy.py").write_text(other)
    monkeypatch.setattr(process, "FRAME_CHARS", FRAME_CHARS)
    add_to_index(dest, [str(more)], BuildOptions(jobs=1, progress=False))
    assert len(framed_metas(dest)) == 2
    assert located(dest) == good
    lines = other.splitlines(keepends=True)
    text = "".join(lines[len(lines) // 2 : len(lines) // 2 + 14])
    with open_index(dest) as index:
        (m,) = index.match(text)
    at = other.index(text)
    first = at + len(text) - len(text.lstrip())
    assert m.sources[0].path == "typing_copy.py"
    assert m.sources[0].start_line == other.count("\n", 0, first) + 1
