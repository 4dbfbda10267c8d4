"""Bounded reads of the small files the tools are given or find: decisions files, baselines,
token files, context files, corpus lists. Each must be a regular file (a named pipe would
block, a device such as /dev/zero never ends) of at most a stated size; when it is not, an
OSError says so in one line (`strerror`), before anything is read. A link to a regular
file is read.

And the one way the tools write a file (`replace_file`; `writable_target` where another
library writes the new file): atomically, a temporary file beside the target renamed over
it. Nothing is ever written through, or in place of, what is not a regular file: a path
that holds a folder, a named pipe, a device or a socket is refused, as is a link to one of
those, a link to nothing or a link loop (NotRegularFile, one line in `strerror`). A link to
a regular file is followed: its target is written and the link stays. The files an index
keeps for itself (CURRENT, the lock) are never links: `follow_links=False` refuses one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # opening a named pipe must not wait for a writer
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def size_text(n: int) -> str:
    """`2 MiB`, `64 KiB`, `300 bytes`."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n:,} bytes"


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


class NotRegularFile(OSError):
    """A folder, named pipe, device or socket where a file was expected."""


class FileTooLarge(OSError):
    """A file past its size limit."""


def read_small_file(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. OSError otherwise (the open's
    own error, NotRegularFile or FileTooLarge), its `strerror` one line without the path."""
    fd = os.open(path, _FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(
                errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file", str(path)
            )
        too_large = FileTooLarge(
            errno.EFBIG, f"larger than {size_text(limit)}, the most read here", str(path)
        )
        if st.st_size > limit:
            raise too_large
        chunks, left = [], limit + 1  # one byte more shows a file that grew (or /proc)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise too_large
        return b"".join(chunks)
    finally:
        os.close(fd)


def describe_error(path: str | os.PathLike, error: OSError) -> str:
    """`<path>: <why>`, one line."""
    return f"{os.fspath(path)}: {error.strerror or error}"


def writable_target(path: str | os.PathLike, *, follow_links: bool = True) -> Path:
    """Where writing `path` goes: `path` itself when nothing or a regular file is there,
    a link's final target when that is a regular file (unless `follow_links` is false).
    NotRegularFile otherwise (a folder, a named pipe, a device, a socket, or a link to one
    of them, to nothing, or in a loop)."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p
    if stat.S_ISREG(st.st_mode):
        return p
    if not stat.S_ISLNK(st.st_mode):
        raise NotRegularFile(errno.EINVAL, f"{kind_of(st.st_mode)}, not a regular file", str(p))
    if not follow_links:
        raise NotRegularFile(errno.ELOOP, "a link, not a regular file", str(p))
    try:
        target = Path(os.path.realpath(p, strict=True))
        st = os.stat(target)
    except FileNotFoundError:
        raise NotRegularFile(errno.ENOENT, "a link to a missing file", str(p)) from None
    except (OSError, RuntimeError) as e:  # ELOOP (RuntimeError from older Pythons)
        if getattr(e, "errno", errno.ELOOP) != errno.ELOOP:
            raise
        raise NotRegularFile(errno.ELOOP, "a link loop", str(p)) from None
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(
            errno.EINVAL, f"a link to {kind_of(st.st_mode)}, not a regular file", str(p)
        )
    return target


def replace_file(
    path: str | os.PathLike,
    data: bytes,
    *,
    follow_links: bool = True,
    replace: Callable[[Path, Path], object] = os.replace,
) -> Path:
    """Write `data` as the file at `path` (see `writable_target`: a link's regular target,
    never a special file), atomically: a temporary file in the same folder, flushed to disk
    and renamed over it with `replace`. A file there keeps its mode; a new one gets the
    mode the umask gives. Returns the path written. OSError (NotRegularFile, or the
    system's) leaves what was there unchanged."""
    target = writable_target(path, follow_links=follow_links)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        # what came there meanwhile is never replaced
        if writable_target(path, follow_links=follow_links) != target:
            raise NotRegularFile(errno.EAGAIN, "changed while it was written", str(path))
        replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
