"""One writer at a time per index: `build`, `add` and their cleanup hold an OS lock on
`<index>/.lock`. The operating system releases it when the process ends, however it ends
(Ctrl-C, kill -9, a crash), so a lock is never left stale; the file itself stays and says
who holds it. fcntl on POSIX (Linux, macOS), msvcrt on Windows. A process forked while the
lock is held (the builder's worker pool) closes its copy of the descriptor at once: a
worker that outlives a killed builder does not keep the index locked.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import time
from pathlib import Path

from .small_files import NotRegularFile, kind_of, writable_target

LOCK_NAME = ".lock"
_WINDOWS_LOCK_OFFSET = 1 << 30  # the byte locked on Windows, past the holder's description
_HELD: set[int] = set()  # descriptors of the locks this process holds


def _close_in_child() -> None:
    # a forked child shares the parent's lock through these descriptors: drop them without
    # unlocking (unlocking would release the parent's lock too)
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)

if os.name == "nt":
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


class IndexBusyError(Exception):
    """Another process is writing the index (the message says which)."""


class WriterLock:
    """The index's writer lock; `with WriterLock(root):` or acquire()/release()."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.path = self.root / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        writable_target(self.path, follow_links=False)  # no link, pipe or device: one line
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(self.path, flags, 0o644)
        try:  # (what came there since the check)
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise NotRegularFile(
                    errno.EINVAL, f"{kind_of(mode)}, not a regular file", str(self.path)
                )
        except BaseException:
            os.close(fd)
            raise
        if not _try_lock(fd):
            os.close(fd)
            raise IndexBusyError(
                f"index at {self.root} is being written by another process "
                f"({self.holder()}); try again when it has finished"
            )
        self._fd = fd
        _HELD.add(fd)
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        try:  # who holds it, for the message of a refused writer (best effort: a full disk)
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, (json.dumps(info) + "\n").encode())
        except OSError:
            pass  # noqa: SIM105 - the lock is held either way

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            _HELD.discard(fd)
            try:
                _unlock(fd)
            finally:
                os.close(fd)

    def holder(self) -> str:
        """Who holds the lock, as its file says (best effort)."""
        try:
            info = json.loads(self.path.read_text(encoding="utf-8") or "{}")
            since = time.strftime("%H:%M:%S", time.localtime(float(info["since"])))
            return f"pid {int(info['pid'])} on {str(info['host'])[:64]!r} since {since}"
        except (OSError, ValueError, KeyError, TypeError):
            return "unknown process"

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


@contextlib.contextmanager
def turn(path: Path, poll: float = 0.05):
    """Wait for, then hold, the OS lock on `path` (created if missing): one holder at a time
    among the processes that take turns on it, released however the holder ends."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        while not _try_lock(fd):
            time.sleep(poll)
        _HELD.add(fd)
        try:
            yield
        finally:
            _HELD.discard(fd)
            _unlock(fd)
    finally:
        os.close(fd)
