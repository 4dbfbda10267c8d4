"""PyPI packages as a corpus source: `pypi:NAME[SPECIFIER]` and lists of them.

The index is read through the Simple Repository API (PEP 503 HTML or PEP 691 JSON), which
PyPI, its mirrors and private servers (pypiserver, devpi, Artifactory, Nexus...) all serve.
Without a specifier the newest final release is taken (pre-releases only when there is
nothing else); yanked files only when pinned with `==`. Of a release, the source
distribution is indexed (`.tar.gz`, else `.zip`, ...), a wheel where there is none. Every
download is verified against the index's sha256 (and any `--hash` a requirements file pins).

Provenance comes from the archive itself: `PKG-INFO` (wheels: `METADATA`) for the license
(License-Expression, License, the license files, the classifiers, in that order) and the
repository URL (Project-URL Source/Repository/Code..., else Homepage); each file's own
license header still wins (`CorpusSource.documents`). Files served by the public PyPI are
linked to PyPI's inspector (inspector.pypi.io), which shows a file of a release with line
numbers and highlights `#line.A-B`.
"""

from __future__ import annotations

import email.parser
import email.policy
import html.parser
import json
import os
import re
import urllib.parse
from collections import Counter

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ...safe_text import clean_link
from ...store.small_files import read_small_file
from .licenses import (
    NOASSERTION,
    detect_license,
    license_from_classifiers,
    license_from_name,
)
from .packages import (
    MAX_LIST_BYTES,
    NOT_FROM_REGISTRY,
    Ecosystem,
    PackageMeta,
    PackageSource,
    RegistryOptions,
    Resolved,
    Wanted,
    is_license_file,
    open_spec,
    top_level_license,
)
from .registry_http import Digest, Endpoint, Http, NotFound, RegistryError

PUBLIC_FILES_HOST = "files.pythonhosted.org"
INSPECTOR = "https://inspector.pypi.io/project/"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".tar")
_MAX_INCLUDE_DEPTH = 10


class _Links(html.parser.HTMLParser):
    """The anchors of a PEP 503 page: (href, attributes)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            d = dict(attrs)
            if d.get("href"):
                self.anchors.append((d["href"], d))


def split_filename(filename: str, project: str) -> tuple[str, str] | None:
    """(version, kind) of a distribution file of `project`, or None."""
    want = canonicalize_name(project)
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) in (5, 6) and canonicalize_name(parts[0]) == want:
            return parts[1], "wheel"
        return None
    for suffix in _SDIST_SUFFIXES:
        if filename.lower().endswith(suffix):
            stem = filename[: -len(suffix)]
            for i, ch in enumerate(stem):
                if ch == "-" and canonicalize_name(stem[:i]) == want and stem[i + 1 :]:
                    return stem[i + 1 :], "sdist"
            return None
    return None


class PyPI(Ecosystem):
    name = "pypi"

    def __init__(self, options: RegistryOptions, http: Http | None = None) -> None:
        self.endpoint = Endpoint.parse(options.pypi_url, options.pypi_token)
        self.http = http or options.http()

    # ------------------------------------------------------------------ index

    def files(self, project: str) -> list[dict]:
        """The project's files: filename, url, digests, yanked."""
        canon = canonicalize_name(project)
        url = self.endpoint.join(canon) + "/"
        headers = {
            "Accept": f"{SIMPLE_JSON}, text/html;q=0.1",
            **self.endpoint.headers_for(url),
        }
        try:
            body, ctype, final = self.http.get_bytes(url, headers, "")
        except NotFound:
            raise NotFound(f"no project named {project!r} on {self._where()}") from None
        if SIMPLE_JSON in ctype or ctype.startswith("application/json"):
            return self._from_json(body, final, project)
        return self._from_html(body, final)

    def _where(self) -> str:
        p = urllib.parse.urlsplit(self.endpoint.url)
        return p.hostname or "the index"

    def _from_json(self, body: bytes, base: str, project: str) -> list[dict]:
        try:
            doc = json.loads(body)
            entries = doc["files"]
            assert isinstance(entries, list)
        except (ValueError, KeyError, TypeError, AssertionError):
            raise RegistryError(f"pypi:{project}: the index sent an unreadable page") from None
        out = []
        for e in entries:
            if not isinstance(e, dict) or not isinstance(e.get("filename"), str):
                continue
            hashes = e.get("hashes") if isinstance(e.get("hashes"), dict) else {}
            digests = [
                Digest(a, str(hashes[a]).lower())
                for a in ("sha256", "sha512")
                if isinstance(hashes.get(a), str)
            ]
            out.append(
                {
                    "filename": e["filename"],
                    "url": urllib.parse.urljoin(base, str(e.get("url") or "")),
                    "digests": digests,
                    "yanked": bool(e.get("yanked")),
                    "size": e.get("size") if isinstance(e.get("size"), int) else 0,
                }
            )
        return out

    def _from_html(self, body: bytes, base: str) -> list[dict]:
        parser = _Links()
        parser.feed(body.decode("utf-8", "replace"))
        out = []
        for href, attrs in parser.anchors:
            url = urllib.parse.urljoin(base, href)
            path, _, fragment = url.partition("#")
            algo, _, value = fragment.partition("=")
            digests = (
                [Digest(algo.lower(), value.lower())]
                if algo.lower() in ("sha256", "sha512") and value
                else []
            )
            filename = urllib.parse.unquote(urllib.parse.urlsplit(path).path.rsplit("/", 1)[-1])
            out.append(
                {
                    "filename": filename,
                    "url": path,
                    "digests": digests,
                    "yanked": "data-yanked" in attrs,
                }
            )
        return out

    def resolve(self, wanted: Wanted) -> Resolved:
        try:
            spec = SpecifierSet(wanted.constraint)
        except InvalidSpecifier:
            raise RegistryError(f"not a version specifier: {wanted.constraint!r}") from None
        pinned = [s.version for s in spec if s.operator in ("==", "===")]
        by_version: dict[Version, list[dict]] = {}
        for f in self.files(wanted.name):
            split = split_filename(f["filename"], wanted.name)
            if split is None:
                continue
            try:
                v = Version(split[0])
            except InvalidVersion:
                continue
            f["kind"] = split[1]
            by_version.setdefault(v, []).append(f)
        if not pinned:  # yanked files count only when pinned (PEP 592)
            by_version = {v: fs for v, fs in by_version.items() if any(not f["yanked"] for f in fs)}
        if not by_version:
            raise NotFound(
                f"{wanted.name!r} has no source distribution or wheel on {self._where()}"
            )
        candidates = sorted(spec.filter(by_version), reverse=True)
        if not candidates:
            shown = wanted.constraint or "any version"
            raise NotFound(f"{wanted.name!r} has no release matching {shown} on {self._where()}")
        version = candidates[0]
        pins = {(d.algorithm, d.hex) for d in wanted.pinned}
        # of the release's files, one whose digest the list pins (a lock names them all)
        best = min(
            by_version[version],
            key=lambda f: (
                not pins & {(d.algorithm, d.hex) for d in f["digests"]},
                *_preference(f),
            ),
        )
        project = _project_name(best["filename"], wanted.name)
        return Resolved(
            name=project,
            version=str(split_filename(best["filename"], wanted.name)[0]),
            filename=best["filename"],
            url=best["url"],
            digests=sorted(best["digests"], key=lambda d: d.algorithm != "sha256"),
            kind=best["kind"],
            size=best.get("size", 0),
        )

    def exact(self, wanted: Wanted) -> bool:
        return bool(re.fullmatch(r"===?[^*,<>=!~\s]+", wanted.constraint))

    # ------------------------------------------------------------------ archives

    def relative(self, resolved: Resolved, member: str) -> str | None:
        if resolved.kind == "wheel":
            return member
        return super().relative(resolved, member)

    def is_metadata(self, resolved: Resolved, member: str) -> bool:
        parts = member.split("/")
        if resolved.kind == "wheel":
            return (
                len(parts) >= 2
                and parts[0].endswith(".dist-info")
                and (parts[-1] == "METADATA" or is_license_file(parts[-1]))
            )
        return len(parts) == 2 and (parts[1] == "PKG-INFO" or is_license_file(parts[1]))

    def read_metadata(self, resolved: Resolved, files: dict[str, bytes]) -> PackageMeta:
        meta_name = next((n for n in sorted(files) if n.endswith(("/PKG-INFO", "/METADATA"))), None)
        message = None
        if meta_name:
            text = files[meta_name].decode("utf-8", "replace")
            message = email.parser.HeaderParser(policy=email.policy.compat32).parsestr(text)
        if resolved.kind == "wheel":
            info = meta_name.rsplit("/", 1)[0] + "/" if meta_name else ""
            license_files = {
                n: d for n, d in files.items() if n.startswith(info) and n != meta_name
            }
            flat = {n.rsplit("/", 1)[-1]: d for n, d in license_files.items()}
            license_id = top_level_license(flat)
        else:
            top = meta_name.split("/", 1)[0] + "/" if meta_name else ""
            license_id = top_level_license(files, top)
        return PackageMeta(
            license=metadata_license(message, license_id),
            repository_url=project_url(message),
        )

    def repository(self, resolved: Resolved) -> str:
        return f"pypi:{resolved.name}=={resolved.version}"

    def link(self, resolved: Resolved, member: str, rel: str) -> tuple[str, str]:
        parts = urllib.parse.urlsplit(resolved.url)
        if parts.scheme != "https" or parts.hostname != PUBLIC_FILES_HOST:
            return "", ""
        if not parts.path.startswith("/packages/"):
            return "", ""
        project = canonicalize_name(resolved.name)
        link = (
            f"{INSPECTOR}{urllib.parse.quote(project)}/{urllib.parse.quote(resolved.version)}"
            f"{parts.path}/{urllib.parse.quote(member, safe='/')}"
        )
        return clean_link(link), "prism"


def _preference(f: dict) -> tuple:
    name = f["filename"].lower()
    if f["kind"] == "sdist":
        rank = next(i for i, s in enumerate(_SDIST_SUFFIXES) if name.endswith(s))
        return (f["yanked"], 0, rank, name)
    pure = name.endswith("-none-any.whl")
    return (f["yanked"], 1, 0 if pure else 1, name)


def _project_name(filename: str, asked: str) -> str:
    """The project's name as its file spells it (sdists keep it; wheels escape it)."""
    if filename.endswith(".whl"):
        return asked
    for suffix in _SDIST_SUFFIXES:
        if filename.lower().endswith(suffix):
            stem = filename[: -len(suffix)]
            name = stem.rsplit("-", 1)[0]
            if canonicalize_name(name) == canonicalize_name(asked):
                return name
    return asked


def metadata_license(message, license_files: str) -> str:
    """SPDX id from core metadata: License-Expression; the License field when it names a
    license (or holds a license text); the license files; the classifiers."""
    if message is not None:
        expression = " ".join(str(message.get("License-Expression") or "").split())
        if expression:
            return license_from_name(expression) or expression[:200]
        field = str(message.get("License") or "").strip()
        if field and field.upper() not in ("UNKNOWN", "NONE"):
            spdx = license_from_name(field)
            if spdx is None and ("\n" in field or len(field) > 100):
                found = detect_license(field)
                spdx = found if found != NOASSERTION else None
            if spdx:
                return spdx
    if license_files != NOASSERTION:
        return license_files
    if message is not None:
        found = license_from_classifiers([str(c) for c in message.get_all("Classifier") or []])
        if found:
            return found
    return NOASSERTION


_SOURCE_LABELS = ("source", "sourcecode", "repository", "code", "github", "gitlab", "git")
_HOME_LABELS = ("homepage", "home")


def project_url(message) -> str:
    """The repository URL of core metadata: a Project-URL labelled as the source, else
    the homepage."""
    if message is None:
        return ""
    labelled: dict[str, str] = {}
    for value in message.get_all("Project-URL") or []:
        label, _, url = str(value).partition(",")
        key = re.sub(r"[^a-z]", "", label.lower())
        url = clean_link(url.strip())
        if url:
            labelled.setdefault(key, url)
    for key in _SOURCE_LABELS + _HOME_LABELS:
        if key in labelled:
            return labelled[key]
    return clean_link(str(message.get("Home-page") or "").strip())


# ---------------------------------------------------------------- specs and lists


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def is_package_name(name: str) -> bool:
    """Whether a name is a valid project name (PEP 508)."""
    return bool(_NAME.fullmatch(name))


def parse_requirement(text: str, where: str = "") -> Wanted:
    """`requests`, `requests==2.32.3`, `requests>=2,<3`, `requests[socks]>=2`."""
    try:
        req = Requirement(text)
    except InvalidRequirement:
        raise RegistryError(f"not a package requirement: {text!r}") from None
    if req.url:
        raise NotFromRegistry(text)
    if not is_package_name(req.name):
        raise RegistryError(f"not a package name: {req.name!r}")
    return Wanted(name=req.name, constraint=str(req.specifier), where=where)


class NotFromRegistry(RegistryError):
    """A requirement naming a URL: not a registry package."""


def is_list_value(value: str) -> bool:
    return "/" in value or os.sep in value or value.lower().endswith((".txt", ".in", ".list"))


def read_requirements(path: str, skipped: Counter) -> list[Wanted]:
    """The packages of a requirements file (or a plain list of names, one a line, `#`
    comments). `-r FILE` includes are followed; editable installs, URLs and paths are not
    from the registry and are counted; `--hash=sha256:...` pins the digest. A constraints
    file (`-c FILE`) pins the versions and digests of packages the requirements name (in
    includes too), adding none of its own, as pip applies it."""
    constraints: dict[str, list[Wanted]] = {}
    wanted = _read_requirements(path, skipped, 0, set(), constraints, False)
    return [_constrained(w, constraints.get(canonicalize_name(w.name), [])) for w in wanted]


def _read_requirements(
    path: str,
    skipped: Counter,
    depth: int,
    seen: set,
    constraints: dict[str, list[Wanted]],
    as_constraints: bool,
) -> list[Wanted]:
    real = (os.path.realpath(path), as_constraints)
    if real in seen or depth > _MAX_INCLUDE_DEPTH:
        return []
    seen.add(real)
    try:
        text = read_small_file(path, MAX_LIST_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise RegistryError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RegistryError(
            f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})"
        ) from None
    if as_constraints:
        skipped = Counter()  # a constraint adds nothing, so leaves nothing out either
    wanted: list[Wanted] = []
    logical = re.sub(r"\\\r?\n", " ", text).splitlines()
    for number, line in enumerate(logical, 1):
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        where = f"{os.path.basename(path)}:{number}"
        include = re.match(
            r"(-r|--requirement|-c|--constraint)(?:\s*=\s*|\s+|(?=[^\s=-]))(.+)", line
        )
        if include:
            target = os.path.join(os.path.dirname(path), include.group(2).strip())
            to_constraints = as_constraints or include.group(1) in ("-c", "--constraint")
            wanted += _read_requirements(
                target, skipped, depth + 1, seen, constraints, to_constraints
            )
            continue
        if line.startswith("-"):  # -e, --index-url, -f ...: not a registry package
            if line.startswith(("-e", "--editable")):
                skipped[NOT_FROM_REGISTRY] += 1
            continue
        hashes = re.findall(r"--hash[=\s]+(sha256|sha384|sha512):([0-9a-fA-F]+)", line)
        line = re.sub(r"\s--\S+(?:[=\s]+\S+)?", "", " " + line).strip()
        if re.match(r"^(?:\.|/|[a-z+]+://)", line):
            skipped[NOT_FROM_REGISTRY] += 1
            continue
        try:
            w = parse_requirement(line, where)
        except NotFromRegistry:
            skipped[NOT_FROM_REGISTRY] += 1
            continue
        except RegistryError as e:
            raise RegistryError(f"{where}: {e}") from None
        if hashes:
            w = Wanted(
                w.name, w.constraint, tuple(Digest(a, h.lower()) for a, h in hashes), w.where
            )
        if as_constraints:
            constraints.setdefault(canonicalize_name(w.name), []).append(w)
        else:
            wanted.append(w)
    return wanted


def _constrained(w: Wanted, constraints: list[Wanted]) -> Wanted:
    """A requirement narrowed by its constraints: both specifiers (the constraint's exact
    version alone when it names one that the requirement allows); its own digests, else
    the constraints'."""
    if not constraints:
        return w
    spec = SpecifierSet(w.constraint)
    for c in constraints:
        spec &= SpecifierSet(c.constraint)
    exact = [s for s in spec if s.operator in ("==", "===") and "*" not in s.version]
    if len(exact) == 1 and spec.contains(exact[0].version, prereleases=True):
        constraint = str(exact[0])
    else:
        constraint = str(spec)
    pinned = w.pinned or tuple({str(d): d for c in constraints for d in c.pinned}.values())
    return Wanted(w.name, constraint, pinned, w.where)


def open_packages(
    spec: str, value: str, *, options: RegistryOptions, max_file_bytes: int, listed: bool = False
) -> PackageSource:
    """The source a `pypi:` spec names (a requirement, or a list file)."""
    return open_spec(
        spec,
        value,
        PyPI(options),
        read_list=read_requirements,
        parse_one=parse_requirement,
        is_list=listed or is_list_value(value),
        options=options,
        max_file_bytes=max_file_bytes,
    )


open_pypi = open_packages
