"""Python lock files and manifests as lists of PyPI packages: `pypi:poetry.lock` (and
`uv.lock`, `Pipfile.lock`, `pdm.lock`, `pyproject.toml`, a requirements file), or the bare
path. Each file is read, never run, and nothing is fetched here.

- A lock gives exact versions (`==1.2.3`) and the digests of the release's files it
  recorded (the sdist's and each wheel's: a download must match one of them). Every
  locked package counts, whatever its markers say: a package locked for another platform
  is still public code the workspace depends on.
- `pyproject.toml` without a lock gives ranges: PEP 621 `[project]` dependencies and
  optional-dependencies, PEP 735 `[dependency-groups]`, Poetry's `[tool.poetry]`
  dependencies, dev-dependencies and groups (its `^` and `~` constraints written as PEP 440
  ranges), pdm's and uv's dev-dependencies.
- What does not come from the registry (git, a path, a URL, an editable install, the
  project itself and its workspace members) is counted as NOT_FROM_REGISTRY, never fetched.

Every file is untrusted: a malformed one is a RegistryError of one line naming it.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from ...store.small_files import read_small_file
from .packages import MAX_LIST_BYTES, NOT_FROM_REGISTRY, PackageSource, Wanted, open_spec
from .pypi import (
    NotFromRegistry,
    PyPI,
    is_list_value,
    is_package_name,
    parse_requirement,
    read_requirements,
)
from .registry_http import Digest, RegistryError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomlkit reads TOML there
    tomllib = None

PYPI_LOCKS = ("poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock")
PYPROJECT = "pyproject.toml"
_DIGESTS = ("sha256", "sha384", "sha512")
_LOCAL_KEYS = ("git", "hg", "svn", "bzr", "path", "file", "url", "editable", "workspace")


def is_pypi_file(path: str) -> bool:
    """Whether a file's name says it lists PyPI packages (a lock, a pyproject.toml, a
    requirements*.txt)."""
    name = os.path.basename(path).lower()
    return (
        name in {n.lower() for n in PYPI_LOCKS}
        or name == PYPROJECT
        or (name.startswith("requirements") and name.endswith(".txt"))
    )


def read_pypi_file(path: str, skipped: Counter) -> list[Wanted]:
    """The packages a Python lock file, pyproject.toml or requirements file names (by its
    file name; anything else is read as a requirements file)."""
    reader = {
        "poetry.lock": read_poetry_lock,
        "uv.lock": read_uv_lock,
        "pipfile.lock": read_pipfile_lock,
        "pdm.lock": read_pdm_lock,
        PYPROJECT: read_pyproject,
    }.get(os.path.basename(path).lower(), read_requirements)
    return reader(path, skipped)


def open_packages(
    spec: str, value: str, *, options, max_file_bytes: int, listed: bool = False
) -> PackageSource:
    """The source a `pypi:` spec names: a requirement, or a list, lock or manifest file."""
    return open_spec(
        spec,
        value,
        PyPI(options),
        read_list=read_pypi_file,
        parse_one=parse_requirement,
        is_list=listed or is_list_value(value) or is_pypi_file(value),
        options=options,
        max_file_bytes=max_file_bytes,
    )


# ---------------------------------------------------------------- reading


def _text(path: str) -> str:
    try:
        return read_small_file(path, MAX_LIST_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise RegistryError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RegistryError(
            f"{path}: cannot read it ({getattr(e, 'strerror', None) or e})"
        ) from None


def _toml(path: str) -> dict:
    text = _text(path)
    try:
        if tomllib is not None:
            return tomllib.loads(text)
        import tomlkit

        return tomlkit.parse(text).unwrap()
    except RecursionError:
        raise RegistryError(f"{path}: not valid TOML (nested too deeply)") from None
    except Exception as e:  # tomllib.TOMLDecodeError, tomlkit's ParseError and kin
        reason = " ".join(str(e).split())[:200]
        raise RegistryError(f"{path}: not valid TOML ({reason})") from None


def _json(path: str) -> dict:
    try:
        doc = json.loads(_text(path))
    except (ValueError, RecursionError):
        raise RegistryError(f"{path}: not valid JSON") from None
    if not isinstance(doc, dict):
        raise RegistryError(f"{path}: not a JSON object")
    return doc


def _tables(doc: dict, key: str, path: str) -> list[dict]:
    """`[[key]]`: a list of tables (none when absent)."""
    value = doc.get(key, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise RegistryError(f"{path}: '{key}' is not a list of tables")
    return value


def _digests(values) -> tuple[Digest, ...]:
    """The digests of `algorithm:hex` strings that can verify a download (others left)."""
    out = []
    for value in values:
        algorithm, _, hexdigest = str(value).strip().partition(":")
        hexdigest = hexdigest.lower()
        if algorithm.lower() in _DIGESTS and re.fullmatch(r"[0-9a-f]{64,128}", hexdigest):
            out.append(Digest(algorithm.lower(), hexdigest))
    return _unique(out)


def _unique(digests) -> tuple[Digest, ...]:
    return tuple({str(d): d for d in digests}.values())


def _hashes_of(files) -> list:
    """The `hash` of each `{file = ..., hash = ...}` of a list of them."""
    if not isinstance(files, list):
        return []
    return [f["hash"] for f in files if isinstance(f, dict) and isinstance(f.get("hash"), str)]


class _Found:
    """The packages of one file: one Wanted a (name, version), their pins merged; the
    entries not from the registry counted."""

    def __init__(self, path: str, skipped: Counter) -> None:
        self.path = path
        self.base = os.path.basename(path)
        self.skipped = skipped
        self.wanted: dict[tuple, Wanted] = {}
        self.local_names: set[str] = set()

    def name(self, value: object) -> str:
        if not isinstance(value, str) or not is_package_name(value):
            raise RegistryError(f"{self.path}: not a package name: {str(value)[:100]!r}")
        return value

    def exact(self, name: object, version: object, hashes=()) -> None:
        name = self.name(name)
        if not isinstance(version, str):
            raise RegistryError(f"{self.path}: {name} has no version")
        try:
            key = (canonicalize_name(name), Version(version))
        except InvalidVersion:
            raise RegistryError(f"{self.path}: {name}: not a version: {version[:100]!r}") from None
        pins = _digests(hashes)
        had = self.wanted.get(key)
        if had is not None:
            pins = _unique(had.pinned + pins)
            self.wanted[key] = Wanted(had.name, had.constraint, pins, had.where)
        else:
            self.wanted[key] = Wanted(name, f"=={version}", pins, f"{self.base} {name}")

    def ranged(self, name: object, constraint: str) -> None:
        name = self.name(name)
        try:
            constraint = str(SpecifierSet(constraint))
        except InvalidSpecifier:
            raise RegistryError(
                f"{self.path}: {name}: not a version constraint: {constraint[:100]!r}"
            ) from None
        key = (canonicalize_name(name), constraint)
        self.wanted.setdefault(key, Wanted(name, constraint, (), f"{self.base} {name}"))

    def requirement(self, text: object, own: set[str], local: set[str]) -> None:
        """A PEP 508 string of a manifest; the project itself (`me[extra]`), its local
        packages, URLs and editable installs are not from the registry."""
        if not isinstance(text, str):
            raise RegistryError(f"{self.path}: not a requirement: {str(text)[:100]!r}")
        if text.strip().startswith("-e"):  # pdm's editable installs
            self.local()
            return
        try:
            w = parse_requirement(text)
        except NotFromRegistry:
            self.local()
            return
        except RegistryError as e:
            raise RegistryError(f"{self.path}: {e}") from None
        if canonicalize_name(w.name) in own | local:
            self.local(w.name)
            return
        self.ranged(w.name, w.constraint)

    def local(self, name: str = "") -> None:
        """One more entry not from the registry (a named one counted once)."""
        if name:
            if canonicalize_name(name) in self.local_names:
                return
            self.local_names.add(canonicalize_name(name))
        self.skipped[NOT_FROM_REGISTRY] += 1

    def result(self) -> list[Wanted]:
        return list(self.wanted.values())


# ---------------------------------------------------------------- lock files


def read_poetry_lock(path: str, skipped: Counter) -> list[Wanted]:
    """poetry.lock: `[[package]]` name and version; `files` (lock-version 2), else
    `[metadata.files]` (1.x), the digests. A `source` of type git, directory, file or url
    is not from the registry; `legacy` is another index, and counts."""
    doc = _toml(path)
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        raise RegistryError(f"{path}: not a poetry.lock (no [metadata])")
    old_files = meta.get("files") if isinstance(meta.get("files"), dict) else {}
    old_files = {canonicalize_name(str(k)): v for k, v in old_files.items()}
    found = _Found(path, skipped)
    for package in _tables(doc, "package", path):
        source = package.get("source")
        kind = source.get("type") if isinstance(source, dict) else None
        if kind not in (None, "", "legacy", "pypi") or package.get("develop"):
            found.local()
            continue
        name = found.name(package.get("name"))
        files = package.get("files")
        if files is None:
            files = old_files.get(canonicalize_name(name))
        found.exact(name, package.get("version"), _hashes_of(files))
    return found.result()


def read_uv_lock(path: str, skipped: Counter) -> list[Wanted]:
    """uv.lock: `[[package]]` name, version and `source`; only `registry` sources count
    (the project and its workspace members are `virtual` or `editable`; `git`, `path`,
    `directory` and `url` are not from the registry). Digests: `sdist.hash`, `wheels[].hash`."""
    doc = _toml(path)
    if "version" not in doc:
        raise RegistryError(f"{path}: not a uv.lock (no version)")
    found = _Found(path, skipped)
    for package in _tables(doc, "package", path):
        source = package.get("source")
        if not isinstance(source, dict) or "registry" not in source:
            found.local()
            continue
        sdist = package.get("sdist")
        wheels = package.get("wheels")
        hashes = _hashes_of([sdist] + (wheels if isinstance(wheels, list) else []))
        found.exact(package.get("name"), package.get("version"), hashes)
    return found.result()


def read_pipfile_lock(path: str, skipped: Counter) -> list[Wanted]:
    """Pipfile.lock: `default` and `develop`, each name with `"version": "==1.2.3"` and
    its `hashes`; entries with `git`, `path`, `file` or `editable` are not from the
    registry. An entry pipenv did not pin (it writes `"version": "*"` for a package whose
    markers leave out the platform it locked on) is wanted at its newest release."""
    doc = _json(path)
    if not any(k in doc for k in ("_meta", "default", "develop")):
        raise RegistryError(f"{path}: not a Pipfile.lock (no default or develop)")
    found = _Found(path, skipped)
    for section in ("default", "develop"):
        entries = doc.get(section) or {}
        if not isinstance(entries, dict):
            raise RegistryError(f"{path}: '{section}' is not an object")
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                raise RegistryError(f"{path}: {str(name)[:100]!r} is not an object")
            if any(entry.get(k) for k in _LOCAL_KEYS):
                found.local()
                continue
            version = entry.get("version")
            hashes = entry.get("hashes") if isinstance(entry.get("hashes"), list) else []
            if isinstance(version, str) and re.fullmatch(r"===?\s*[^\s,;<>!=~*]+", version):
                found.exact(name, version.lstrip("= "), hashes)
            elif version is None or version == "*":
                found.ranged(name, "")
            elif isinstance(version, str):
                found.ranged(name, version)
            else:
                raise RegistryError(f"{path}: {str(name)[:100]!r} has no version")
    return found.result()


def read_pdm_lock(path: str, skipped: Counter) -> list[Wanted]:
    """pdm.lock: `[[package]]` name, version and `files = [{file, hash}]` (before lock
    version 4: `[metadata.files]`, keyed "name version"); packages with `path`, `url`,
    `git` or `editable` are not from the registry."""
    doc = _toml(path)
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        raise RegistryError(f"{path}: not a pdm.lock (no [metadata])")
    old_files = meta.get("files") if isinstance(meta.get("files"), dict) else {}
    found = _Found(path, skipped)
    for package in _tables(doc, "package", path):
        if any(package.get(k) for k in _LOCAL_KEYS):
            found.local()
            continue
        name, version = package.get("name"), package.get("version")
        files = package.get("files")
        if files is None:
            files = old_files.get(f"{name} {version}")
        found.exact(name, version, _hashes_of(files))
    return found.result()


# ---------------------------------------------------------------- pyproject.toml


def read_pyproject(path: str, skipped: Counter) -> list[Wanted]:
    """pyproject.toml's dependencies, as ranges: `[project]` dependencies and
    optional-dependencies, `[dependency-groups]` (an `{include-group = ...}` is read as its
    group), Poetry's `[tool.poetry]` dependencies, dev-dependencies and
    `group.*.dependencies` (`python` is no package), `[tool.pdm.dev-dependencies]` and
    `[tool.uv] dev-dependencies`. Packages that `[tool.uv.sources]` or Poetry take from a
    path, git, a URL or the workspace are not from the registry, nor is the project."""
    doc = _toml(path)
    found = _Found(path, skipped)
    project = _table(doc, "project", path)
    tool = _table(doc, "tool", path)
    poetry = _table(tool, "poetry", path)
    own = {
        canonicalize_name(n)
        for n in (project.get("name"), poetry.get("name"))
        if isinstance(n, str) and is_package_name(n)
    }
    poetry_tables = [
        ("tool.poetry.dependencies", poetry.get("dependencies")),
        ("tool.poetry.dev-dependencies", poetry.get("dev-dependencies")),
    ]
    for group, table in _table(poetry, "group", path).items():
        deps = table.get("dependencies") if isinstance(table, dict) else None
        poetry_tables.append((f"tool.poetry.group.{group}.dependencies", deps))
    local = _uv_local(_table(_table(tool, "uv", path), "sources", path))
    for where, table in poetry_tables:
        if table is not None and not isinstance(table, dict):
            raise RegistryError(f"{path}: {where} is not a table")
        for name, value in (table or {}).items():
            if str(name).lower() != "python" and _poetry_is_local(value):
                local.add(canonicalize_name(found.name(name)))

    lists = [("project.dependencies", project.get("dependencies", []))]
    lists += [(f"project.optional-dependencies.{k}", v)
              for k, v in _table(project, "optional-dependencies", path).items()]  # fmt: skip
    lists += [(f"dependency-groups.{k}", v)
              for k, v in _table(doc, "dependency-groups", path).items()]  # fmt: skip
    lists += [(f"tool.pdm.dev-dependencies.{k}", v)
              for k, v in _table(_table(tool, "pdm", path), "dev-dependencies", path).items()]  # fmt: skip
    lists.append(("tool.uv.dev-dependencies", _table(tool, "uv", path).get("dev-dependencies", [])))
    for where, items in lists:
        if not isinstance(items, list):
            raise RegistryError(f"{path}: {where} is not a list")
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("include-group"), str):
                continue  # the included group is read as a group of its own
            found.requirement(item, own, local)

    for _, table in poetry_tables:
        for name, value in (table or {}).items():
            if str(name).lower() == "python":
                continue
            if canonicalize_name(found.name(name)) in own | local:
                found.local(name)
                continue
            for alternative in value if isinstance(value, list) else [value]:
                version = (
                    alternative.get("version", "*")
                    if isinstance(alternative, dict)
                    else alternative
                )
                if not isinstance(version, str):
                    raise RegistryError(f"{path}: {name}: not a version constraint")
                found.ranged(name, _poetry_to_pep440(version, path, name))
    return found.result()


def _table(doc: dict, key: str, path: str) -> dict:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise RegistryError(f"{path}: '{key}' is not a table")
    return value


def _poetry_is_local(value: object) -> bool:
    """A Poetry dependency from a path, git or a URL (any of its alternatives)."""
    alternatives = value if isinstance(value, list) else [value]
    return any(
        isinstance(a, dict) and any(k in a for k in ("path", "git", "url", "file"))
        for a in alternatives
    )


def _uv_local(sources: dict) -> set[str]:
    """The names `[tool.uv.sources]` takes from the workspace, a path, git or a URL (an
    `index = ...` source is still an index)."""
    out = set()
    for name, value in sources.items():
        alternatives = value if isinstance(value, list) else [value]
        local = any(isinstance(a, dict) and any(k in a for k in _LOCAL_KEYS) for a in alternatives)
        if local and isinstance(name, str) and is_package_name(name):
            out.add(canonicalize_name(name))
    return out


_OPERATOR = r"(?:===|==|!=|<=|>=|~=|<|>|=|\^|~)"


def _poetry_to_pep440(text: str, path: str = "", name: str = "") -> str:
    """A Poetry version constraint as a PEP 440 specifier: `^1.2.3` is `>=1.2.3,<2`, `^0.2`
    `>=0.2,<0.3`, `~1.2` `>=1.2,<1.3`, `1.2.3` `==1.2.3`, `*` none; ANDs by comma or space.
    PEP 440 has no "or": of `^1 || ^2`, the last alternative (the newest, as written)."""
    text = re.split(r"\|\|?", text)[-1].strip()
    text = re.sub(rf"({_OPERATOR})\s+", r"\1", text)
    out = []
    for part in filter(None, re.split(r"[\s,]+", text)):
        operator = re.match(_OPERATOR, part)
        op = operator.group(0) if operator else ""
        version = part[len(op) :]
        if part == "*":
            continue
        if op in ("^", "~"):
            release = re.match(r"\d+(?:\.\d+)*", version)
            if not release:
                raise RegistryError(f"{path}: {name}: not a version constraint: {part!r}")
            nums = [int(n) for n in release.group(0).split(".")]
            if op == "^":  # up to the next change of the first non-zero part
                first = next((i for i, n in enumerate(nums) if n), len(nums) - 1)
                upper = nums[: first + 1]
            else:  # up to the next minor (the next major when only that is given)
                upper = nums[:2] if len(nums) > 1 else nums[:1]
            upper[-1] += 1
            out += [f">={version}", "<" + ".".join(map(str, upper))]
        elif op in ("", "="):
            out.append(f"=={version}")
        else:
            out.append(part)
    return ",".join(out)
