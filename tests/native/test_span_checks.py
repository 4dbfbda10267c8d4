"""A span's word checks compiled (kernel.c `rc_span_checks`) answer as kinds.py, the
reference: whether the words hold a legal key (`is_license`'s first step) and
`is_repetitive`, on windows of real code, on repeated patterns with noise and numbers, and
at the thresholds; a lookup quoting a license or a repetitive table gets the same kind on
both search paths; words beyond ASCII are checked as UTF-8, unless a digit or a lowering
beyond ASCII could answer otherwise (then in Python)."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import cases
import numpy as np
import pytest

from index_tools import BuildOptions, build_index, open_index
from index_tools.match import kernel
from index_tools.text import kinds
from index_tools.text.words import word_texts


def reference(words: list[str]) -> tuple[bool, bool]:
    text = " ".join(words).lower()
    return any(k in text for k in kinds.LEGAL_KEYS), kinds.is_repetitive(words)


def compiled(k, words: list[str]) -> tuple[bool, bool]:
    return kernel.span_checks(k, "\n".join(words).encode("ascii"), len(words), kernel._KEYS)


def real_spans(count: int, seed: int = 3) -> list[list[str]]:
    """The words of ASCII windows of the standard library's files (code, docstrings,
    license headers), 20 to 700 words each."""
    rng = random.Random(seed)
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("**/*.py"))
    out: list[list[str]] = []
    for path in rng.sample(files, min(len(files), 300)):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        words = [w for w in word_texts(text) if w.isascii()]
        for _ in range(count // 300 + 1):
            a = rng.randrange(max(1, len(words)))
            span = words[a : a + rng.choice([20, 60, 300, 700])]
            if span:
                out.append(span)
    return out


def test_the_compiled_checks_answer_as_the_reference():
    k = cases.needs_kernel()
    rng = np.random.default_rng(23)
    spans = real_spans(3000) + [cases.span_words(rng) for _ in range(6000)]
    answers = [reference(w) for w in spans]
    assert sum(a[0] for a in answers) > 200, "legal keys among the spans, not only code"
    assert sum(a[1] for a in answers) > 500, "repetitive spans among them"
    assert sum(not a[1] for a in answers) > 500
    differ = [w for w, a in zip(spans, answers) if compiled(k, w) != a]
    assert differ == []


def test_the_thresholds_are_decided_alike():
    """The bounds met exactly: distinct words at the most a period allows (its length and
    a quarter of the rest), a period repeated by exactly 75% of the words; numbers alike
    whatever their digits, a sign before a number left out whatever the number."""
    k = cases.needs_kernel()
    spans = []
    for n in range(1, 120):
        most = min(kinds.MAX_PERIOD, n // 3)
        bound = int(most + 0.25 * (n - most))
        for distinct in {1, 2, n * 12 // 100, n * 3 // 10, bound - 1, bound, bound + 1}:
            if 0 < distinct <= n:
                spans.append([f"w{i % distinct}" for i in range(n)])
                spans.append([str(i) if i % 2 else f"w{i % distinct}" for i in range(n)])
                spans.append(["-" if i % 3 == 1 else str(i) if i % 3 else f"w{i % distinct}"
                              for i in range(n)])  # fmt: skip
        for signs in (1, 2, 5):  # `f(1, -1, 1)` rows with their signs anywhere
            row = ["f", "(", "1", ",", "1", ",", "1", ")"]
            words = [w for r in range(n // 8 + 1) for w in row][:n]
            spans.append([s for i, w in enumerate(words)
                          for s in (["-", w] if w == "1" and i % signs == 0 else [w])])  # fmt: skip
            spans.append([*words[:-1], "-"])  # a sign with no number after it
        for period in (1, 2, 5, 32, 33):
            base = [f"p{i % period}" for i in range(n)]
            for broken in range(0, n // 3 + 2):  # the share repeating falls word by word
                spans.append(
                    [w if i % max(1, n // (broken + 1)) else "z" for i, w in enumerate(base)]
                )
    differ = [w for w in spans if compiled(k, w) != reference(w)]
    assert differ == []
    assert any(reference(w)[1] for w in spans) and not all(reference(w)[1] for w in spans)


def test_words_that_do_not_add_up_are_refused():
    k = cases.needs_kernel()
    for joined, n in ((b"a\nb", 3), (b"a\nb", 1), (b"a\n\nb", 3), (b"", 1), (b"a", 0)):
        with pytest.raises(ValueError, match="arguments"):
            kernel.span_checks(k, joined, n, kernel._KEYS)


def test_words_beyond_ascii_are_checked_in_python():
    """`str.isdigit` knows digits beyond ASCII (a repetitive run of Arabic-Indic numbers):
    such words are the reference's to check."""
    cases.needs_kernel()
    arabic = ["x", "=", "٣"] * 40 + [f"n{i}" for i in range(40)]
    license_, repetitive = kernel.word_checks(arabic)
    assert repetitive is kinds.is_repetitive and license_ is kinds.is_license
    assert repetitive(arabic) == kinds.is_repetitive(arabic)
    words = ["x", "=", "3"] * 40 + [f"n{i}" for i in range(40)]
    license_, repetitive = kernel.word_checks(words)
    assert repetitive(words) == kinds.is_repetitive(words)
    assert license_(words) is False


BEYOND = ["—", "–", "é", "naïve", "Müller", "Ωmega", "数据", "🙂", "ß", "Σ", "ς", "\u0130", "\u212a", "²", "٣",
          "x²", "a٣", "L\u0130CENSE", "WARRANTY", "Free", "©", "’", "ǅ", "ﬁ", "l\u0130cense"]  # fmt: skip


def beyond_ascii(rng: np.random.Generator) -> list[str]:
    """A span's words with words beyond ASCII among them: dashes and quotes of comments,
    names, CJK, emoji, characters that lower to ASCII (the Kelvin sign, a dotted capital
    I) or are digits to Python (superscripts, Arabic-Indic), some at a word's start."""
    words = cases.span_words(rng)
    share = rng.choice([0.02, 0.1, 0.5])
    return [str(rng.choice(BEYOND)) if rng.random() < share else w for w in words]


def test_words_beyond_ascii_answer_as_the_reference():
    """Words beyond ASCII are checked by the kernel (as UTF-8) unless a character reads
    otherwise there: the same answers as kinds.py on every span, the compiled path taken
    for most (a comment's dash or an author's accented name no longer sends a vendored
    quote's checks to Python), and Python's for those a digit or a lowering decides."""
    cases.needs_kernel()
    rng = np.random.default_rng(31)
    spans = [beyond_ascii(rng) for _ in range(6000)]
    spans += [["Copyright", "©", "2020", "Jürgen"], ["#", "—", "LICENSE", "—"], ["L\u0130CEN"],
              ["li", "cen"], ["\u212aey", "=", "1"] * 30, ["²", "=", "x"] * 40]  # fmt: skip
    digits = "¹²³⁴⁵⁶⁷⁸⁹٠١٢٣٤٥٦٧٨٩"  # numbers alike to Python: a period of 3, not of 60
    numbered = [w for i in range(60) for w in ("x", "=", digits[i % len(digits)])]
    assert reference(numbered)[1]
    spans.append(numbered)
    compiled_path = 0
    for words in spans:
        license_, repetitive = kernel.word_checks(words)
        key, rep = reference(words)
        assert repetitive(words) == rep, words
        assert (license_ is kinds.is_license) or not key, words
        assert license_(words) == kinds.is_license(words), words
        if repetitive is not kinds.is_repetitive:
            compiled_path += 1
            assert not words or not any(
                c.isdigit() or any(x.isascii() for x in c.lower())
                for w in words
                for c in w
                if not c.isascii()
            ), words
    beyond = sum(not all(w.isascii() for w in s) for s in spans)
    assert beyond > 3000 and compiled_path > beyond // 2
    assert sum(reference(w)[1] for w in spans) > 200 and sum(reference(w)[0] for w in spans) > 20
    assert kernel.word_checks(["²", "=", "x"] * 40)[1] is kinds.is_repetitive
    assert kernel.word_checks(["\u212a", "=", "1"] * 40)[1] is kinds.is_repetitive
    assert kernel.word_checks(["\ud800", "x"])[1] is kinds.is_repetitive  # not UTF-8


LICENSE = """# Copyright (c) 2011 The Example Authors. All rights reserved.
#
# Permission is hereby granted, free of charge, to any person obtaining a copy of this
# software and associated documentation files (the "Software"), to deal in the Software
# without restriction, including without limitation the rights to use, copy, modify, merge,
# publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
# to whom the Software is furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all copies or
# substantial portions of the Software.
"""
REPEATED = "".join(f"    table[{i}] = table[{i - 1}] + step\n" for i in range(1, 40))


@pytest.mark.parametrize("path", ["native", "python"])
def test_a_quoted_license_and_a_repetitive_run_are_told_on_both_paths(tmp_path_factory, path):
    if path == "native":
        cases.needs_kernel()
    root = tmp_path_factory.mktemp("kinds")
    (root / "src").mkdir()
    (root / "src" / "notice.py").write_text(LICENSE + "\nimport os\n", encoding="utf-8")
    body = "def fill(table, step):\n" + REPEATED + "    return table\n"
    (root / "src" / "fill.py").write_text(body, encoding="utf-8")
    build_index([str(root / "src")], root / "idx", BuildOptions(jobs=1, progress=False))
    with kernel.using(path), open_index(root / "idx") as idx:
        (notice,) = idx.match(LICENSE, min_tokens=50)
        (run,) = idx.match(REPEATED, min_tokens=50)
    assert (notice.kind, notice.length, notice.file_count) == (
        "license", len(word_texts(LICENSE)), 1)  # fmt: skip
    assert (run.kind, run.length, run.file_count) == ("repetitive", len(word_texts(REPEATED)), 1)
