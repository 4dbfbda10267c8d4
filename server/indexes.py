"""Open indexes, one per path, shared by the folders that use it.

Each index gets one worker thread: every lookup on it runs there, off the event loop, and
never concurrently with another lookup on the same index. Before a lookup the worker checks
(at most once a second) which generation the index's CURRENT names: after `build` or `add`
published a new one, it opens it, switches, and closes the old one — lookups queued behind
the switch are answered from the new generation, none is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from index_tools import IndexOpenError, Match, current_generation, default_index_path, open_index

log = logging.getLogger(__name__)
T = TypeVar("T")

LOADING = "loading"
READY = "ready"
NO_INDEX = "no-index"
ERROR = "error"
POLL_SECONDS = 1.0  # how often a lookup checks for a newly published generation


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
        self._generation: str | None = None
        self._checked_at = time.monotonic()
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recitation-index")
        self._opened: asyncio.Future | None = None
        # called (from the worker thread) after the handle switched generation or state
        self.on_change = None

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
        if not self.ready and not self._closed:
            # missing or broken when opened: a build may have published one since
            try:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._executor, self._follow)
            except RuntimeError:  # closed meanwhile
                pass
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
        self._generation = getattr(index, "generation", None)
        name = summary.get("name") or self.path.name
        files = summary.get("files")
        self.state = READY
        self.message = f"Index {name}" + (f": {files} files" if files is not None else "")

    async def match(
        self, suggestion: str, context: str, min_tokens: int, language: str = ""
    ) -> list[Match]:
        """The engine's matches, computed on the index's worker thread. With the
        document's language id, copies with renamed identifiers are found too."""
        await self.wait()
        if not self.ready:
            return []
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, self._match, suggestion, context, min_tokens, language
            )
        except RuntimeError:  # the handle was retired (settings changed): nothing to say
            return []

    def _match(self, suggestion: str, context: str, min_tokens: int, language: str) -> list[Match]:
        self._follow()
        if self._index is None:
            return []
        try:
            matches = self._index.match(
                suggestion, context=context, min_tokens=min_tokens, language=language or None
            )
        except IndexOpenError as exc:  # damage found while reading: a status, not a crash
            self._fail(ERROR, f"Cannot use the index at {self.path}: {exc}")
            return []
        return list(matches)

    async def run(self, work: Callable[..., T], *args: Any) -> T | None:
        """`work(index, *args)` on the index's worker thread (after following a newly
        published generation), for callers that batch several lookups; None without an
        index."""
        await self.wait()
        if not self.ready:
            return None

        def call() -> T | None:
            self._follow()
            return work(self._index, *args) if self._index is not None else None

        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, call)
        except RuntimeError:  # retired meanwhile
            return None

    async def poll(self) -> None:
        """Look for a newly published generation now (a missing index that was built)."""
        if self._closed or self._opened is None or not self._opened.done():
            return
        loop = asyncio.get_running_loop()
        with contextlib.suppress(RuntimeError):  # retired meanwhile
            await loop.run_in_executor(self._executor, self._follow)

    def _follow(self) -> None:
        """On the worker thread: switch to a newly published generation, if any."""
        now = time.monotonic()
        if self._closed or now - self._checked_at < POLL_SECONDS:
            return
        self._checked_at = now
        current = current_generation(self.path)
        if current is None or current == self._generation:
            return
        old_state, old_message = self.state, self.message
        previous, self._index = self._index, None
        self._close_index(previous)
        self._open()
        if (self.state, self.message) != (old_state, old_message) or self.ready:
            log.info("index %s: now %s (%s)", self.path, current, self.state)
            self._changed()

    def _fail(self, state: str, message: str) -> None:
        previous, self._index = self._index, None
        self._close_index(previous)
        self.state, self.message, self.summary = state, message, None
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:
                log.exception("index change callback")

    def _close_index(self, index) -> None:
        closer = getattr(index, "close", None)
        if callable(closer):
            try:
                closer()
            except Exception:
                log.exception("closing index %s", self.path)

    def close(self) -> None:
        """Retire the handle: lookups already queued are still answered (from this index),
        then it is closed; later lookups find nothing."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(RuntimeError):
            self._executor.submit(self._retire)
        self._executor.shutdown(wait=False)

    def _retire(self) -> None:
        index, self._index = self._index, None
        self._close_index(index)


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
