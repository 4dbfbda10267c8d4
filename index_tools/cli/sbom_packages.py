"""A quote's source as a package of a bill of materials: a repository at its commit, or a
PyPI or npm package at its version, with its package URL (purl), where it is downloaded
from and its web page, as far as the index's metadata tells them. That metadata is
untrusted: names and versions with characters no registry allows make no purl, and links
are cleaned (`clean_link`) or left out."""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from dataclasses import dataclass

from ..build.sources.npm import PUBLIC_REGISTRY_HOST, UNPKG_APP
from ..build.sources.pypi import INSPECTOR, PUBLIC_FILES_HOST
from ..model import Source
from ..safe_text import clean_link, printable

_PYPI = re.compile(r"pypi:([A-Za-z0-9][A-Za-z0-9._-]{0,200})==([A-Za-z0-9.+!_-]{1,100})")
_NPM = re.compile(r"npm:((?:@[a-z0-9~][a-z0-9._~-]{0,200}/)?[a-z0-9~][a-z0-9._~-]{0,213})"
                  r"@([0-9A-Za-z.+_-]{1,100})")  # fmt: skip
_COMMIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+/-]{0,199}")
_OWNER_REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# the path before the commit in a file's link (GitLab, Gitea/Codeberg, GitHub, Bitbucket)
_COMMIT_MARKERS = ("/-/blob/", "/src/commit/", "/blob/", "/src/")
_PURL_HOSTS = {"github.com": "github", "bitbucket.org": "bitbucket"}


@dataclass(frozen=True)
class SourcePackage:
    key: str  # stable: the same repository at the same commit is the same package
    name: str  # printable
    version: str  # printable; "" when unknown
    ecosystem: str  # "pypi", "npm", "git" or "" (a folder, a dataset without links...)
    purl: str = ""
    download: str = ""  # SPDX download location (a VCS or https locator), "" when unknown
    home: str = ""  # the repository's or the package's web page
    vcs: str = ""  # the repository's https address (git sources)


def _key(source: Source) -> str:
    digest = hashlib.sha256(
        f"{source.repository}\0{source.commit}".encode("utf-8", "surrogatepass")
    ).hexdigest()
    return digest[:12]


def package_of(source: Source) -> SourcePackage:
    """The package a source file belongs to."""
    key = _key(source)
    repository = source.repository or ""
    m = _PYPI.fullmatch(repository)
    if m:
        return _pypi(key, m.group(1), m.group(2), source.url)
    m = _NPM.fullmatch(repository)
    if m:
        return _npm(key, m.group(1), m.group(2), source.url)
    return _repository(key, source)


def _purl(**parts) -> str:
    from packageurl import PackageURL

    return PackageURL(**parts).to_string()


def _pypi(key: str, name: str, version: str, url: str) -> SourcePackage:
    download = home = ""
    link = urllib.parse.urlsplit(clean_link(url.split("#", 1)[0]))
    if f"{link.scheme}://{link.netloc}/project/" == INSPECTOR:
        # .../project/<name>/<version>/packages/<a>/<b>/<digest>/<archive>/<member>
        parts = link.path.split("/")
        if len(parts) > 8 and parts[4] == "packages":
            download = clean_link(f"https://{PUBLIC_FILES_HOST}/{'/'.join(parts[4:9])}")
        home = clean_link(f"https://pypi.org/project/{name}/{version}/")
    return SourcePackage(
        key, name, version, "pypi", _purl(type="pypi", name=name, version=version),
        download, home,
    )  # fmt: skip


def _npm(key: str, name: str, version: str, url: str) -> SourcePackage:
    download = home = ""
    if clean_link(url).startswith(UNPKG_APP):  # a package of the public registry
        base = name.rsplit("/", 1)[-1]
        download = clean_link(f"https://{PUBLIC_REGISTRY_HOST}/{name}/-/{base}-{version}.tgz")
        home = clean_link(f"https://www.npmjs.com/package/{name}/v/{version}")
    scope, _, bare = name.rpartition("/")
    purl = _purl(type="npm", namespace=scope or None, name=bare, version=version)
    return SourcePackage(key, name, version, "npm", purl, download, home)


def repository_address(url: str, commit: str) -> str:
    """The https address of the repository a file's link points into at `commit`
    (`https://github.com/acme/widgets` from `.../blob/<commit>/src/geo.py#L7-L15`), or ""."""
    link = clean_link(url.split("#", 1)[0])
    if not link or not commit:
        return ""
    quoted = urllib.parse.quote(commit, safe="/")
    for marker in _COMMIT_MARKERS:
        for spelled in (commit, quoted):
            at = link.find(f"{marker}{spelled}/")
            if at > 0:
                return clean_link(link[:at])
    return ""


def _repository(key: str, source: Source) -> SourcePackage:
    name = printable(source.repository, 200) or "unknown"
    commit = source.commit if _COMMIT.fullmatch(source.commit or "") else ""
    vcs = repository_address(source.url, commit)
    if not vcs:
        return SourcePackage(key, name, printable(source.commit, 200), "")
    parts = urllib.parse.urlsplit(vcs)
    segments = parts.path.strip("/").split("/")
    host = (parts.hostname or "").lower()
    if host in _PURL_HOSTS and len(segments) == 2 and all(map(_OWNER_REPO.fullmatch, segments)):
        purl = _purl(type=_PURL_HOSTS[host], namespace=segments[0], name=segments[1],
                     version=commit)  # fmt: skip
    else:
        purl = _purl(type="generic", name=segments[-1] or host, version=commit,
                     qualifiers={"vcs_url": f"git+{vcs}@{commit}"})  # fmt: skip
    return SourcePackage(key, name, commit, "git", purl, f"git+{vcs}@{commit}", vcs, vcs)
