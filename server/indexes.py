"""Open indexes, one per path, shared by the folders that use it.

Each index gets one worker thread, and the index is used by one thread at a time: its
turn (a lock) is taken by each job of the worker and by a lookup the event loop makes
itself. A lookup of an editor's suggestion runs on the event loop when the worker is idle
(no thread woken to make it, none to hand its answer back: two wake-ups, a few hundred
microseconds at the median and milliseconds at the tail on a busy machine); a long text,
or one asked while the worker works (making a lookup's parts, following a generation),
goes to the worker. A lookup never runs concurrently with another on the same index.

The index is followed across generations by the engine's `FollowingIndex` (shared with
`recitation-index serve`): at most once a second a lookup checks which generation CURRENT
names; after `build` or `add` published a new one, it is opened (on the worker), used, and
the old one closed — lookups queued behind the switch are answered from the new generation,
none is dropped. A new generation that cannot be opened is an error status.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from index_tools import (
    FollowingIndex,
    IndexOpenError,
    Lease,
    Match,
    SourceRequest,
    SourceView,
    current_generation,
    default_index_path,
    printable,
    source_view,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

LOADING = "loading"
READY = "ready"
NO_INDEX = "no-index"
ERROR = "error"


class LookupFailed(Exception):
    """A lookup an index could not answer: the text was not checked (never "nothing
    found"). `retry`: the index (a service) is unreachable for now, and the text is to be
    checked again when it answers; `found`: what the other index of a pair found."""

    def __init__(self, reason: str, retry: bool, found: list[Match] | None = None):
        super().__init__(reason)
        self.reason, self.retry, self.found = reason, retry, found


class Found(list):
    """A lookup's matches whose parts (and the kinds and sources of the parts inside
    primary spans) are made after its diagnostic
    (`find_matches(defer_parts=True)`), and the lease of the generation they are read
    from, held until `IndexHandle.settle` has made them: no generation switch closes it
    under them."""

    def __init__(self, matches: list[Match], lease: Lease):
        super().__init__(matches)
        self.lease = lease

    def settle(self, enough: Callable[[], bool] = lambda: False) -> bool:
        """Make the parts left for later in order, at least one, until `enough()` says
        to stop (a lookup waits for the thread); once all are made, let the generation
        go. Whether all are."""
        try:
            for made, step in enumerate(self._steps()):
                if made and enough():
                    return False
                step()
        except BaseException:
            self.lease.release()
            raise
        self.lease.release()
        return True

    def _steps(self) -> Iterator[Callable[[], None]]:
        """What is left to make, in order, one step each: a region's parts (searched and
        counted), then each part's kind and sources (a match's parts read once made)."""
        for m in self:
            if not m.parts_made:
                yield m.settle_parts
            for p in m.parts:
                if not p.settled:
                    yield p.settle


def _let_go(lookup: concurrent.futures.Future) -> None:
    """A deferred lookup's answer that nobody waits for any more: its generation let go
    (its parts never read)."""
    if not lookup.cancelled() and lookup.exception() is None:
        found = lookup.result()
        if isinstance(found, Found):
            found.lease.release()


class Waiting:
    """How many lookups wait for a worker thread: asked, not begun (nor cancelled)."""

    def __init__(self) -> None:
        self._count = 0
        self._lock = threading.Lock()

    def add(self, lookup: concurrent.futures.Future) -> None:
        with self._lock:
            self._count += 1
        lookup.add_done_callback(self._cancelled)

    def begun(self) -> None:
        with self._lock:
            self._count -= 1

    def _cancelled(self, lookup: concurrent.futures.Future) -> None:
        if lookup.cancelled():  # (never begun)
            self.begun()

    def any(self) -> bool:
        return self._count > 0


POLL_SECONDS = 1.0  # how often a lookup checks for a newly published generation
# a lookup of a text this long at most (suggestion and context, characters) runs on the event
# loop when the index's worker is idle: a suggestion's lookup takes milliseconds; a whole
# file's goes to the worker, the loop serving messages meanwhile
INLINE_CHARS = 40_000
# source views ("Compare with source") of every local index, beside their lookup threads
_VIEWS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recitation-source")


def usable_path(path: Path) -> bool:
    """Whether `path` can name a file here: no NUL byte, not too long for the system."""
    try:
        os.stat(path)
    except ValueError:
        return False
    except OSError as exc:
        return exc.errno != errno.ENAMETOOLONG
    return True


def uri_to_path(uri: str) -> Path | None:
    """The path of a `file:` URI; None for other schemes and for a path no file can have
    here (a `%00`, too long)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = Path(unquote(parsed.path))
    return path if usable_path(path) else None


def unusable_file_uri(uri: Any) -> bool:
    return isinstance(uri, str) and uri.startswith("file:") and uri_to_path(uri) is None


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


class Turns(ThreadPoolExecutor):
    """One worker thread whose jobs each take `turn`, the lock of the index's use, which a
    lookup made on the event loop takes too (`IndexHandle.match`): the index is never used
    by two threads at once."""

    def __init__(self, thread_name: str):
        super().__init__(max_workers=1, thread_name_prefix=thread_name)
        self.turn = threading.Lock()

    def submit(self, fn, /, *args, **kwargs):
        def in_turn():
            with self.turn:
                return fn(*args, **kwargs)

        return super().submit(in_turn)


class WorkerHandle:
    """What every index handle has: a state the status reports, one worker thread for its
    lookups, and a callback for changes of state."""

    def __init__(self, path: Any, thread_name: str):
        self.path = path
        self.state = LOADING
        self.message = ""
        self.summary: dict[str, Any] | None = None
        self._closed = False
        self._executor = Turns(thread_name)
        self._opened: asyncio.Future | None = None
        # called (from the worker thread) after the handle switched generation or state
        self.on_change = None

    @property
    def ready(self) -> bool:
        return self.state == READY

    async def follow_now(self) -> None:
        """Use a generation published just now (nothing to do but for a local index)."""

    async def settle(self, found: list[Match]) -> None:
        """Make what a lookup left for later (nothing but for a local index's `Found`)."""

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:
                log.exception("index change callback")


class IndexHandle(WorkerHandle):
    def __init__(self, path: Path):
        super().__init__(path, "recitation-index")
        self._following: FollowingIndex | None = None
        self._generation: str | None = None
        self._checked_at = time.monotonic()
        self._stop = threading.Event()  # set when the handle closes: mapping ahead ends
        self._waiting = Waiting()  # lookups the worker is to run (the parts made yield)

    def open(self) -> asyncio.Future:
        """Start opening (once); the future completes when the state is known, and the
        event loop's thread is then made ready for lookups (`_warm_loop`)."""
        if self._opened is None:
            loop = asyncio.get_running_loop()
            self._opened = loop.run_in_executor(self._executor, self._open)
            self._opened.add_done_callback(lambda _: self._warm_loop())
        return self._opened

    def _warm_loop(self) -> None:
        """On the event loop, once the index is open: the loop's scratch arrays made in
        its turn, when the worker is idle (else its first lookup makes them, as the kernel
        makes any thread's)."""
        turn = self._executor.turn
        if self.ready and turn.acquire(blocking=False):
            try:
                self._with_lease(lambda lease: lease.index.warm_thread(), follow=False)
            except Exception:  # (the lookups go on: their arrays made as they need them)
                log.exception("index %s: the event loop's lookup arrays", self.path)
            finally:
                turn.release()

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
        try:
            exists = self.path.exists()
        except OSError as exc:  # too long a path, and the like: said, not raised
            self.state = ERROR
            self.message = (
                f"Cannot use the index path {printable(str(self.path), 200)} "
                f"({len(str(self.path))} characters): {exc.strerror or exc}"
            )
            return
        if not exists:
            self.state = NO_INDEX
            self.message = (
                f"No index at {self.path}. Build one with `recitation-index build --default` "
                "or set recitation.indexPath."
            )
            return
        try:
            following = FollowingIndex(
                self.path, POLL_SECONDS, on_switch=self._switched, on_error=self._broken
            )
        except IndexOpenError as exc:
            self.state, self.message = ERROR, f"Cannot open the index at {self.path}: {exc}"
            return
        except Exception as exc:  # a damaged index must not take the server down
            log.exception("opening index %s", self.path)
            self.state = ERROR
            self.message = f"Cannot open the index at {self.path}: {type(exc).__name__}: {exc}"
            return
        self._following = following
        self._describe(following.generation)
        self._map_ahead(following)

    def _describe(self, generation: str) -> None:
        assert self._following is not None
        summary = dict(self._following.summary())
        self.summary, self._generation = summary, generation
        name = summary.get("name") or self.path.name
        files = summary.get("files")
        self.state = READY
        self.message = f"Index {name}" + (f": {files} files" if files is not None else "")

    def _switched(self, generation: str) -> None:
        """A newly published generation is in use (on the worker thread)."""
        log.info("index %s: now %s", self.path, generation)
        self._describe(generation)
        if self._following is not None:
            self._map_ahead(self._following)
        self._changed()

    def _map_ahead(self, following: FollowingIndex) -> None:
        """Fill the page tables of the generation's files in memory in the background
        (store/map_ahead.py: the first lookups then take no page fault a page), then
        rehearse a lookup on the worker thread (`Index.warm`: the first suggestion's lookup
        costs what later ones do); said once in the log. It stops when the handle closes."""

        def report(index, done) -> None:
            log.log(done.level, "index %s (%s): %s", self.path, index.generation, done.describe())

        following.map_ahead(self._stop, report, lookups=self._executor)

    def _broken(self, exc: IndexOpenError) -> None:
        """A newly published generation cannot be opened: an error status, not the old
        corpus shown as if it were current (on the worker thread)."""
        self._fail(ERROR, f"Cannot open the index at {self.path}: {exc}")

    async def match(
        self,
        suggestion: str,
        context: str,
        min_tokens: int,
        language: str = "",
        defer_parts: bool = False,
    ) -> list[Match]:
        """The engine's matches, computed in the index's turn: here on the event loop when
        the worker is idle and the text short, else on the worker. With the
        document's language id, copies with renamed identifiers are found too. With
        `defer_parts`, the regions' parts (and the kinds and sources of those inside
        primary spans) are made when first read, the answer
        (a `Found`) holding its generation until `settle`."""
        await self.wait()
        if not self.ready:
            return []
        turn = self._executor.turn
        try:
            if len(suggestion) + len(context) <= INLINE_CHARS and turn.acquire(blocking=False):
                try:  # (the worker idle: made here, no thread woken, unless a newer
                    # generation is to be opened first: that on the worker, as before)
                    following = self._following
                    if self._closed:
                        return []  # the handle was retired (settings changed): nothing to say
                    if following is not None and not following.newer_due():
                        args = suggestion, context, min_tokens, language, defer_parts
                        return self._lookup(*args, follow=False)
                finally:
                    turn.release()
            lookup = self._executor.submit(
                self._match, suggestion, context, min_tokens, language, defer_parts
            )
            self._waiting.add(lookup)
            try:
                return await asyncio.wrap_future(lookup)
            except asyncio.CancelledError:  # (its answer, come later, lets its lease go)
                lookup.add_done_callback(_let_go)
                raise
        except RuntimeError as exc:
            if self._closed and not isinstance(exc, RecursionError):
                return []  # the handle was retired (settings changed): nothing to say
            raise LookupFailed(
                f"The lookup failed: {type(exc).__name__}: {printable(exc, 200)}", retry=False
            ) from None

    def _match(
        self, suggestion: str, context: str, min_tokens: int, language: str, defer_parts: bool
    ) -> list[Match]:
        self._waiting.begun()
        return self._lookup(suggestion, context, min_tokens, language, defer_parts)

    def _lookup(
        self,
        suggestion: str,
        context: str,
        min_tokens: int,
        language: str,
        defer_parts: bool,
        follow: bool = True,
    ) -> list[Match]:
        """A lookup in the index's turn (on its worker; on the event loop, not to `follow`
        a newer generation: its opening is the worker's)."""

        def lookup(lease: Lease) -> list[Match]:
            found = lease.index.match(
                suggestion, context=context, min_tokens=min_tokens, language=language or None,
                defer_parts=defer_parts,
            )  # fmt: skip
            if any(not m.settled for m in found):
                return Found(found, lease.keep())  # (the generation held until settled)
            return list(found)

        found = self._with_lease(lookup, follow)
        if found is None and self.state == ERROR:  # damage met by this very lookup
            raise LookupFailed(self.message, retry=False)
        return found if found is not None else []

    async def settle(self, found: list[Match]) -> None:
        """Make the parts a deferred lookup left for later (`Found`) on the worker thread
        (inline once the handle is retired), then let its generation go: a few at a
        time, so that a lookup asked meanwhile waits for a part, not for all of them.
        Damage found meanwhile is the index's error status, as a lookup's is; the parts
        then say it when read (never an empty list)."""
        if not isinstance(found, Found):
            return
        loop = asyncio.get_running_loop()
        done = False
        while not done:
            try:
                job = self._executor.submit(self._settle, found)
            except RuntimeError:  # retired: its executor takes no more work
                self._settle(found, lambda: False)
                return
            try:
                done = await asyncio.wrap_future(job, loop=loop)
            except asyncio.CancelledError:  # (the job, once run, lets the generation go)
                job.add_done_callback(lambda _: found.lease.release())
                raise

    def _settle(self, found: Found, enough: Callable[[], bool] | None = None) -> bool:
        """Some of `found`'s parts made (all inline); whether all are (or failed)."""
        try:
            return found.settle(enough or self._waiting.any)
        except IndexOpenError as exc:
            log.warning("index %s: a lookup's parts: %s", self.path, exc)
            if self._following is not None and not self._closed:
                self._fail(ERROR, f"Cannot use the index at {self.path}: {exc}")
            return True

    @property
    def generation(self) -> str | None:
        """The generation lookups use now (None without an index)."""
        return self._generation if self.ready else None

    async def source_view(self, request: SourceRequest) -> SourceView | None:
        """A source's lines beside a quote, from the current generation (None without an
        index). Not on the lookup thread: a generation's first view reads every document's
        origins (seconds in an index of millions of files), and warnings keep coming."""
        await self.wait()
        following = self._following
        if not self.ready or following is None:
            return None

        def view() -> SourceView | None:
            try:
                with following.using() as index:
                    return source_view(index, request)
            except IndexOpenError as exc:
                log.warning("index %s: source view: %s", self.path, exc)
                return None

        return await asyncio.get_running_loop().run_in_executor(_VIEWS, view)

    def _with_index(self, work: Callable[..., T], *args: Any) -> T | None:
        """On the worker thread: `work(index, *args)` on the current generation (switching
        to a newly published one first: FollowingIndex), None without an index."""
        return self._with_lease(lambda lease: work(lease.index, *args))

    def _with_lease(self, work: Callable[[Lease], T], follow: bool = True) -> T | None:
        """`_with_index`, the work given the generation's lease (which it can `keep`);
        not to `follow`: on the generation in use (no newer one opened)."""
        if follow:
            self._follow()
        following = self._following
        if following is None:
            return None
        try:
            with following.lease(follow) as lease:
                return work(lease)
        except IndexOpenError as exc:  # damage found while reading: a status, not a crash
            if self._following is following:  # (not already failed by `_broken`)
                self._fail(ERROR, f"Cannot use the index at {self.path}: {exc}")
            return None

    async def run(self, work: Callable[..., T], *args: Any) -> T | None:
        """`work(index, *args)` on the index's worker thread (after following a newly
        published generation), for callers that batch several lookups; None without an
        index."""
        await self.wait()
        if not self.ready:
            return None
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._with_index, work, *args)
        except RuntimeError:  # retired meanwhile
            return None

    async def poll(self) -> None:
        """Look for a newly published generation now (a missing index that was built)."""
        if self._closed or self._opened is None or not self._opened.done():
            return
        loop = asyncio.get_running_loop()
        with contextlib.suppress(RuntimeError):  # retired meanwhile
            await loop.run_in_executor(self._executor, self._follow)

    async def follow_now(self) -> None:
        """Use a generation published just now (an update of a workspace's index) without
        waiting for the next lookup: once a poll interval has passed, a lease on the worker
        thread reads CURRENT and switches (a status follows: `on_change`)."""
        if self._closed or self._opened is None:
            return
        await asyncio.sleep(POLL_SECONDS + 0.05)
        loop = asyncio.get_running_loop()
        with contextlib.suppress(RuntimeError):  # retired meanwhile
            await loop.run_in_executor(self._executor, self._with_index, lambda index: None)

    def _follow(self) -> None:
        """On the worker thread, while no index is open (missing, broken): open the one a
        build has published since, if any."""
        now = time.monotonic()
        if self._following is not None or self._closed or now - self._checked_at < POLL_SECONDS:
            return
        self._checked_at = now
        try:
            current = current_generation(self.path)
        except OSError:
            return
        if current is None or current == self._generation:
            return
        old_state, old_message = self.state, self.message
        self._open()
        if (self.state, self.message) != (old_state, old_message) or self.ready:
            log.info("index %s: now %s (%s)", self.path, current, self.state)
            self._changed()

    def _fail(self, state: str, message: str) -> None:
        following, self._following = self._following, None
        if following is not None:
            following.close()
        self.state, self.message, self.summary = state, message, None
        self._changed()

    def close(self) -> None:
        """Retire the handle: lookups already queued are still answered (from this index),
        then it is closed; later lookups find nothing."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        with contextlib.suppress(RuntimeError):
            self._executor.submit(self._retire)
        self._executor.shutdown(wait=False)

    def _retire(self) -> None:
        following, self._following = self._following, None
        if following is not None:
            following.close()


class IndexManager:
    def __init__(self) -> None:
        self._handles: dict[str, IndexHandle] = {}

    def get(self, path: Path | str, retry_failed: bool = False, factory=None):
        """The handle for `path`, and whether it was just created. With `retry_failed`, an
        index that was missing or could not be opened is tried again. `factory()` makes
        the handle when it is not an `IndexHandle(path)` (index services)."""
        key = str(path)
        handle = self._handles.get(key)
        if handle is not None and not (retry_failed and handle.state in (NO_INDEX, ERROR)):
            return handle, False
        if handle is not None:
            handle.close()
        handle = self._handles[key] = factory() if factory else IndexHandle(Path(path))
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
