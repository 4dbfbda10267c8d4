"""What `check` reads: files and folders (in a git work tree, its tracked files only),
minus `--exclude` globs; the decisions file that applies to each; and a baseline of
accepted quotes so that only new ones fail.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..judge.decisions import FILE_NAME, Decisions, load_decisions
from ..judge.quote_identity import QuoteIdentity

SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".tox"}
MAX_FILE_BYTES = 4 * 1024 * 1024  # larger files are reported and skipped
BASELINE_FORMAT = 1


@dataclass(frozen=True)
class Skipped:
    path: str
    why: str


def _git_tracked(folder: Path) -> list[Path] | None:
    """The files git tracks under `folder`, or None when it is not in a git work tree."""
    try:
        out = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "-z", "--cached", "--", "."],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    names = [n for n in out.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    return [folder / n for n in names]


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
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


def display_path(path: Path) -> str:
    """Relative to the current folder when inside it, `/` separated."""
    with contextlib.suppress(ValueError):
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    return path.as_posix()


def collect_files(
    paths: Iterable[str], exclude: Iterable[str] = ()
) -> tuple[list[Path], list[Skipped]]:
    """The files to check, in a stable order, and those skipped with the reason."""
    exclude = list(exclude)
    files: list[Path] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            found = _git_tracked(p)
            candidates = sorted(found) if found is not None else list(_walk(p))
        elif p.exists():
            candidates = [p]
        else:  # a mistyped path must not pass a CI run
            raise FileNotFoundError(f"cannot read {arg}: no such file or folder")
        for f in candidates:
            shown = display_path(f)
            if shown in seen or excluded(shown, exclude):
                continue
            seen.add(shown)
            if f.name == FILE_NAME:
                continue
            try:
                size = f.stat().st_size
            except OSError as e:
                skipped.append(Skipped(shown, e.strerror or str(e)))
                continue
            if not f.is_file():
                continue
            if size > MAX_FILE_BYTES:
                skipped.append(Skipped(shown, f"larger than {MAX_FILE_BYTES // 2**20} MiB"))
                continue
            files.append(f)
    return files, skipped


def read_code(path: Path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte in its first 8 KiB)."""
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


class DecisionsFinder:
    """The decisions file that applies to a file: `.recitation.toml` in its folder or the
    nearest folder above it (the editor reads the one at the workspace folder's root)."""

    def __init__(self, explicit: str | None = None):
        self._explicit = explicit
        self._by_dir: dict[Path, tuple[Path | None, Decisions | None]] = {}

    def for_file(self, path: Path) -> tuple[Path | None, Decisions | None]:
        if self._explicit:
            return self._for_explicit()
        return self._for_dir(path.resolve().parent)

    def _for_explicit(self) -> tuple[Path | None, Decisions | None]:
        from ..judge.decisions import DecisionsError, parse_decisions

        p = Path(self._explicit)
        key = p.resolve()
        if key not in self._by_dir:
            try:
                text = p.read_text(encoding="utf-8")
            except OSError as e:
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
            return Path(os.path.relpath(file.resolve(), self.path.resolve().parent)).as_posix()
        except ValueError:  # another drive
            return file.resolve().as_posix()

    def covers(self, file: Path, quote: QuoteIdentity) -> bool:
        return any(e.identity.covers(quote) for e in self._by_file.get(self._key(file), ()))

    @classmethod
    def read(cls, path: str) -> Baseline:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ValueError(
                f"{path}: no such baseline (write one with --update-baseline)"
            ) from None
        except (OSError, ValueError) as e:
            raise ValueError(f"{path}: not a baseline: {e}") from None
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
        p.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return cls(p, entries)
