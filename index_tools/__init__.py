"""Recitation's index engine: words, fingerprints, the LMDB index, corpus sources, builders
and the matcher. Never imports `server`."""

from .build.add import add_to_index
from .build.local import BuildError, BuildOptions, BuildSummary, build_index
from .build.sources.languages import EXTENSIONS as CODE_EXTENSIONS
from .build.sources.languages import FILENAMES as CODE_FILENAMES
from .build.sources.languages import language_for_path
from .build.sources.workspace_plan import WorkspacePlan, plan_workspace
from .cli.code_files import NotText, open_code
from .cli.code_files import sniff as sniff_encoding
from .judge.attribution import (
    Attribution,
    find_attribution,
    plain_attribution,
    source_groups,
    spdx_snippet_tags,
)
from .judge.decisions import (
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
from .judge.decisions import FILE_NAME as DECISIONS_FILE
from .judge.license_categories import CATEGORIES, license_category
from .judge.quote_identity import QuoteIdentity
from .judge.verdict import Verdict, judge
from .match.following import FollowingIndex, Lease
from .match.index import Index, open_index
from .match.kernel import status as search_status
from .match.merge import merge_matches
from .match.source_view import SourceRef, SourceRequest, SourceView, source_view
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
    query_report,
)
from .safe_text import clean_link, comment_safe, printable
from .service.remote import IndexServiceError, RemoteIndex, is_remote, open_location
from .store.generations import FORMAT_VERSION, IndexOpenError
from .store.generations import current_name as current_generation
from .store.paths import default_index_path, workspace_index_path
from .text.language_guess import guess_language, pick_language
from .text.words import TOKENIZER_VERSION, Word, tokenize, word_bounds, word_spans, word_texts

__all__ = [
    "ACTIONS",
    "CATEGORIES",
    "CODE_EXTENSIONS",
    "CODE_FILENAMES",
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
    "FollowingIndex",
    "Index",
    "IndexOpenError",
    "IndexServiceError",
    "Kind",
    "Lease",
    "Match",
    "NotText",
    "Origin",
    "Part",
    "Position",
    "QuoteIdentity",
    "Range",
    "RemoteIndex",
    "Source",
    "SourceRef",
    "SourceRequest",
    "SourceView",
    "Verdict",
    "Word",
    "WorkspacePlan",
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
    "guess_language",
    "is_remote",
    "judge",
    "language_for_path",
    "license_category",
    "literal_pattern",
    "load_decisions",
    "merge_matches",
    "open_location",
    "open_code",
    "open_index",
    "pick_language",
    "plan_workspace",
    "plain_attribution",
    "printable",
    "query_report",
    "search_status",
    "sniff_encoding",
    "source_groups",
    "source_view",
    "spdx_snippet_tags",
    "tokenize",
    "word_bounds",
    "word_spans",
    "word_texts",
    "workspace_index_path",
]
