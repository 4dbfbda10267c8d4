"""The words' bounds compiled (kernel.c `rc_word_bounds`, ASCII text) are `words.word_bounds`'s,
the reference: on the standard library's files read whole and a block at a time, on any of
the 128 characters, and through the engine's chooser for text beyond ASCII."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import cases
import numpy as np

from index_tools.match import kernel
from index_tools.text.words import WORD_RE, word_bounds


def same(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    return a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()


def test_real_files_whole_and_by_block():
    k = cases.needs_kernel()
    rng = random.Random(7)
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("**/*.py"))
    checked = 0
    for path in rng.sample(files, min(len(files), 200)):
        text = path.read_text(encoding="utf-8", errors="replace")
        if text.isascii():
            assert same(kernel.word_bounds(k, text.encode("ascii")), word_bounds(text)), path
        for _ in range(5):  # a block, as a stored document's words are read
            a = rng.randrange(len(text) + 1)
            b = a + rng.choice([0, 1, 100, 1024, 5000])
            assert same(kernel.text_word_bounds(text, a, b), word_bounds(text, a, b)), path
            checked += 1
    assert checked > 500


def test_every_ascii_character():
    """Whitespace as str.isspace has it (\\x1c-\\x1f too), word characters as \\w, every
    other character a word alone; the same as the regular expression's words."""
    k = cases.needs_kernel()
    rng = np.random.default_rng(2)
    for size in (0, 1, 2, 3, 10, 128, 4000):
        for _ in range(50):
            text = bytes(rng.integers(0, 128, size)).decode("ascii")
            starts, ends = kernel.word_bounds(k, text.encode("ascii"))
            assert same((starts, ends), word_bounds(text))
            assert [text[a:b] for a, b in zip(starts.tolist(), ends.tolist())] == (
                WORD_RE.findall(text)
            )


def test_text_beyond_ascii_is_read_by_the_reference():
    cases.needs_kernel()
    for text in ("naïve = café + 1", "x = '日本語' # ok", "\udc80 a b", "ü" * 10 + " x"):
        for a, b in ((0, None), (1, 9), (3, 100)):
            assert same(kernel.text_word_bounds(text, a, b), word_bounds(text, a, b))
