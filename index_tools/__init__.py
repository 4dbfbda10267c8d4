"""Recitation's index engine: words, fingerprints, the LMDB index, corpus sources, builders
and the matcher. Never imports `server`."""

from .build import BuildError, BuildOptions, BuildSummary, add_to_index, build_index
from .index import Index, open_index
from .licensing import license_category
from .model import (
    KIND_LABELS,
    KINDS,
    MATCH_JSON_VERSION,
    Document,
    Kind,
    Match,
    Origin,
    Part,
    Position,
    Range,
    Source,
    describe_kind,
    describe_match,
)
from .paths import default_index_path
from .safe_text import clean_link, comment_safe, printable
from .store import FORMAT_VERSION, IndexOpenError
from .store import current_name as current_generation
from .words import TOKENIZER_VERSION, Word, tokenize

__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "KIND_LABELS",
    "MATCH_JSON_VERSION",
    "TOKENIZER_VERSION",
    "BuildError",
    "BuildOptions",
    "BuildSummary",
    "Document",
    "Index",
    "IndexOpenError",
    "Kind",
    "Match",
    "Origin",
    "Part",
    "Position",
    "Range",
    "Source",
    "Word",
    "add_to_index",
    "build_index",
    "clean_link",
    "comment_safe",
    "current_generation",
    "default_index_path",
    "describe_kind",
    "describe_match",
    "license_category",
    "open_index",
    "printable",
    "tokenize",
]
