"""What kind of quote a verified span is, from what the span is made of (never from how
many files hold it: that count is shown on the match, not turned into a kind).

In order:
- `license`: legal text — a license's or a notice's own wording (`legal.py`), as a whole:
  a module copied with its license header is code.
- `repetitive`: one short pattern repeated (`\\s+\\d+\\s+...`, `row[0], row[1], ...`,
  `-1, -1, ...`, a hundred `\\n`), judged on the span's structure at every length.
- `inventory`: a list or table of literal items (natural numbers, primes, letters, tickers,
  states, column names): literals and separators, distinct short items; or rows of one
  shape (an enum of status codes, the vertices of a cube).
- `idiom`: the text of known templates and generated boilerplate (shipped reference data,
  checked right after licenses); or code with no sign of its author (`is_authored`): no
  prose, no explanatory comment, no names of its own that no API has (`vocabulary.py`),
  no parallel state updates, few bound names and arbitrary numbers, short — the standard
  way of doing something (quicksort with list comprehensions, a BeautifulSoup table walk).
- `recitation`: the default for code — any one sign of its author's choices.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from .legal import LEGAL_KEYS, is_license, is_license_text  # noqa: F401 (the kernel's keys)
from .span_features import SpanFeatures, iter_segments, span_features
from .templates import is_template

Kind = Literal["recitation", "license", "repetitive", "inventory", "idiom"]
KINDS: tuple[Kind, ...] = ("recitation", "license", "repetitive", "inventory", "idiom")


@dataclass(frozen=True)
class Authorship:
    """Thresholds of `is_authored`: reaching any one of them makes code a recitation.
    The defaults were chosen on the labelled set (`bench/bench_kinds.py` also tunes them on
    half of it and reports the other half)."""

    words: int = 150  # longer spans of code are somebody's work, however plain
    prose_words: int = 8  # words of prose (comments, docstrings, messages)
    comment_words: int = 3  # lowercase words in one comment: an explanatory comment
    messages: int = 2  # string literals that are labels or messages in words ('learning rate')
    specific_names: int = 1  # composed names the span defines (`frame_delta`, `firstFrame`)
    own_variables: int = 2  # composed variable names that are no API's (`subscription_key`)
    members: int = 3  # `self.` attributes that are no API's (`self.conv1`, `self.fc1`)
    bound_names: int = 7  # distinct names the span binds: the state of somebody's procedure
    parallel_assignments: int = 1  # `q, r, t = ...`: a state tuple updated together
    specific_numbers: int = 3  # arbitrary numeric literals (not 0, 1, 2, 10...)


AUTHORSHIP = Authorship()
TEMPLATE_SHARE = 0.5  # share of the span's k-grams found in the shipped templates


def is_repetitive(words: list[str]) -> bool:
    """Made of repetitions of a short period: a pattern of at most `MAX_PERIOD` words that
    three quarters of the words repeat (the word `p` places on equal to the word), numbers
    alike and a number's sign part of it (`-1.0, 1.0` and `1.0, -1.0` are one pattern).
    Judged on the words' structure, whatever their length (a share of distinct words falls
    as any code grows)."""
    if not words:
        return False
    distinct = set(words)
    code = {w: 0 if w[0].isdigit() else i for i, w in enumerate(distinct, 1)}  # numbers: 0
    seq = np.fromiter(map(code.__getitem__, words), np.int32, len(words))
    signs = [code[s] for s in ("-", "+") if s in code]
    if signs:  # a sign before a number is the number's
        sign = np.isin(seq[:-1], signs) & (seq[1:] == 0)
        seq = seq[np.append(~sign, True)]
    n = len(seq)
    most = min(MAX_PERIOD, n // 3)
    if most == 0:
        return False
    # a word first met past the first p words differs from the word p places before it:
    # with 3/4 of the words repeating at period p, at most p + (n - p) / 4 distinct ones
    # (distinct codes counted by bincount: np.unique's first call imports numpy.ma, 12 ms
    # inside the lookup that first gets here)
    if np.count_nonzero(np.bincount(seq)) > most + 0.25 * (n - most):
        return False
    # the sequence, then -1 for `most` words past its end
    padded = np.concatenate((seq, np.full(most, -1, np.int32)))
    # same[p - 1]: positions i with seq[i + p] == seq[i], every period p at once (row p - 1
    # of `shifted` is the sequence p words on: a view of `padded`, rows one word apart)
    shifted = np.ndarray((most, n), np.int32, padded, 4, (4, 4))
    same = np.add.reduce(shifted == padded[:n], axis=1)
    return bool((same >= 0.75 * (n - _PERIODS[:most])).any())


MAX_PERIOD = 32  # the longest pattern looked for, in words
_PERIODS = np.arange(1, MAX_PERIOD + 1)


_SEPARATORS = frozenset(",;/|:")
_LITERAL_CODE = frozenset({"True", "False", "None", "null", "true", "false"})


_NAME_RE = re.compile(r"[A-Za-z_]\w*")
_HEX_RE = re.compile(r"0[xX][0-9a-fA-F]+")
_QUOTE_RE = re.compile(r"['\"]")
# An alphabet written out inside a string: `B/C/D/.../0/1/2/`
_CHARACTER_SET_RE = re.compile(r"\s*\w(?:\s*[,;/|]\s*\w)+\s*[,;/|]?\s*")


def literal_items(text: str) -> list[str] | None:
    """The items of a span that is nothing but literals and separators, else None. A span
    can start inside a string: then it reads right with the opening quote put back."""
    if _CHARACTER_SET_RE.fullmatch(text):
        return [i.strip() for i in re.split(r"[,;/|]", text) if i.strip()]
    first_quote = _QUOTE_RE.search(text)
    if first_quote and text[: first_quote.start()].strip(" \t\n,;:") == "":
        for candidate in (text, first_quote.group() + text):
            items = _literal_items(candidate)
            if items is not None:
                return items
        return None
    return _literal_items(text)


def _literal_items(text: str) -> list[str] | None:
    for kind, piece in iter_segments(text):  # code names other than literals: not a list
        if kind == "code" and any(
            m[0] not in _LITERAL_CODE and not _HEX_RE.fullmatch(m[0])
            for m in _NAME_RE.finditer(piece)  # (read up to the first name of code)
        ):
            return None
    items = [i.strip(" \t\n'\"[](){}") for i in re.split(r"[,;/|\n]", text)]
    return [i for i in items if i]


def is_inventory(text: str) -> bool:
    """A list or table of distinct short literal items (words, not phrases of prose)."""
    items = literal_items(text)
    if not items or len(items) < 8:
        return False
    short = sum(len(re.findall(r"\w+|[^\w\s]", i)) <= 10 for i in items) / len(items)
    phrases = sum(len(re.findall(r"[A-Za-z]{2,}", i)) >= 4 for i in items) / len(items)
    return short >= 0.8 and phrases <= 0.2 and len(set(items)) / len(items) >= 0.5


_ROW_STRING_RE = re.compile(r"'[^']*'?|\"[^\"]*\"?")
_ROW_NUMBER_RE = re.compile(r"\b\d[\w.]*")
_ROW_BRACKET_RE = re.compile(r"[()\[\]]")
_ROW_STRINGS_RE = re.compile(r"(,\$)+,?")


@lru_cache(maxsize=1 << 14)  # the parts of one quote share their rows
def _row_shape(row: str) -> str:
    """A row with its strings ($), numbers (0) and names (a) replaced by one character each,
    brackets dropped and a run of string items counted as one (rows of 2 or 3 fields alike)."""
    row = _ROW_STRING_RE.sub("$", row.split("#")[0])
    row = _ROW_NUMBER_RE.sub("0", row)
    row = _NAME_RE.sub("a", "".join(row.split()))
    return _ROW_STRINGS_RE.sub(",$", _ROW_BRACKET_RE.sub("", row))


_LINE_STRING_RE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")  # a string within a line
_COMMENT_RE = re.compile(r"#[^\n]*")


def _rows(text: str) -> Iterator[tuple[str, int]]:
    """Logical lines, one at a time: a line whose brackets are still open goes on on the next
    one. With each, the lines after it: at least the rows still to come."""
    lines = text.splitlines()
    # each line's brackets, strings and comments left out: opened minus closed (a line that
    # opens none, outside brackets, leaves the depth at 0)
    code = _LINE_STRING_RE.sub("", _COMMENT_RE.sub("", "\n".join(lines))).split("\n")
    row: str | None = None
    depth = 0
    for k, (text_line, c) in enumerate(zip(lines, code)):
        if depth > 0 and row is not None:
            row += " " + text_line
        else:
            if row is not None:
                yield row, len(lines) - k
            row = text_line
        if depth or "(" in c or "[" in c or "{" in c:
            opened = c.count("(") + c.count("[") + c.count("{")
            depth = max(0, depth + opened - c.count(")") - c.count("]") - c.count("}"))
    if row is not None:
        yield row, 0


def is_table(text: str) -> bool:
    """Rows of one shape, each a key and values or a tuple of values:
    `NAME = 100, 'Text', 'Text'`, `glVertex3f( 1.0,-1.0, 1.0)` (not `print("...")` lines,
    which are statements, not records)."""
    shapes: dict[str, int] = {}  # shape -> its rows, in order of first appearance
    shaped = best = 0
    for row, later in _rows(text):
        shape = _row_shape(row)
        if shape:
            shaped += 1
            n = shapes[shape] = shapes.get(shape, 0) + 1
            best = max(best, n)
        if 7 * shaped - 10 * best > 3 * later:  # under 70% whatever follows
            return False
    if shaped < 6:
        return False
    shape, n = max(shapes.items(), key=lambda kv: kv[1])  # the first of the most common
    return n / shaped >= 0.7 and any(c in shape for c in ",=:")


def is_authored(f: SpanFeatures, t: Authorship = AUTHORSHIP) -> bool:
    """Whether a span of code carries its author's own choices: any one sign is enough."""
    return (
        f.words >= t.words
        or max(f.prose_words, f.sentence_words) >= t.prose_words
        or f.comment_run >= t.comment_words
        or f.messages >= t.messages
        or len(f.specific_names) >= t.specific_names
        or len(f.own_variables) >= t.own_variables
        or len(f.members) >= t.members
        or len(f.defined) >= t.bound_names
        or f.parallel_assignments >= t.parallel_assignments
        or f.specific_numbers >= t.specific_numbers
    )


def structural_kind(
    words: list[str],
    text: str,
    table=is_table,
    template=is_template,
    license=is_license,
    repetitive=is_repetitive,
) -> Kind | None:
    """The kind a span has by its wording or structure alone, or None for plain code.
    `table`, `template`, `license`, `repetitive`: `is_table`, `is_template`, `is_license`
    and `is_repetitive`, or implementations giving their answers (the search kernel's
    checks; a lookup's templates.QueryTemplates)."""
    if is_license_text(words, text, license):
        return "license"
    if template(words, TEMPLATE_SHARE):
        return "idiom"
    if is_inventory(text):
        return "inventory"
    if repetitive(words):
        return "repetitive"
    if table(text):
        return "inventory"
    return None


def classify(
    words: list[str],
    text: str,
    t: Authorship = AUTHORSHIP,
    table=is_table,
    template=is_template,
    license=is_license,
    repetitive=is_repetitive,
) -> Kind:
    """The kind of a span: its words (the note's words) and its text as quoted. Code is an
    idiom only with nothing of its author's in it; authored code is the default. `table`,
    `template`, `license`, `repetitive`: as `structural_kind`'s."""
    kind = structural_kind(words, text, table, template, license, repetitive)
    if kind is not None:
        return kind
    if len(words) >= t.words:  # is_authored's first sign, known without reading the text
        return "recitation"
    return "recitation" if is_authored(span_features(text, words), t) else "idiom"
