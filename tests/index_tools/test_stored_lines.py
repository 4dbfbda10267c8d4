"""A stored document's line numbers: the newlines counted from the nearest offset whose
line is known, before or after it; right for any text (ASCII, any code point, lone
surrogates that a decoded file may hold) and any order of asks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from index_tools.match.index import LINE_POINTS, StoredDocument

# any code point, lone surrogates too, and many line breaks
CHARACTERS = st.one_of(
    st.sampled_from("ab \n\r\t"),
    st.characters(codec="utf-8"),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
)
TEXT = st.text(alphabet=CHARACTERS, max_size=400)


def document(text: str) -> StoredDocument:
    return StoredDocument(
        doc_id=0, text=text, words=0, language="", occurrences=1, origins=[],
        block_chars=np.zeros(1, dtype=np.int64), block_words=np.zeros(1, dtype=np.int64),
    )  # fmt: skip


@settings(max_examples=300)
@given(
    TEXT,
    st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=2 * LINE_POINTS),
)
def test_lines_are_the_newlines_before_counted_from_the_nearest_known(text, asks):
    doc = document(text)
    # each ask and the offsets just before it (then nearer a known line after them)
    for a in (x for ask in asks for x in (ask, ask - 1, ask - 2) if x >= 0):
        offset = min(a, len(text))
        assert doc.line_of(offset) == text.count("\n", 0, offset) + 1
        end = min(len(text), offset + 7)
        assert doc.lines_of(offset, end) == (
            text.count("\n", 0, offset) + 1,
            text.count("\n", 0, end) + 1,
        )


def test_lines_counted_back_from_a_later_known_line():
    text = "\n" * 50 + "x\n" * 50
    doc = document(text)
    for offset in range(len(text), -1, -1):  # each nearer the one asked before it
        assert doc.line_of(offset) == text.count("\n", 0, offset) + 1


def test_the_last_block_is_counted_against_the_document_when_first_read():
    """The block table does not count its last block's words: the document's word count
    does, checked when that block is first read (a load reads none of it)."""
    import pytest

    from index_tools.match.index import IndexOpenError

    text = "a b c\nd e"
    table = {"block_chars": np.array([0, 4], dtype=np.int64)}
    table["block_words"] = np.array([0, 2], dtype=np.int64)
    good = StoredDocument(
        doc_id=1, text=text, words=5, language="", occurrences=1, origins=[], **table
    )
    assert good.word_offsets(4) == (8, 9) and good.word_texts(0, 5) == list("abcde")
    for read in (lambda d: d.word_offsets(4), lambda d: d.word_texts(2, 5)):
        bad = StoredDocument(
            doc_id=1, text=text, words=6, language="", occurrences=1, origins=[], **table
        )
        assert bad.word_offsets(0) == (0, 1)  # (a block before it: read as it is)
        with pytest.raises(IndexOpenError, match="damaged"):
            read(bad)


@settings(max_examples=400)
@given(st.integers(1, 40), st.data())
def test_a_block_table_is_checked_alike_however_many_rows(n, data):
    """A document's block table: from (0, 0), characters rising within the text, words
    never falling; read row by row when short, by arrays when long, the same verdict."""
    from index_tools.match.index import _block_table_ok

    chars = data.draw(st.lists(st.integers(1, 9), min_size=n - 1, max_size=n - 1))
    words = data.draw(st.lists(st.integers(0, 5), min_size=n - 1, max_size=n - 1))
    rows = np.cumsum(np.array([(0, 0), *zip(chars, words)], dtype=np.int64), axis=0)
    defect = data.draw(st.sampled_from(["none", "equal characters", "fewer words", "start"]))
    k = data.draw(st.integers(1, max(1, n - 1)))
    if defect == "start":
        rows[0, data.draw(st.integers(0, 1))] += 1
    elif n > 1 and defect == "equal characters":
        rows[k, 0] = rows[k - 1, 0]
    elif n > 1 and defect == "fewer words":
        rows[k, 1] = rows[k - 1, 1] - 1
    text_chars = data.draw(st.integers(0, 400))
    table = rows.astype("<u4")  # (as stored: a word count below 0 reads as a large one)
    r = table.astype(np.int64).tolist()
    expected = (
        r[0] == [0, 0]
        and r[-1][0] < text_chars
        and all(b[0] > a[0] and b[1] >= a[1] for a, b in zip(r, r[1:]))
    )
    assert _block_table_ok(table, text_chars) == expected
