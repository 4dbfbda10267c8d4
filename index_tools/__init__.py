"""Recitation's index engine: words, fingerprints, the LMDB index, corpus sources, builders
and the matcher. Never imports `server`."""

from .build import BuildError, BuildOptions, BuildSummary, add_to_index, build_index
from .following import FollowingIndex
from .index import Index, open_index
from .merge import merge_matches
from .model import (
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
    describe_match,
)
from .paths import default_index_path
from .query_json import query_report
from .remote import IndexServiceError, RemoteIndex, is_remote, open_location
from .safe_text import clean_link, comment_safe, printable
from .store import FORMAT_VERSION, IndexOpenError
from .store import current_name as current_generation
from .words import TOKENIZER_VERSION, Word, tokenize

__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "MATCH_JSON_VERSION",
    "TOKENIZER_VERSION",
    "BuildError",
    "BuildOptions",
    "BuildSummary",
    "Document",
    "FollowingIndex",
    "Index",
    "IndexOpenError",
    "IndexServiceError",
    "Kind",
    "Match",
    "Origin",
    "Part",
    "Position",
    "Range",
    "RemoteIndex",
    "Source",
    "Word",
    "add_to_index",
    "build_index",
    "clean_link",
    "comment_safe",
    "current_generation",
    "default_index_path",
    "describe_match",
    "is_remote",
    "merge_matches",
    "open_location",
    "open_index",
    "printable",
    "query_report",
    "tokenize",
]
