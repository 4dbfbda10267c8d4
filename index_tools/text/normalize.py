"""The rename-insensitive view of code: identifiers become one placeholder word.

A copy that renames its variables (`lat1 -> a`) keeps its keywords, punctuation, numbers and
structure. Its normalized words are its words, position for position, with every identifier
(a word that starts with a letter or `_` and is not one of the language's keywords) replaced
by `IDENT`. The keywords come from the language's tree-sitter grammar: its anonymous
alphabetic tokens, plus the few value names (`None`, `this`, `nil`...) no copy renames.
Mapping word by word keeps positions identical to the exact index (a span maps back to a
range for free) and costs a dictionary lookup per word; a full parse of every indexed file
would cost several times the whole build and disagree on fragments, which is what a
suggestion usually is.
"""

from __future__ import annotations

import importlib
from functools import cache, lru_cache

import numpy as np
import xxhash

IDENT = "\x01id"  # the placeholder (cannot occur in source text as one word)
NORMALIZER_VERSION = 1

# language -> (grammar module, function returning the grammar)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "java": ("tree_sitter_java", "language"),
    "go": ("tree_sitter_go", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "rust": ("tree_sitter_rust", "language"),
}
ALIASES = {
    "javascriptreact": "javascript",
    "typescriptreact": "typescript",
    "tsx": "typescript",
    "jsx": "javascript",
    "c++": "cpp",
    "py": "python",
}

# names that are values, not renamable variables
_CONSTANTS = {
    "python": {"None", "True", "False", "self", "cls"},
    "javascript": {"true", "false", "null", "undefined", "this", "NaN", "Infinity"},
    "typescript": {"true", "false", "null", "undefined", "this", "NaN", "Infinity"},
    "java": {"true", "false", "null", "this", "super"},
    "go": {"nil", "true", "false", "iota"},
    "c": {"NULL", "true", "false"},
    "cpp": {"NULL", "nullptr", "true", "false", "this"},
    "rust": {"self", "Self", "true", "false", "crate", "super"},
}


def canonical(language: str | None) -> str | None:
    if not language:
        return None
    lang = language.lower()
    lang = ALIASES.get(lang, lang)
    return lang if lang in GRAMMARS else None


@cache
def grammar_keywords(language: str) -> frozenset[str] | None:
    """The words the language's tree-sitter grammar spells out (its anonymous, visible node
    kinds that are identifiers); None when its grammar package is not installed."""
    module, func = GRAMMARS[language]
    try:
        from tree_sitter import Language

        grammar = Language(getattr(importlib.import_module(module), func)())
    except (ImportError, AttributeError, ValueError):
        return None
    words = set()
    for i in range(grammar.node_kind_count):
        kind = grammar.node_kind_for_id(i)
        if (
            kind
            and not grammar.node_kind_is_named(i)
            and grammar.node_kind_is_visible(i)
            and kind.isidentifier()
        ):
            words.add(kind)
    return frozenset(words)


@cache
def keywords(language: str) -> frozenset[str] | None:
    """The grammar's keywords and the language's constants (None when its grammar package
    is not installed)."""
    words = grammar_keywords(language)
    return None if words is None else words | _CONSTANTS.get(language, set())


def supported(language: str | None) -> bool:
    lang = canonical(language)
    return lang is not None and keywords(lang) is not None


def normalize_words(words: list[str], language: str) -> list[str] | None:
    """The normalized words: identifiers -> IDENT, every other word unchanged, position for
    position; None when the language is not supported."""
    mask = identifier_mask(words, language)
    if mask is None:
        return None
    return [IDENT if m else w for w, m in zip(words, mask.tolist())]


IDENT_HASH = np.uint64(xxhash.xxh3_64_intdigest(IDENT.encode()))


@lru_cache(maxsize=16)
def _codes(language: str) -> dict[str, int]:
    return {}


_OTHER, _IDENT, _QUOTE = 0, 1, 2


def _word_codes(words, language: str) -> dict[str, int] | None:
    """The code of each of `words` (and of words seen before) in `language`, or None when
    the language is not supported."""
    lang = canonical(language)
    kws = keywords(lang) if lang else None
    if kws is None:
        return None
    cache = _codes(lang)
    if len(cache) > 1 << 20:
        cache.clear()
    for w in words:
        if w not in cache:
            if (w[0].isalpha() or w[0] == "_") and w not in kws:
                cache[w] = _IDENT
            else:
                cache[w] = _QUOTE if w in ('"', "'", "`") else _OTHER
    return cache


def _names(codes: np.ndarray) -> np.ndarray:
    """Identifiers, but for a word alone between quotes."""
    mask = codes == _IDENT
    quote = codes == _QUOTE
    if len(codes) > 2:
        mask[1:-1] &= ~(quote[:-2] & quote[2:])
    return mask


def identifier_mask(words: list[str], language: str) -> np.ndarray | None:
    """True where a word is an identifier (None when the language is not supported).

    A word alone between quotes (`"name"`, `'key'`) is a string, not a name: lists of names
    as strings (`__all__`, dict keys) keep their words.
    """
    cache = _word_codes(set(words), language)
    if cache is None:
        return None
    return _names(np.fromiter(map(cache.__getitem__, words), dtype=np.int8, count=len(words)))


def identifier_mask_of_ids(
    vocabulary: list[str], ids: np.ndarray, language: str
) -> np.ndarray | None:
    """`identifier_mask` of the words `vocabulary[i] for i in ids` (a document numbered by
    its own distinct words: each word is looked at once, the rest is array work)."""
    cache = _word_codes(vocabulary, language)
    if cache is None:
        return None
    table = np.fromiter(map(cache.__getitem__, vocabulary), dtype=np.int8, count=len(vocabulary))
    return _names(table[ids])


def normalized_hashes(hashes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Word hashes of the normalized words: identifiers all hash alike."""
    return np.where(mask, IDENT_HASH, hashes)
