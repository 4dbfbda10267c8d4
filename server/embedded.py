"""Which language's comment goes where an attribution is inserted, when a document holds
more than one: a `<script>` or `<style>` block of an HTML, Vue or Svelte document, a fenced
code block of Markdown, and JSX children (between a JSX element's tags a `//` line is text
the page shows, a comment is `{/* ... */}`).

What a comment there must never contain follows from where it sits: inside a `<script>`
block, `</script` ends the block whatever comment it is in, and `<!--` or `<script` change
how the browser finds that end; inside `<style>`, `</style`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cache

log = logging.getLogger(__name__)

HTML_LIKE = {"html", "xhtml", "vue", "svelte", "astro"}
JSX = {"javascriptreact", "typescriptreact", "jsx", "tsx"}
_TAG = re.compile(r"<(/?)(script|style)\b([^>]*)>", re.IGNORECASE)
_ATTR = re.compile(r"""\b(lang|type)\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_FENCE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)")
SCRIPT_UNSAFE = ("</script", "<!--", "<script")
STYLE_UNSAFE = ("</style",)


@dataclass(frozen=True)
class Place:
    """The language whose comments apply at a place, and what they must not contain."""

    language: str
    jsx_children: bool = False  # a comment here is `{/* ... */}`
    unsafe: tuple[str, ...] = ()  # sequences to break up, whatever their case


def place_of(text: str, offset: int, language_id: str) -> Place:
    """Where a comment inserted at `offset` of a document in `language_id` sits."""
    language = (language_id or "").lower()
    if language in HTML_LIKE:
        return _in_markup(text, offset, language)
    if language == "markdown":
        return Place(_fenced(text, offset) or language)
    if language in JSX:
        return Place(language, _in_jsx_children(text, offset, language))
    return Place(language)


def _in_markup(text: str, offset: int, language: str) -> Place:
    tags = list(_TAG.finditer(text, 0, offset))
    last = tags[-1] if tags else None
    if last is None or last.group(1):
        return Place(language)  # outside every script and style block
    attrs = {k.lower(): v.lower() for k, v in _ATTR.findall(last.group(3))}
    if last.group(2).lower() == "style":
        return Place("css", unsafe=STYLE_UNSAFE)
    kind = attrs.get("lang") or attrs.get("type", "")
    if any(t in kind for t in ("template", "html", "handlebars")):
        return Place(language)  # markup kept in a script element: HTML comments
    script = (
        "typescriptreact" if kind.endswith("tsx")
        else "javascriptreact" if kind.endswith(("jsx", "babel"))
        else "typescript" if kind.endswith(("ts", "typescript"))
        else "javascript"
    )  # fmt: skip
    block = text[last.end() :]
    end = re.search(r"</script", block, re.IGNORECASE)
    block = block[: end.start()] if end else block
    children = script in JSX and _in_jsx_children(block, offset - last.end(), script)
    return Place(script, children, SCRIPT_UNSAFE)


def _fenced(text: str, offset: int) -> str | None:
    """The info string's language of the fenced code block holding `offset`, if any."""
    fence = None
    for line in text[:offset].splitlines():
        found = _FENCE.match(line)
        if found is None:
            continue
        marker = found.group(1)
        if fence is None:
            fence = (marker, found.group(2).lower())
        elif marker[0] == fence[0][0] and len(marker) >= len(fence[0]) and not found.group(2):
            fence = None
    return (fence[1] or None) if fence is not None else None


@cache
def _parser(language: str):
    """A tree-sitter parser for JSX (javascript) or TSX; None when the grammar is missing."""
    try:
        from tree_sitter import Language, Parser

        if language.startswith("typescript") or language == "tsx":
            import tree_sitter_typescript

            return Parser(Language(tree_sitter_typescript.language_tsx()))
        import tree_sitter_javascript

        return Parser(Language(tree_sitter_javascript.language()))
    except (ImportError, AttributeError, ValueError) as exc:
        log.info("no JSX grammar (%s): attribution comments in JSX are line comments", exc)
        return None


def _in_jsx_children(code: str, offset: int, language: str) -> bool:
    """Whether `offset` lies between a JSX element's opening and closing tags (not inside
    a `{...}` expression or a tag)."""
    parser = _parser(language)
    if parser is None:
        return False
    data = code.encode("utf-8", "surrogatepass")
    at = len(code[:offset].encode("utf-8", "surrogatepass"))
    node = parser.parse(data).root_node.descendant_for_byte_range(at, at)
    while node is not None:
        if node.type in ("jsx_element", "jsx_fragment"):
            return True
        if node.type in (
            "jsx_expression", "jsx_opening_element", "jsx_closing_element",
            "jsx_self_closing_element", "statement_block", "program",
        ):  # fmt: skip
            return False
        node = node.parent
    return False


def break_up(text: str, unsafe: tuple[str, ...]) -> str:
    """`text` with each of `unsafe` (in any case) spaced apart, until none is left."""
    for sequence in unsafe:
        pattern = re.compile(re.escape(sequence), re.IGNORECASE)
        while pattern.search(text):
            text = pattern.sub(lambda m: " ".join(m.group(0)), text)
    return text
