"""A span's table check compiled (kernel.c `rc_is_table`) answers as `kinds.is_table`, the
reference: on windows of real code, on random rows with every ASCII line break, space,
string and bracket Python reads, and on tables; a lookup quoting a table calls it an
inventory on both search paths, and text beyond ASCII is checked in Python."""

from __future__ import annotations

import random
import sysconfig
from pathlib import Path

import cases
import numpy as np
import pytest

from index_tools import BuildOptions, build_index, open_index
from index_tools.match import kernel
from index_tools.text.kinds import is_table
from index_tools.text.words import word_texts

STATUS = """    RED = 100, 'Red', 'The colour of blood'
    GREEN = (101, 'Green',
        'Grass and leaves in summer')
    BLUE = 102, 'Blue', 'A clear sky at noon'   # primary
    YELLOW = 103, 'Yellow'
    ORANGE = (104, 'Orange',
        'Named after a fruit, later a colour')
    PURPLE = 105, 'Purple', 'Dye made from sea snails'
    BROWN = 106, 'Brown', "Earth, wood and coffee"
    BLACK = (107, 'Black',
        'Absence of visible light')
    WHITE = 108, 'White', 'All the colours at once'
"""
VERTICES = "".join(
    f"glVertex3f({x:.1f},{-y:.1f}, {z:.1f})\n" for x in (1, -1) for y in (1, 2) for z in (3, 4)
)


def real_windows(count: int, seed: int = 5) -> list[str]:
    """ASCII windows of the standard library's files: code, docstrings, tables."""
    rng = random.Random(seed)
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("**/*.py"))
    out: list[str] = []
    for path in rng.sample(files, min(len(files), 300)):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        text = "".join(c for c in text if c.isascii())
        for _ in range(count // 300 + 1):
            a = rng.randrange(max(1, len(text)))
            out.append(text[a : a + rng.choice([80, 400, 1500, 5000])])
    return out


def test_the_compiled_check_answers_as_the_reference():
    k = cases.needs_kernel()
    rng = np.random.default_rng(17)
    texts = real_windows(6000) + [cases.table_text(rng) for _ in range(6000)]
    texts += [STATUS, VERTICES, STATUS.replace("\n", "\r\n"), VERTICES.replace("\n", "\x0c")]
    texts += ["", "\n", "#", "'", "a = 1, 2\n" * 6, "a = 1, 2\r" * 6, "x\x1fy = 1,\x1e" * 7]
    answers = [is_table(t) for t in texts]
    assert sum(answers) > 250, "tables among the texts, not only code"
    differ = [t for t, a in zip(texts, answers) if kernel.is_table(k, t.encode("ascii")) != a]
    assert differ == []


def test_a_table_row_by_row():
    """Rows one at a time: each prefix of a table and of code answers as the reference
    (the early stop, the 70% and the six rows decided alike)."""
    k = cases.needs_kernel()
    for text in (STATUS, VERTICES, real_windows(1)[0]):
        lines = text.splitlines(keepends=True)
        for n in range(len(lines) + 1):
            prefix = "".join(lines[:n])
            assert kernel.is_table(k, prefix.encode("ascii")) == is_table(prefix), prefix


def test_text_beyond_ascii_is_checked_in_python():
    """Python's \\w holds letters beyond ASCII; the kernel reads bytes: such text is the
    reference's to check (a table of accented names, a table only through them)."""
    cases.needs_kernel()
    accented = "".join(f"NAMÉ_{i} = {i}, 'x'\n" for i in range(8))
    spaced = "".join(f"é{i} = {i}, 'x'\n" if i % 2 else f"e {i} = {i}, 'x'\n" for i in range(8))
    for text in (accented, spaced):
        assert kernel.text_is_table(text) == is_table(text)
    assert kernel.text_is_table(accented)


@pytest.mark.parametrize("path", ["native", "python"])
def test_a_quoted_table_is_an_inventory_on_both_paths(tmp_path_factory, path):
    if path == "native":
        cases.needs_kernel()
    root = tmp_path_factory.mktemp("table")
    (root / "src").mkdir()
    code = "class Colour:\n" + STATUS * 2 + "\n\ndef shade(c):\n    return c.value + 1\n"
    (root / "src" / "colours.py").write_text(code, encoding="utf-8")
    build_index([str(root / "src")], root / "idx", BuildOptions(jobs=1, progress=False))
    with kernel.using(path), open_index(root / "idx") as idx:
        (m,) = idx.match(STATUS * 2, min_tokens=50)
    assert m.kind == "inventory"
    assert (m.length, m.file_count) == (len(word_texts(STATUS * 2)), 1)
