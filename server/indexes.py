"""Open indexes, one per path, shared by the folders that use it.

Each index gets one worker thread: every lookup on it runs there, off the event loop, and
never concurrently with another lookup on the same index.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from index_tools import IndexOpenError, default_index_path, open_index

log = logging.getLogger(__name__)

LOADING = "loading"
READY = "ready"
NO_INDEX = "no-index"
ERROR = "error"


def uri_to_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def resolve_index_path(index_path: str, folder_uri: str | None) -> Path:
    """The index a folder uses: its `indexPath` (relative to the folder) or the default."""
    if not index_path:
        return Path(default_index_path())
    path = Path(os.path.expanduser(index_path))
    if not path.is_absolute() and folder_uri:
        base = uri_to_path(folder_uri)
        if base is not None:
            path = base / path
    return path


class IndexHandle:
    def __init__(self, path: Path):
        self.path = path
        self.state = LOADING
        self.message = ""
        self.summary: dict[str, Any] | None = None
        self._index = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recitation-index")
        self._opened: asyncio.Future | None = None

    @property
    def ready(self) -> bool:
        return self.state == READY

    def open(self) -> asyncio.Future:
        """Start opening (once); the future completes when the state is known."""
        if self._opened is None:
            loop = asyncio.get_running_loop()
            self._opened = loop.run_in_executor(self._executor, self._open)
        return self._opened

    async def wait(self) -> IndexHandle:
        await asyncio.shield(self.open())
        return self

    def _open(self) -> None:
        if not self.path.exists():
            self.state = NO_INDEX
            self.message = (
                f"No index at {self.path}. Build one with `recitation-index build --default` "
                "or set recitation.indexPath."
            )
            return
        try:
            index = open_index(self.path)
            summary = dict(index.summary())
        except IndexOpenError as exc:
            self.state, self.message = ERROR, f"Cannot open the index at {self.path}: {exc}"
            return
        except Exception as exc:  # a damaged index must not take the server down
            log.exception("opening index %s", self.path)
            self.state = ERROR
            self.message = f"Cannot open the index at {self.path}: {type(exc).__name__}: {exc}"
            return
        self._index, self.summary = index, summary
        name = summary.get("name") or self.path.name
        files = summary.get("files")
        self.state = READY
        self.message = f"Index {name}" + (f": {files} files" if files is not None else "")

    async def match(
        self, suggestion: str, context: str, min_tokens: int, language: str = ""
    ) -> list[dict]:
        """The engine's matches as JSON dicts, computed on the index's worker thread. With
        the document's language id, copies with renamed identifiers are found too."""
        await self.wait()
        if not self.ready:
            return []
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, self._match, suggestion, context, min_tokens, language
        )

    def _match(self, suggestion: str, context: str, min_tokens: int, language: str) -> list[dict]:
        matches = self._index.match(
            suggestion, context=context, min_tokens=min_tokens, language=language or None
        )
        return [m.to_dict() for m in matches]

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        index, self._index = self._index, None
        closer = getattr(index, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:
                log.exception("closing index %s", self.path)


class IndexManager:
    def __init__(self) -> None:
        self._handles: dict[str, IndexHandle] = {}

    def get(self, path: Path, retry_failed: bool = False) -> tuple[IndexHandle, bool]:
        """The handle for `path`, and whether it was just created. With `retry_failed`, an
        index that was missing or could not be opened is tried again."""
        key = str(path)
        handle = self._handles.get(key)
        if handle is not None and not (retry_failed and handle.state in (NO_INDEX, ERROR)):
            return handle, False
        if handle is not None:
            handle.close()
        handle = self._handles[key] = IndexHandle(path)
        return handle, True

    def retain(self, keep: set[IndexHandle]) -> None:
        """Close the indexes no folder uses any more."""
        for key, handle in list(self._handles.items()):
            if handle not in keep:
                handle.close()
                del self._handles[key]

    def close_all(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()
