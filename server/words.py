"""Words as the index counts them, through the engine's public tokenizer."""

from __future__ import annotations

from index_tools import word_bounds, word_texts


def words_of(text: str) -> list[str]:
    return word_texts(text)


def count_words(text: str) -> int:
    return len(word_texts(text))


def context_start(text: str, end: int, n_words: int) -> int:
    """Offset where the last `n_words` words before `end` begin (0 when fewer exist)."""
    if n_words <= 0:
        return end
    window = max(256, n_words * 24)
    while True:
        lo = max(0, end - window)
        starts, _ = word_bounds(text, lo, end)
        # the first word of a cut window may be partial: use it only at the text's start
        if len(starts) > n_words or (lo == 0 and len(starts)):
            return int(starts[max(0, len(starts) - n_words)])
        if lo == 0:
            return end
        window *= 4
