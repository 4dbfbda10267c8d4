"""Corpus sources: where the documents of an index come from.

    src = open_source(spec, max_file_bytes=1_000_000)
    src.name, src.describe()
    for doc in src.documents(): ...      # Document(text, origin, language)
    src.skipped                          # Counter: reason -> files left out

Specs:

- a folder: its source code files (by extension); `link` is empty
- a git repository (a folder with .git): the files committed at HEAD, linked to the host
- `python:stdlib`: the running interpreter's standard library, linked to python/cpython
- `python:site-packages[=NAME,...]`: installed distributions (all, or the named ones)
- a `.jsonl`, `.jsonl.gz` or `.parquet` dataset (The Stack's column names are understood)

Every source skips, and counts by reason (see `SkipReasons`): binary, undecodable, oversize,
minified, generated and empty files; folders also count non-code files as unsupported.
"""

from __future__ import annotations

import os

from .base import CorpusSource, SkipReasons, SourceError
from .datasets import DatasetSource
from .folder import FolderSource
from .git import GitSource, is_git_top
from .languages import language_for_path
from .licenses import detect_license
from .python_env import SitePackagesSource, StdlibSource

__all__ = [
    "CorpusSource",
    "DatasetSource",
    "FolderSource",
    "GitSource",
    "SitePackagesSource",
    "SkipReasons",
    "SourceError",
    "StdlibSource",
    "detect_license",
    "language_for_path",
    "open_source",
]

DATASET_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
_EXPECTED = (
    "expected a folder, a git repository, python:stdlib, python:site-packages "
    "or a .jsonl/.jsonl.gz/.parquet dataset"
)


def open_source(spec: str, *, max_file_bytes: int = 1_000_000) -> CorpusSource:
    """The corpus source a spec names; SourceError with a one-line message if there is none."""
    if not isinstance(spec, str) or not spec.strip():
        raise SourceError(f"empty source; {_EXPECTED}")
    if not isinstance(max_file_bytes, int) or max_file_bytes <= 0:
        raise SourceError(
            f"max_file_bytes must be a positive number of bytes, not {max_file_bytes!r}"
        )
    spec = spec.strip()
    if spec == "python:stdlib":
        return StdlibSource(spec, max_file_bytes=max_file_bytes)
    if spec == "python:site-packages":
        return SitePackagesSource(spec, max_file_bytes=max_file_bytes)
    if spec.startswith("python:site-packages="):
        names = [n for n in spec.partition("=")[2].split(",") if n.strip()]
        if not names:
            raise SourceError(f"{spec}: no distribution names after '='")
        return SitePackagesSource(spec, names, max_file_bytes=max_file_bytes)
    if spec.startswith("python:"):
        raise SourceError(f"unknown source {spec!r}; {_EXPECTED}")
    path = os.path.expanduser(spec)
    if os.path.isdir(path):
        if is_git_top(path):
            return GitSource(spec, path, max_file_bytes=max_file_bytes)
        return FolderSource(spec, path, max_file_bytes=max_file_bytes)
    if path.lower().endswith(DATASET_SUFFIXES) and os.path.isfile(path):
        return DatasetSource(spec, path, max_file_bytes=max_file_bytes)
    if not os.path.exists(path):
        raise SourceError(f"{spec}: no such file or directory")
    raise SourceError(f"unknown source {spec!r}; {_EXPECTED}")
