"""A team's decisions about quotes, kept in `.recitation.toml` at the root of a folder.

The file is TOML, written for people and for merges (one table per dismissal, kept in `id`
order, so that two branches dismissing different quotes touch different lines):

    version = 1

    [allow]                      # sources that are never a warning: our own code
    sources = ["github.com/acme/*", "acme/widgets", "acme/tools/src/**"]

    [policy]                     # what a quote under a license shows as in the editor and
    network-copyleft = "error"   # in `check`: off, hint, information, warning, error;
    "GPL-2.0-only" = "warning"   # keys: a category (see license_categories) or an SPDX id

    [policy.completions]         # the completion proxy: off, warn, block
    network-copyleft = "block"

    [check]                      # `recitation-index check`: files it cannot read (binary,
    allow-skipped = ["*.png"]    # links out of the repository...) fail the run unless
                                 # allowed here: true, or globs relative to this folder

    [[dismissed]]                # a quote dismissed by its content (see quote_identity)
    id = "3f2a9c0d1e4b5a6c"
    words = 408
    quote = "def copyfileobj(fsrc, fdst, length=0):"
    source = "python/cpython Lib/shutil.py L224-L288"
    license = "PSF-2.0"
    date = "2026-11-23"
    fingerprints = "00a1b2c3 ..."

Reading is all or nothing: a file with an error (a wrong value, an unknown key, a policy
key that is no license) is reported with its line and not used, so the caller keeps the
decisions it had. The file must be a regular file of at most 2 MiB (MAX_BYTES). Writing
keeps the user's comments and layout, a byte order mark and the file's mode.
"""

from __future__ import annotations

import datetime
import fnmatch
import functools
import hashlib
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..model import Source
from ..safe_text import printable
from ..store.small_files import read_small_file, replace_file
from .license_categories import CATEGORIES, is_known_license, license_category, normalize_license
from .quote_identity import QuoteIdentity
from .toml_depth import LIMIT, too_deep

FILE_NAME = ".recitation.toml"
FORMAT = 1
MAX_BYTES = 2 << 20  # a decisions file larger than this is refused (thousands of dismissals)
_BOM = "\ufeff"

Action = Literal["off", "hint", "information", "warning", "error"]
ACTIONS: tuple[Action, ...] = ("off", "hint", "information", "warning", "error")
CompletionAction = Literal["off", "warn", "block"]
COMPLETION_ACTIONS: tuple[CompletionAction, ...] = ("off", "warn", "block")

NEW_FILE = """\
# Recitation's decisions for this folder, shared by the editor and `recitation-index check`.
# Commit this file: dismissals, allowed sources and the license policy then hold for the
# whole team. Format: see Recitation's README, "Decisions".
version = 1

[allow]
# Sources that are never a warning (our own code): a repository (`acme/widgets`), a URL
# glob (`github.com/acme/*`) or a path glob (`acme/widgets/src/**`).
sources = []

[policy]
# What a quote under a license shows as: off, hint, information, warning or error.
# Keys: permissive, weak-copyleft, strong-copyleft, network-copyleft, restricted, unknown,
# or an SPDX id ("GPL-3.0-only"). An SPDX id wins over its category.

[policy.completions]
# What the completion proxy does with a suggestion that quotes under a license:
# off, warn or block (same keys).
"""


class DecisionsError(ValueError):
    """A decisions file that cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class Dismissal:
    identity: QuoteIdentity
    quote: str = ""  # the quote's first line, for people reading the file
    source: str = ""
    license: str = ""
    date: str = ""

    @property
    def id(self) -> str:
        return self.identity.id

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "words": self.identity.words,
            "quote": self.quote,
            "source": self.source,
            "license": self.license,
            "date": self.date,
        }


@dataclass(frozen=True)
class Policy:
    editor: dict[str, Action] = field(default_factory=dict)  # lower-cased keys
    completions: dict[str, CompletionAction] = field(default_factory=dict)

    def _lookup(self, table: dict, license: str) -> tuple[str, str] | None:
        spdx = normalize_license(license)
        for key in (spdx.lower(), (license or "").strip().lower()):
            if key in table:
                return table[key], key
        category = license_category(license)
        if category in table:
            return table[category], category
        return None

    def editor_action(self, license: str) -> tuple[Action, str] | None:
        """(action, the key that chose it) for a license, or None when the policy is
        silent about it."""
        return self._lookup(self.editor, license)

    def completion_action(self, license: str) -> tuple[CompletionAction, str] | None:
        return self._lookup(self.completions, license)

    def to_dict(self) -> dict:
        return {"editor": dict(self.editor), "completions": dict(self.completions)}


@dataclass(frozen=True)
class CheckSettings:
    """`[check]`: what `recitation-index check` accepts. `allow_skipped`: True (every file
    it cannot check), or globs of such files relative to the decisions file's folder."""

    allow_skipped: bool | tuple[str, ...] = False

    def allows_skipping(self, relative: str) -> bool:
        """Whether a file that could not be checked (its `/` path relative to the decisions
        file's folder) may be left out without failing the run."""
        if isinstance(self.allow_skipped, bool):
            return self.allow_skipped
        return _path_matches(relative, self.allow_skipped)

    def to_dict(self) -> dict:
        a = self.allow_skipped
        return {"allow_skipped": a if isinstance(a, bool) else list(a)}


def _path_matches(path: str, patterns: Iterable[str]) -> bool:
    """`path` (relative, `/` separated) matches a glob, or one of its folders does."""
    parts = path.split("/")
    for pattern in patterns:
        p = pattern.strip().strip("/")
        if p.startswith("**/"):
            p = p[3:]
        if not p:
            continue
        if fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(parts[-1], p):
            return True
        if any(fnmatch.fnmatchcase("/".join(parts[: i + 1]), p) for i in range(len(parts) - 1)):
            return True
    return False


@dataclass(frozen=True)
class Decisions:
    dismissed: tuple[Dismissal, ...] = ()
    allowed: tuple[str, ...] = ()
    policy: Policy = field(default_factory=Policy)
    check: CheckSettings = field(default_factory=CheckSettings)

    def dismissal_for(self, quote: QuoteIdentity) -> Dismissal | None:
        """The first dismissal that covers `quote` (the same id, or fingerprints that hold
        all of its own), found through an index, not by reading every dismissal."""
        return self._dismissals.first_covering(quote)

    def allowed_by(self, sources: Iterable[Source]) -> str | None:
        """The first allow pattern naming one of `sources`, or None (for each source in
        turn, the first pattern in the file's order), in time independent of how many
        patterns there are (`AllowIndex`)."""
        for source in sources:
            pattern = self._allow.first_match(source_names(source))
            if pattern is not None:
                return pattern
        return None

    # built once per Decisions (it is immutable), on first use
    @functools.cached_property
    def _allow(self) -> AllowIndex:
        return AllowIndex(self.allowed)

    @functools.cached_property
    def _dismissals(self) -> DismissalIndex:
        return DismissalIndex(self.dismissed)

    def to_dict(self) -> dict:
        return {
            "dismissed": [d.to_dict() for d in self.dismissed],
            "allowed": list(self.allowed),
            "policy": self.policy.to_dict(),
            "check": self.check.to_dict(),
        }


def source_names(source: Source) -> list[str]:
    """What an allow pattern is compared with: `repo`, `repo/path`, and the link without
    its scheme and line fragment (`github.com/acme/widgets/blob/v1/src/x.py`)."""
    names = []
    repo = (source.repository or "").strip("/").lower()
    if repo:
        names.append(repo)
        if source.path:
            names.append(f"{repo}/{source.path.strip('/').lower()}")
    url = (source.url or "").split("#", 1)[0]
    if "://" in url:
        names.append(url.split("://", 1)[1].lower())
    return names


def literal_pattern(text: str) -> str:
    """An allow pattern that matches `text` itself, even when it holds glob characters."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def _normal_pattern(pattern: str) -> str:
    """What an allow pattern is compared as: lower case, without slashes around it or a
    scheme ("" matches nothing)."""
    p = pattern.strip().strip("/").lower()
    if "://" in p:
        p = p.split("://", 1)[1]
    return p


_GLOB_CHAR = re.compile(r"[*?\[]")


def _leading_folders(name: str) -> Iterator[str]:
    """`name`'s prefixes ending before a `/`, then `name` itself: `a`, `a/b`, `a/b/c`."""
    at = name.find("/")
    while at >= 0:
        yield name[:at]
        at = name.find("/", at + 1)
    yield name


class AllowIndex:
    """The allow patterns, indexed. A pattern names a name when, compared as
    `_normal_pattern` makes it, it is a glob matching the whole name (`*` crosses `/`), or
    it is plain and is the name or one of its leading folders. Plain patterns are kept by
    themselves; a glob under the folders before its first wildcard (`github.com/acme/*`
    under `github.com/acme`), so that a name is compared with the globs under its own
    leading folders only. `first_match`: the first pattern, in the file's order, that names
    one of the names."""

    def __init__(self, patterns: Iterable[str]):
        self.patterns = tuple(patterns)
        self._plain: dict[str, int] = {}  # pattern -> its first position
        self._globs: dict[str, list[tuple[int, str]]] = {}  # its fixed folders -> globs
        plain = self._plain
        for i, pattern in enumerate(self.patterns):
            p = _normal_pattern(pattern)
            if not p:
                continue
            if "*" not in p and "?" not in p and "[" not in p:
                if p not in plain:
                    plain[p] = i
                continue
            fixed = _GLOB_CHAR.split(p, 1)[0]
            folders = fixed.rsplit("/", 1)[0] if "/" in fixed else ""
            self._globs.setdefault(folders, []).append((i, p))

    def first_match(self, names: Iterable[str]) -> str | None:
        best: int | None = None
        for name in names:
            keys = ["", *_leading_folders(name)]
            for key in keys[1:]:
                i = self._plain.get(key)
                if i is not None and (best is None or i < best):
                    best = i
            for key in keys:
                for i, glob in self._globs.get(key, ()):
                    if best is not None and i >= best:
                        break
                    if fnmatch.fnmatchcase(name, glob):
                        best = i
                        break
        return self.patterns[best] if best is not None else None


class DismissalIndex:
    """Dismissals by id and by fingerprint. A quote is covered by a dismissal of its id, or
    by one whose fingerprints hold all of the quote's (`QuoteIdentity.covers`): such a one
    holds the quote's smallest fingerprint, so only the dismissals holding it are compared.
    Answers as reading the dismissals in order would: the first that covers the quote."""

    def __init__(self, dismissed: Iterable[Dismissal]):
        self.dismissed = tuple(dismissed)
        self._by_id: dict[str, int] = {}
        self._by_fingerprint: dict[int, list[int]] = {}
        for i, d in enumerate(self.dismissed):
            self._by_id.setdefault(d.id, i)
            for h in d.identity.fingerprints:
                self._by_fingerprint.setdefault(h, []).append(i)

    def first_covering(self, quote: QuoteIdentity) -> Dismissal | None:
        best = self._by_id.get(quote.id)
        if self._by_fingerprint and quote.fingerprints:  # (a quote's are made when needed)
            for i in self._by_fingerprint.get(min(quote.fingerprints), ()):
                if best is not None and i >= best:
                    break
                if self.dismissed[i].identity.covers(quote):
                    best = i
                    break
        return self.dismissed[best] if best is not None else None


# -- reading -----------------------------------------------------------------------------

_SECTIONS = ("version", "allow", "policy", "dismissed", "check")
_DISMISSAL_KEYS = ("id", "words", "quote", "source", "license", "date", "fingerprints")


def parse_decisions(text: str, where: str = FILE_NAME) -> Decisions:
    """Decisions from the text of a decisions file; DecisionsError names the line."""
    import tomllib

    text = text.removeprefix(_BOM)
    line = too_deep(text)  # before the parser recurses or slows down on it
    if line is not None:
        raise DecisionsError(_too_deep(where, line))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        _parse_with_tomlkit(text, where)  # its messages name the line the same way always
        raise DecisionsError(f"{where}: {e}") from None
    except RecursionError:
        raise DecisionsError(_too_deep(where)) from None
    return _decisions_of(data, text, where)


def _too_deep(where: str, line: int | None = None) -> str:
    at = f"line {line}: " if line else ""
    return (
        f"{where}: {at}arrays, tables or dotted keys nested too deeply to read "
        f"(over {LIMIT} levels)"
    )


def _parse_with_tomlkit(text: str, where: str):
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as e:
        raise DecisionsError(f"{where}: line {e.line}: {_reason(e)}") from None
    except RecursionError:
        raise DecisionsError(_too_deep(where)) from None


def _parse(text: str, where: str):
    """(the TOML document, as tomlkit keeps it for editing; its decisions)."""
    decisions = parse_decisions(text, where)
    return _parse_with_tomlkit(text.removeprefix(_BOM), where), decisions


def _decisions_of(data: dict, text: str, where: str) -> Decisions:
    def fail(message: str, key: str | None = None, after: str | None = None) -> DecisionsError:
        line = _line_of(text, key, after) if key else None
        return DecisionsError(f"{where}: {f'line {line}: ' if line else ''}{message}")

    def no_unknown(table: dict, known: Iterable[str], name: str) -> None:
        unknown = [k for k in table if k not in known]
        if unknown:
            key = unknown[0]
            raise fail(
                f"unknown key {printable(key, 80)!r} in {name} (expected {', '.join(known)})",
                key,
                name.strip("[]"),
            )

    version = data.get("version", FORMAT)
    if version != FORMAT:
        raise fail(f"version {version!r} is not one this Recitation reads ({FORMAT})", "version")
    unknown = [k for k in data if k not in _SECTIONS]
    if unknown:
        key = unknown[0]
        raise fail(
            f"unknown section {printable(key, 80)!r} (expected allow, policy, dismissed, check)",
            key,
        )

    allow = data.get("allow", {})
    if not isinstance(allow, dict):
        raise fail("[allow] must be a table", "allow")
    no_unknown(allow, ("sources",), "[allow]")
    allowed = allow.get("sources", [])
    if not isinstance(allowed, list) or not all(isinstance(p, str) for p in allowed):
        raise fail("allow.sources must be a list of strings", "sources")

    policy = data.get("policy", {})
    if not isinstance(policy, dict):
        raise fail("[policy] must be a table", "policy")
    editor: dict[str, Action] = {}
    completions: dict[str, CompletionAction] = {}

    def policy_key(key: str, table: str) -> str:
        if key.strip().lower() in CATEGORIES or is_known_license(key):
            return _policy_key(key)
        raise fail(
            f"{printable(key, 80)!r} in {table} is neither a license category "
            f"({', '.join(CATEGORIES)}) nor a license id Recitation knows (SPDX, LicenseRef-...)",
            key,
            table.strip("[]"),
        )

    for key, value in policy.items():
        if key == "completions":
            if not isinstance(value, dict):
                raise fail("[policy.completions] must be a table", "completions")
            for k, v in value.items():
                if v not in COMPLETION_ACTIONS:
                    raise fail(
                        f"{printable(k, 80)} = {printable(repr(v), 80)}: expected one of "
                        f"{', '.join(COMPLETION_ACTIONS)}",
                        k,
                        "policy.completions",
                    )
                completions[policy_key(k, "[policy.completions]")] = v
            continue
        if value not in ACTIONS:
            raise fail(
                f"{printable(key, 80)} = {printable(repr(value), 80)}: expected one of "
                f"{', '.join(ACTIONS)}",
                key,
                "policy",
            )
        editor[policy_key(key, "[policy]")] = value

    entries = data.get("dismissed", [])
    if not isinstance(entries, list):
        raise fail("dismissed must be an array of tables ([[dismissed]])", "dismissed")
    dismissed = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise fail("each [[dismissed]] needs an id", "dismissed")
        no_unknown(entry, _DISMISSAL_KEYS, "[[dismissed]]")
        try:
            fingerprints = QuoteIdentity.parse_fingerprints(str(entry.get("fingerprints", "")))
        except ValueError as e:
            raise fail(f"dismissed {entry['id']}: {e}", "fingerprints") from None
        words = entry.get("words", 0)
        if not isinstance(words, int) or isinstance(words, bool) or words < 0:
            raise fail(f"dismissed {entry['id']}: words must be a count of words", "words")
        for key in ("quote", "source", "license", "date"):
            value = entry.get(key, "")
            if not isinstance(value, str | datetime.date):
                raise fail(f"dismissed {entry['id']}: {key} must be a string", key)
        identity = QuoteIdentity(entry["id"], words, fingerprints)
        dismissed.append(
            Dismissal(
                identity,
                quote=str(entry.get("quote", "")),
                source=str(entry.get("source", "")),
                license=str(entry.get("license", "")),
                date=str(entry.get("date", "")),
            )
        )

    check = data.get("check", {})
    if not isinstance(check, dict):
        raise fail("[check] must be a table", "check")
    no_unknown(check, ("allow-skipped",), "[check]")
    allow_skipped = check.get("allow-skipped", False)
    if isinstance(allow_skipped, list) and all(isinstance(p, str) for p in allow_skipped):
        allow_skipped = tuple(allow_skipped)
    elif not isinstance(allow_skipped, bool):
        raise fail(
            "check.allow-skipped must be true, false or a list of globs", "allow-skipped", "check"
        )
    return Decisions(
        tuple(dismissed), tuple(allowed), Policy(editor, completions), CheckSettings(allow_skipped)
    )


def _policy_key(key: str) -> str:
    k = key.strip().lower()
    return k if k in CATEGORIES else normalize_license(key).lower()


def _reason(e: Exception) -> str:
    text = re.sub(r" at line \d+ col \d+$", "", str(e))
    return text.replace("Unexpected character: '\\x00'", "the file ends too early")


def _line_of(text: str, key: str, after: str | None = None) -> int | None:
    """The first line that defines `key` (or holds the value), 1-based; with `after`, the
    first one after the header of the table `after` when there is one."""
    start = 0
    if after:
        header = re.compile(r"^\s*\[\[?\s*" + re.escape(after) + r"\s*\]", re.M).search(text)
        start = header.end() if header else 0
    pattern = re.compile(r'^\s*(\[\[?)?\s*["\']?' + re.escape(key) + r'["\']?\s*(\]|=)', re.M)
    m = pattern.search(text, start) or pattern.search(text) or re.search(re.escape(key), text)
    return text.count("\n", 0, m.start()) + 1 if m else None


def read_decisions_text(path: str | os.PathLike) -> str:
    """The text of a decisions file (a regular file of at most MAX_BYTES, UTF-8 with or
    without a byte order mark). FileNotFoundError when there is none; DecisionsError, one
    line naming the file, when it cannot be used."""
    try:
        data = read_small_file(path, MAX_BYTES)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise DecisionsError(f"{os.fspath(path)}: cannot read: {e.strerror or e}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DecisionsError(f"{os.fspath(path)}: not UTF-8 (byte {e.start})") from None


def load_decisions(folder: str | os.PathLike) -> Decisions | None:
    """The decisions of a folder, None when it has no decisions file. A file read again
    with the same text is not parsed again (`parsed_decisions`)."""
    path = Path(folder) / FILE_NAME
    try:
        text = read_decisions_text(path)
    except FileNotFoundError:
        return None
    return parsed_decisions(text, str(path))


_PARSED: dict[str, tuple[bytes, Decisions]] = {}  # where -> (its text's digest, decisions)
_PARSED_LOCK = threading.Lock()
_PARSED_FILES = 64  # the files whose last text is kept parsed


def parsed_decisions(text: str, where: str = FILE_NAME) -> Decisions:
    """`parse_decisions(text, where)`, parsed once per text of a file: the last text read
    of each file is kept with its decisions (by a digest of the text, so that a change of
    any size, at any time, is parsed). A file with an error is parsed again each time."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _PARSED_LOCK:
        kept = _PARSED.get(where)
    if kept is not None and kept[0] == digest:
        return kept[1]
    decisions = parse_decisions(text, where)
    with _PARSED_LOCK:
        _PARSED.pop(where, None)
        _PARSED[where] = (digest, decisions)
        while len(_PARSED) > _PARSED_FILES:
            del _PARSED[next(iter(_PARSED))]
    return decisions


# -- writing -----------------------------------------------------------------------------


class DecisionsFile:
    """Edits a folder's decisions file in place, keeping comments and layout."""

    def __init__(self, folder: str | os.PathLike):
        self.path = Path(folder) / FILE_NAME

    def _load(self):
        """(the document to edit, the decisions it holds); a file with an error is
        refused (DecisionsError), never edited."""
        try:
            text = read_decisions_text(self.path)
        except FileNotFoundError:
            text = NEW_FILE
        self._bom = text.startswith(_BOM)
        return _parse(text, str(self.path))

    def _save(self, doc) -> Decisions:
        """Write the document in place of the file, atomically, with the file's mode (a
        new file: the mode the umask gives) and its byte order mark if it had one."""
        import tomlkit

        text = tomlkit.dumps(doc)
        decisions = parse_decisions(text, str(self.path))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = ((_BOM if getattr(self, "_bom", False) else "") + text).encode("utf-8")
        try:  # never through a special file: see `replace_file`
            replace_file(self.path, data)
        except OSError as e:
            raise DecisionsError(
                f"{os.fspath(self.path)}: cannot write: {e.strerror or e}"
            ) from None
        return decisions

    def dismiss(self, identity: QuoteIdentity, quote: str, source: str, license: str) -> Decisions:
        import tomlkit

        doc, _ = self._load()
        entries = doc.get("dismissed")
        if entries is None:
            entries = tomlkit.aot()
            doc.append("dismissed", entries)
        if any(e.get("id") == identity.id for e in entries):
            return self._save(doc)
        entry = tomlkit.table()
        entry["id"] = identity.id
        entry["words"] = identity.words
        entry["quote"] = printable(quote, 120)
        entry["source"] = printable(source, 300)
        entry["license"] = printable(license, 200)
        entry["date"] = datetime.date.today().isoformat()
        entry["fingerprints"] = identity.fingerprint_text()
        at = sum(1 for e in entries if str(e.get("id", "")) < identity.id)
        entries.insert(at, entry)
        return self._save(doc)

    def undismiss(self, quote_id: str) -> tuple[Decisions, bool]:
        doc, decisions = self._load()
        for i, e in enumerate(doc.get("dismissed") or []):
            if e.get("id") == quote_id:
                del doc["dismissed"][i]
                if not len(doc["dismissed"]):
                    del doc["dismissed"]
                return self._save(doc), True
        return decisions, False

    def allow(self, pattern: str) -> Decisions:
        import tomlkit

        doc, _ = self._load()
        if "allow" not in doc:
            doc.append("allow", tomlkit.table())
        allow = doc["allow"]
        if "sources" not in allow:
            allow["sources"] = tomlkit.array()
        if pattern not in list(allow["sources"]):
            allow["sources"].append(pattern)
        return self._save(doc)

    def disallow(self, pattern: str) -> tuple[Decisions, bool]:
        doc, decisions = self._load()
        sources = doc.get("allow", {}).get("sources")
        if sources is not None and pattern in list(sources):
            sources.remove(pattern)
            return self._save(doc), True
        return decisions, False
