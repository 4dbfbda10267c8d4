"""Code written outside the editor: each workspace folder's code files are watched, and what
changes on disk while the server runs is checked (`watchFiles`, on by default, per folder).

- Which files: code files by name (`language_for_path`); in a git work tree those git tracks
  or would track (`git ls-files --cached --others --exclude-standard` at start, `git
  check-ignore` for a file that appears later); never inside dependencies, virtual
  environments, build outputs or hidden folders (`NOT_CODE_DIRS`), nor a file over
  MAX_FILE_BYTES or binary.
- What is known of a file: the hashes of its lines as the server last read them (read at
  start in the background, a bounded number at a time). A new file is checked whole; a
  file that changed only where its lines differ from what was known, each run of changed
  lines with the text before it as context (as an insertion in the editor), never its old
  lines again. A file open in the editor is left to the editor's own checks.
- Changes come from the client's file watcher (`workspace/didChangeWatchedFiles`, registered
  as `recitation-files` where the client allows it); else from polling the files' and their
  folders' times, at most POLL_STATS of them a second.
- No floods: a batch of changes (gathered until quiet for QUIET_SECONDS, at most
  BATCH_SECONDS; or what one poll found) of FLOOD_FILES files or more, or one while git
  itself writes the work tree (a checkout, pull, merge, rebase, reset or stash: HEAD's log
  moving by anything but a commit, `.git/HEAD` or the stash moving, a rebase, merge,
  cherry-pick or revert under way; a batch waits while git holds its index lock), takes the
  new contents as known without checking them; they are read in the background.
- Results: the file's diagnostics even when it is not open (its text kept as a document
  the editor has not opened, while it shows warnings), `recitation/match` with
  `outsideEditor`; opened, it is the same document, its warnings with it.
- Bounded: one file's checks at a time, each lookup only once the editor's own checks are
  done, so that they never wait behind this.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import logging
import os
import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from lsprotocol import types

from index_tools import (
    CODE_EXTENSIONS,
    CODE_FILENAMES,
    NotText,
    language_for_path,
    open_code,
    printable,
    sniff_encoding,
)

from .detection import PendingCheck
from .documents import TextDocument
from .indexes import uri_to_path
from .words import count_words
from .workspace_plan import NOT_MANIFEST_DIRS

log = logging.getLogger(__name__)

STARTING, ON = "starting", "on"
CLIENT, POLLING = "client", "polling"

MAX_FILE_BYTES = 1_000_000  # larger files are left alone (as the index's sources leave them)
SAMPLE_BYTES = 64 << 10  # what tells a file's encoding, and whether it is text
FLOOD_FILES = 100  # files changed in one batch: taken as known, not checked
QUIET_SECONDS = 0.1  # the client's reports are gathered until quiet this long
BATCH_SECONDS = 0.3  # ... or at most this long
TICK_SECONDS = 1.0  # git's state (and without the client's watcher, files) looked at this often
POLL_STATS = 5000  # files and folders looked at a tick: a larger folder is swept over several
SETTLE_NS = 200_000_000  # a file written less than this ago is looked at again next tick
GIT_GRACE_SECONDS = 10.0  # after git wrote the work tree, changes are compared with its index
GIT_WAIT_SECONDS = 10.0  # how long a batch waits for git's index lock to go
READ_FILES = 200  # files read a step when taking contents as known (at start, after a flood)
READ_PAUSE = 0.02  # between those steps
# text read at start, all folders together (the rest is read when it changes)
MAX_KNOWN_BYTES = 256 << 20
YIELD_SECONDS = 0.02  # a lookup waits this long at a time for the editor's checks to end
STATUS_SECONDS = 1.0  # the folder's status after checks, at most this often
NEW_DIR_ENTRIES = 20_000  # a new folder's entries looked at, at most (more: a flood anyway)

# folders whose files are never the workspace's own code: dependencies, virtual
# environments, build outputs (and every hidden folder)
NOT_CODE_DIRS = NOT_MANIFEST_DIRS | {".venv", "node_modules"}
# git writes the work tree while these are there
GIT_BUSY_MARKERS = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD")

Stamp = tuple[int, int, int]


def code_globs() -> list[str]:
    """The client's file watchers for code files."""
    extensions = ",".join(sorted(CODE_EXTENSIONS))
    names = ",".join(sorted(CODE_FILENAMES))
    return [f"**/*.{{{extensions}}}", f"**/{{{names}}}"]


def stamp_of(st: os.stat_result) -> Stamp:
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def stamp(path: str) -> Stamp | None:
    try:
        return stamp_of(os.stat(path))
    except OSError:
        return None


def outside_code(rel_parts: tuple[str, ...]) -> bool:
    """A path (its parts relative to the folder) inside a folder that is not the
    workspace's own code."""
    return any(p.startswith(".") or p in NOT_CODE_DIRS for p in rel_parts[:-1])


@dataclass
class Read:
    """A code file as read: its text, or why not (`gone`, `large`, `binary`, an error)."""

    text: str | None
    stamp: Stamp | None
    why: str = ""


def read_code(path: str) -> Read:
    """A code file's text, decoded as `check` decodes it (a byte order mark, UTF-16/32 by
    where the NUL bytes are, else UTF-8); never a file over MAX_FILE_BYTES, a binary file
    or anything but a regular file."""
    try:
        fd = open_code(path)
    except FileNotFoundError:
        return Read(None, None, "gone")
    except OSError as exc:
        return Read(None, None, exc.strerror or str(exc))
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if st.st_size > MAX_FILE_BYTES:
            return Read(None, stamp_of(st), "large")
        data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        return Read(None, stamp_of(st), "large")
    try:
        encoding, bom = sniff_encoding(data[:SAMPLE_BYTES])
    except NotText:
        return Read(None, stamp_of(st), "binary")
    return Read(data[bom:].decode(encoding, "replace").replace("\0", " "), stamp_of(st))


def line_pieces(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def line_hashes(pieces: list[str]) -> array:
    """What is kept of a file's text: a hash of each line, its line break left out (a last
    line that gains a break is the same line)."""
    return array("q", [hash(p.rstrip("\r\n")) for p in pieces])


def changed_runs(old: array | list[int], new: array | list[int]) -> list[tuple[int, int, int, int]]:
    """(i1, i2, j1, j2) of each run of lines that differ: old lines [i1, i2) became new
    lines [j1, j2)."""
    n, m = len(old), len(new)
    head = 0
    while head < n and head < m and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < n - head and tail < m - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    if head + tail == n and head + tail == m:
        return []
    if head + tail in (n, m):  # lines only added, or only removed
        return [(head, n - tail, head, m - tail)]
    matcher = difflib.SequenceMatcher(None, list(old[head : n - tail]), list(new[head : m - tail]))
    return [
        (head + i1, head + i2, head + j1, head + j2)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def words_span(text: str, start: int, end: int) -> tuple[int, int]:
    """`[start, end)` without the whitespace at its edges (a warning starts at a word)."""
    part = text[start:end]
    lead = len(part) - len(part.lstrip())
    return start + lead, max(start + lead, start + len(part.rstrip()))


def offsets(pieces: list[str]) -> list[int]:
    """Where each line starts, and the end."""
    out = [0]
    for p in pieces:
        out.append(out[-1] + len(p))
    return out


@dataclass
class Known:
    """What the server knows of a file: its stamp and its lines' hashes (None: its content
    is taken as known, not read yet)."""

    stamp: Stamp | None
    lines: array | None = None


@dataclass
class GitState:
    """What tells git writing the work tree: its HEAD, HEAD's log, the stash, the markers of
    an operation under way."""

    git_dir: Path
    common_dir: Path
    head: bytes = b""
    log_size: int = 0
    stash: tuple[Stamp | None, Stamp | None] = (None, None)
    wrote_until: float = 0.0  # changes until then are git's
    why: str = ""

    def __post_init__(self) -> None:
        self.head, self.log_size, self.stash = self._head(), self._log_size(), self._stash()

    def _head(self) -> bytes:
        with contextlib.suppress(OSError):
            return (self.git_dir / "HEAD").read_bytes()[:4096]
        return b""

    def _log_size(self) -> int:
        try:
            return os.stat(self.git_dir / "logs" / "HEAD").st_size
        except OSError:
            return 0

    def _stash(self) -> tuple[Stamp | None, Stamp | None]:
        return (
            stamp(str(self.common_dir / "refs" / "stash")),
            stamp(str(self.common_dir / "logs" / "refs" / "stash")),
        )

    def locked(self) -> bool:
        """Git holds the index's lock: it may be writing the work tree."""
        return (self.git_dir / "index.lock").exists()

    def look(self) -> None:
        """Note whether git wrote the work tree since the last look."""
        why = ""
        busy = [m for m in GIT_BUSY_MARKERS if (self.git_dir / m).exists()]
        if busy:
            why = f"git is in the middle of an operation ({busy[0]})"
        head, size, stash = self._head(), self._log_size(), self._stash()
        if size != self.log_size:
            entries = self._log_since(self.log_size, size)
            done = [e for e in entries if not e.startswith("commit")]
            if done or size < self.log_size:
                why = f"git {printable(done[-1], 120)}" if done else "git rewrote HEAD's log"
        if not why and head != self.head:
            why = "the repository's HEAD moved"
        if not why and stash != self.stash:
            why = "git stash"
        self.head, self.log_size, self.stash = head, size, stash
        if why:
            self.wrote_until = time.monotonic() + GIT_GRACE_SECONDS
            self.why = why

    def _log_since(self, start: int, end: int) -> list[str]:
        """The messages of HEAD's log entries between two sizes of the file."""
        if end <= start:
            return []
        try:
            with open(self.git_dir / "logs" / "HEAD", "rb") as f:
                f.seek(max(start, end - (64 << 10)))
                data = f.read(end - start)
        except OSError:
            return ["(unreadable log)"]
        out = []
        for line in data.decode("utf-8", "replace").splitlines():
            _, tab, message = line.partition("\t")
            if tab:
                out.append(message.strip())
        return out

    def wrote(self) -> str:
        """Why changes now are git's ("" when they are not)."""
        return self.why if time.monotonic() <= self.wrote_until else ""


@dataclass
class FolderWatch:
    """One workspace folder's code files."""

    uri: str
    path: Path
    known: dict[str, Known] = field(default_factory=dict)
    dirs: dict[str, Stamp | None] = field(default_factory=dict)  # folders polled for new files
    left_alone: set[str] = field(default_factory=set)  # too large, binary, ignored
    git: GitState | None = None
    state: str = STARTING
    pending: dict[str, None] = field(default_factory=dict)  # reported, not yet batched
    first_report: float = 0.0
    timer: asyncio.Handle | None = None
    waiting_for_git: float = 0.0  # since when a batch waits for git's index lock
    unread: deque[str] = field(default_factory=deque)  # taken as known, to read
    starting: asyncio.Task | None = None
    sweep: list[str] = field(default_factory=list)  # what the polling looks at next
    sweep_at: int = 0
    full_sweep: bool = False  # git wrote the work tree: look at every file next tick
    checked: int = 0  # files checked
    lookups: int = 0
    taken_as_known: int = 0  # files changed in floods, not checked
    last_flood: dict | None = None
    status_sent: float = 0.0
    status_timer: asyncio.TimerHandle | None = None

    def uri_for(self, path: str) -> str:
        """A file's URI as an editor spells it (the folder's URI, then the path relative to
        it with everything but letters, digits, `-._~` and `/` percent-encoded)."""
        rel = os.path.relpath(path, self.path).replace(os.sep, "/")
        return self.uri.rstrip("/") + "/" + quote(rel, safe="/")

    def rel_parts(self, path: str) -> tuple[str, ...] | None:
        try:
            return Path(path).relative_to(self.path).parts
        except ValueError:
            return None


class FileWatch:
    """Every folder's code files, for one server (`server`: the `RecitationServer`: its
    documents, matches, checker, `run_check`, `publish` and `send_status`)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.folders: dict[str, FolderWatch] = {}
        self.client_watches = False  # the client reports changes of code files
        self._queue: dict[tuple[str, str], None] = {}  # (folder key, path) to check, in order
        self._worker: asyncio.Task | None = None
        self._reader: asyncio.Task | None = None
        self._ticker: asyncio.Task | None = None
        self._known_bytes = 0

    # -- which folders ----------------------------------------------------------------------

    @staticmethod
    def key(uri: str) -> str:
        return uri.rstrip("/")

    def applies(self, scope: Any) -> bool:
        return (
            bool(scope.uri)
            and scope.settings.enable
            and scope.settings.watch_files
            and uri_to_path(scope.uri) is not None
        )

    def consider(self, scope: Any) -> None:
        """The folder's settings were applied: watch it, or stop."""
        if not scope.uri:
            return
        key = self.key(scope.uri)
        if not self.applies(scope):
            self.forget(scope.uri)
            return
        if key in self.folders:
            return
        path = uri_to_path(scope.uri)
        assert path is not None
        fw = FolderWatch(scope.uri, path)
        self.folders[key] = fw
        fw.starting = asyncio.ensure_future(self._start(fw))
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.ensure_future(self._tick())

    def forget(self, uri: str) -> None:
        """The folder is no longer watched (the setting, Recitation off, the folder left):
        the warnings of its files that are not open go."""
        fw = self.folders.pop(self.key(uri), None)
        if fw is None:
            return
        if fw.starting is not None:
            fw.starting.cancel()
        for handle in (fw.timer, fw.status_timer):
            if handle is not None:
                handle.cancel()
        self._queue = {k: None for k in self._queue if k[0] != self.key(uri)}
        prefix = fw.uri.rstrip("/") + "/"
        for doc in list(self.server.documents):
            if not doc.opened and doc.uri.startswith(prefix):
                self._drop(doc.uri)

    def status(self, scope: Any) -> dict | None:
        """`watchFiles` of the folder's `recitation/status` (None: not watched)."""
        fw = self.folders.get(self.key(scope.uri)) if scope.uri else None
        if fw is None:
            return None
        return {
            "state": fw.state,
            "how": CLIENT if self.client_watches else POLLING,
            "files": len(fw.known),
            "checked": fw.checked,
            "lookups": fw.lookups,
            "takenAsKnown": fw.taken_as_known,
            "lastTakenAsKnown": fw.last_flood,
        }

    def _scope(self, fw: FolderWatch) -> Any:
        scope = self.server.scopes.folders.get(self.key(fw.uri))
        return scope if scope is not None and self.folders.get(self.key(fw.uri)) is fw else None

    def _send_status(self, fw: FolderWatch, soon: bool = False) -> None:
        """The folder's status; with `soon`, at most every STATUS_SECONDS."""
        scope = self._scope(fw)
        if scope is None:
            return
        if soon:
            wait = fw.status_sent + STATUS_SECONDS - time.monotonic()
            if wait > 0:
                if fw.status_timer is None:
                    loop = asyncio.get_running_loop()
                    fw.status_timer = loop.call_later(wait, self._status_due, fw)
                return
        if fw.status_timer is not None:
            fw.status_timer.cancel()
            fw.status_timer = None
        fw.status_sent = time.monotonic()
        self.server.send_status(scope)

    def _status_due(self, fw: FolderWatch) -> None:
        fw.status_timer = None
        self._send_status(fw)

    # -- start: the files and what they hold ----------------------------------------------

    async def _start(self, fw: FolderWatch) -> None:
        try:
            files, dirs = await self._list(fw)
            fw.dirs = {d: None for d in dirs}
            for path in files:
                fw.known[path] = Known(None)
                fw.unread.append(path)
            await self._read_unread(fw, at_start=True)
            fw.dirs = await asyncio.to_thread(lambda: {d: stamp(d) for d in fw.dirs})
            fw.state = ON
            if fw.pending:  # reported while the files were read
                fw.timer = asyncio.get_running_loop().call_soon(self._batch_due, fw)
            log.info(
                "watching %d code files of %s (%s)",
                len(fw.known),
                fw.path,
                "the client's watcher" if self.client_watches else "polling",
            )
            self._send_status(fw)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("watching the files of %s", fw.path)

    async def _list(self, fw: FolderWatch) -> tuple[list[str], set[str]]:
        """The folder's code files, and the folders that hold its files."""
        top = await run_git(fw.path, "rev-parse", "--absolute-git-dir", "--git-common-dir")
        names: list[str] | None = None
        if top is not None:
            lines = top.decode("utf-8", "surrogateescape").splitlines()
            if len(lines) >= 2:
                git_dir = Path(lines[0])
                common = Path(lines[1])
                if not common.is_absolute():
                    common = (fw.path / common).resolve()
                fw.git = GitState(git_dir, common)
                out = await run_git(
                    fw.path, "ls-files", "-z", "--cached", "--others", "--exclude-standard"
                )
                if out is not None:
                    names = [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
        if names is None:
            return await asyncio.to_thread(walk_code, fw.path)
        files, dirs = [], {str(fw.path)}
        seen = set()
        for name in names:
            parts = tuple(name.split("/"))
            if outside_code(parts) or name in seen:
                continue
            seen.add(name)
            for i in range(1, len(parts)):
                dirs.add(str(fw.path.joinpath(*parts[:i])))
            if language_for_path(name):
                files.append(str(fw.path.joinpath(*parts)))
        return files, dirs

    async def _read_unread(self, fw: FolderWatch, at_start: bool = False) -> None:
        """Read what is taken as known, a step at a time (at start: within a budget; the
        rest is read when it changes, and not checked then)."""
        while fw.unread and self.folders.get(self.key(fw.uri)) is fw:
            if at_start and self._known_bytes >= MAX_KNOWN_BYTES:
                fw.unread.clear()  # (read when they change, and not checked then)
                break
            step = [fw.unread.popleft() for _ in range(min(READ_FILES, len(fw.unread)))]
            reads = await asyncio.to_thread(lambda s=step: [read_code(p) for p in s])
            for path, got in zip(step, reads, strict=True):
                known = fw.known.get(path)
                if known is None or known.lines is not None:
                    continue  # gone meanwhile, or read by a check
                if got.text is None:
                    self._leave_alone(fw, path, got.why)
                    continue
                known.stamp, known.lines = got.stamp, line_hashes(line_pieces(got.text))
                if at_start:
                    self._known_bytes += len(got.text)
            await asyncio.sleep(READ_PAUSE)

    def _leave_alone(self, fw: FolderWatch, path: str, why: str) -> None:
        fw.known.pop(path, None)
        if why != "gone":
            fw.left_alone.add(path)

    def _read_soon(self, fw: FolderWatch) -> None:
        if fw.state == ON and (self._reader is None or self._reader.done()):
            self._reader = asyncio.ensure_future(self._read_all_unread())

    async def _read_all_unread(self) -> None:
        for fw in list(self.folders.values()):
            with contextlib.suppress(Exception):
                await self._read_unread(fw)

    # -- reports of changes ---------------------------------------------------------------

    def folder_of(self, path: str) -> FolderWatch | None:
        best = None
        for fw in self.folders.values():
            parts = fw.rel_parts(path)
            if parts and (best is None or len(str(fw.path)) > len(str(best.path))):
                best = fw
        return best

    def on_client_events(self, changes: list[types.FileEvent]) -> None:
        """The client's watcher reported files created, changed or deleted."""
        for change in changes:
            path = uri_to_path(change.uri)
            if path is None:
                continue
            self.report(str(path))

    def report(self, path: str) -> None:
        fw = self.folder_of(path)
        if fw is None:
            return
        parts = fw.rel_parts(path)
        if not parts or outside_code(parts) or not language_for_path(parts[-1]):
            return
        if path in fw.left_alone:
            return
        if fw.state != ON:
            fw.pending[path] = None  # looked at once the files are read
            return
        loop = asyncio.get_running_loop()
        if not fw.pending:
            fw.first_report = loop.time()
        fw.pending[path] = None
        wait = min(QUIET_SECONDS, fw.first_report + BATCH_SECONDS - loop.time())
        if fw.timer is not None:
            fw.timer.cancel()
        fw.timer = loop.call_later(max(0.0, wait), self._batch_due, fw)

    def _batch_due(self, fw: FolderWatch) -> None:
        fw.timer = None
        paths, fw.pending = list(fw.pending), {}
        if paths:
            asyncio.ensure_future(self._batch(fw, paths))

    async def _batch(self, fw: FolderWatch, paths: list[str]) -> None:
        """Changes seen together: checked, or taken as known (a flood, git's own writes)."""
        log.debug("changed in %s: %d files", fw.path, len(paths))
        if fw.git is not None:
            if fw.git.locked():
                now = time.monotonic()
                fw.waiting_for_git = fw.waiting_for_git or now
                if now - fw.waiting_for_git < GIT_WAIT_SECONDS:
                    for p in paths:  # looked at once git is done
                        fw.pending[p] = None
                    if fw.timer is None:
                        loop = asyncio.get_running_loop()
                        fw.timer = loop.call_later(QUIET_SECONDS, self._batch_due, fw)
                    return
            fw.waiting_for_git = 0.0
            fw.git.look()
        paths = await self._not_ignored(fw, paths)
        if not paths or self._scope(fw) is None:
            return
        why = fw.git.wrote() if fw.git is not None else ""
        if why:
            # git's own writes: the files as its index holds them (an agent's own, written
            # meanwhile, are checked)
            theirs = await self._as_in_index(fw, paths)
            if theirs:
                self._take_as_known(fw, theirs, why)
            paths = [p for p in paths if p not in theirs]
        if len(paths) >= FLOOD_FILES:
            self._take_as_known(fw, paths, f"{len(paths)} files changed at once")
            return
        for p in paths:
            self._queue[(self.key(fw.uri), p)] = None
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._work())

    async def _not_ignored(self, fw: FolderWatch, paths: list[str]) -> list[str]:
        """The paths that are the folder's files: known ones, and new ones git does not
        ignore."""
        new = [p for p in paths if p not in fw.known]
        if not new or fw.git is None:
            return paths
        rels = [os.path.relpath(p, fw.path).replace(os.sep, "/") for p in new]
        out = await run_git(
            fw.path, "check-ignore", "-z", "--stdin", data="\0".join(rels).encode(), ok=(0, 1)
        )
        if out is None:
            return paths
        ignored = {
            str(fw.path / n) for n in out.decode("utf-8", "surrogateescape").split("\0") if n
        }
        for p in ignored:
            fw.left_alone.add(p)
        return [p for p in paths if p not in ignored]

    async def _as_in_index(self, fw: FolderWatch, paths: list[str]) -> set[str]:
        """The paths whose file is gone or holds what git's index holds for it."""
        out = await run_git(fw.path, "ls-files", "-s", "-z", "--", ".")
        if out is None:
            return set()
        index: dict[str, str] = {}
        for entry in out.decode("utf-8", "surrogateescape").split("\0"):
            head, tab, name = entry.partition("\t")
            if tab:
                index[str(fw.path.joinpath(*name.split("/")))] = head.split(" ")[1]
        gone = {p for p in paths if not os.path.lexists(p)}
        asked = [p for p in paths if p in index and p not in gone and "\n" not in p]
        if not asked:
            return gone
        rels = [os.path.relpath(p, fw.path).replace(os.sep, "/") for p in asked]
        hashed = await run_git(
            fw.path, "hash-object", "--stdin-paths", data=("\n".join(rels) + "\n").encode()
        )
        if hashed is None:
            return gone
        blobs = hashed.decode("ascii", "replace").split()
        if len(blobs) != len(asked):
            return gone
        return gone | {p for p, b in zip(asked, blobs, strict=True) if index[p] == b}

    def _take_as_known(self, fw: FolderWatch, paths: list[str], why: str) -> None:
        """A flood: the new contents are known, not checked (read in the background; a
        file with warnings is read now, its warnings moved or gone with its text)."""
        log.info(
            "%d files of %s changed (%s): taken as known, not checked", len(paths), fw.path, why
        )
        fw.taken_as_known += len(paths)
        fw.last_flood = {"files": len(paths), "why": why}
        for p in paths:
            doc = self.server.documents.get(fw.uri_for(p))
            if doc is not None and not doc.opened:
                self._queue[(self.key(fw.uri), p)] = None  # its text is brought up to date
                fw.known[p] = Known(stamp(p))  # (no old lines: nothing checked)
                continue
            if p not in fw.known or fw.known[p].lines is not None:
                fw.unread.append(p)
            fw.known[p] = Known(stamp(p))  # (polling reports it again only if it changes)
        if fw.git is not None and fw.git.wrote():
            fw.full_sweep = True  # the rest of git's writes, all at once
        self._send_status(fw)
        self._read_soon(fw)
        if self._queue and (self._worker is None or self._worker.done()):
            self._worker = asyncio.ensure_future(self._work())

    # -- polling ----------------------------------------------------------------------------

    async def _tick(self) -> None:
        while self.folders:
            await asyncio.sleep(TICK_SECONDS)
            for fw in list(self.folders.values()):
                if fw.state != ON or self._scope(fw) is None:
                    continue
                try:
                    if fw.git is not None and not fw.git.locked():
                        fw.git.look()
                        if fw.git.wrote():
                            fw.full_sweep = True
                    if not self.client_watches:
                        await self._poll(fw)
                    self._forget_idle(fw)
                except Exception:
                    log.exception("watching the files of %s", fw.path)

    async def _poll(self, fw: FolderWatch) -> None:
        """Without the client's watcher: the files' and folders' times, POLL_STATS a tick
        (every one after git wrote the work tree)."""
        if not fw.sweep or fw.sweep_at >= len(fw.sweep):
            fw.sweep, fw.sweep_at = [*fw.known, *fw.dirs], 0
        budget = len(fw.sweep) if fw.full_sweep else POLL_STATS
        part = fw.sweep[fw.sweep_at : fw.sweep_at + budget]
        fw.sweep_at += len(part)
        if fw.full_sweep:
            fw.sweep_at, fw.full_sweep = len(fw.sweep), False
        now = time.time_ns()

        def look() -> tuple[list[str], list[str]]:
            changed, dirs = [], []
            for p in part:
                st = stamp(p)
                if p in fw.dirs:
                    if st != fw.dirs[p]:
                        dirs.append(p)
                    continue
                known = fw.known.get(p)
                if known is None or st == known.stamp:
                    continue
                if st is not None and now - st[0] < SETTLE_NS:
                    continue  # being written: next tick
                changed.append(p)
            return changed, dirs

        changed, dirs = await asyncio.to_thread(look)
        for p in changed:
            known = fw.known.get(p)
            if known is not None:
                known.stamp = stamp(p)  # reported once (its lines stay: the old text)
        if dirs:
            new = await asyncio.to_thread(self._new_files, fw, dirs)
            changed += [p for p in new if p not in fw.pending]
        if changed:
            await self._batch(fw, changed)

    def _new_files(self, fw: FolderWatch, dirs: list[str]) -> list[str]:
        """Code files in changed folders that are not known yet (new folders looked into)."""
        out: list[str] = []
        todo = list(dirs)
        looked = 0
        while todo and looked < NEW_DIR_ENTRIES:
            d = todo.pop()
            st = stamp(d)
            if st is None:
                fw.dirs.pop(d, None)
                continue
            fw.dirs[d] = st
            try:
                with os.scandir(d) as entries:
                    for e in entries:
                        looked += 1
                        p = e.path
                        if e.is_dir(follow_symlinks=False):
                            if p not in fw.dirs and self._code_dir(fw, p):
                                fw.dirs[p] = None
                                todo.append(p)
                        elif (
                            p not in fw.known
                            and p not in fw.left_alone
                            and language_for_path(e.name)
                            and e.is_file(follow_symlinks=False)
                        ):
                            out.append(p)
            except OSError:
                continue
        return out

    @staticmethod
    def _code_dir(fw: FolderWatch, path: str) -> bool:
        """A new folder that may hold the workspace's own code."""
        parts = fw.rel_parts(path)
        if parts is None or outside_code((*parts, "")):
            return False
        return not os.path.exists(os.path.join(path, "pyvenv.cfg"))

    # -- checking ---------------------------------------------------------------------------

    async def _work(self) -> None:
        while self._queue:
            (key, path) = next(iter(self._queue))
            del self._queue[(key, path)]
            fw = self.folders.get(key)
            if fw is None:
                continue
            try:
                await self._check_file(fw, path)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("checking %s", path)

    async def _check_file(self, fw: FolderWatch, path: str) -> None:
        """Read a changed file, and check what is new in it."""
        scope = self._scope(fw)
        if scope is None:
            return
        uri = fw.uri_for(path)
        known = fw.known.get(path)
        got = await asyncio.to_thread(read_code, path)
        doc = self.server.documents.get(uri)
        if got.text is None:
            self._leave_alone(fw, path, got.why)
            if doc is not None and not doc.opened:
                self._drop(uri)
            return
        text = got.text
        pieces = line_pieces(text)
        lines = line_hashes(pieces)
        fw.known[path] = Known(got.stamp, lines)
        if self.server.scopes.for_uri(uri) is not scope or self._open(uri, path):
            return  # another folder's, or open: the editor reports its changes
        if known is None:
            runs = [(0, 0, 0, len(pieces))]  # a new file: all of it
        elif known.lines is None:
            runs = []  # what it held before is not known: taken as known
        else:
            runs = changed_runs(known.lines, lines)
        if doc is not None:
            self._bring_up_to_date(doc, text, known)
        if not runs:
            return
        starts = offsets(pieces)
        spans = [words_span(text, starts[j1], starts[j2]) for _, _, j1, j2 in runs if j2 > j1]
        checks = [
            PendingCheck(a, b, disk=True)
            for a, b in spans
            if count_words(text[a:b]) >= scope.settings.min_insert_words
        ]
        if not checks:
            return
        if doc is None:
            doc = self.server.documents.add_from_disk(uri, text, language_for_path(path))
        log.info("%s changed outside the editor: %d part(s) checked", path, len(checks))
        for check in checks:
            while self.server.checker.busy():
                await asyncio.sleep(YIELD_SECONDS)
            if self.server.documents.get(uri) is not doc or doc.opened:
                break  # opened (its text is the editor's now) or gone meanwhile
            fw.lookups += 1
            await self.server.run_check(uri, check)
        fw.checked += 1
        self._forget_if_idle(uri)
        self._send_status(fw, soon=True)

    def _bring_up_to_date(self, doc: TextDocument, text: str, known: Known | None) -> None:
        """A file not open, with warnings, changed on disk: its document takes the new
        text, each run of changed lines as an edit (warnings move with the text, or go
        when their words changed), then publishes."""
        old_pieces = line_pieces(doc.text)
        new_pieces = line_pieces(text)
        old_lines = line_hashes(old_pieces)
        if known is not None and known.lines is not None and known.lines != old_lines:
            log.debug("%s: its document and what was known differ", doc.uri)
        old_at, new_at = offsets(old_pieces), offsets(new_pieces)
        for i1, i2, j1, j2 in reversed(changed_runs(old_lines, line_hashes(new_pieces))):
            self._edit(doc, old_at[i1], old_at[i2], text[new_at[j1] : new_at[j2]])
        if doc.text != text:  # line breaks only (the hashes leave them out)
            self._edit(doc, 0, len(doc.text), text)
        self.server.publish(doc.uri)

    def _edit(self, doc: TextDocument, start: int, end: int, new_text: str) -> None:
        rng = doc.range_of(start, end)
        edit = doc.apply(types.TextDocumentContentChangePartial(range=rng, text=new_text))
        self.server.matches.on_edit(doc, edit)
        self.server.checker.on_edit(doc, edit)

    def _open(self, uri: str, path: str) -> bool:
        """Whether the editor has the file open (under this URI or another spelling)."""
        if self.server.documents.get_open(uri) is not None:
            return True
        for doc in self.server.documents:
            if doc.opened and doc.uri.startswith("file:") and str(uri_to_path(doc.uri)) == path:
                return True
        return False

    # -- documents of files not open -------------------------------------------------------

    def disk_document(self, uri: str) -> TextDocument | None:
        """The document of a file not open that `uri` names (however it is spelled)."""
        doc = self.server.documents.get(uri)
        if doc is not None:
            return doc
        path = uri_to_path(uri)
        fw = self.folder_of(str(path)) if path is not None else None
        return self.server.documents.get(fw.uri_for(str(path))) if fw is not None else None

    def keeps(self, doc: TextDocument) -> bool:
        """Whether a document the editor closes stays, not open: it shows warnings of code
        written outside the editor, and its file on disk holds its text."""
        if not any(m.outside for m in self.server.matches.get(doc.uri)):
            return False
        path = uri_to_path(doc.uri)
        fw = self.folder_of(str(path)) if path is not None else None
        if fw is None or fw.state != ON:
            return False
        got = read_code(str(path))
        if got.text != doc.text:
            return False
        fw.known[str(path)] = Known(got.stamp, line_hashes(line_pieces(got.text)))
        return True

    def _forget_if_idle(self, uri: str) -> None:
        """A document not open with nothing to show and nothing waiting is not kept."""
        doc = self.server.documents.get(uri)
        if doc is None or doc.opened:
            return
        if self.server.matches.get(uri) or self.server.checker.deferred(uri):
            return
        self.server.documents.close(uri)

    def _forget_idle(self, fw: FolderWatch) -> None:
        prefix = fw.uri.rstrip("/") + "/"
        for doc in list(self.server.documents):
            if not doc.opened and doc.uri.startswith(prefix):
                self._forget_if_idle(doc.uri)

    def _drop(self, uri: str) -> None:
        """A file not open is gone (or no longer watched): its warnings go."""
        self.server.checker.cancel(uri)
        self.server.matches.clear(uri)
        if self.server.documents.close(uri) is not None:
            self.server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    def close(self) -> None:
        for task in (self._worker, self._reader, self._ticker):
            if task is not None:
                task.cancel()
        for fw in self.folders.values():
            if fw.starting is not None:
                fw.starting.cancel()


def walk_code(folder: Path) -> tuple[list[str], set[str]]:
    """Outside git: the folder's code files and its folders, dependencies, virtual
    environments, build outputs and hidden folders left out."""
    files: list[str] = []
    dirs: set[str] = set()
    for root, subdirs, names in os.walk(folder):
        dirs.add(root)
        subdirs[:] = [
            d
            for d in subdirs
            if not d.startswith(".")
            and d not in NOT_CODE_DIRS
            and not os.path.islink(os.path.join(root, d))
            and not os.path.exists(os.path.join(root, d, "pyvenv.cfg"))
        ]
        files.extend(os.path.join(root, n) for n in names if language_for_path(n))
    return files, dirs


async def run_git(
    folder: Path, *args: str, data: bytes | None = None, ok: tuple[int, ...] = (0,)
) -> bytes | None:
    """A git command's output in `folder` (None: no git, not a work tree, an error)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            "-C",
            str(folder),
            *args,
            stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(data), 120)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        return None
    return out if proc.returncode in ok else None
