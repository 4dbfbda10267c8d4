"""Which edits get checked, and the per-document queue that checks them.

An edit that inserts at least `minInsertWords` words at once (an accepted suggestion, a
completion item, a paste) is checked together with the words before it. Per document, the
first insertion is looked up at once; insertions arriving while a lookup runs are collected
and looked up together once the document has been quiet for `DEBOUNCE_SECONDS`. Pending
spans follow later edits, so what is looked up is always the current text.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .documents import Edit, TextDocument, map_span
from .words import count_words

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.05
MAX_DEFERRED = 32  # spans kept per document while no index is ready; more: the whole text


@dataclass
class PendingCheck:
    start: int  # document offsets of the text to check, kept current as edits arrive
    end: int
    whole: bool = False  # a whole-document scan replaces the document's matches
    # checked again on another index (or generation): replaces the matches inside the span
    replace: bool = False
    disk: bool = False  # code written to the file outside the editor (file_watch.py)
    created: float = field(default_factory=time.perf_counter)  # for latency logging


def is_insertion(edit: Edit, min_words: int) -> bool:
    inserted = edit.inserted
    # each word takes at least one character: typing never needs the tokenizer
    if len(inserted) < min_words or not inserted.strip():
        return False
    # a huge paste: its beginning usually settles it
    head = inserted[: min_words * 64]
    if count_words(head) >= min_words:
        return True
    return len(head) < len(inserted) and count_words(inserted) >= min_words


def merge_checks(checks: list[PendingCheck]) -> list[PendingCheck]:
    """Overlapping or adjacent spans become one; a whole-document scan absorbs the rest."""
    wholes = [c for c in checks if c.whole]
    if wholes:
        return [wholes[-1]]
    out: list[PendingCheck] = []
    for c in sorted(checks, key=lambda c: (c.start, c.end)):
        if out and c.start <= out[-1].end:
            out[-1].end = max(out[-1].end, c.end)
            out[-1].replace = out[-1].replace or c.replace
            out[-1].disk = out[-1].disk or c.disk
        else:
            out.append(
                PendingCheck(c.start, c.end, replace=c.replace, disk=c.disk, created=c.created)
            )
    return out


# looks up one pending span of a document and publishes what it finds (the server's)
RunCheck = Callable[[str, PendingCheck], Awaitable[object]]


class Checker:
    def __init__(self, run_check: RunCheck):
        self._run_check = run_check
        self._pending: dict[str, list[PendingCheck]] = {}
        self._batch: dict[str, list[PendingCheck]] = {}  # taken from pending, not yet looked up
        self._tasks: dict[str, asyncio.Task] = {}
        self._last_added: dict[str, float] = {}
        # insertions that arrived while no index was ready, checked once one is
        self._deferred: dict[str, list[PendingCheck]] = {}
        self.active_at = 0.0  # (event loop time) when a check was last asked for or ended

    def on_edit(self, doc: TextDocument, edit: Edit) -> None:
        """Keep pending spans on the text they cover."""
        for check in [
            *self._pending.get(doc.uri, ()),
            *self._batch.get(doc.uri, ()),
            *self._deferred.get(doc.uri, ()),
        ]:
            if check.whole:
                check.end = len(doc.text)
                continue
            check.start, check.end, _ = map_span(check.start, check.end, edit)

    def add(self, uri: str, check: PendingCheck) -> None:
        self._pending.setdefault(uri, []).append(check)
        self._last_added[uri] = self.active_at = asyncio.get_running_loop().time()
        if uri not in self._tasks:
            self._tasks[uri] = asyncio.ensure_future(self._run(uri))

    def defer(self, uri: str, check: PendingCheck) -> None:
        """Keep a check until an index is ready (bounded: past MAX_DEFERRED spans the
        document is checked whole)."""
        kept = merge_checks([*self._deferred.get(uri, ()), check])
        if len(kept) > MAX_DEFERRED:
            kept = [PendingCheck(0, 0, whole=True)]
        self._deferred[uri] = kept

    def forget_deferred(self, uri: str) -> None:
        """A whole check of the document succeeded: what was kept of it is checked."""
        self._deferred.pop(uri, None)

    def deferred(self, uri: str) -> list[PendingCheck]:
        return list(self._deferred.get(uri, ()))

    def resume(self, uris: list[str]) -> int:
        """Check what was kept for these documents; returns how many spans."""
        n = 0
        for uri in uris:
            for check in self._deferred.pop(uri, ()):
                self.add(uri, check)
                n += 1
        return n

    def busy(self) -> bool:
        """Whether the editor's own checks are queued or running."""
        return bool(self._tasks)

    async def quiet(self, seconds: float, at_most: float = float("inf")) -> None:
        """Once no check has been asked for, run or ended for `seconds` (or `at_most`
        seconds from now, whatever the checks do: a check waiting for an index to open)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + at_most
        while loop.time() < until:
            wait = self.active_at + seconds - loop.time()
            if wait <= 0 and not self.busy():
                return
            await asyncio.sleep(min(max(wait, seconds), max(until - loop.time(), 0)))

    def cancel(self, uri: str) -> None:
        self._deferred.pop(uri, None)
        self._pending.pop(uri, None)
        self._batch.pop(uri, None)
        self._last_added.pop(uri, None)
        task = self._tasks.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _quiet(self, uri: str) -> None:
        loop = asyncio.get_running_loop()
        while True:
            wait = self._last_added.get(uri, 0.0) + DEBOUNCE_SECONDS - loop.time()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def _run(self, uri: str) -> None:
        try:
            first = True
            while self._pending.get(uri):
                if not first:
                    await self._quiet(uri)
                first = False
                batch = self._batch[uri] = merge_checks(self._pending.pop(uri, []))
                while batch:
                    # the check stays in the batch (so edits keep moving its span) until
                    # run_check has read its text
                    check = batch[0]
                    try:
                        await self._run_check(uri, check)
                    except asyncio.CancelledError:
                        raise
                    except Exception:
                        log.exception("checking %s", uri)
                    finally:
                        self.active_at = asyncio.get_running_loop().time()
                        if batch and batch[0] is check:
                            batch.pop(0)
        finally:
            if self._tasks.get(uri) is asyncio.current_task():
                del self._tasks[uri]
                self._batch.pop(uri, None)
