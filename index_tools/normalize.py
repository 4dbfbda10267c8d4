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
def keywords(language: str) -> frozenset[str] | None:
    """The grammar's keywords (None when its grammar package is not installed)."""
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
    return frozenset(words | _CONSTANTS.get(language, set()))


def supported(language: str | None) -> bool:
    lang = canonical(language)
    return lang is not None and keywords(lang) is not None


@lru_cache(maxsize=16)
def _mapper(language: str) -> dict[str, str]:
    return {}


def normalize_words(words: list[str], language: str) -> list[str] | None:
    """Identifiers -> IDENT, every other word unchanged, position for position; None when
    the language is not supported. Memoized per distinct word, so it runs at dict speed."""
    lang = canonical(language)
    kws = keywords(lang) if lang else None
    if kws is None:
        return None
    cache = _mapper(lang)
    if len(cache) > 1 << 20:
        cache.clear()
    for w in set(words):
        if w not in cache:
            cache[w] = IDENT if (w[0].isalpha() or w[0] == "_") and w not in kws else w
    return list(map(cache.__getitem__, words))


IDENT_HASH = np.uint64(xxhash.xxh3_64_intdigest(IDENT.encode()))


@lru_cache(maxsize=16)
def _is_ident_cache(language: str) -> dict[str, bool]:
    return {}


def identifier_mask(words: list[str], language: str) -> np.ndarray | None:
    """True where a word is an identifier (None when the language is not supported)."""
    lang = canonical(language)
    kws = keywords(lang) if lang else None
    if kws is None:
        return None
    cache = _is_ident_cache(lang)
    if len(cache) > 1 << 20:
        cache.clear()
    for w in set(words):
        if w not in cache:
            cache[w] = (w[0].isalpha() or w[0] == "_") and w not in kws
    return np.fromiter(map(cache.__getitem__, words), dtype=bool, count=len(words))


def normalized_hashes(hashes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Word hashes of the normalized words: identifiers all hash alike."""
    return np.where(mask, IDENT_HASH, hashes)
