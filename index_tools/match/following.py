"""An index path followed across generations, shared by several threads.

`build` and `add` publish a new generation by swapping CURRENT; a long-lived reader (the
index service, a language server) should answer from it without dropping a lookup. Each
lookup leases the open generation (`FollowingIndex.using`); at most once per poll interval
a lease checks CURRENT, and when it names another generation that one is opened (outside
the lock: lookups go on meanwhile) and becomes current. The old one is closed when its
last lease ends, so no lookup ever sees its files unmapped under it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Executor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..store.generations import IndexOpenError, current_name
from ..store.map_ahead import MappedAhead
from .index import Index, open_index

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0


@dataclass
class _Held:
    index: Index
    leases: int = 0
    retired: bool = False


class Lease:
    """A generation held open (`FollowingIndex.lease`) until released, once."""

    def __init__(self, index: Index, release: Callable[[], None]):
        self.index = index
        self._release: Callable[[], None] | None = release
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            release, self._release = self._release, None
        if release is not None:
            release()

    def keep(self) -> Lease:
        """The hold handed to a new lease (this one's `release` then does nothing): work
        that outlives the `with` holding this one."""
        with self._lock:
            release, self._release = self._release, None
        if release is None:
            raise IndexOpenError("a lease already released cannot be kept")
        return Lease(self.index, release)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


class FollowingIndex:
    """The generation CURRENT names, reopened when a newer one is published.

    Raises IndexOpenError when the index cannot be opened at first. A newer generation
    that cannot be opened leaves the current one in use and is tried again at the next
    poll; `on_error(exc)` hears of it (default: a log line). `on_switch(generation)` is
    called after each switch. Both are called on the thread of the lookup that checked."""

    def __init__(
        self,
        path: str | os.PathLike,
        poll_seconds: float = POLL_SECONDS,
        on_switch: Callable[[str], None] | None = None,
        on_error: Callable[[IndexOpenError], None] | None = None,
    ):
        self.path = Path(path)
        self.poll_seconds = poll_seconds
        self.on_switch = on_switch
        self.on_error = on_error
        self._lock = threading.Lock()
        self._held = _Held(open_index(self.path))
        self._checked_at = time.monotonic()
        self._switching = False
        self._closed = False

    @property
    def generation(self) -> str:
        return self._held.index.generation

    def summary(self) -> dict:
        with self.using() as index:
            return index.summary()

    @contextmanager
    def using(self, follow: bool = True) -> Iterator[Index]:
        """Lease the current generation for one lookup (switching first when one is due,
        unless not to `follow`: work in the background that must not open a generation)."""
        with self.lease(follow) as lease:
            yield lease.index

    def lease(self, follow: bool = True) -> Lease:
        """`using`, held until `Lease.release()`: a lookup whose parts are made after its
        answer reads them from the generation it was answered from."""
        if follow and self._switch_due():
            self._switch()
        with self._lock:
            if self._closed:
                raise IndexOpenError(f"index at {self.path} was closed")
            held = self._held
            held.leases += 1
        return Lease(held.index, lambda: self._release(held))

    def map_ahead(
        self,
        stop: threading.Event,
        report: Callable[[Index, MappedAhead], None],
        lookups: Executor | None = None,
        threads: int = 1,
    ) -> threading.Thread | None:
        """Map the current generation ahead (`Index.map_ahead`) on a thread of its own,
        lookups going on meanwhile (it holds a lease, never switches), then rehearse a
        lookup (`Index.warm`) on each of the `threads` threads of the `lookups` executor,
        so that the first lookup asked costs what later ones do; `report(index, what was
        done)` when it all ends (an error: `failed`, `rehearsal_failed`). With
        RECITATION_MAP_AHEAD=0 reported at once as not done, and no thread."""

        def run() -> None:
            try:
                with self.using(follow=False) as index:
                    try:
                        done = index.map_ahead(stop)
                    except Exception as exc:  # lookups work without it: said, not raised
                        done = MappedAhead(why_not=f"it failed: {exc}", failed=True)
                    if lookups is not None and not stop.is_set():
                        self._rehearse(lookups, threads, done)
                    report(index, done)
            except IndexOpenError as exc:  # closed meanwhile
                log.info("index %s: not mapped ahead: %s", self.path, exc)

        if os.environ.get("RECITATION_MAP_AHEAD", "1").strip() == "0":
            with self.using(follow=False) as index:
                report(index, MappedAhead(why_not="RECITATION_MAP_AHEAD=0"))
            return None
        thread = threading.Thread(target=run, name="recitation-map-ahead", daemon=True)
        thread.start()
        return thread

    def _rehearse(self, lookups: Executor, threads: int, done: MappedAhead) -> None:
        """`Index.warm` on the lookup threads (each has its own scratch arrays), each under
        a lease of its own; what it took or why it failed noted in `done`."""

        def rehearse() -> float:
            with self.using(follow=False) as index:
                return index.warm()

        try:
            futures = [lookups.submit(rehearse) for _ in range(max(1, threads))]
        except RuntimeError:  # the executor was shut down: the handle is closing
            return
        for future in futures:
            try:
                done.rehearsed.append(future.result())
            except CancelledError:
                return
            except Exception as exc:  # damage: the lookups will say it (never "nothing")
                done.rehearsal_failed = f"{type(exc).__name__}: {exc}"

    def newer_due(self) -> bool:
        """Whether the next lookup that follows would open a newer generation: CURRENT
        read when a poll is due; naming the one in use, the poll is done (a lookup that
        must not open one asks first, and leaves it to a lookup that may)."""
        now = time.monotonic()
        with self._lock:
            if self._switching or self._closed or now - self._checked_at < self.poll_seconds:
                return False
        try:
            newer = current_name(self.path) not in (None, self.generation)
        except OSError:  # (said by the lookup that follows)
            return True
        if not newer:
            with self._lock:
                self._checked_at = max(self._checked_at, now)
        return newer

    def _switch_due(self) -> bool:
        now = time.monotonic()
        with self._lock:
            if self._switching or self._closed or now - self._checked_at < self.poll_seconds:
                return False
            self._checked_at = now
            self._switching = True
            return True

    def _switch(self) -> None:
        try:
            current = current_name(self.path)
            if current is None or current == self._held.index.generation:
                return
            try:
                fresh = open_index(self.path)
            except IndexOpenError as exc:
                log.warning("index %s: keeping %s: %s", self.path, self.generation, exc)
                if self.on_error is not None:
                    self.on_error(exc)
                return
            with self._lock:
                old, self._held = self._held, _Held(fresh)
                old.retired = True
                idle = old.leases == 0
            if idle:
                old.index.close()
            log.info("index %s: now serving %s", self.path, fresh.generation)
            if self.on_switch is not None:
                self.on_switch(fresh.generation)
        finally:
            with self._lock:
                self._switching = False

    def _release(self, held: _Held) -> None:
        with self._lock:
            held.leases -= 1
            idle = held.retired and held.leases == 0
        if idle:
            held.index.close()

    def close(self) -> None:
        """Close once the lookups under way are done."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            held = self._held
            held.retired = True
            idle = held.leases == 0
        if idle:
            held.index.close()

    def __enter__(self) -> FollowingIndex:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
