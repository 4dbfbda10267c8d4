"""Reading package archives (sdists, wheels, npm tarballs) as hostile input.

Nothing is ever extracted to disk: members are read from the archive in order, and only
regular files with a safe name are handed on. Left out, each counted by reason in the
`skipped` counter given:

- a name that could escape a target folder: absolute (`/x`, `\\x`), a drive letter (`C:x`),
  a `..` component, control characters, or nothing left after normalization ("unsafe path")
- symbolic and hard links ("link"); devices, FIFOs and other special files ("special file")
- a second member with the same normalized name ("duplicate name"): the first one is kept

An archive with more members, or more bytes once expanded, than `ArchiveLimits` allows is
refused as a whole (`ArchiveLimitError`), as is one that cannot be read to its end
(`ArchiveError`): the checks run on every byte actually decompressed, whatever the headers
claim, and a sparse tar member counts for its full size (the zeros of its holes would be
read as its data), however little of it is stored. The format is told by the first bytes, not the file name: gzip, bzip2 or xz
compressed tar, plain tar, or zip (wheels and old sdists).
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import re
import stat
import tarfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator

UNSAFE_PATH = "unsafe path"
LINK = "link"
SPECIAL_FILE = "special file"
DUPLICATE_NAME = "duplicate name"
ARCHIVE_REASONS = (UNSAFE_PATH, LINK, SPECIAL_FILE, DUPLICATE_NAME)


class ArchiveError(Exception):
    """An archive that cannot be read (damaged, truncated, not an archive); one line."""


class ArchiveLimitError(ArchiveError):
    """An archive with more members or expanded bytes than the limits allow."""


@dataclasses.dataclass(frozen=True)
class ArchiveLimits:
    """What one package archive may hold: members (files, folders, links...) and bytes
    once expanded (what a decompression bomb inflates)."""

    max_members: int = 100_000
    max_expanded_bytes: int = 1 << 30  # 1 GiB

    def __post_init__(self) -> None:
        if self.max_members < 1 or self.max_expanded_bytes < 1:
            raise ValueError("archive limits must be positive")


_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[\\/]+")


def safe_member_name(name: str) -> str | None:
    """The member's name as a relative "/" path, or None when it is unsafe: absolute, with
    a drive letter, a `..` component, or control characters. Backslashes count as
    separators (a Windows extractor would treat them so)."""
    if not isinstance(name, str) or not name or len(name) > 4096:
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return None
    if name[0] in "/\\" or _DRIVE.match(name):
        return None
    parts = [p for p in _SEPARATORS.split(name) if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return "/".join(parts)


def archive_format(path: str) -> str:
    """ "tar.gz", "tar.bz2", "tar.xz", "tar" or "zip", judged by the file's first bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(512)
    except OSError as e:
        raise ArchiveError(f"cannot read the archive: {e.strerror or e}") from None
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    if head.startswith(b"BZh"):
        return "tar.bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "tar.xz"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    raise ArchiveError("not a tar or zip archive")


class _Counted(io.RawIOBase):
    """A read-only stream that refuses to give more than `limit` bytes in total."""

    def __init__(self, raw, limit: int) -> None:
        self._raw = raw
        self._limit = limit
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        n = self._raw.readinto(b) if hasattr(self._raw, "readinto") else None
        if n is None:
            data = self._raw.read(len(b))
            n = len(data)
            b[:n] = data
        self.count += n
        if self.count > self._limit:
            raise ArchiveLimitError(f"the archive expands past {self._limit:,} bytes")
        return n


_DAMAGE = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
    RuntimeError,
    UnicodeError,
    KeyError,
)


def iter_files(
    path: str,
    *,
    limits: ArchiveLimits,
    skipped: Counter,
    want: Callable[[str], bool],
    read_max: int,
) -> Iterator[tuple[str, int, bytes]]:
    """(normalized name, size, data) of each regular member whose name `want` accepts, in
    archive order; data is at most `read_max` + 1 bytes (one more shows the file is too
    large). Raises ArchiveError / ArchiveLimitError as described in the module."""
    fmt = archive_format(path)
    try:
        if fmt == "zip":
            yield from _zip_files(path, limits, skipped, want, read_max)
        else:
            yield from _tar_files(path, fmt, limits, skipped, want, read_max)
    except ArchiveError:
        raise
    except MemoryError:
        raise ArchiveLimitError("the archive needs more memory than is available") from None
    except _DAMAGE as e:
        raise ArchiveError(f"damaged {fmt} archive ({_reason(e)})") from None


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())[:120]
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _open_tar_stream(path: str, fmt: str):
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller through the tar stream
    if fmt == "tar.gz":
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")
    if fmt == "tar.bz2":
        return raw, bz2.BZ2File(raw, mode="rb")
    if fmt == "tar.xz":
        return raw, lzma.LZMAFile(raw, mode="rb")
    return raw, raw


def _tar_files(path, fmt, limits, skipped, want, read_max):
    raw, stream = _open_tar_stream(path, fmt)
    counted = _Counted(stream, limits.max_expanded_bytes)
    try:
        buffered = io.BufferedReader(counted, 1 << 16)
        with tarfile.open(fileobj=buffered, mode="r|", errorlevel=2) as tar:
            seen: set[str] = set()
            members = 0
            holes = 0  # the sparse members' sizes: what their holes expand to
            for info in tar:
                members += 1
                if members > limits.max_members:
                    raise ArchiveLimitError(
                        f"the archive holds more than {limits.max_members:,} members"
                    )
                if info.issparse():
                    holes += max(0, info.size)
                    if counted.count + holes > limits.max_expanded_bytes:
                        raise ArchiveLimitError(
                            f"the archive expands past {limits.max_expanded_bytes:,} bytes"
                        )
                if info.isdir():
                    continue
                name = safe_member_name(info.name)
                if name is None:
                    skipped[UNSAFE_PATH] += 1
                    continue
                if info.issym() or info.islnk():
                    skipped[LINK] += 1
                    continue
                if not info.isfile():
                    skipped[SPECIAL_FILE] += 1
                    continue
                if not _first_wanted(name, seen, skipped, want):
                    continue
                member = tar.extractfile(info)
                data = member.read(read_max + 1) if member is not None else b""
                yield name, info.size, data
            # the rest of the stream (padding, trailing blocks) counts too
            while buffered.read(1 << 16):
                pass
    finally:
        stream.close()
        raw.close()


_S_IFMT = 0o170000


def _zip_files(path, limits, skipped, want, read_max):
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        if len(infos) > limits.max_members:
            raise ArchiveLimitError(f"the archive holds more than {limits.max_members:,} members")
        declared = sum(max(0, i.file_size) for i in infos)
        if declared > limits.max_expanded_bytes:
            raise ArchiveLimitError(f"the archive expands past {limits.max_expanded_bytes:,} bytes")
        seen: set[str] = set()
        expanded = 0
        for info in infos:
            if info.is_dir():
                continue
            name = safe_member_name(info.filename)
            if name is None:
                skipped[UNSAFE_PATH] += 1
                continue
            mode = (info.external_attr >> 16) & 0xFFFF
            kind = mode & _S_IFMT
            if info.create_system == 3 and kind == stat.S_IFLNK:  # made on Unix
                skipped[LINK] += 1
                continue
            if info.create_system == 3 and kind and kind != stat.S_IFREG:
                skipped[SPECIAL_FILE] += 1
                continue
            if not _first_wanted(name, seen, skipped, want):
                continue
            with zf.open(info) as member:
                data = member.read(read_max + 1)
            expanded += len(data)
            if expanded > limits.max_expanded_bytes:
                raise ArchiveLimitError(
                    f"the archive expands past {limits.max_expanded_bytes:,} bytes"
                )
            yield name, info.file_size, data


def _first_wanted(name: str, seen: set[str], skipped, want) -> bool:
    """Whether a member is read: the first of its name (a later one is counted as a
    duplicate name, never written over it) and wanted."""
    if name in seen:
        skipped[DUPLICATE_NAME] += 1
        return False
    seen.add(name)
    return want(name)
