"""A text too large for one request to an index service, matched in windows: the client's
counterpart of `check`'s windows of a large file (cli/code_files.py), for texts held in
memory (the language server's documents, `query` on a URL).

The query (context + suggestion) is cut at word boundaries into windows of the suggestion,
each sent with up to `margin` characters before it as context and after it as lookahead, so
that every request stays under the service's body limit. A match belongs to the window where
it starts (or, starting in a window's context, to the first window that sees past where the
previous one ended), as in `check`; its word spans, character offsets, text and ranges are
then put back in the whole query, as one lookup of the whole text would give them: the
words of a window cut at a word boundary are the whole query's words (`text/words.py`: a
word is a run of identifier characters or one other character). A quote longer than a
margin that crosses a cut is found by both windows and merged into one region
(`merge_matches`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import replace

from ..match.matcher import MAX_CONTEXT_WORDS
from ..match.merge import merge_matches
from ..model import Match, Position, Range
from ..text.words import LineIndex, tokenize

# one lookup of (suggestion, context) -> matches, their word spans in the window's query
Lookup = Callable[[str, str], list[Match]]
MIN_WINDOW_CHARS = 1024  # characters: below this a window holds no quote worth a request
_WORD_CHAR = re.compile(r"\w")


class TooLarge(ValueError):
    """A request over the service's limit: raised by a lookup the service refused for its
    size (the window is made smaller), and by `Windows.match` when no window fits."""


def _cut(text: str, lo: int, hi: int) -> int:
    """A cut in (lo, hi]: after the last line break, else at the last place that splits no
    word, else at `hi`."""
    for mark in ("\n", "\r"):
        i = text.rfind(mark, lo, hi)
        if i >= 0:
            cut = i + 1
            if text[cut - 1 : cut + 1] == "\r\n":
                cut += 1
            return cut
    for i in range(hi, lo, -1):
        if not (_is_word_char(text[i - 1]) and _is_word_char(text[i])):
            return i
    return hi


def _is_word_char(ch: str) -> bool:
    """A character that joins a word (`\\w`, as text/words.py WORD_RE)."""
    return _WORD_CHAR.match(ch) is not None


def _start_after(text: str, at: int) -> int:
    """The first place at or after `at` where a cut splits no word."""
    while 0 < at < len(text) and _is_word_char(text[at - 1]) and _is_word_char(text[at]):
        at += 1
    return at


class Windows:
    """The whole query's words, and matches found in windows put back in it."""

    def __init__(self, suggestion: str, context: str):
        self.suggestion, self.context = suggestion, context
        self.query = context + suggestion
        self.base = len(context)
        kept = tokenize(context)[-MAX_CONTEXT_WORDS:]
        self.context_words = len(kept)
        self.starts = [w.start for w in kept] + [w.start + self.base for w in tokenize(suggestion)]
        self.ends = [w.end for w in kept] + [w.end + self.base for w in tokenize(suggestion)]
        self._lines: LineIndex | None = None

    # --- a window's words in the whole query -----------------------------------------------

    def _local_starts(self, context_at: int, text_at: int, text_end: int) -> list[int]:
        """Where the words of the window's query begin, in the whole query."""
        context = tokenize(self.query[context_at:text_at])[-MAX_CONTEXT_WORDS:]
        text = tokenize(self.query[text_at:text_end])
        return [w.start + context_at for w in context] + [w.start + text_at for w in text]

    def _placed(self, m: Match, local: list[int]) -> Match | None:
        def first(k: int) -> int:
            return bisect_left(self.starts, local[k])

        def after_last(k: int) -> int:
            return bisect_right(self.starts, local[k - 1])

        if not (0 <= m.query_start < m.query_end <= len(local)):
            return None
        start, end = first(m.query_start), after_last(m.query_end)
        if not 0 <= start < end <= len(self.starts):
            return None
        primary = (start, end)
        if 0 <= m.primary_start < m.primary_end <= len(local):
            primary = (first(m.primary_start), after_last(m.primary_end))
        parts = []
        for p in m.parts:
            if 0 <= p.query_start < p.query_end <= len(local):
                ps, pe = first(p.query_start), after_last(p.query_end)
                rng, words = self._range(ps, pe)
                parts.append(
                    replace(p, query_start=ps, query_end=pe, range=rng, suggestion_words=words)
                )
        rng, words = self._range(start, end)
        cs, ce = self.starts[start], self.ends[end - 1]
        return replace(
            m,
            query_start=start,
            query_end=end,
            length=end - start,
            char_start=cs,
            char_end=ce,
            text=self.query[cs:ce],
            range=rng,
            suggestion_words=words,
            primary_start=primary[0],
            primary_end=primary[1],
            parts=parts,
        )

    def _range(self, start: int, end: int) -> tuple[Range | None, int]:
        """The span's range in the suggestion (clipped to it) and its words there."""
        a = max(start, self.context_words)
        if a >= end:
            return None, 0
        if self._lines is None:
            self._lines = LineIndex(self.suggestion)
        s, e = self.starts[a] - self.base, self.ends[end - 1] - self.base
        rng = Range(Position(*self._lines.position(s)), Position(*self._lines.position(e)))
        return rng, end - a

    # --- matching ---------------------------------------------------------------------------

    def match(self, lookup: Lookup, fits: Callable[[str, str], bool], chars: int) -> list[Match]:
        """Every window's matches, put in the whole query, once each. `fits(suggestion,
        context)`: whether a request holding them is under the service's limit; `chars`: the
        characters a request should hold at first (lowered until `fits`)."""
        suggestion, base = self.suggestion, self.base
        out: list[Match] = []
        pos, seen_to, first = 0, 0, True
        while True:
            while True:
                if chars < MIN_WINDOW_CHARS:
                    raise TooLarge("no window of the text fits in a request")
                margin = chars // 5
                window = chars - 2 * margin
                last = len(suggestion) - pos <= window + margin
                end = len(suggestion) if last else _cut(suggestion, pos + window // 2, pos + window)
                text_end = len(suggestion) if last else min(len(suggestion), end + margin)
                text_end = _start_after(suggestion, text_end)
                context_at = _start_after(self.query, max(0, base + pos - margin))
                text = suggestion[pos:text_end]
                context = self.query[context_at : base + pos]
                if fits(text, context):
                    try:
                        found = lookup(text, context)
                        break
                    except TooLarge:
                        pass  # the service's limit is lower than it was thought to be
                chars = chars * 3 // 4
            local = self._local_starts(context_at, base + pos, base + text_end) if found else []
            for m in found:
                placed = self._placed(m, local)
                if placed is None:
                    continue
                if placed.char_start >= base + pos:
                    keep = placed.char_start < base + end or last
                else:
                    keep = first or placed.char_end > seen_to
                if keep:
                    out.append(placed)
            if last:
                return merge_matches(out)
            seen_to, pos, first = base + text_end, end, False
