"""Index services as index handles: a remote index alone (`indexPath` is an http(s) URL),
or a local index and a remote one together (`remoteIndex`), their matches merged.

A remote lookup runs on the handle's own worker thread, bounded by the client's timeouts:
an unreachable service never blocks the event loop or the editor. A lookup the service does
not answer is never "nothing found": it is tried once more (at once after an error, after
a second when the service was busy or refused the connection), then fails with
`LookupFailed` (the server says the text was not checked, and keeps it to check again). An
unreachable service turns the handle's state to `error` ("index service unreachable"),
lookups fail at once, and the service is tried again after 1, 2, 4... up to 60 seconds
(the delay starts again from 1 s once a lookup succeeds); when it answers, the state is
ready again and the change is announced (`on_change`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from pathlib import Path
from typing import Any

from index_tools import (
    IndexOpenError,
    IndexServiceError,
    Match,
    RemoteIndex,
    SourceRequest,
    SourceView,
    is_remote,
    merge_matches,
    open_location,
    printable,
)

from .indexes import (
    ERROR,
    LOADING,
    NO_INDEX,
    READY,
    IndexHandle,
    IndexManager,
    LookupFailed,
    WorkerHandle,
    resolve_index_path,
)

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 1.0
LAST_RETRY_SECONDS = 60.0
LOOKUP_RETRY_SECONDS = 1.0  # before a lookup refused or answered busy is tried again
QUICK_FAILURE_SECONDS = 2.0  # a lookup that failed later (a timeout) is not tried again


class RemoteHandle(WorkerHandle):
    def __init__(self, url: str):
        super().__init__(url, "recitation-remote")
        self._client: RemoteIndex | None = None
        self._problem = ""  # why the service cannot be used, or was not reached last
        try:
            self._client = open_location(url)  # the token: RECITATION_INDEX_TOKEN(_FILE)
        except (IndexOpenError, OSError) as exc:
            self._problem = str(exc)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._backoff = FIRST_RETRY_SECONDS

    def open(self) -> asyncio.Future:
        if self._opened is None:
            self._loop = asyncio.get_running_loop()
            self._opened = self._loop.run_in_executor(self._executor, self._connect)
        return self._opened

    async def wait(self) -> RemoteHandle:
        await asyncio.shield(self.open())
        return self

    def _connect(self) -> None:
        """On the worker thread: ask the service what it serves."""
        if self._client is None:
            self.state, self.message = ERROR, f"Cannot use the index service: {self._problem}"
            return
        try:
            summary = self._client.summary()
        except IndexServiceError as exc:
            self._failed(exc)
            return
        before = self.state
        # (the retry delay goes back to its first only once a lookup succeeds: a service
        # that answers this but fails every lookup is not asked every second)
        self.summary, self.state = summary, READY
        files = summary.get("files")
        self.message = f"Index service {self.path}" + (
            f": {files} files" if files is not None else ""
        )
        if before != READY:
            self._changed()

    async def match(
        self,
        suggestion: str,
        context: str,
        min_tokens: int,
        language: str = "",
        defer_parts: bool = False,
    ) -> list[Match]:
        """The service's matches (whole: `defer_parts` leaves nothing for later over the
        wire); `LookupFailed` when it could not answer."""
        await self.wait()
        if self._closed:
            return []
        if not self.ready:
            raise LookupFailed(self._problem or self.message, retry=self._client is not None)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, self._match, suggestion, context, min_tokens, language
            )
        except RuntimeError as exc:
            if self._closed and not isinstance(exc, RecursionError):
                return []  # retired meanwhile
            raise LookupFailed(
                f"The lookup failed: {type(exc).__name__}: {printable(exc, 200)}", retry=False
            ) from None

    def _match(self, suggestion: str, context: str, min_tokens: int, language: str) -> list[Match]:
        if not self.ready or self._client is None:
            raise LookupFailed(self._problem or self.message, retry=self._client is not None)
        for attempt in (0, 1):
            started = time.monotonic()
            try:
                found = self._client.match(suggestion, context, min_tokens, language or None)
            except IndexServiceError as exc:
                quick = time.monotonic() - started < QUICK_FAILURE_SECONDS
                server_error = exc.status is not None and exc.status >= 500
                if attempt == 0 and quick and (exc.unreachable or server_error):
                    if exc.unreachable:
                        time.sleep(LOOKUP_RETRY_SECONDS)
                    continue
                if exc.unreachable:
                    self._failed(exc)
                else:
                    log.warning("%s", exc)
                raise LookupFailed(str(exc), retry=exc.unreachable) from None
            self._backoff = FIRST_RETRY_SECONDS
            return found
        raise AssertionError("unreachable")

    @property
    def generation(self) -> str | None:
        """The generation the service named when it was last asked for its summary."""
        summary = self.summary if self.ready else None
        generation = summary.get("generation") if summary else None
        return generation if isinstance(generation, str) else None

    async def source_view(self, request: SourceRequest) -> SourceView | None:
        """A source's lines beside a quote, from the service (`/v1/source`); None when it
        cannot answer (the state says why)."""
        await self.wait()
        if not self.ready or self._closed:
            return None
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._source_view, request)
        except RuntimeError:  # retired meanwhile
            return None

    def _source_view(self, request: SourceRequest) -> SourceView | None:
        if not self.ready or self._client is None:
            return None
        try:
            return self._client.source_view(request)
        except IndexServiceError as exc:
            if exc.unreachable:
                self._failed(exc)
            else:
                log.warning("%s", exc)
            return None

    async def poll(self) -> None:
        """Nothing to do: an unreachable service is tried again on its own backoff."""

    def _failed(self, exc: IndexServiceError) -> None:
        """On the worker thread: say what is wrong, and try again later."""
        log.warning("%s", exc)
        changed = self.state != ERROR
        self._problem = str(exc)
        self.state, self.summary = ERROR, None
        # "index service unreachable: URL: reason", or what the service answered
        self.message = f"error: {exc}"
        delay, self._backoff = self._backoff, min(self._backoff * 2, LAST_RETRY_SECONDS)
        if self._loop is not None and not self._closed:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                self._loop.call_soon_threadsafe(self._schedule_retry, delay)
        if changed:
            self._changed()

    def _schedule_retry(self, delay: float) -> None:
        if self._closed or self._retry is not None:  # closed, or a retry is already due
            return
        self._retry = asyncio.get_running_loop().call_later(delay, self._try_again)

    def _try_again(self) -> None:
        self._retry = None
        if self._closed or self.state == READY:
            return
        with contextlib.suppress(RuntimeError):
            self._executor.submit(self._connect)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
        if self._client is not None:
            with contextlib.suppress(RuntimeError):
                self._executor.submit(self._client.close)
        self._executor.shutdown(wait=False)


class CombinedHandle:
    """A local index and an index service used together: both are asked, their matches
    merged (`merge_matches`); one that is missing or unreachable leaves the other working."""

    def __init__(self, local: IndexHandle | RemoteHandle, remote: RemoteHandle):
        self.parts = (local, remote)
        self.path = f"{local.path} + {remote.path}"
        self.on_change = None
        for part in self.parts:
            part.on_change = self._part_changed

    @property
    def state(self) -> str:
        states = [p.state for p in self.parts]
        if READY in states:
            return READY
        if LOADING in states:
            return LOADING
        return NO_INDEX if all(s == NO_INDEX for s in states) else ERROR

    @property
    def ready(self) -> bool:
        return self.state == READY

    @property
    def message(self) -> str:
        return "; ".join(p.message for p in self.parts if p.message)

    @property
    def summary(self) -> dict[str, Any] | None:
        summaries = [p.summary for p in self.parts if p.ready and p.summary]
        if not summaries:
            return None
        return {**summaries[0], "indexes": summaries}

    def open(self) -> asyncio.Future:
        return asyncio.gather(*(p.open() for p in self.parts))

    async def wait(self) -> CombinedHandle:
        await asyncio.gather(*(p.wait() for p in self.parts))
        return self

    async def match(
        self,
        suggestion: str,
        context: str,
        min_tokens: int,
        language: str = "",
        defer_parts: bool = False,
    ) -> list[Match]:
        """Both indexes' matches merged, whole (`defer_parts` is for one local index);
        `LookupFailed` when one could not answer (with what
        the other found)."""
        results = await asyncio.gather(
            *(p.match(suggestion, context, min_tokens, language) for p in self.parts),
            return_exceptions=True,
        )
        found = [r for r in results if not isinstance(r, BaseException)]
        for r in results:
            if isinstance(r, BaseException) and not isinstance(r, LookupFailed):
                raise r
        failed = [r for r in results if isinstance(r, LookupFailed)]
        if failed:
            raise LookupFailed(
                "; ".join(f.reason for f in failed),
                retry=any(f.retry for f in failed),
                found=merge_matches(*found) if found else None,
            )
        return merge_matches(*found)

    @property
    def generation(self) -> str | None:
        """Both parts' generations (a match may come from either)."""
        names = [p.generation for p in self.parts]
        return " + ".join(n or "" for n in names) if any(names) else None

    async def source_view(self, request: SourceRequest) -> SourceView | None:
        """From the first part that holds the source (the local index first): a merged
        match does not say which index found each source."""
        first = None
        asked = (request.ref.generation or "").split(" + ")
        for i, part in enumerate(self.parts):
            generation = asked[i] if len(asked) == len(self.parts) and asked[i] else None
            ref = dataclasses.replace(request.ref, generation=generation)
            view = await part.source_view(dataclasses.replace(request, ref=ref))
            if view is not None and view.status == "ok":
                return view
            first = first or view
        return first

    async def poll(self) -> None:
        await asyncio.gather(*(p.poll() for p in self.parts))

    async def follow_now(self) -> None:
        await asyncio.gather(*(p.follow_now() for p in self.parts))

    async def settle(self, found: list[Match]) -> None:
        """Nothing is left for later: both parts' matches come whole (`match`)."""

    def _part_changed(self, _part) -> None:
        if self.on_change is not None:
            self.on_change(self)

    def close(self) -> None:
        for part in self.parts:
            part.close()


def handle_for_settings(
    manager: IndexManager, index_path: str, remote_index: str, folder_uri: str | None
):
    """The handle a folder's `indexPath` and `remoteIndex` name (shared with the folders
    that name the same), and whether it was just created."""
    local: Path | str = (
        index_path if is_remote(index_path) else resolve_index_path(index_path, folder_uri)
    )

    def one(location: Path | str):
        return RemoteHandle(location) if isinstance(location, str) else IndexHandle(location)

    if remote_index:
        return manager.get(
            f"{local}\n{remote_index}",
            retry_failed=True,
            factory=lambda: CombinedHandle(one(local), RemoteHandle(remote_index)),
        )
    return manager.get(local, retry_failed=True, factory=lambda: one(local))
