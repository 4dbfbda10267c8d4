"""Recitation's index engine: words, fingerprints, the LMDB index, corpus sources, builders
and the matcher. Never imports `server`."""

from .attribution import (
    Attribution,
    find_attribution,
    plain_attribution,
    source_groups,
    spdx_snippet_tags,
)
from .build import BuildError, BuildOptions, BuildSummary, add_to_index, build_index
from .decisions import (
    ACTIONS,
    Action,
    CompletionAction,
    Decisions,
    DecisionsError,
    DecisionsFile,
    Dismissal,
    literal_pattern,
    load_decisions,
)
from .decisions import FILE_NAME as DECISIONS_FILE
from .index import Index, open_index
from .license_categories import CATEGORIES, license_category
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
    count_phrase,
    describe_kind,
    describe_match,
)
from .paths import default_index_path
from .quote_identity import QuoteIdentity
from .safe_text import clean_link, comment_safe, printable
from .store import FORMAT_VERSION, IndexOpenError
from .store import current_name as current_generation
from .verdict import Verdict, judge
from .words import TOKENIZER_VERSION, Word, tokenize

__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "DECISIONS_FILE",
    "FORMAT_VERSION",
    "KINDS",
    "KIND_LABELS",
    "MATCH_JSON_VERSION",
    "TOKENIZER_VERSION",
    "Action",
    "Attribution",
    "BuildError",
    "BuildOptions",
    "BuildSummary",
    "CompletionAction",
    "Decisions",
    "DecisionsError",
    "DecisionsFile",
    "Dismissal",
    "Document",
    "Index",
    "IndexOpenError",
    "Kind",
    "Match",
    "Origin",
    "Part",
    "Position",
    "QuoteIdentity",
    "Range",
    "Source",
    "Verdict",
    "Word",
    "add_to_index",
    "build_index",
    "clean_link",
    "comment_safe",
    "count_phrase",
    "current_generation",
    "default_index_path",
    "describe_kind",
    "describe_match",
    "find_attribution",
    "judge",
    "license_category",
    "literal_pattern",
    "load_decisions",
    "open_index",
    "plain_attribution",
    "printable",
    "source_groups",
    "spdx_snippet_tags",
    "tokenize",
]
