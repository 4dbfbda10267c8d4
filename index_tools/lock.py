"""One writer at a time per index: `build`, `add` and their cleanup hold an OS lock on
`<index>/.lock`. The operating system releases it when the process ends, however it ends
(Ctrl-C, kill -9, a crash), so a lock is never left stale; the file itself stays and says
who holds it. fcntl on POSIX (Linux, macOS), msvcrt on Windows.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

LOCK_NAME = ".lock"
_WINDOWS_LOCK_OFFSET = 1 << 30  # the byte locked on Windows, past the holder's description

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
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd):
            os.close(fd)
            raise IndexBusyError(
                f"index at {self.root} is being written by another process "
                f"({self.holder()}); try again when it has finished"
            )
        info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(info) + "\n").encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
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
