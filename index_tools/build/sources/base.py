"""What every corpus source shares: the error type, skip reasons and the base class."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator

from index_tools.model import Document

from ...model import clean_origin
from .licensing import file_license


class SourceError(Exception):
    """A corpus source cannot be opened or read; the message is one clear line."""


class SkipReasons:
    """Why a file was not yielded (the keys of `source.skipped`)."""

    BINARY = "binary"  # a NUL byte in the first 8 KB
    UNDECODABLE = "undecodable"  # not valid UTF-8
    OVERSIZE = "oversize"  # larger than max_file_bytes
    MINIFIED = "minified"  # very long lines
    GENERATED = "generated"  # a "generated, do not edit" marker near the top
    EMPTY = "empty"  # nothing but whitespace
    UNSUPPORTED = "unsupported"  # not a source code file (by name), or a symlink
    MALFORMED = "malformed"  # a dataset row that is not valid JSON or has no content
    UNREADABLE = "unreadable"  # the file could not be read (permissions, vanished)
    LONG_PATH = "path too long"  # its path is longer than the system can open

    ALL = (
        BINARY,
        UNDECODABLE,
        OVERSIZE,
        MINIFIED,
        GENERATED,
        EMPTY,
        UNSUPPORTED,
        MALFORMED,
        UNREADABLE,
        LONG_PATH,
    )


def with_own_license(doc: Document) -> Document:
    """The document with its file's own license (an SPDX line, a license header) in place
    of its repository's, when it states one."""
    own = file_license(doc.text)
    if own and own != doc.origin.license:
        doc.origin = dataclasses.replace(doc.origin, license=own)
    return doc


class CorpusSource:
    """A stream of documents from one corpus.

    `documents()` yields `Document`s and, while it runs, counts what it leaves out in
    `skipped` (reason -> count; reset at the start of each run), the files that are not
    source code by their kind too (`unsupported`: `.md` -> count). Whatever the source, a
    document's link leaves here as a clean http(s) link (no credentials, no secret query
    parameters) or "", and its names carry no credentials (`model.clean_origin`).
    """

    kind = ""

    def __init__(self, spec: str, *, max_file_bytes: int = 1_000_000) -> None:
        self.spec = spec
        self.max_file_bytes = max_file_bytes
        self.skipped: Counter[str] = Counter()
        self.unsupported: Counter[str] = Counter()
        self.name = spec

    def describe(self) -> dict:
        return {"spec": self.spec, "name": self.name, "kind": self.kind}

    def indexed(self) -> list[str]:
        """What the build summary names this source by: its name (a package list's own
        source names each package it fetched, at its version)."""
        return [self.name]

    def skip_unsupported(self, name: str, kind: str = "") -> None:
        """A file left out as not source code, counted by its kind: `kind` ("link",
        "special file"), else its name's extension (`.md`), else "no extension"."""
        self.skipped[SkipReasons.UNSUPPORTED] += 1
        if not kind:
            base = name.replace("\\", "/").rsplit("/", 1)[-1]
            dot = base.rfind(".")
            kind = base[dot:].lower() if dot > 0 else "no extension"
        self.unsupported[kind] += 1

    def documents(self, own_licenses: bool = True) -> Iterator[Document]:
        """The documents; with `own_licenses` false, each file's own license is left to
        the caller (`with_own_license`: a builder finds them in its worker processes)."""
        self.skipped, self.unsupported = Counter(), Counter()
        for doc in self._documents():
            origin = clean_origin(doc.origin)
            if origin is not doc.origin:
                doc.origin = origin
            yield with_own_license(doc) if own_licenses else doc

    def _documents(self) -> Iterator[Document]:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Document]:
        return self.documents()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
