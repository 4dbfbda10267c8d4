"""Corpus sources: where the documents of an index come from.

    src = open_source(spec, max_file_bytes=1_000_000)
    src.name, src.describe()
    for doc in src.documents(): ...      # Document(text, origin, language)
    src.skipped                          # Counter: reason -> files left out

Specs:

- a folder: its source code files (by extension); `link` is empty
- a git repository (a folder with .git): the files committed at HEAD, linked to the host
- `python:stdlib`: the running interpreter's standard library, linked to python/cpython;
  `python:stdlib=PYTHON` another interpreter's (a virtual environment's)
- `go:stdlib`, `java:stdlib`, `rust:stdlib` (`=PATH` for another toolchain than the
  machine's): a toolchain's standard library, linked at its release tag (`toolchains.py`)
- `python:site-packages[=NAME,...]`: installed distributions (all, or the named ones)
- a `.jsonl`, `.jsonl.gz` or `.parquet` dataset (The Stack's column names are understood)
- `pypi:NAME[SPECIFIER]`, `pypi:FILE` (a requirements file or a list of names; a
  poetry.lock, uv.lock, Pipfile.lock, pdm.lock or pyproject.toml, `python_locks.py`): PyPI
  packages (`pypi.py`); a `requirements*.txt` path, or one of those files, alone means the same
- `npm:NAME[@VERSION|@RANGE|@TAG]` (scoped names too), `npm:FILE` (a list of names, a
  package.json, or a package-lock.json, npm-shrinkwrap.json, yarn.lock or pnpm-lock.yaml:
  `npm_locks.py`): npm packages (`npm.py`); such a file's path alone means the same

Package sources fetch when opened (verified, cached, several at a time; `RegistryOptions`
says from where, with which credentials and limits): a package that cannot be had is a
SourceError before any index is written.

Every source skips, and counts by reason (see `SkipReasons`): binary, undecodable, oversize,
minified, generated and empty files; folders also count non-code files as unsupported.
"""

from __future__ import annotations

import errno
import os

from .base import CorpusSource, SkipReasons, SourceError
from .datasets import DatasetSource
from .folder import FolderSource
from .git import GitSource, is_git_top
from .languages import language_for_path
from .licenses import detect_license
from .packages import PackageSource, RegistryOptions
from .python_env import SitePackagesSource, StdlibSource
from .toolchains import is_toolchain_spec, open_toolchain

__all__ = [
    "CorpusSource",
    "DatasetSource",
    "FolderSource",
    "GitSource",
    "PackageSource",
    "RegistryOptions",
    "SitePackagesSource",
    "SkipReasons",
    "SourceError",
    "StdlibSource",
    "detect_license",
    "language_for_path",
    "open_source",
]

DATASET_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
_EXPECTED = (
    "expected a folder, a git repository, python:stdlib, python:site-packages, "
    "pypi:NAME, npm:NAME, a requirements.txt, Python lock file, pyproject.toml, "
    "package.json or npm/yarn/pnpm lock file, "
    "or a .jsonl/.jsonl.gz/.parquet dataset"
)


_NPM_LISTS = ("package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
              "pnpm-lock.yaml")  # fmt: skip


def open_source(
    spec: str, *, max_file_bytes: int = 1_000_000, registry: RegistryOptions | None = None
) -> CorpusSource:
    """The corpus source a spec names; SourceError with a one-line message if there is none.
    `registry` configures the package sources (default: `RegistryOptions()`)."""
    if not isinstance(spec, str) or not spec.strip():
        raise SourceError(f"empty source; {_EXPECTED}")
    if not isinstance(max_file_bytes, int) or max_file_bytes <= 0:
        raise SourceError(
            f"max_file_bytes must be a positive number of bytes, not {max_file_bytes!r}"
        )
    spec = spec.strip()
    if spec == "python:stdlib":
        return StdlibSource(spec, max_file_bytes=max_file_bytes)
    if spec.startswith("python:stdlib="):  # another interpreter's standard library
        python = os.path.expanduser(spec.partition("=")[2].strip())
        if not python:
            raise SourceError(f"{spec}: no interpreter after '='")
        return StdlibSource(spec, max_file_bytes=max_file_bytes, interpreter=python)
    if spec == "python:site-packages":
        return SitePackagesSource(spec, max_file_bytes=max_file_bytes)
    if spec.startswith("python:site-packages="):
        names = [n for n in spec.partition("=")[2].split(",") if n.strip()]
        if not names:
            raise SourceError(f"{spec}: no distribution names after '='")
        return SitePackagesSource(spec, names, max_file_bytes=max_file_bytes)
    if is_toolchain_spec(spec):  # go:stdlib, java:stdlib, rust:stdlib[=PATH]
        return open_toolchain(spec, max_file_bytes=max_file_bytes)
    if spec.startswith("python:"):
        raise SourceError(f"unknown source {spec!r}; {_EXPECTED}")
    for prefix in ("pypi:", "npm:"):
        if spec.startswith(prefix):
            value = spec[len(prefix) :].strip()
            if not value:
                raise SourceError(f"{spec}: no package name after {prefix!r}")
            return _open_packages(prefix[:-1], spec, value, registry, max_file_bytes)
    path = os.path.expanduser(spec)
    name = os.path.basename(path).lower()
    from .python_locks import is_pypi_file

    if os.path.isfile(path) and is_pypi_file(path):
        return _open_packages("pypi", spec, path, registry, max_file_bytes, listed=True)
    if os.path.isfile(path) and name in _NPM_LISTS:
        return _open_packages("npm", spec, path, registry, max_file_bytes, listed=True)
    if os.path.isdir(path):
        if is_git_top(path):
            return GitSource(spec, path, max_file_bytes=max_file_bytes)
        return FolderSource(spec, path, max_file_bytes=max_file_bytes)
    if path.lower().endswith(DATASET_SUFFIXES) and os.path.isfile(path):
        return DatasetSource(spec, path, max_file_bytes=max_file_bytes)
    if not os.path.exists(path):
        try:
            os.stat(path)
        except OSError as e:  # (os.path.exists is False for a name too long too)
            if e.errno == errno.ENAMETOOLONG:
                raise SourceError(f"{spec}: path too long") from None
        raise SourceError(f"{spec}: no such file or directory")
    raise SourceError(f"unknown source {spec!r}; {_EXPECTED}")


def _open_packages(
    kind: str,
    spec: str,
    value: str,
    registry: RegistryOptions | None,
    max_file_bytes: int,
    listed: bool = False,
) -> CorpusSource:
    from . import npm, python_locks

    module = python_locks if kind == "pypi" else npm
    options = registry or RegistryOptions()
    return module.open_packages(spec, value, options=options, max_file_bytes=max_file_bytes,
                                listed=listed)  # fmt: skip
