"""Code datasets in JSON Lines (.jsonl, .jsonl.gz) or Parquet, such as The Stack.

Columns, first present wins:

- content: `content`, `text`, `code` (a row without one is "malformed")
- repository: `max_stars_repo_name`, `repo_name`, `repository`, `repo`
- path: `max_stars_repo_path`, `path`, `file_path`
- license: `max_stars_repo_licenses`, `license`, `licenses`; a list of licenses is joined
  with " OR " (The Stack lists every license found in the repository)
- commit: `max_stars_repo_head_hexsha`, `commit`, `revision`
- language: `lang`, `language`, else from the path's extension
- link: `url` or `link` when it is an http(s) URL; otherwise, for an `owner/repo` repository
  with a commit, `https://github.com/owner/repo/blob/<commit>/<path>` (The Stack's
  repositories are on GitHub)

Metadata is kept as given (what shows it makes it printable: `safe_text.printable`), but a
link is only ever http(s), without credentials or secret query parameters
(`safe_text.clean_link`, as for every source).
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Iterator
from urllib.parse import quote, urlsplit

from index_tools.model import Document, Origin

from ...safe_text import clean_link
from .base import CorpusSource, SkipReasons, SourceError
from .filters import check_text, text_from_bytes
from .languages import language_for_path, normalize_language
from .licenses import NOASSERTION, license_from_name

CONTENT = ("content", "text", "code")
REPOSITORY = ("max_stars_repo_name", "repo_name", "repository", "repo")
PATH = ("max_stars_repo_path", "path", "file_path")
LICENSE = ("max_stars_repo_licenses", "license", "licenses")
COMMIT = ("max_stars_repo_head_hexsha", "commit", "revision")
LANGUAGE = ("lang", "language")
LINK = ("url", "link")
ALL_COLUMNS = CONTENT + REPOSITORY + PATH + LICENSE + COMMIT + LANGUAGE + LINK

PARQUET_BATCH_ROWS = 64

_GITHUB_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_COMMIT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def _first(row: dict, keys: tuple[str, ...]):
    for key in keys:
        value = row.get(key)
        if value is not None and value != "":
            return value
    return None


def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value).strip()


def _license(value) -> str:
    if value is None:
        return NOASSERTION
    if isinstance(value, (list, tuple)):
        items = [_text(v) for v in value]
        items = [license_from_name(v) or v for v in items if v]
        unique = list(dict.fromkeys(items))
        return " OR ".join(unique) if unique else NOASSERTION
    text = _text(value)
    if not text:
        return NOASSERTION
    return license_from_name(text) or text


def safe_http_link(value) -> str:
    """The value as a link when it is a well-formed http(s) URL: credentials and secret
    query parameters removed, fragment dropped; else ""."""
    return clean_link(value)


def _anchor_for(link: str) -> bool:
    host = (urlsplit(link).hostname or "").lower()
    path = urlsplit(link).path
    return ("github" in host or "gitlab" in host) and "/blob/" in path


def github_link(repository: str, commit: str, path: str) -> str:
    if not (_GITHUB_REPO.match(repository) and _COMMIT.match(commit) and path):
        return ""
    if any(part in (".", "..") for part in repository.split("/")):
        return ""
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        return ""
    return f"https://github.com/{repository}/blob/{commit}/{quote(path, safe='/')}"


class DatasetSource(CorpusSource):
    """Rows of a .jsonl / .jsonl.gz / .parquet file, read in a stream."""

    def __init__(self, spec: str, path: str, *, max_file_bytes: int = 1_000_000) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        self.path = path
        self.name = os.path.basename(path)
        lower = path.lower()
        if lower.endswith(".parquet"):
            self.kind = "parquet"
        elif lower.endswith(".jsonl.gz"):
            self.kind = "jsonl.gz"
        else:
            self.kind = "jsonl"
        if self.kind == "parquet":
            # Fails early on a missing pyarrow, a bad file or a missing content column.
            self._content_columns(self._open_parquet())

    def describe(self) -> dict:
        return {**super().describe(), "format": self.kind}

    # -- rows

    def _open_parquet(self):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise SourceError(
                f"{self.spec}: reading .parquet datasets needs pyarrow (pip install pyarrow)"
            ) from None
        try:
            return pq.ParquetFile(self.path)
        except Exception as e:  # pyarrow raises its own error types
            raise SourceError(f"{self.spec}: not a readable parquet file ({e})") from None

    def _content_columns(self, parquet) -> list[str]:
        """The known columns the file has; SourceError when none holds content."""
        names = parquet.schema_arrow.names
        if not any(c in names for c in CONTENT):
            raise SourceError(
                f"{self.spec}: no content column (expected one of {', '.join(CONTENT)})"
            )
        return [c for c in ALL_COLUMNS if c in names]

    def _parquet_rows(self) -> Iterator[dict | None]:
        parquet = self._open_parquet()
        columns = self._content_columns(parquet)
        try:
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=columns):
                yield from batch.to_pylist()
        except Exception as e:  # pyarrow raises its own types (ArrowInvalid is a ValueError)
            raise SourceError(f"{self.spec}: cannot read it ({e})") from None

    def _jsonl_rows(self) -> Iterator[dict | None]:
        opener = gzip.open if self.kind == "jsonl.gz" else open
        try:
            with opener(self.path, "rb") as f:
                for line in f:
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except (ValueError, RecursionError):  # invalid JSON or UTF-8, too deep
                        yield None
                        continue
                    yield row if isinstance(row, dict) else None
        except (OSError, EOFError, zlib.error) as e:
            reason = (
                "truncated" if isinstance(e, EOFError) else (getattr(e, "strerror", None) or str(e))
            )
            raise SourceError(f"{self.spec}: cannot read it ({reason})") from None

    # -- documents

    def _documents(self) -> Iterator[Document]:
        rows = self._parquet_rows() if self.kind == "parquet" else self._jsonl_rows()
        for row in rows:
            doc = self._document(row)
            if doc is not None:
                yield doc

    def _document(self, row: dict | None) -> Document | None:
        content = _first(row, CONTENT) if row is not None else None
        if not isinstance(content, (str, bytes)):
            self.skipped[SkipReasons.MALFORMED] += 1
            return None
        if isinstance(content, bytes):
            text, reason = text_from_bytes(content, self.max_file_bytes)
        else:
            text, reason = check_text(content, self.max_file_bytes)
        if reason:
            self.skipped[reason] += 1
            return None
        assert row is not None and text is not None
        repository = _text(_first(row, REPOSITORY))
        path = _text(_first(row, PATH))
        commit = _text(_first(row, COMMIT))
        link = safe_http_link(_first(row, LINK))
        anchor = _anchor_for(link) if link else True
        if not link:
            link = github_link(repository, commit, path)
            anchor = bool(link)
        language = normalize_language(_text(_first(row, LANGUAGE))) or language_for_path(path)
        origin = Origin(
            repository=repository,
            path=path,
            commit=commit,
            license=_license(_first(row, LICENSE)),
            link=link,
            line_anchor=anchor,
        )
        return Document(text=text, origin=origin, language=language)
