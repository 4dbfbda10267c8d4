"""The facts a bill of materials states, gathered once for every format (`sbom.py`):
each project file holding a quote (its checksums), each quote (its lines and bytes, its
license, its sources, its verdict, its attribution) and each source as a package, and the
words every format uses to say what a quote is. Untrusted metadata goes through `safe`
(one printable line that cannot close a tag-value `<text>` block) and `spdx_expression`
(a license is claimed only as an expression of SPDX-listed licenses)."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..judge.attribution import (
    find_region_attribution,
    plain_attribution,
    source_groups,
    split_lines,
)
from ..judge.verdict import Verdict
from ..model import Match, Source, count_phrase, describe_kind
from ..safe_text import clean_link, escape_name, printable
from .code_files import NotText
from .sbom_packages import SourcePackage, package_of
from .sbom_places import FileBytes, Place

_TEXT_TAG = re.compile(r"<(/?)(text)>", re.IGNORECASE)
_SLUG = re.compile(r"[^A-Za-z0-9.]+")


class SbomError(ValueError):
    """A bill of materials that cannot be written: one line for the user."""


@dataclass(frozen=True)
class Quoted:
    """A quote found in a project file: `match` with its character offsets in the file's
    text as `check` reads it, and its verdict (None: not judged)."""

    shown: str  # the file's path as reports show it, `/` separated
    path: Path
    match: Match
    verdict: Verdict | None = None


@dataclass(frozen=True)
class SbomOptions:
    project: str  # the described project's name
    tool_version: str
    namespace: str = ""  # pinned SPDX namespace (CycloneDX serial: a UUID made from it)
    notes: tuple[str, ...] = ()  # said in the document's comment (files checked...)
    # the project's folder: SPDX names its files relative to it (None: the quoted files')
    root: Path | None = None


@dataclass
class QuoteFacts:
    ref: str  # unique in the document, stable for the same quote in the same file
    quote_id: str  # the quote's identity, as .recitation.toml's dismissals name it
    place: Place
    match: Match
    verdict: Verdict | None
    license: str  # an SPDX expression of listed licenses, or "" (no assertion)
    recorded_license: str  # as the index records it, printable ("" for NOASSERTION)
    sources: list[tuple[Source, SourcePackage]]
    attribution: str  # the attribution line near it, or "" (not attributed)

    @property
    def state(self) -> str:
        return self.verdict.state if self.verdict else "open"

    @property
    def is_hint(self) -> bool:
        """Shown as a hint only: by its open verdict, else by its kind (an attributed
        quote shows as a hint whatever its kind)."""
        if self.verdict is not None and self.verdict.state == "open":
            return self.verdict.action == "hint"
        return self.match.kind != "recitation"


@dataclass
class FileFacts:
    shown: str
    ref: str
    sha1: str
    sha256: str
    quotes: list[QuoteFacts] = field(default_factory=list)
    in_package: str = ""  # its path in the project's folder (`/` separated), "" outside it


def project_root(paths: Iterable[str | os.PathLike] = ()) -> Path:
    """The folder of the described project, whose files an SBOM names relative to it: the
    git work tree that holds every path, else the current folder when it holds them, else
    the folder they have in common."""
    from .scan import _git_top

    cwd = Path.cwd().resolve()
    real = [Path(os.path.realpath(p)) for p in paths] or [cwd]
    folders = [p if p.is_dir() else p.parent for p in real]
    top = _git_top(folders[0])
    for root in (top, cwd):
        if root is not None and all(p == root or p.is_relative_to(root) for p in real):
            return root
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:  # (drives apart)
        return cwd


def in_package(path: Path, root: Path | None) -> str:
    """A file's path relative to the project's folder, `/` separated and escaped as reports
    escape names; "" when it is not inside it (or no folder is known)."""
    if root is None:
        return ""
    try:
        inside = Path(os.path.realpath(path)).relative_to(Path(os.path.realpath(root)))
    except ValueError:
        return ""
    return escape_name(inside.as_posix())


@dataclass
class Facts:
    options: SbomOptions
    created: datetime
    files: list[FileFacts]
    packages: list[SourcePackage]
    package_licenses: dict[str, list[str]]  # package key -> the licenses of its quoted files
    namespace: str = ""


def safe(value: object, max_len: int = 1000) -> str:
    """Untrusted text as one printable line that no tag-value `<text>` block ends on."""
    return _TEXT_TAG.sub(r"<\1 \2>", printable(value, max_len))


def slug(text: str, digest_of: str, width: int = 40) -> str:
    """An id part: `text`'s letters and digits, and a digest of `digest_of` to be unique."""
    digest = hashlib.sha256(digest_of.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    part = _SLUG.sub("-", text).strip("-.")[:width].strip("-.")
    return f"{part}-{digest}" if part else digest


@functools.lru_cache(maxsize=1)
def _licensing():
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


@functools.lru_cache(maxsize=4096)
def spdx_expression(license: str) -> str:
    """`license` as an SPDX expression whose every license is on the SPDX License List (as
    spdx-tools validates them), normalized (`mit` -> `MIT`); "" for anything else —
    NOASSERTION, a `LicenseRef-` the document cannot define, text that is no expression."""
    text = " ".join((license or "").split())
    if not text or text.upper() in ("NOASSERTION", "NONE") or len(text) > 300:
        return ""
    try:
        info = _licensing().validate(text)
    except Exception:  # the library raises several kinds of errors on bad text
        return ""
    normalized = info.normalized_expression or ""
    if info.errors or info.invalid_symbols or not normalized or "licenseref-" in normalized.lower():
        return ""
    return normalized


def created_time() -> datetime:
    """Now, or SOURCE_DATE_EPOCH (reproducible builds), in UTC to the second."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return datetime.fromtimestamp(int(epoch), timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise SbomError(f"SOURCE_DATE_EPOCH={printable(epoch, 40)}: not a time") from None
    return datetime.now(timezone.utc).replace(microsecond=0)


def _quote_sources(m: Match) -> list[Source]:
    """The sources of every quote of the region, each file once, ranked."""
    seen, out = set(), []
    for group in source_groups(m) or [[]]:
        for s in group:
            key = (s.repository, s.commit, s.path, s.start_line, s.end_line)
            if key not in seen:
                seen.add(key)
                out.append(s)
    return out


def gather(quoted: Iterable[Quoted], options: SbomOptions) -> tuple[Facts, list[str]]:
    """The facts of the document, and a line for each quote left out (its file changed or
    went since it was read)."""
    by_file: dict[str, list[Quoted]] = {}
    for q in quoted:
        by_file.setdefault(q.shown, []).append(q)
    root = options.root or project_root(q[0].path for q in by_file.values())
    files, left_out = [], []
    packages: dict[str, SourcePackage] = {}
    licenses: dict[str, set[str]] = {}
    for shown in sorted(by_file):
        items = sorted(by_file[shown], key=lambda q: (q.match.char_start, q.match.char_end))
        try:
            data = FileBytes.read(items[0].path)
        except (OSError, NotText) as e:
            why = getattr(e, "strerror", None) or str(e)
            left_out.append(f"{safe(shown)}: cannot read it again: {safe(why, 200)}")
            continue
        f = FileFacts(shown, slug(shown, shown), data.sha1, data.sha256)
        f.in_package = in_package(items[0].path, root)
        lines = split_lines(data.text) if any(q.verdict for q in items) else []
        used: dict[str, int] = {}
        for q in items:
            m = q.match
            if data.text[m.char_start : m.char_end].replace("\0", " ") != m.text:
                left_out.append(f"{safe(shown)}: a quote is no longer where it was found")
                continue
            facts = _quote(q, data, lines, f.ref, used)
            for s, pkg in facts.sources:
                packages.setdefault(pkg.key, pkg)
                if spdx_expression(s.license):
                    licenses.setdefault(pkg.key, set()).add(spdx_expression(s.license))
            f.quotes.append(facts)
        if f.quotes:
            files.append(f)
    facts = Facts(
        options=options,
        created=created_time(),
        files=files,
        packages=sorted(packages.values(), key=lambda p: (p.name, p.version, p.key)),
        package_licenses={k: sorted(v) for k, v in licenses.items()},
    )
    facts.namespace = options.namespace or default_namespace(facts)
    return facts, left_out


def _quote(q: Quoted, data: FileBytes, lines: list[str], file_ref: str, used: dict) -> QuoteFacts:
    from ..judge.quote_identity import QuoteIdentity

    m = q.match
    quote_id = QuoteIdentity.of_text(m.text).id
    used[quote_id] = used.get(quote_id, 0) + 1
    ref = f"{quote_id}-{file_ref[-12:]}" + (f"-{used[quote_id]}" if used[quote_id] > 1 else "")
    place = data.place(m.char_start, m.char_end)
    best = m.best_source
    recorded = best.license if best is not None else ""
    attribution = ""
    if q.verdict is not None and q.verdict.state == "attributed":
        found = find_region_attribution(lines, place.first_line - 1, place.last_line - 1, m)
        attribution = safe(lines[found.line].strip(), 500) if found else safe(q.verdict.reason)
    return QuoteFacts(
        ref=ref,
        quote_id=quote_id,
        place=place,
        match=m,
        verdict=q.verdict,
        license=spdx_expression(recorded),
        recorded_license="" if recorded in ("", "NOASSERTION") else safe(recorded, 200),
        sources=[(s, package_of(s)) for s in _quote_sources(m)],
        attribution=attribution,
    )


def default_namespace(facts: Facts) -> str:
    """A namespace made from what the document says (not when): the same facts, the same
    namespace."""
    content = json.dumps(
        [
            facts.options.project,
            facts.options.tool_version,
            [
                [
                    f.shown,
                    f.sha1,
                    [[q.ref, q.state, q.place.byte_start, q.place.byte_end] for q in f.quotes],
                ]
                for f in facts.files
            ],
            [p.key for p in facts.packages],
        ]
    )
    digest = uuid.uuid5(uuid.NAMESPACE_URL, "recitation:" + content)
    name = _SLUG.sub("-", facts.options.project).strip("-.")[:60] or "project"
    return f"https://spdx.org/spdxdocs/recitation/{name}-{digest}"


# -- what each format says about a quote, in the same words ------------------------------


def source_link(s: Source) -> str:
    base, _, fragment = (s.url or "").partition("#")
    base = clean_link(base)
    return f"{base}#{printable(fragment, 40)}" if base and fragment else base


def source_lines(s: Source) -> str:
    a, b = s.start_line, s.end_line
    return f"L{a}" if a == b else f"L{a}-L{b}"


def describe_source(s: Source) -> str:
    """`acme/widgets src/geo.py L7-L15 at 421e76f… (MIT)`, printable."""
    where = " ".join(safe(p, 300) for p in (s.repository, s.path) if p)
    at = f" at {safe(s.commit, 100)}" if s.commit else ""
    return f"{where} {source_lines(s)}{at} ({safe(s.license, 200) or 'NOASSERTION'})".strip()


def verdict_line(q: QuoteFacts) -> str:
    v = q.verdict
    if v is None:
        return "Verdict: not judged (no decisions applied)"
    if v.state == "open":
        return f"Verdict: open, {v.action} ({safe(v.reason, 300)})"
    why = {
        "attributed": "its source is named next to it",
        "dismissed": "a decision in .recitation.toml",
        "allowed": "its source is allowed in .recitation.toml",
        "baseline": "recorded in the baseline",
    }[v.state]
    return f"Verdict: {v.state}, {safe(v.reason, 300)} ({why})"


def kind_line(q: QuoteFacts) -> str:
    m = q.match
    hint = "; reported as a hint only" if q.is_hint else ""
    return f"Kind: {m.kind} ({describe_kind(m.kind)}){hint}"


def comment_lines(q: QuoteFacts) -> list[str]:
    """What a quote is, as each format's free-text field says it."""
    m = q.match
    best = m.best_source
    out = []
    if best is not None:
        link = source_link(best)
        out.append(f"Quoted from {link or describe_source(best)}")
        out.append(f"Source: {describe_source(best)}")
    files = count_phrase(m.file_count, m.file_count_exact)
    out.append(f"Found in {files} of the index; {m.length} words")
    out += [kind_line(q), verdict_line(q)]
    if q.recorded_license and not q.license:
        out.append(
            f"The index records the license as '{q.recorded_license}', which is not an "
            "expression of SPDX-listed licenses: no license is concluded"
        )
    out.append(f"Quote id: {q.quote_id}")
    return out


def attribution_texts(q: QuoteFacts) -> list[str]:
    """The attribution a quote carries (its line in the file), else the one to write."""
    if q.attribution:
        return [q.attribution]
    best = q.match.best_source
    if best is None:
        return []
    clean = Source(
        repository=safe(best.repository, 300),
        path=safe(best.path, 300),
        commit=safe(best.commit, 100),
        license=q.license or "",
        url=source_link(best),
        start_line=best.start_line,
        end_line=best.end_line,
    )
    return [safe(plain_attribution(clean))]


def missing_library(name: str, fmt: str, error: ImportError) -> SbomError:
    """`--format` asked for a document whose library (or one it needs) cannot be imported."""
    own = (error.name or "").startswith(name.split("-")[0])
    what = "is not installed" if own else f"cannot be imported ({printable(error, 200)})"
    return SbomError(
        f"--format {fmt} needs the Python package {name}, which {what}: pip install '{name}' "
        "(or reinstall recitation)"
    )
