"""A stored document's line numbers: found by counting newlines for the first asks, then
from a table of them; the same either way, for any text (ASCII, any code point, lone
surrogates that a decoded file may hold)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from index_tools.match.index import StoredDocument, newline_offsets

TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("ab \n\r\t"),
        st.characters(codec="utf-8"),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=400,
)


def document(text: str) -> StoredDocument:
    return StoredDocument(
        doc_id=0, text=text, words=0, language="", occurrences=1, origins=[],
        block_chars=np.zeros(1, dtype=np.int64), block_words=np.zeros(1, dtype=np.int64),
    )  # fmt: skip


@given(TEXT)
def test_the_newline_table_is_every_newline(text):
    assert newline_offsets(text).tolist() == [i for i, c in enumerate(text) if c == "\n"]


@settings(max_examples=200)
@given(TEXT, st.lists(st.integers(min_value=0, max_value=400), min_size=1, max_size=12))
def test_lines_are_the_newlines_before_counted_or_from_the_table(text, asks):
    doc = document(text)
    for a in asks:
        offset = min(a, len(text))
        assert doc.line_of(offset) == text.count("\n", 0, offset) + 1
        end = min(len(text), offset + 7)
        assert doc.lines_of(offset, end) == (
            text.count("\n", 0, offset) + 1,
            text.count("\n", 0, end) + 1,
        )
