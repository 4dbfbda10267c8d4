"""`check`'s files read in windows and matched, on every core, in order.

The parent reads the files (in the order `collect_files` gave them), finds each one's
decisions and cuts it in windows (`read_windows`): a stream of events. Only the matching of a
window is done elsewhere: batches of windows go to worker processes (`ordered_map`), each of
which opened the index once (a local index mapped anew, a served one with a client of its
own); their matches come back in the windows' order and meet the events they belong to
again, so that everything else — judging, baselines, the files not checked, the report — is
done by the parent in the order one process would. A large file is several windows, matched
on several cores.

What one process would raise, this raises at the same place: a decisions file that cannot be
read (before its file is read), a lookup's error (at its window). A worker that dies is an
error (`WorkerDied`), never a file left out; Ctrl-C ends the workers at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..build.sources.languages import language_for_path
from ..build.workers import ordered_map
from ..judge.decisions import Decisions, DecisionsError
from ..model import Match
from ..store.generations import IndexOpenError
from .code_files import NotText, Window, kept_matches, read_windows
from .scan import DecisionsFinder, display_path

BATCH_CHARS = 1 << 16  # windows sent to a worker at once, about this much text (or one)
AHEAD = 4  # batches in flight per worker, besides the one it works on


def cores() -> int:
    """The processors this process may run on."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13
    if counted is not None:
        return counted() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


# by default a worker is started for each this much code to read, up to one a core: a few
# files (a pre-commit hook's) are read at once, without starting processes
BYTES_PER_JOB = 512 << 10


def check_jobs(asked: int, files: list[Path]) -> int:
    """The processes to match `files` with: `asked` (0: every core, fewer for little code
    to read), never more than the files."""
    if asked:
        return max(1, min(asked, len(files)))
    size = 0
    for f in files:
        with contextlib.suppress(OSError):
            size += os.stat(f).st_size
        if size >= BYTES_PER_JOB * cores():
            break
    return max(1, min(cores(), len(files), size // BYTES_PER_JOB))


@dataclass(frozen=True)
class FileStart:
    """A file about to be read, with the decisions that apply to it."""

    path: Path
    shown: str
    decisions: Decisions | None


@dataclass(frozen=True)
class WindowRead:
    window: Window
    language: str | None


@dataclass(frozen=True)
class FileEnd:
    """The file is read: checked (`why` None) or not, with the reason (what its windows
    before a read error found is reported too)."""

    why: str | None


@dataclass(frozen=True)
class Failed:
    """What one process would have raised here (a decisions file that cannot be read)."""

    error: BaseException


Event = FileStart | WindowRead | FileEnd | Failed


def read_files(
    files: Iterable[Path], finder: DecisionsFinder, language: str | None, sizes: tuple[int, int]
) -> Iterator[Event]:
    """Each file's start, windows and end, in order; reading stops at a decisions file
    that cannot be used."""
    for f in files:
        shown = display_path(f)
        try:
            _, decisions = finder.for_file(f)
        except DecisionsError as e:
            yield Failed(e)
            return
        yield FileStart(f, shown, decisions)
        lang = language or language_for_path(str(f))
        why = None
        try:
            for window in read_windows(f, *sizes):
                yield WindowRead(window, lang)
        except NotText as e:
            why = str(e)
        except OSError as e:
            why = f"cannot read it: {e.strerror or e}"
        yield FileEnd(why)


def window_answer(idx, window: Window, language: str | None, min_tokens: int) -> list[Match]:
    """A window's matches (`kept_matches`), where it is matched."""
    return kept_matches(idx, window, min_tokens=min_tokens, language=language)


def matched(
    events: Iterator[Event],
    idx,
    min_tokens: int,
    jobs: int = 1,
    location: str | os.PathLike | None = None,
    token: str | None = None,
) -> Iterator[tuple[Event, list[Match] | None]]:
    """(event, the window's matches) in order (None for other events), with `jobs`
    worker processes that open the index at `location` (with `token`) themselves; one job,
    or no location: matched here with `idx`."""
    if jobs <= 1 or location is None:
        for event in events:
            if isinstance(event, WindowRead):
                yield event, window_answer(idx, event.window, event.language, min_tokens)
            else:
                yield event, None
        return
    pending: deque[Event] = deque()  # read and not yet given back, in order

    def batches() -> Iterator[list[tuple[Window, str | None]]]:
        batch: list[tuple[Window, str | None]] = []
        size = 0
        for event in events:
            pending.append(event)
            if isinstance(event, WindowRead):
                batch.append((event.window, event.language))
                size += len(event.window.text) + len(event.window.context)
                if size >= BATCH_CHARS:
                    yield batch
                    batch, size = [], 0
        if batch:
            yield batch

    generation = getattr(idx, "generation", None)
    results = ordered_map(
        _match_batch, batches(), jobs, _open_in_worker,
        (str(location), token, generation, min_tokens), chunksize=1, ahead=AHEAD,
    )  # fmt: skip
    try:
        for answers in results:
            for answer in answers:
                while not isinstance(pending[0], WindowRead):
                    yield pending.popleft(), None
                event = pending.popleft()
                if isinstance(answer, BaseException):
                    raise answer
                yield event, answer
        while pending:
            yield pending.popleft(), None
    finally:
        results.close()  # the workers end here, however this ends


# --- in a worker -------------------------------------------------------------------------

_WORKER: dict = {}


def _open_in_worker(
    location: str, token: str | None, generation: str | None, min_tokens: int
) -> None:
    """Open the index once (the parent's generation: answers from one index)."""
    from ..service.remote import open_location

    _WORKER["min_tokens"] = min_tokens
    try:
        idx = open_location(location, token)
        if generation is not None and getattr(idx, "generation", None) != generation:
            raise IndexOpenError(
                f"index at {location} was replaced while check ran; run check again"
            )
        _WORKER["index"] = idx
    except Exception as e:  # said at the first window, where one process would say it
        _WORKER["error"] = e


def _match_batch(batch: list[tuple[Window, str | None]]) -> list[list[Match] | Exception]:
    try:
        return _matched_batch(batch)
    finally:
        _give_back_freed_memory()


def _give_back_freed_memory() -> None:
    """The C heap's freed pages given back to the system after each batch (glibc keeps
    them: a worker's resident memory grew to 0.5-1 GB over numpy's files, most of it
    freed); elsewhere nothing to do."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc; musl has none (it returns memory)
    except (OSError, AttributeError):
        return None


def _matched_batch(batch: list[tuple[Window, str | None]]) -> list[list[Match] | Exception]:
    error = _WORKER.get("error")
    out: list[list[Match] | Exception] = []
    for window, language in batch:
        if error is not None:
            out.append(error)
            continue
        try:
            out.append(window_answer(_WORKER["index"], window, language, _WORKER["min_tokens"]))
        except Exception as e:  # raised by the parent at this window, in order
            out.append(e)
    return out
