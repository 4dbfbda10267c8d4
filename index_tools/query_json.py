"""The JSON answer to one query, as `recitation-index query --json` prints it and the index
service's `/v1/match` returns it."""

from __future__ import annotations

from .model import MATCH_JSON_VERSION, Match
from .words import count_words


def query_report(suggestion: str, context: str, matches: list[Match]) -> dict:
    return {
        "version": MATCH_JSON_VERSION,
        "query_words": count_words(context) + count_words(suggestion),
        "suggestion_words": count_words(suggestion),
        "matches": [m.to_dict() for m in matches],
    }
