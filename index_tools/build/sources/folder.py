"""A plain folder of source files (not a git repository)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator

from index_tools.model import Document, Origin

from .base import CorpusSource, SkipReasons
from .filters import is_oversize, text_from_bytes
from .languages import language_for_path
from .licenses import license_from_files

# Folders never indexed: dependencies, caches, virtual environments.
SKIP_DIR_NAMES = frozenset(
    {
        "node_modules",
        "bower_components",
        "__pycache__",
        "site-packages",
        "dist-packages",
        "venv",
    }
)


def skip_dir(name: str) -> bool:
    """Hidden folders (.git, .venv, .tox, ...) and the folders in SKIP_DIR_NAMES."""
    return name.startswith(".") or name in SKIP_DIR_NAMES


def clean_path(path: str) -> str:
    """A file name as text: bytes that are not UTF-8 become U+FFFD."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def too_long(error: OSError) -> bool:
    """Whether an error is a path longer than the system can open."""
    if error.errno == errno.ENAMETOOLONG:
        return True
    # Windows without long paths enabled: "path not found" / "name too long" past 260
    return os.name == "nt" and len(str(error.filename or "")) >= 260


def count_files_below(path: str) -> int:
    """Files under a folder whose path is too long to open by name (the folders
    `skip_dir` leaves out not counted): walked by descriptors relative to its parent on
    POSIX, with the extended-length prefix on Windows; 0 when that fails too."""
    try:
        if os.name == "nt":
            full = "\\\\?\\" + os.path.abspath(path)
            walk = ((d, f) for _, d, f in os.walk(full))
        elif hasattr(os, "fwalk"):
            parent, name = os.path.split(path)
            fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            try:
                return _count(((d, f) for _, d, f, _ in os.fwalk(name, dir_fd=fd)))
            finally:
                os.close(fd)
        else:
            return 0
        return _count(walk)
    except OSError:
        return 0


def _count(walk) -> int:
    n = 0
    for dirnames, filenames in walk:
        dirnames[:] = [d for d in dirnames if not skip_dir(d)]
        n += len(filenames)
    return n


class NotRegularFile(OSError):
    """A named pipe, device or socket: never read (reading a pipe would wait forever)."""


def read_limited(path: str, max_bytes: int) -> bytes:
    """At most max_bytes + 1 bytes of a regular file (one more than allowed shows it is too
    big). Opened without blocking and checked before reading: a pipe is refused."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            if max_bytes <= 0:
                return f.read()
            # a chunk at a time: a read of max_bytes + 1 at once allocates that much first
            # (--max-file-bytes of a terabyte: a MemoryError for a file of 2 KB)
            chunks, left = [], max_bytes + 1
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_file(path: str, limit: int = 1_000_000) -> str | None:
    try:
        data = read_limited(path, limit)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


class FolderSource(CorpusSource):
    """Every source code file under a folder, by extension; other files count as unsupported.

    Origin: repository = the folder's name, path relative and "/"-separated, no commit and
    no link; license from a LICENSE / COPYING file at the top of the folder.
    """

    kind = "folder"

    def __init__(self, spec: str, root: str, *, max_file_bytes: int = 1_000_000) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        self.root = os.path.realpath(root)
        self.name = os.path.basename(self.root) or self.root
        self.repository = self.name
        self.license = self._license()

    def _license(self) -> str:
        try:
            names = [e.name for e in os.scandir(self.root) if e.is_file(follow_symlinks=False)]
        except OSError:
            return "NOASSERTION"
        return license_from_files(names, lambda n: read_text_file(os.path.join(self.root, n)))

    def describe(self) -> dict:
        return {**super().describe(), "repository": self.repository, "license": self.license}

    def _files(self) -> Iterator[tuple[str, str]]:
        """(absolute path, relative "/" path) of every file, in sorted order."""

        def unreadable(error: OSError) -> None:
            # a folder that cannot be listed: counted; under a path too long, its files
            if too_long(error) and error.filename:
                self.skipped[SkipReasons.LONG_PATH] += count_files_below(error.filename) or 1
            else:
                self.skipped[SkipReasons.UNREADABLE] += 1

        for dirpath, dirnames, filenames in os.walk(self.root, onerror=unreadable):
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not skip_dir(d)
                and not os.path.islink(os.path.join(dirpath, d))
                and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
            )
            rel_dir = os.path.relpath(dirpath, self.root)
            for filename in sorted(filenames):
                rel = filename if rel_dir == "." else os.path.join(rel_dir, filename)
                yield os.path.join(dirpath, filename), clean_path(rel.replace(os.sep, "/"))

    def _documents(self) -> Iterator[Document]:
        for full, rel in self._files():
            language = language_for_path(rel)
            if not language or os.path.islink(full):
                self.skip_unsupported(rel, "" if not language else "link")
                continue
            try:
                st = os.stat(full)
                if not stat.S_ISREG(st.st_mode):
                    self.skip_unsupported(rel, "special file")  # a pipe, device or socket
                    continue
                if is_oversize(st.st_size, self.max_file_bytes):
                    self.skipped[SkipReasons.OVERSIZE] += 1
                    continue
                data = read_limited(full, self.max_file_bytes)
            except NotRegularFile:
                self.skip_unsupported(rel, "special file")
                continue
            except OSError as e:
                reason = SkipReasons.LONG_PATH if too_long(e) else SkipReasons.UNREADABLE
                self.skipped[reason] += 1
                continue
            text, reason = text_from_bytes(data, self.max_file_bytes)
            if reason:
                self.skipped[reason] += 1
                continue
            origin = Origin(
                repository=self.repository,
                path=rel,
                commit="",
                license=self.license,
                link="",
                line_anchor=False,
            )
            yield Document(text=text, origin=origin, language=language)


def read_checked(source: CorpusSource, full: str, *, links: bool = True) -> str | None:
    """The text of a file of a source, or None after counting in `source.skipped` why it
    is left out (oversize, unreadable, binary...; a symbolic link too unless `links`: one
    could point anywhere)."""
    try:
        if not links and os.path.islink(full):
            source.skip_unsupported(full, "link")
            return None
        if is_oversize(os.stat(full).st_size, source.max_file_bytes):
            source.skipped[SkipReasons.OVERSIZE] += 1
            return None
        data = read_limited(full, source.max_file_bytes)
    except OSError:
        source.skipped[SkipReasons.UNREADABLE] += 1
        return None
    text, reason = text_from_bytes(data, source.max_file_bytes)
    if reason:
        source.skipped[reason] += 1
        return None
    return text
