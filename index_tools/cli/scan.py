"""What `check` reads: files and folders (in a git work tree, its tracked files only),
minus `--exclude` globs; the decisions file that applies to each; and a baseline of
accepted quotes so that only new ones fail.

Every file found and not checked is `Skipped` with the reason, so that `check` can list it
and fail unless skipping it is allowed. Links are followed inside the repository (or the
folder given, outside git) only: a link out of it, a broken link and a loop are skipped, a
named pipe or a device is never opened.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import functools
import json
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..judge.decisions import FILE_NAME, Decisions, load_decisions
from ..judge.quote_identity import QuoteIdentity
from ..safe_text import escape_name, printable
from ..store.small_files import kind_of, read_small_file, replace_file, writable_target

SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox"}
BASELINE_FORMAT = 1
BASELINE_MAX_BYTES = 64 << 20  # a baseline larger than this is refused


@dataclass(frozen=True)
class Skipped:
    path: Path  # as found (a link's own path)
    shown: str  # as printed
    why: str


@dataclass
class Collected:
    files: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    untracked: list[tuple[str, int]] = field(default_factory=list)  # (folder shown, files)


def _git(folder: Path, *args: str) -> bytes | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), *args], capture_output=True, timeout=120, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def _names(out: bytes) -> list[str]:
    return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]


def _git_tracked(folder: Path) -> list[Path] | None:
    """The files git tracks under `folder`, or None when it is not in a git work tree."""
    out = _git(folder, "ls-files", "-z", "--cached", "--", ".")
    return None if out is None else [folder / n for n in _names(out)]


def _git_untracked(folder: Path) -> list[Path]:
    """Files under `folder` that git does not track and does not ignore."""
    out = _git(folder, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
    return [] if out is None else [folder / n for n in _names(out)]


@functools.lru_cache(maxsize=1024)
def _git_top(folder: Path) -> Path | None:
    out = _git(folder, "rev-parse", "--show-toplevel")
    if not out:
        return None
    return Path(os.path.realpath(out.decode("utf-8", "surrogateescape").strip()))


def _walk(folder: Path) -> Iterator[Path]:
    """Every file under a folder outside git, and links to folders (not followed)."""
    for root, dirs, files in os.walk(folder):
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and d not in links)
        for name in sorted([*files, *links]):
            yield Path(root) / name


def excluded(path: str, patterns: Iterable[str]) -> bool:
    """`path` (relative, `/` separated) matches a glob, or one of its folders does."""
    parts = path.split("/")
    for pattern in patterns:
        p = pattern.strip().rstrip("/")
        if not p:
            continue
        if fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(parts[-1], p):
            return True
        if any(fnmatch.fnmatchcase("/".join(parts[: i + 1]), p) for i in range(len(parts) - 1)):
            return True
        if p.startswith("**/") and excluded(path, [p[3:]]):
            return True
    return False


def real_parent(path: Path) -> Path:
    """`path` with its folders' links resolved, the file's own name kept (a link stays
    itself: its display, decisions and baseline entries are the link's)."""
    p = Path(os.path.abspath(path))
    with contextlib.suppress(OSError, RuntimeError):
        return p.parent.resolve() / p.name
    return p


def relative_path(path: Path) -> str:
    """Relative to the current folder when inside it, `/` separated, as the file system
    names it (what --exclude globs match)."""
    cwd = Path.cwd()
    for base, p in ((cwd, Path(os.path.abspath(path))), (cwd.resolve(), real_parent(path))):
        with contextlib.suppress(ValueError):
            return p.relative_to(base).as_posix()
    return path.as_posix()


def display_path(path: Path) -> str:
    """The path as every report shows it: `relative_path`, bytes that are not UTF-8
    escaped (`bad\\xff.py`, see `escape_name`)."""
    return escape_name(relative_path(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def _root_of_file(path: Path) -> Path:
    """Where a file given by name may link to: its git work tree, else the current
    folder when it is inside it, else its own folder."""
    parent = Path(os.path.abspath(path)).parent
    top = _git_top(parent) if parent.is_dir() else None
    if top is not None:
        return top
    cwd = Path.cwd().resolve()
    return cwd if _inside(real_parent(path), cwd) else parent.resolve()


def collect_files(paths: Iterable[str], exclude: Iterable[str] = ()) -> Collected:
    """The files to check, in a stable order; those skipped with the reason; untracked
    files left out of folders in git work trees. FileNotFoundError for a path that is not
    there (a mistyped path must not pass a CI run)."""
    exclude = list(exclude)
    out = Collected()
    seen: set[str] = set()
    found: list[tuple[Path, Path, bool]] = []  # (path, the file it is, whether a link)
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            tracked = _git_tracked(p)
            if tracked is not None:
                root = _git_top(p) or p.resolve()
                candidates = sorted(tracked)
                untracked = [
                    f
                    for f in _git_untracked(p)
                    if f.name != FILE_NAME and not excluded(relative_path(f), exclude)
                ]
                if untracked:
                    out.untracked.append((display_path(p), len(untracked)))
            else:
                root, candidates = p.resolve(), list(_walk(p))
        elif os.path.lexists(p):  # a file, or a link however broken
            root, candidates = _root_of_file(p), [p]
        else:
            raise FileNotFoundError(f"cannot read {arg}: no such file or folder")
        for f in candidates:
            relative = relative_path(f)
            if relative in seen or excluded(relative, exclude):
                continue
            seen.add(relative)
            if f.name == FILE_NAME:
                continue
            why, real, link = _what_it_is(f, root)
            if why is not None:
                if why:
                    out.skipped.append(Skipped(f, escape_name(relative), why))
                continue
            found.append((f, real, link))
    # a link to a file that is checked anyway is that file: checked once, under its name
    checked = {real for _, real, link in found if not link}
    for f, real, link in found:
        if link:
            if real in checked:
                continue
            checked.add(real)
        out.files.append(f)
    return out


def _what_it_is(f: Path, root: Path) -> tuple[str | None, Path, bool]:
    """(None, the regular file it is, whether `f` is a link to it) for a file to check;
    ("why", ...) for one to skip with the reason; ("", ...) for one to pass over in silence
    (gone from the work tree; a link to a folder inside the repository, whose files are
    listed where they are)."""
    try:
        st = os.lstat(f)
    except FileNotFoundError:
        return "", f, False  # tracked, deleted from the work tree: no code to read
    except OSError as e:
        return e.strerror or str(e), f, False
    if not stat.S_ISLNK(st.st_mode):
        if stat.S_ISDIR(st.st_mode):  # listed by git: a submodule
            return "a git submodule (check it on its own)", f, False
        if not stat.S_ISREG(st.st_mode):
            return f"{kind_of(st.st_mode)}, not a regular file", f, False
        return None, real_parent(f), False
    try:
        real = Path(os.path.realpath(f, strict=True))
        st = os.stat(real)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return "a symlink loop", f, True
        if e.errno == errno.ENOENT:
            return "a broken symlink (what it points to is not there)", f, True
        return e.strerror or str(e), f, True
    if not _inside(real, root):
        what = "folder" if stat.S_ISDIR(st.st_mode) else "file"
        return f"a symlink to a {what} outside the repository (not followed)", f, True
    if stat.S_ISDIR(st.st_mode):
        return "", f, True
    if not stat.S_ISREG(st.st_mode):
        return f"a symlink to {kind_of(st.st_mode)}, not a regular file", f, True
    return None, real, True


class DecisionsFinder:
    """The decisions file that applies to a file: `.recitation.toml` in its folder or the
    nearest folder above it (the editor reads the one at the workspace folder's root)."""

    def __init__(self, explicit: str | None = None):
        self._explicit = explicit
        self._by_dir: dict[Path, tuple[Path | None, Decisions | None]] = {}

    def for_file(self, path: Path) -> tuple[Path | None, Decisions | None]:
        if self._explicit:
            return self._for_explicit()
        return self._for_dir(real_parent(path).parent)

    def _for_explicit(self) -> tuple[Path | None, Decisions | None]:
        from ..judge.decisions import DecisionsError, parse_decisions, read_decisions_text

        p = Path(self._explicit)
        key = real_parent(p)
        if key not in self._by_dir:
            try:
                text = read_decisions_text(p)
            except FileNotFoundError as e:
                raise DecisionsError(f"{p}: cannot read: {e.strerror or e}") from None
            self._by_dir[key] = (p, parse_decisions(text, str(p)))
        return self._by_dir[key]

    def _for_dir(self, folder: Path) -> tuple[Path | None, Decisions | None]:
        if folder in self._by_dir:
            return self._by_dir[folder]
        decisions = load_decisions(folder)
        if decisions is not None:
            found: tuple[Path | None, Decisions | None] = (folder / FILE_NAME, decisions)
        elif (folder / ".git").exists() or folder.parent == folder:
            found = (None, None)  # the top of the repository (or of the disk)
        else:
            found = self._for_dir(folder.parent)
        self._by_dir[folder] = found
        return found


# -- baseline ------------------------------------------------------------------------------


@dataclass(frozen=True)
class BaselineEntry:
    file: str  # relative to the baseline file's folder, `/` separated
    identity: QuoteIdentity
    source: str = ""


class Baseline:
    """Quotes accepted when the baseline was written; a result is in it when an entry of
    the same file covers its words (see QuoteIdentity.covers)."""

    def __init__(self, path: Path, entries: list[BaselineEntry]):
        self.path = path
        self.entries = entries
        self._by_file: dict[str, list[BaselineEntry]] = {}
        for e in entries:
            self._by_file.setdefault(e.file, []).append(e)

    def _key(self, file: Path) -> str:
        try:
            return Path(os.path.relpath(real_parent(file), self.path.resolve().parent)).as_posix()
        except ValueError:  # another drive
            return real_parent(file).as_posix()

    def covers(self, file: Path, quote: QuoteIdentity) -> bool:
        return any(e.identity.covers(quote) for e in self._by_file.get(self._key(file), ()))

    @classmethod
    def read(cls, path: str) -> Baseline:
        p = Path(path)
        try:
            data = json.loads(read_small_file(p, BASELINE_MAX_BYTES).decode("utf-8-sig"))
        except FileNotFoundError:
            raise ValueError(
                f"{path}: no such baseline (write one with --update-baseline)"
            ) from None
        except OSError as e:
            raise ValueError(f"{path}: cannot read the baseline: {e.strerror or e}") from None
        except (ValueError, RecursionError) as e:
            raise ValueError(f"{path}: not a baseline: {printable(e, 200)}") from None
        if not isinstance(data, dict) or data.get("version") != BASELINE_FORMAT:
            raise ValueError(f"{path}: not a baseline of format {BASELINE_FORMAT}")
        entries = []
        for item in data.get("results", []):
            try:
                identity = QuoteIdentity(
                    str(item["id"]),
                    int(item.get("words", 0)),
                    QuoteIdentity.parse_fingerprints(str(item.get("fingerprints", ""))),
                )
                entries.append(
                    BaselineEntry(str(item["file"]), identity, str(item.get("source", "")))
                )
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{path}: a result that cannot be read: {e}") from None
        return cls(p, entries)

    @classmethod
    def write(cls, path: str, found: list[tuple[Path, QuoteIdentity, str]]) -> Baseline:
        p = Path(path)
        base = cls(p, [])
        entries = [BaselineEntry(base._key(f), q, s) for f, q, s in found]
        entries.sort(key=lambda e: (e.file, e.identity.id))
        data = {
            "version": BASELINE_FORMAT,
            "tool": "recitation",
            "results": [
                {
                    "file": e.file,
                    "id": e.identity.id,
                    "words": e.identity.words,
                    "source": e.source,
                    "fingerprints": e.identity.fingerprint_text(),
                }
                for e in entries
            ],
        }
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        # a name's bytes that are not UTF-8 (surrogate escapes) as JSON escapes: valid UTF-8
        # that reads back as the same name
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)
        try:
            replace_file(p, text.encode("utf-8"))
        except OSError as e:
            raise ValueError(cannot_write_baseline(path, e)) from None
        return cls(p, entries)

    @staticmethod
    def check_writable(path: str) -> None:
        """ValueError, one line, when the baseline cannot be written there (a folder, a
        named pipe, a device... see `replace_file`): said before the files are read."""
        try:
            writable_target(path)
        except OSError as e:
            raise ValueError(cannot_write_baseline(path, e)) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def cannot_write_baseline(path: str, e: OSError) -> str:
    return f"{printable(path, 1000)}: cannot write the baseline: {e.strerror or e}"
