"""The language of a piece of code read from its text, for the rename-insensitive view when
nobody says which it is (code piped to `query`, a document the editor calls plain text).

A shebang names it (`#!/usr/bin/env python3`, `node`, `deno`); else the text is parsed with
every installed tree-sitter grammar and the language whose parse has the fewest characters
in errors wins, if few of them are (prose, Markdown or a language we do not parse have many
in every grammar). A suggestion is often a piece cut out of a file, so each grammar also
reads it as it would sit in a file: its common indentation removed and the blocks it starts
inside of opened before it (Python), inside a function or a class with its unmatched braces
matched (the brace languages), a comment or a docstring it starts or ends inside of closed;
the best reading counts. Of languages reading it equally well the plainer one is taken: C
before C++, JavaScript before TypeScript (what parses as the first parses as the second).
"""

from __future__ import annotations

import importlib
import re
import textwrap
from functools import cache
from typing import NamedTuple

from .normalize import GRAMMARS, canonical, supported

# the order ties are broken in: a language before the ones that parse it too
ORDER = ("python", "javascript", "typescript", "java", "go", "rust", "c", "cpp")
MOST_ERRORS = 0.1  # the share of the text's characters a guess may have in errors
MAX_CHARS = 20_000  # the text read: its first characters (a language shows in them)

_SHEBANG_RE = re.compile(r"#![ \t]*(?:/\S*/)?(?:env[ \t]+(?:-\S+[ \t]+)*)?(\S+)")
_INTERPRETERS = (  # an interpreter's name (its version dropped) -> the language
    (re.compile(r"(?:python|pypy)[\d.]*$"), "python"),
    (re.compile(r"(?:node|nodejs|bun)$"), "javascript"),
    (re.compile(r"(?:deno|ts-node|tsx)$"), "typescript"),
    (re.compile(r"rust-script$"), "rust"),
)
# what a piece of code of a brace language can sit inside of in a file: (before, after)
_AROUND = {
    "javascript": (("function _() {\n", "\n}"), ("class _ {\n", "\n}")),
    "typescript": (("function _() {\n", "\n}"), ("class _ {\n", "\n}")),
    "java": (("class _ {\n", "\n}"), ("class _ { void _() {\n", "\n}}")),
    "go": (("func _() {\n", "\n}"),),
    "rust": (("fn _() {\n", "\n}"), ("impl _ {\n", "\n}")),
    "c": (("void _(void) {\n", "\n}"),),
    "cpp": (("void _() {\n", "\n}"), ("class _ {\n", "\n};")),
}
_INDENT_RE = re.compile(r"[ \t]*")


class Guess(NamedTuple):
    language: str
    how: str  # "named", "shebang" or "parse"


def pick_language(named: str | None, text: str) -> Guess | None:
    """The rename-insensitive view's language for `text`: the one `named` (an editor's
    language id: `python`, `typescriptreact`) when the engine parses it, else read from
    the text (`guess_language`: a document the editor calls plain text, or names in a
    language it has no grammar of)."""
    language = canonical(named)
    if language is not None and supported(language):
        return Guess(language, "named")
    return guess_language(text)


def guess_language(text: str) -> Guess | None:
    """The language `text` is written in and how it was told, or None when no shebang
    names one and no installed grammar reads it well."""
    by_shebang = _shebang(text)
    if by_shebang is not None and _parser(by_shebang) is not None:
        return Guess(by_shebang, "shebang")
    code = textwrap.dedent(text[:MAX_CHARS].expandtabs(8))
    size = len(code.encode("utf-8", "surrogatepass"))
    if not code.strip():
        return None
    scores = []
    for rank, language in enumerate(ORDER):
        parser = _parser(language)
        if parser is None:
            continue
        errors = None
        for reading in _readings(code, language):
            found = _error_bytes(parser.parse(reading.encode("utf-8", "surrogatepass")).root_node)
            errors = found if errors is None else min(errors, found)
            if errors == 0:
                break
        scores.append((errors, rank, language))
    if not scores:
        return None
    errors, _, language = min(scores)
    return Guess(language, "parse") if errors <= MOST_ERRORS * size else None


def _readings(code: str, language: str):
    """`code` as it is, then as it would sit in a file of `language` (see the module)."""
    yield code
    if language == "python":
        opened = _open_blocks(code)
        quotes = code.count('"""') % 2 == 1
        if opened or quotes:
            yield opened + code
            if quotes:
                yield opened + '"""\n' + code
                yield opened + code + '\n"""'
        return
    code = _comment_closed(code)
    balanced = _braces_matched(code)
    yield balanced
    for before, after in _AROUND.get(language, ()):
        yield before + balanced + after


def _open_blocks(code: str) -> str:
    """Blocks opened before the first lines when they are indented deeper than lines after
    them (a piece that starts inside a function): one `if 1:` at each shallower level."""
    indents = [len(_INDENT_RE.match(line).group()) for line in code.splitlines() if line.strip()]
    if not indents or indents[0] == 0:
        return ""
    levels = sorted({i for i in indents if i < indents[0]})
    return "".join(" " * level + "if 1:\n" for level in levels)


def _comment_closed(code: str) -> str:
    """A block comment the piece starts inside of opened, one it ends inside of closed."""
    close, open_ = code.find("*/"), code.find("/*")
    if close >= 0 and (open_ < 0 or close < open_):
        code = "/*" + code
    if code.rfind("/*") > code.rfind("*/"):
        code += "*/"
    return code


def _braces_matched(code: str) -> str:
    """The piece with a `{` before it for each `}` it closes that it did not open, and a
    `}` after it for each `{` it leaves open."""
    depth = lowest = 0
    for c in code:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            lowest = min(lowest, depth)
    return "{\n" * -lowest + code + "\n}" * (depth - lowest)


def _shebang(text: str) -> str | None:
    m = _SHEBANG_RE.match(text)
    if m is None:
        return None
    name = m.group(1).rsplit("/", 1)[-1]
    return next((lang for pattern, lang in _INTERPRETERS if pattern.match(name)), None)


@cache
def _parser(language: str):
    """A tree-sitter parser of `language` (None when its grammar is not installed)."""
    module, func = GRAMMARS[language]
    try:
        from tree_sitter import Language, Parser

        return Parser(Language(getattr(importlib.import_module(module), func)()))
    except (ImportError, AttributeError, ValueError):
        return None


def _error_bytes(root) -> int:
    """The bytes inside the parse's ERROR nodes, and one for each node it had to make up
    (MISSING): only the subtrees holding an error are walked."""
    total = 0
    stack = [root] if root.has_error else []
    while stack:
        node = stack.pop()
        if node.is_error:
            total += node.end_byte - node.start_byte
        elif node.is_missing:
            total += 1
        else:
            stack.extend(child for child in node.children if child.has_error or child.is_missing)
    return total
