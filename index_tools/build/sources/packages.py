"""What the PyPI and npm sources share: options, fetching (concurrent, verified, cached,
with a progress bar), the archive pass that reads metadata, and the documents of the
fetched archives with their provenance.

A `PackageSource` fetches everything when it is opened, before an index is written: a
package or version that does not exist, a digest mismatch or a registry that cannot be
reached stops the build with one line per package (`RegistryError`), and nothing is
published. With `keep_going` (lists only), such packages are left out and counted instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from index_tools.model import Document, Origin

from ...safe_text import clean_link, printable
from ...store.paths import cache_dir
from .. import progress
from .archives import ArchiveError, ArchiveLimits, iter_files
from .base import CorpusSource, SkipReasons
from .filters import is_oversize, text_from_bytes
from .folder import clean_path, skip_dir
from .languages import language_for_path
from .licenses import NOASSERTION, license_from_files
from .registry_http import (
    Digest,
    Endpoint,
    Http,
    RegistryError,
    cache_file,
    deadline_seconds,
    file_digest,
)

MAX_LIST_BYTES = 64 << 20  # a requirements file, names list or package(-lock).json: at most

ENV_CACHE = "RECITATION_PACKAGE_CACHE"
ENV_PYPI_URL = "RECITATION_PYPI_URL"
ENV_PYPI_TOKEN = "RECITATION_PYPI_TOKEN"
ENV_NPM_REGISTRY = "RECITATION_NPM_REGISTRY"
ENV_NPM_TOKEN = "RECITATION_NPM_TOKEN"
DEFAULT_PYPI_URL = "https://pypi.org/simple/"
DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/"

# skip reasons of packages (in `source.skipped` with the file reasons)
PACKAGE_UNAVAILABLE = "package unavailable"  # with keep_going: not found, unreachable, ...
PACKAGE_REFUSED = "package refused"  # an archive past the limits or damaged
NOT_FROM_REGISTRY = "not from the registry"  # a list entry naming a URL, git or a path
META_MAX_BYTES = 1 << 20


def _env(*names: str) -> str:
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


@dataclasses.dataclass
class RegistryOptions:
    """Where packages come from and how they are fetched.

    The index URLs default to the environment (`RECITATION_PYPI_URL`, else pip's
    `PIP_INDEX_URL`; `RECITATION_NPM_REGISTRY`, else npm's `npm_config_registry`), then to
    the public registries. Credentials: `https://user:password@host/...` in the URL, or a
    token (`RECITATION_PYPI_TOKEN`, `RECITATION_NPM_TOKEN`, sent as a Bearer token).
    `timeout`: seconds for each read; `download_timeout`: seconds for a whole download or
    registry document (default: `RECITATION_DOWNLOAD_TIMEOUT`, else 600), past which it
    fails, however slowly the bytes still come.
    """

    pypi_url: str = ""
    npm_registry: str = ""
    pypi_token: str = dataclasses.field(default="", repr=False)
    npm_token: str = dataclasses.field(default="", repr=False)
    cache: str = ""
    jobs: int = 4
    keep_going: bool = False
    progress: bool | str | None = None  # as BuildOptions.progress
    limits: ArchiveLimits = dataclasses.field(default_factory=ArchiveLimits)
    timeout: float = 60.0
    retries: int = 3
    max_download_bytes: int = 1 << 30  # one archive
    download_timeout: float | None = None  # None: $RECITATION_DOWNLOAD_TIMEOUT, else 600 s

    def __post_init__(self) -> None:
        self.pypi_url = self.pypi_url or _env(ENV_PYPI_URL, "PIP_INDEX_URL") or DEFAULT_PYPI_URL
        self.npm_registry = (
            self.npm_registry
            or _env(ENV_NPM_REGISTRY, "npm_config_registry", "NPM_CONFIG_REGISTRY")
            or DEFAULT_NPM_REGISTRY
        )
        self.pypi_token = self.pypi_token or _env(ENV_PYPI_TOKEN)
        self.npm_token = self.npm_token or _env(ENV_NPM_TOKEN)
        self.cache = self.cache or _env(ENV_CACHE) or str(cache_dir() / "packages")
        if self.jobs < 1:
            raise RegistryError("--fetch-jobs must be at least 1")
        self.download_timeout = deadline_seconds(self.download_timeout)

    def http(self) -> Http:
        return Http(timeout=self.timeout, retries=self.retries, deadline=self.download_timeout)


@dataclasses.dataclass(frozen=True)
class Wanted:
    """A package asked for: a name and a constraint ("" = the newest release)."""

    name: str
    constraint: str = ""
    pinned: tuple[Digest, ...] = ()  # digests a list pins (requirements --hash, lock files)
    where: str = ""  # "requirements.txt:12", for messages


@dataclasses.dataclass
class Resolved:
    """One archive of one release, as the registry describes it."""

    name: str  # the project's name as the registry spells it
    version: str
    filename: str
    url: str
    digests: list[Digest]
    kind: str  # "sdist", "wheel" or "npm"
    pinned: tuple[Digest, ...] = ()
    size: int = 0  # bytes, when the registry says

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["digests"] = [dataclasses.asdict(x) for x in self.digests]
        d["pinned"] = [dataclasses.asdict(x) for x in self.pinned]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Resolved:
        return cls(
            name=str(d["name"]),
            version=str(d["version"]),
            filename=str(d["filename"]),
            url=str(d["url"]),
            digests=[Digest(str(x["algorithm"]), str(x["hex"])) for x in d["digests"]],
            kind=str(d["kind"]),
            size=int(d.get("size") or 0),
        )

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.name.lower(), self.version, self.filename)


@dataclasses.dataclass
class PackageMeta:
    """What the archive's own metadata says."""

    license: str = NOASSERTION
    repository_url: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Fetched:
    resolved: Resolved
    archive: Path
    meta: PackageMeta

    def describe(self) -> dict:
        """What an index's header records of the package."""
        r = self.resolved
        return {"name": r.name, "version": r.version, "file": r.filename,
                "license": self.meta.license, "repository_url": self.meta.repository_url}  # fmt: skip


class Ecosystem:
    """A registry: resolves what is wanted and knows its archives' layout and metadata."""

    name = ""  # "pypi" / "npm"

    def resolve(self, wanted: Wanted) -> Resolved:
        raise NotImplementedError

    def exact(self, wanted: Wanted) -> bool:
        """Whether the constraint names one version (its resolution can be cached)."""
        return False

    def registry_url(self) -> str:
        endpoint = getattr(self, "endpoint", None)
        return endpoint.url if isinstance(endpoint, Endpoint) else ""

    def is_metadata(self, resolved: Resolved, member: str) -> bool:
        raise NotImplementedError

    def read_metadata(self, resolved: Resolved, files: dict[str, bytes]) -> PackageMeta:
        raise NotImplementedError

    def relative(self, resolved: Resolved, member: str) -> str | None:
        """A member's path inside the package (the archive's top folder removed)."""
        top, sep, rest = member.partition("/")
        return rest if sep and rest else None

    def link(self, resolved: Resolved, member: str, rel: str) -> tuple[str, str]:
        """(link to the file at this version, its line fragment style) or ("", "")."""
        return "", ""

    def repository(self, resolved: Resolved) -> str:
        raise NotImplementedError


def pins_hold(archive: Path, pinned: tuple[Digest, ...]) -> bool:
    """Whether a file has one of the digests a list pins. A lock file lists every file of a
    release (the sdist and each wheel), so one match is enough, as pip's hash checking has it."""
    by_algorithm: dict[str, set[str]] = {}
    for pin in pinned:
        by_algorithm.setdefault(pin.algorithm, set()).add(pin.hex)
    return any(file_digest(archive, a) in hexes for a, hexes in by_algorithm.items())


def safe_filename(name: str) -> str:
    """An archive's file name fit for the cache (the registry's name is untrusted)."""
    base = re.sub(r"[^A-Za-z0-9._+-]", "_", name.rsplit("/", 1)[-1])[:180].lstrip(".")
    return base or "package"


def top_level_license(files: dict[str, bytes], prefix: str = "") -> str:
    """The license stated by the license files directly under `prefix`."""
    names = {}
    for member, data in files.items():
        if member.startswith(prefix) and "/" not in member[len(prefix) :]:
            names[member[len(prefix) :]] = data
    return license_from_files(
        names, lambda n: names[n].decode("utf-8", "replace") if n in names else None
    )


_LICENSE_NAME = re.compile(r"^(?:licen[cs]e|copying|notice)", re.IGNORECASE)


def is_license_file(basename: str) -> bool:
    return bool(_LICENSE_NAME.match(basename))


class PackageSource(CorpusSource):
    """The source code files of packages from one registry, fetched when opened."""

    def __init__(
        self,
        spec: str,
        ecosystem: Ecosystem,
        wanted: list[Wanted],
        *,
        options: RegistryOptions,
        listed: bool,
        max_file_bytes: int = 1_000_000,
        skipped_entries: Counter | None = None,
    ) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        self.kind = ecosystem.name
        self.ecosystem = ecosystem
        self.options = options
        self.listed = listed
        self.wanted = wanted
        self.problems: list[str] = []
        self.package_skips: Counter[str] = Counter(skipped_entries or {})
        self.fetched = self._fetch_all()
        names = [f"{self.ecosystem.repository(f.resolved)}" for f in self.fetched]
        self.name = names[0] if len(names) == 1 and not listed else spec

    def indexed(self) -> list[str]:
        return [self.ecosystem.repository(f.resolved) for f in self.fetched]

    # ------------------------------------------------------------------ fetching

    def _fetch_all(self) -> list[Fetched]:
        opts = self.options
        bar = progress.bar(
            f"fetching {self.kind}", total=len(self.wanted), unit=" pkg", show=opts.progress
        )
        lock = threading.Lock()
        got_bytes = [0]
        refused = [0]  # packages whose archive is damaged or past the limits

        def on_bytes(n: int) -> None:
            with lock:
                got_bytes[0] += n
                bar.set_postfix_str(f"{got_bytes[0] / 1e6:.1f} MB", refresh=False)

        http = opts.http()
        results: list[Fetched | str | None] = [None] * len(self.wanted)

        def one(i: int) -> None:
            w = self.wanted[i]
            try:
                results[i] = self._fetch_one(w, http, on_bytes)
            except (RegistryError, ArchiveError) as e:
                where = f" ({w.where})" if w.where else ""
                at = "@" if self.kind == "npm" and w.constraint else ""
                label = f"{w.name}{at}{w.constraint}"
                results[i] = f"{self.kind}:{label}{where}: {e}"
                if isinstance(e, ArchiveError):
                    with lock:
                        refused[0] += 1
            except OSError as e:  # the cache: disk full, permissions
                results[i] = (
                    f"{self.kind}:{w.name}: cannot use the package cache "
                    f"{self.options.cache}: {e.strerror or e}"
                )
            finally:
                with lock:
                    bar.update(1)

        try:
            if opts.jobs <= 1 or len(self.wanted) <= 1:
                for i in range(len(self.wanted)):
                    one(i)
            else:
                with ThreadPoolExecutor(min(opts.jobs, len(self.wanted))) as pool:
                    list(pool.map(one, range(len(self.wanted))))
        finally:
            bar.close()
        fetched: list[Fetched] = []
        seen: set[tuple] = set()
        for r in results:
            if isinstance(r, Fetched):
                if r.resolved.key not in seen:
                    seen.add(r.resolved.key)
                    fetched.append(r)
            elif isinstance(r, str):
                self.problems.append(r)
        if self.problems:
            if not (self.listed and opts.keep_going):
                if len(self.problems) == 1:
                    raise RegistryError(self.problems[0])
                for line in self.problems:
                    print(f"error: {printable(line, 400)}", file=sys.stderr)
                raise RegistryError(
                    f"{self.spec}: {len(self.problems)} of {len(self.wanted)} packages could "
                    "not be fetched (listed above); --keep-going indexes the others"
                )
            for line in self.problems:  # what --keep-going leaves out, and why
                print(f"left out: {printable(line, 400)}", file=sys.stderr)
            self.package_skips[PACKAGE_REFUSED] += refused[0]
            self.package_skips[PACKAGE_UNAVAILABLE] += len(self.problems) - refused[0]
        return fetched

    def _resolve(self, w: Wanted) -> Resolved:
        """The registry's answer; for an exact version, kept in the cache so that a
        rebuild of pinned packages needs no registry."""
        if not self.ecosystem.exact(w):
            return self.ecosystem.resolve(w)
        parts = (self.ecosystem.registry_url(), w.name, w.constraint, *map(str, w.pinned))
        key = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        path = Path(self.options.cache) / self.kind / "resolved" / key[:2] / f"{key}.json"
        try:
            return Resolved.from_dict(json.loads(cache_file(path).read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            pass
        resolved = self.ecosystem.resolve(w)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(resolved.to_dict()), "utf-8")
            os.replace(tmp, cache_file(path))
        except OSError:
            pass
        return resolved

    def _fetch_one(self, w: Wanted, http: Http, on_bytes) -> Fetched:
        resolved = self._resolve(w)
        resolved.pinned = w.pinned
        if resolved.size > self.options.max_download_bytes:
            raise RegistryError(
                f"{resolved.filename} is larger than {self.options.max_download_bytes:,} bytes"
            )
        digest = resolved.digests[0] if resolved.digests else None
        if digest is None:
            raise RegistryError("the registry gives no digest to verify the download")
        if not re.fullmatch(r"[0-9a-f]{32,128}", digest.hex):
            raise RegistryError("the registry gives a malformed digest")
        folder = Path(self.options.cache) / self.kind / digest.hex[:2] / digest.hex
        archive = folder / safe_filename(resolved.filename)
        endpoint = getattr(self.ecosystem, "endpoint", None)
        headers = endpoint.headers_for(resolved.url) if isinstance(endpoint, Endpoint) else {}
        http.download(
            resolved.url,
            archive,
            resolved.digests,
            headers=headers,
            what="",
            max_bytes=self.options.max_download_bytes,
            on_bytes=on_bytes,
            size=resolved.size,
        )
        if w.pinned and not pins_hold(archive, w.pinned):  # a list's own digests too
            pin = w.pinned[0]
            which = (
                f"the {pin.algorithm} digest {pin.hex[:16]}..."
                if len(w.pinned) == 1
                else f"any of the {len(w.pinned)} digests"
            )
            raise RegistryError(
                f"digest mismatch: {resolved.filename} does not have {which} pinned by the list"
            )
        meta = self._metadata(resolved, archive)
        return Fetched(resolved, archive, meta)

    def _metadata(self, resolved: Resolved, archive: Path) -> PackageMeta:
        """The archive read once through (which enforces the limits) for its metadata;
        kept beside the archive, keyed by the limits it was checked against."""
        limits = self.options.limits
        stamp = f"{limits.max_members}:{limits.max_expanded_bytes}"
        side = archive.with_name(archive.name + ".meta.json")
        try:
            cached = json.loads(cache_file(side).read_text("utf-8"))
            if cached.get("limits") == stamp and cached.get("format") == 1:
                return PackageMeta(
                    license=str(cached.get("license") or NOASSERTION),
                    repository_url=clean_link(cached.get("repository_url") or ""),
                )
        except (OSError, ValueError, AttributeError):
            pass
        files: dict[str, bytes] = {}
        ignored: Counter = Counter()
        for name, _size, data in iter_files(
            str(archive),
            limits=limits,
            skipped=ignored,
            want=lambda m: self.ecosystem.is_metadata(resolved, m),
            read_max=META_MAX_BYTES,
        ):
            files[name] = data[:META_MAX_BYTES]
        meta = self.ecosystem.read_metadata(resolved, files)
        meta.repository_url = clean_link(meta.repository_url)
        record = {"format": 1, "limits": stamp, **meta.to_dict()}
        tmp = side.with_name(side.name + f".{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(record), "utf-8")
            os.replace(tmp, cache_file(side))
        except OSError:
            pass
        return meta

    # ------------------------------------------------------------------ documents

    def describe(self) -> dict:
        return {
            **super().describe(),
            "packages": [f.describe() for f in self.fetched],
            "unavailable": [printable(p, 300) for p in self.problems],
        }

    def documents(self, own_licenses: bool = True) -> Iterator[Document]:
        yield from super().documents(own_licenses)
        self.skipped.update(self.package_skips)

    def _documents(self) -> Iterator[Document]:
        for f in self.fetched:
            yield from self.package_documents(f)

    def package_documents(self, f: Fetched) -> Iterator[Document]:
        r, eco = f.resolved, self.ecosystem
        repository = eco.repository(r)
        relatives: dict[str, str] = {}

        def want(member: str) -> bool:
            rel = eco.relative(r, member)
            parts = rel.split("/") if rel else []
            if not rel or any(skip_dir(p) for p in parts[:-1]) or not language_for_path(rel):
                self.skip_unsupported(rel or member)
                return False
            relatives[member] = rel
            return True

        try:
            for member, size, data in iter_files(
                str(f.archive),
                limits=self.options.limits,
                skipped=self.skipped,
                want=want,
                read_max=self.max_file_bytes,
            ):
                rel = relatives.pop(member)
                if is_oversize(size, self.max_file_bytes):
                    self.skipped[SkipReasons.OVERSIZE] += 1
                    continue
                text, reason = text_from_bytes(data, self.max_file_bytes)
                if reason:
                    self.skipped[reason] += 1
                    continue
                link, fragment = eco.link(r, member, rel)
                origin = Origin(
                    repository=repository,
                    path=clean_path(rel),
                    commit=r.version,
                    license=f.meta.license,
                    link=link,
                    line_anchor=bool(link and fragment),
                    line_fragment=fragment,
                    repository_url=f.meta.repository_url,
                )
                yield Document(text=text, origin=origin, language=language_for_path(rel))
        except ArchiveError as e:
            raise RegistryError(f"{repository}: {e}") from None


def open_spec(
    spec: str,
    value: str,
    registry,
    *,
    read_list,
    parse_one,
    is_list: bool,
    options,
    max_file_bytes: int,
) -> PackageSource:
    """The source a registry spec names: one package (`parse_one(value)`), or the packages of
    a list file (`read_list(path, skipped)`) when `is_list`."""
    skipped: Counter = Counter()
    wanted = read_list(os.path.expanduser(value), skipped) if is_list else [parse_one(value)]
    if not wanted and not skipped:
        raise RegistryError(f"{spec}: the list names no package")
    return PackageSource(
        spec,
        registry,
        wanted,
        options=options,
        listed=is_list,
        max_file_bytes=max_file_bytes,
        skipped_entries=skipped,
    )
