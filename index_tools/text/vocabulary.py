"""Reference data: names that are nobody's own — keywords of the languages we parse,
Python's builtins and the standard library's public names (`data/vocabulary.txt`, made by
`bench/make_vocabulary.py`). A span whose identifiers are all such names, or short generic
ones, has nothing of its author's in its names.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

DATA_FILE = "vocabulary.txt"


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    path = resources.files("index_tools") / "data" / DATA_FILE
    if not path.is_file():
        return frozenset()
    return frozenset(path.read_text(encoding="utf-8").split())


def is_common_name(name: str) -> bool:
    """A keyword, a builtin or a public name of the standard library."""
    return name in vocabulary()
