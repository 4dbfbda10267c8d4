"""How deeply a TOML text nests, measured before it is parsed: Python's TOML parser recurses
once per level of arrays and inline tables (100,000 levels end in RecursionError) and takes
time quadratic in the parts of a dotted key (`a.a.a…` 100,000 parts: minutes). A decisions
file needs three levels; one past `LIMIT` is refused with its line, in time linear in the
text (regular expressions, strings and comments set aside first)."""

from __future__ import annotations

import re

LIMIT = 64  # levels of arrays and tables, parts of a dotted key

# strings (multi-line, basic with escapes, literal) and comments: their brackets and dots
# are text
_TEXT = re.compile(
    r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
    r"|'[^'\n]*'|#[^\n]*"
)
_BRACKET = re.compile(r"[\[\]{}]")
# more than LIMIT dots between two separators (a key, a table header), searched from the
# separators only so that the search stays linear
_DOTTED = re.compile(r"(?<![^\n=,\[\]{}])(?:[^.\n=,\[\]{}]*\.){" + str(LIMIT) + "}")


def _same_lines(m: re.Match) -> str:
    text = m.group()
    return "\n" * text.count("\n") if "\n" in text else "''"


def too_deep(text: str) -> int | None:
    """The 1-based line where `text` nests past LIMIT levels (arrays, tables, inline tables,
    the parts of a dotted key), or None."""
    bare = _TEXT.sub(_same_lines, text)  # as many lines as `text`
    dotted = _DOTTED.search(bare)
    end = dotted.end() if dotted else len(bare)
    at, depth = None, 0
    for b in _BRACKET.finditer(bare, 0, end):
        if b.group() in "[{":
            depth += 1
            if depth > LIMIT:
                at = b.start()
                break
        elif depth:
            depth -= 1
    if at is None and dotted is not None:
        at = dotted.end() - 1
    return None if at is None else bare.count("\n", 0, at) + 1
