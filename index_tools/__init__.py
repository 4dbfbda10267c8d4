"""Recitation's index engine: words, fingerprints, the LMDB index, corpus sources, builders
and the matcher. Never imports `server`."""

from .model import KINDS, Document, Kind, Match, Origin, Position, Range, Source
from .words import TOKENIZER_VERSION, Word, tokenize

__all__ = [
    "KINDS",
    "TOKENIZER_VERSION",
    "Document",
    "Kind",
    "Match",
    "Origin",
    "Position",
    "Range",
    "Source",
    "Word",
    "tokenize",
]
