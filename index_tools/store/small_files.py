"""Bounded reads of the small files the tools are given or find: decisions files, baselines,
token files, context files, corpus lists. Each must be a regular file (a named pipe would
block, a device such as /dev/zero never ends) of at most a stated size; when it is not, an
OSError says so in one line (`strerror`), before anything is read. A link to a regular
file is read.
"""

from __future__ import annotations

import errno
import os
import stat

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
