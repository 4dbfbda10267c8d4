"""npm packages as a corpus source: `npm:NAME[@VERSION]` (scoped names too) and lists.

The registry is read as the npm client reads it: the package document (`GET /NAME`, the
abbreviated form when the registry has it), its dist-tags and versions, and each version's
tarball with its `integrity` (Subresource Integrity, sha512; the sha1 `shasum` only where a
registry gives nothing else). Without a version the `latest` tag is taken; a tag name or a
semver range (`^4.17.0`, as a package.json writes it) resolves as npm resolves it.

Lists: a file of names (one a line, `#` comments; `name`, `name@version`, `@scope/name@^1`),
a `package.json` (dependencies, devDependencies, optionalDependencies: their ranges) or a
`package-lock.json` / `npm-shrinkwrap.json` (the exact versions, each download checked
against the lock's integrity as well as the registry's).

Provenance comes from the tarball's own `package.json`: its `license` (or `licenses`), else
the license files; its `repository` as an https URL. Packages from the public registry are
linked to UNPKG's file browser (app.unpkg.com), which shows a file of a version with line
numbers and highlights `#L<a>-<b>`.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections import Counter

from ...safe_text import clean_link
from .licenses import NOASSERTION, license_from_name
from .npm_locks import NPM_LOCKS, check_name, file_kind, read_kind, read_text, split_spec
from .packages import (
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
from .registry_http import Digest, Endpoint, Http, NotFound, RegistryError, sri_digests
from .semver import Version, best_match

PUBLIC_REGISTRY_HOST = "registry.npmjs.org"
UNPKG_APP = "https://app.unpkg.com/"
ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"
_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")


class Npm(Ecosystem):
    name = "npm"

    def __init__(self, options: RegistryOptions, http: Http | None = None) -> None:
        self.endpoint = Endpoint.parse(options.npm_registry, options.npm_token)
        self.http = http or options.http()
        self.public = urllib.parse.urlsplit(self.endpoint.url).hostname == PUBLIC_REGISTRY_HOST

    def _where(self) -> str:
        return urllib.parse.urlsplit(self.endpoint.url).hostname or "the registry"

    def packument(self, name: str) -> dict:
        url = self.endpoint.join(name)
        headers = {"Accept": ACCEPT, **self.endpoint.headers_for(url)}
        try:
            doc = self.http.get_json(url, headers, "")
        except NotFound:
            raise NotFound(f"no package named {name!r} on {self._where()}") from None
        if not isinstance(doc.get("versions"), dict):
            raise RegistryError(f"npm:{name}: the registry sent a document without versions")
        return doc

    def resolve(self, wanted: Wanted) -> Resolved:
        name = check_name(wanted.name)
        doc = self.packument(name)
        versions: dict = doc["versions"]
        tags = doc.get("dist-tags") if isinstance(doc.get("dist-tags"), dict) else {}
        asked = wanted.constraint or "latest"
        if asked in versions:
            version = asked
        elif _TAG.match(asked) and not re.match(r"^(?:v?\d|[xX]$)", asked):
            version = tags.get(asked)
            if not isinstance(version, str) or version not in versions:
                raise NotFound(f"{name!r} has no version tagged {asked!r} on {self._where()}")
        else:
            version = best_match(
                [v for v in versions if isinstance(v, str)], asked, prefer=tags.get("latest")
            )
            if version is None:
                if Version.parse(asked) is not None:
                    raise NotFound(f"{name!r} has no version {asked} on {self._where()}")
                raise NotFound(f"{name!r} has no version matching {asked!r} on {self._where()}")
        manifest = versions.get(version)
        dist = manifest.get("dist") if isinstance(manifest, dict) else None
        if not isinstance(dist, dict) or not isinstance(dist.get("tarball"), str):
            raise RegistryError(f"{name}@{version}: the registry gives no tarball")
        digests = sri_digests(str(dist.get("integrity") or ""))
        shasum = str(dist.get("shasum") or "").lower()
        if not digests and re.fullmatch(r"[0-9a-f]{40}", shasum):
            digests = [Digest("sha1", shasum)]
        tarball = urllib.parse.urljoin(self.endpoint.url, dist["tarball"])
        filename = tarball.rsplit("/", 1)[-1] or f"{name.replace('/', '-')}-{version}.tgz"
        return Resolved(
            name=name,
            version=version,
            filename=filename,
            url=tarball,
            digests=digests,
            kind="npm",
        )

    def exact(self, wanted: Wanted) -> bool:
        return Version.parse(wanted.constraint) is not None and not wanted.constraint.startswith(
            ("=", "v")
        )

    # ------------------------------------------------------------------ archives

    def is_metadata(self, resolved: Resolved, member: str) -> bool:
        parts = member.split("/")
        return len(parts) == 2 and (parts[1] == "package.json" or is_license_file(parts[1]))

    def read_metadata(self, resolved: Resolved, files: dict[str, bytes]) -> PackageMeta:
        manifest_name = next((n for n in sorted(files) if n.endswith("/package.json")), None)
        manifest: dict = {}
        if manifest_name:
            try:
                value = json.loads(files[manifest_name].decode("utf-8", "replace"))
                manifest = value if isinstance(value, dict) else {}
            except (ValueError, RecursionError):
                manifest = {}
        top = manifest_name.split("/", 1)[0] + "/" if manifest_name else ""
        license_id = manifest_license(manifest)
        if license_id == NOASSERTION:
            license_id = top_level_license(files, top)
        return PackageMeta(license=license_id, repository_url=repository_url(manifest))

    def repository(self, resolved: Resolved) -> str:
        return f"npm:{resolved.name}@{resolved.version}"

    def link(self, resolved: Resolved, member: str, rel: str) -> tuple[str, str]:
        if not self.public:
            return "", ""
        link = (
            f"{UNPKG_APP}{urllib.parse.quote(resolved.name, safe='@/')}"
            f"@{urllib.parse.quote(resolved.version)}/files/{urllib.parse.quote(rel, safe='/')}"
        )
        return clean_link(link), "unpkg"


def manifest_license(manifest: dict) -> str:
    """SPDX id of a package.json `license` ("MIT", {"type": "MIT"}) or legacy `licenses`."""
    value = manifest.get("license")
    if isinstance(value, dict):
        value = value.get("type")
    if not value and isinstance(manifest.get("licenses"), list):
        names = [(x.get("type") if isinstance(x, dict) else x) for x in manifest["licenses"][:8]]
        ids = [license_from_name(str(n)) for n in names if n]
        ids = [i for i in ids if i]
        if ids:
            return " OR ".join(dict.fromkeys(ids))
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.upper() in ("UNLICENSED", "UNKNOWN") or text.upper().startswith("SEE LICENSE"):
            return NOASSERTION
        while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
            text = text[1:-1].strip()
        return license_from_name(text) or NOASSERTION
    return NOASSERTION


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


_SHORTCUT = {"github": "github.com", "gitlab": "gitlab.com", "bitbucket": "bitbucket.org"}


def repository_url(manifest: dict) -> str:
    """A package.json `repository` as an https link ("" when there is none)."""
    value = manifest.get("repository")
    if isinstance(value, dict):
        value = value.get("url")
    if not isinstance(value, str):
        return ""
    text = value.strip()
    m = re.match(r"^(github|gitlab|bitbucket):([\w.-]+/[\w.-]+)$", text)
    if m:
        text = f"https://{_SHORTCUT[m.group(1)]}/{m.group(2)}"
    elif re.match(r"^[\w.-]+/[\w.-]+$", text):
        text = f"https://github.com/{text}"
    else:
        m = re.match(r"^(?:git\+)?(?:ssh://)?git@([\w.-]+)[:/](.+)$", text)
        if m:
            text = f"https://{m.group(1)}/{m.group(2)}"
        text = re.sub(r"^(?:git\+)?(?:git|https?|ssh)://(?:[^@/]*@)?", "https://", text)
    text = re.sub(r"\.git$", "", text.split("#", 1)[0])
    return clean_link(text)


# ---------------------------------------------------------------- specs and lists


def parse_spec(text: str, where: str = "") -> Wanted:
    name, version = split_spec(text)
    if version.startswith(("npm:",)):
        raise _NotFromRegistry(text)
    return Wanted(name=check_name(name), constraint=version, where=where)


class _NotFromRegistry(RegistryError):
    pass


def read_list(path: str, skipped: Counter) -> list[Wanted]:
    """The packages a names file, a package.json or a lock file (package-lock.json,
    npm-shrinkwrap.json, yarn.lock, pnpm-lock.yaml: `npm_locks`) lists."""
    text = read_text(path)
    kind = file_kind(path, text)
    if kind is not None:
        return read_kind(kind, text, path, skipped)
    base = os.path.basename(path)
    wanted = []
    for number, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line:
            continue
        where = f"{base}:{number}"
        try:
            wanted.append(parse_spec(line, where))
        except _NotFromRegistry:
            skipped[NOT_FROM_REGISTRY] += 1
        except RegistryError as e:
            raise RegistryError(f"{where}: {e}") from None
    return wanted


def is_list_value(value: str) -> bool:
    if os.path.basename(value).lower() in NPM_LOCKS:
        return True  # `npm:yarn.lock`
    if value.startswith("@") and value.count("/") == 1 and not value.endswith(".json"):
        return False  # a scoped name
    return "/" in value or os.sep in value or value.lower().endswith((".txt", ".json", ".list"))


def open_packages(
    spec: str, value: str, *, options: RegistryOptions, max_file_bytes: int, listed: bool = False
) -> PackageSource:
    """The source an `npm:` spec names (a package, or a list file)."""
    return open_spec(
        spec,
        value,
        Npm(options),
        read_list=read_list,
        parse_one=parse_spec,
        is_list=listed or is_list_value(value),
        options=options,
        max_file_bytes=max_file_bytes,
    )


open_npm = open_packages
