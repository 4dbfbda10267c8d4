"""The running interpreter's standard library and installed distributions."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterable, Iterator
from importlib import metadata
from urllib.parse import quote

from index_tools.model import Document, Origin

from .base import CorpusSource, SkipReasons, SourceError
from .folder import clean_path, read_checked, read_limited
from .languages import language_for_path
from .licenses import (
    NOASSERTION,
    detect_license,
    license_from_classifiers,
    license_from_files,
    license_from_name,
)

# ---------------------------------------------------------------- stdlib


def cpython_tag(version_info=None) -> str:
    """The CPython release tag of an interpreter version: v3.11.7, v3.13.0rc1, v3.14.0a2."""
    v = version_info or sys.version_info
    tag = f"v{v[0]}.{v[1]}.{v[2]}"
    level, serial = v[3], v[4]
    suffix = {"alpha": "a", "beta": "b", "candidate": "rc"}.get(level)
    if suffix:
        tag += f"{suffix}{serial}"
    return tag


class StdlibSource(CorpusSource):
    """Every .py file of the running interpreter's standard library, in sorted order.

    Origins point at the release tag in python/cpython: `Lib/<relpath>` at `v3.11.7`.
    Files made at build time (`_sysconfigdata*`, the `config-*` folder) are left out, as
    are site-packages / dist-packages.
    """

    kind = "python-stdlib"

    def __init__(
        self, spec: str, *, max_file_bytes: int = 1_000_000, interpreter: str = ""
    ) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        if interpreter:  # another interpreter's (a workspace's virtual environment)
            found = _interpreter_stdlib(interpreter)
            if found is None:
                raise SourceError(f"{spec}: {interpreter} does not run as a Python interpreter")
            self.root, v = found
        else:
            self.root, v = sysconfig.get_paths()["stdlib"], tuple(sys.version_info)
        if not os.path.isdir(self.root):
            raise SourceError(f"{spec}: the standard library folder does not exist")
        self.version = f"{v[0]}.{v[1]}.{v[2]}"
        self.tag = cpython_tag(v)
        self.name = f"stdlib {v[0]}.{v[1]}"

    def describe(self) -> dict:
        return {
            **super().describe(),
            "repository": "python/cpython",
            "version": self.version,
            "commit": self.tag,
            "license": "PSF-2.0",
        }

    def paths(self) -> Iterator[str]:
        """Relative "/" paths of the stdlib's .py files, sorted."""
        found = []

        def unreadable(error: OSError) -> None:  # a folder that cannot be listed: counted
            self.skipped[SkipReasons.UNREADABLE] += 1

        for dirpath, dirnames, filenames in os.walk(self.root, onerror=unreadable):
            dirnames[:] = [
                d
                for d in dirnames
                if d not in ("site-packages", "dist-packages", "__pycache__")
                and not d.startswith(("config-", "."))
            ]
            rel_dir = os.path.relpath(dirpath, self.root)
            for filename in filenames:
                if not filename.endswith(".py") or filename.startswith("_sysconfigdata"):
                    continue
                rel = filename if rel_dir == "." else os.path.join(rel_dir, filename)
                found.append(rel.replace(os.sep, "/"))
        return iter(sorted(found))

    def _documents(self) -> Iterator[Document]:
        base = f"https://github.com/python/cpython/blob/{self.tag}/Lib/"
        for rel in self.paths():
            text = read_checked(self, os.path.join(self.root, *rel.split("/")))
            if text is None:
                continue
            path = clean_path(rel)
            origin = Origin(
                repository="python/cpython",
                path=f"Lib/{path}",
                commit=self.tag,
                license="PSF-2.0",
                link=base + quote(path, safe="/"),
                line_anchor=True,
            )
            yield Document(text=text, origin=origin, language="python")


_STDLIB_CODE = (
    "import json, sys, sysconfig; "
    "print(json.dumps([sysconfig.get_paths()['stdlib'], list(sys.version_info)]))"
)


def _interpreter_stdlib(interpreter: str) -> tuple[str, tuple] | None:
    """(standard library folder, version_info) of another interpreter, None if it does not
    run (a broken or foreign virtual environment)."""
    try:
        done = subprocess.run(
            [interpreter, "-I", "-c", _STDLIB_CODE],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        root, version = json.loads(done.stdout)
        v = (int(version[0]), int(version[1]), int(version[2]), str(version[3]), int(version[4]))
        return str(root), v
    except (OSError, subprocess.SubprocessError, ValueError, TypeError, IndexError):
        return None


def interpreter_version(interpreter: str) -> str:
    """The version ("3.12.1") of an interpreter that runs, else ""."""
    found = _interpreter_stdlib(interpreter)
    return ".".join(map(str, found[1][:3])) if found else ""


# ---------------------------------------------------------------- site-packages


def canonical_name(name: str) -> str:
    """A distribution name as pip compares it: lower case, runs of -_. as one "-"."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution_license(dist: metadata.Distribution) -> str:
    """SPDX id of an installed distribution, from its metadata or its license files.

    License-Expression; else the License field when it names a license (or holds a full
    license text); else the distribution's license files; else its Trove classifiers.
    """
    meta = dist.metadata
    expression = (meta.get("License-Expression") or "").strip()
    if expression:
        return " ".join(expression.split())
    field = (meta.get("License") or "").strip()
    if field and field.upper() not in ("UNKNOWN", "NONE"):
        spdx = license_from_name(field)
        if spdx is None and ("\n" in field or len(field) > 100):
            found = detect_license(field)
            spdx = found if found != NOASSERTION else None
        if spdx:
            return spdx
    files = [
        f
        for f in dist.files or []
        if re.match(r"^(licen[cs]e|copying)", f.name, re.IGNORECASE) and ".dist-info" in str(f)
    ]
    if files:
        by_name = {f.name: f for f in files}

        def read(name: str) -> str | None:
            try:
                return read_limited(str(dist.locate_file(by_name[name])), 200_000).decode(
                    "utf-8", "replace"
                )
            except OSError:
                return None

        spdx = license_from_files(by_name, read)
        if spdx != NOASSERTION:
            return spdx
    return license_from_classifiers(meta.get_all("Classifier") or []) or NOASSERTION


def installed_distributions() -> dict[str, metadata.Distribution]:
    """canonical name -> distribution, first on sys.path wins (as imports do)."""
    found: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        name = dist.metadata.get("Name")
        if name:
            found.setdefault(canonical_name(name), dist)
    return found


class SitePackagesSource(CorpusSource):
    """The .py files of the installed distributions (all, or the named ones).

    repository = distribution name, commit = version, link = the release page on PyPI
    (no line anchor: PyPI does not show files by line).
    """

    kind = "python-site-packages"

    def __init__(
        self, spec: str, names: Iterable[str] = (), *, max_file_bytes: int = 1_000_000
    ) -> None:
        super().__init__(spec, max_file_bytes=max_file_bytes)
        installed = installed_distributions()
        wanted = [canonical_name(n.strip()) for n in names if n.strip()]
        missing = [n for n in wanted if n not in installed]
        if missing:
            raise SourceError(f"{spec}: no installed distribution named {', '.join(missing)}")
        keys = sorted(set(wanted)) if wanted else sorted(installed)
        self.distributions = [installed[k] for k in keys]
        if wanted:
            self.name = "site-packages " + ", ".join(d.metadata["Name"] for d in self.distributions)
        else:
            self.name = "site-packages"

    def describe(self) -> dict:
        return {
            **super().describe(),
            "distributions": {d.metadata["Name"]: d.version for d in self.distributions},
        }

    def _documents(self) -> Iterator[Document]:
        for dist in self.distributions:
            name, version = dist.metadata["Name"], dist.version
            license_id = distribution_license(dist)
            link = f"https://pypi.org/project/{quote(name, safe='')}/{quote(version, safe='')}/"
            files = sorted(
                str(f).replace("\\", "/")
                for f in dist.files or []
                if f.suffix == ".py"
                and not str(f).startswith("..")
                and "__pycache__" not in f.parts
                and not os.path.isabs(str(f))
            )
            for rel in files:
                text = read_checked(self, str(dist.locate_file(rel)))
                if text is None:
                    continue
                origin = Origin(
                    repository=name,
                    path=clean_path(rel),
                    commit=version,
                    license=license_id,
                    link=link,
                    line_anchor=False,
                )
                yield Document(text=text, origin=origin, language=language_for_path(rel))
