"""What a workspace depends on, read from its files without fetching anything: the plan of
`workspace:DIR` (`workspace.py` opens it as sources).

    plan = plan_workspace("~/src/app")
    plan.summary()     # "143 npm packages (package-lock.json), 12 PyPI packages
                       #  (requirements.txt), Python 3.11's standard library — about ..."

What is read, per ecosystem and project folder (a folder holding a manifest):
- npm: the lock files (`package-lock.json`, `npm-shrinkwrap.json`, `yarn.lock`,
  `pnpm-lock.yaml`: the locked versions, with their integrity digests); a `package.json`
  only where no lock covers it (a lock in its folder, or at the root of the monorepo that
  names it a member): its ranges. The workspace's own packages are never fetched;
- PyPI: `requirements*.txt` (and `requirements/*.txt`), the lock files (`poetry.lock`,
  `uv.lock`, `Pipfile.lock`, `pdm.lock`); a `pyproject.toml` only where no lock covers it;
- the standard library of each language the workspace's files are written in, where this
  machine has its sources: Python (the workspace's own virtual environment's interpreter,
  else the running one), Go, Java, Rust (`toolchains.py`);
- the manifests of ecosystems without a source yet (`go.mod`, `Cargo.lock`, `pom.xml`, ...)
  are listed as found and not indexed, with the reason.

Dependencies (`node_modules`), virtual environments, hidden folders, build outputs and test
fixtures are never read as the workspace's manifests.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

from ...store.paths import workspace_index_path
from .base import SourceError
from .folder import SKIP_DIR_NAMES
from .languages import language_for_path
from .packages import Wanted
from .registry_http import RegistryError

PREFIX = "workspace:"
MAX_WALK_FILES = 500_000  # files looked at in one workspace, at most
MAX_DEPTH = 12  # folders below the workspace's top

# build outputs and dependency folders of the ecosystems, and test fixtures (a project's
# sample lock files of other projects): never the workspace's manifests
BUILD_DIR_NAMES = frozenset(
    {"build", "dist", "out", "target", "vendor", "Pods", "coverage", "bin", "obj",
     "env", "virtualenv", "jspm_packages", "web_modules",
     "fixtures", "__fixtures__", "testdata", "test_data", "test-data", "__snapshots__"}
)  # fmt: skip

NPM_LOCK_NAMES = ("npm-shrinkwrap.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock")
PYPI_LOCK_NAMES = ("poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock")

# manifests of ecosystems this product does not fetch yet: file name -> ecosystem
NOT_FETCHED = {
    "go.mod": "Go modules",
    "Cargo.lock": "crates.io",
    "Cargo.toml": "crates.io",
    "pom.xml": "Maven",
    "build.gradle": "Maven (Gradle)",
    "build.gradle.kts": "Maven (Gradle)",
    "Gemfile.lock": "RubyGems",
    "Gemfile": "RubyGems",
    "composer.lock": "Packagist",
    "composer.json": "Packagist",
    "packages.lock.json": "NuGet",
    "Package.resolved": "Swift packages",
    "pubspec.lock": "pub.dev",
    "mix.lock": "Hex",
}
_NOT_FETCHED_SUFFIXES = {".csproj": "NuGet", ".fsproj": "NuGet"}

# the standard libraries a workspace's languages call for: language -> spec
STDLIB_SPECS = {"python": "python:stdlib", "go": "go:stdlib", "java": "java:stdlib",
                "rust": "rust:stdlib"}  # fmt: skip
_STDLIB_FROM_MANIFEST = {"go.mod": "go", "Cargo.toml": "rust", "Cargo.lock": "rust",
                         "pom.xml": "java", "build.gradle": "java", "build.gradle.kts": "java"}  # fmt: skip
_LANGUAGE_NAMES = {"python": "Python", "go": "Go", "java": "Java", "rust": "Rust"}

# rough sizes for the estimate an editor shows before it builds (measured, see README)
WORDS_PER_PACKAGE = {"npm": 30_000, "pypi": 200_000}
STDLIB_WORDS = {"python": 6_900_000, "go": 10_500_000, "java": 34_400_000, "rust": 4_700_000}
BYTES_PER_WORD = 13
WORDS_PER_SECOND = 400_000  # indexing on 2 cores
SECONDS_PER_PACKAGE = 0.25  # fetching, not cached


def workspace_folder(spec: str) -> Path:
    """The folder a `workspace:DIR` spec names, resolved; SourceError if it is none."""
    value = spec.strip()[len(PREFIX) :].strip()
    if not value:
        raise SourceError(f"{spec}: no folder after 'workspace:'")
    path = Path(os.path.expanduser(value))
    if not path.is_dir():
        raise SourceError(f"{spec}: no such folder")
    return path.resolve()


# ---------------------------------------------------------------- finding manifests


@dataclasses.dataclass
class Found:
    """What a walk of the workspace found: manifests by kind, languages by files."""

    npm_locks: list[str] = dataclasses.field(default_factory=list)
    npm_manifests: list[str] = dataclasses.field(default_factory=list)
    pypi_locks: list[str] = dataclasses.field(default_factory=list)
    pypi_manifests: list[str] = dataclasses.field(default_factory=list)
    requirements: list[str] = dataclasses.field(default_factory=list)
    not_fetched: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    languages: Counter = dataclasses.field(default_factory=Counter)
    venvs: list[str] = dataclasses.field(default_factory=list)  # relative folders
    truncated: bool = False


def _is_venv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name in SKIP_DIR_NAMES or name in BUILD_DIR_NAMES


def _is_requirements(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1].lower()
    if not name.endswith((".txt", ".in")):
        return False
    if name.startswith("requirements") or name.endswith(("requirements.txt", "requirements.in")):
        return name.endswith(".txt")  # a pip-compile .in is the .txt's source
    return len(parts) > 1 and parts[-2].lower() == "requirements" and name.endswith(".txt")


def find_manifests(root: str | os.PathLike) -> Found:
    """The manifests and lock files under `root`, and how many files of each language."""
    found = Found()
    top = os.fspath(root)
    seen = 0
    for folder, dirs, files in os.walk(top):
        rel_folder = os.path.relpath(folder, top).replace(os.sep, "/")
        rel_folder = "" if rel_folder == "." else rel_folder
        depth = rel_folder.count("/") + 1 if rel_folder else 0
        kept = []
        for d in sorted(dirs):
            full = os.path.join(folder, d)
            if _is_venv(full):
                found.venvs.append(f"{rel_folder}/{d}".lstrip("/"))
            elif not _skipped_dir(d) and depth < MAX_DEPTH and not os.path.islink(full):
                kept.append(d)
        dirs[:] = kept
        for name in sorted(files):
            seen += 1
            if seen > MAX_WALK_FILES:
                found.truncated = True
                dirs[:] = []
                break
            rel = f"{rel_folder}/{name}".lstrip("/")
            if name in NPM_LOCK_NAMES:
                found.npm_locks.append(rel)
            elif name == "package.json":
                found.npm_manifests.append(rel)
            elif name in PYPI_LOCK_NAMES:
                found.pypi_locks.append(rel)
            elif name == "pyproject.toml":
                found.pypi_manifests.append(rel)
            elif _is_requirements(rel):
                found.requirements.append(rel)
            elif name in NOT_FETCHED:
                found.not_fetched.append((rel, NOT_FETCHED[name]))
            elif os.path.splitext(name)[1] in _NOT_FETCHED_SUFFIXES:
                found.not_fetched.append((rel, _NOT_FETCHED_SUFFIXES[os.path.splitext(name)[1]]))
            language = language_for_path(name)
            if language:
                found.languages[language] += 1
        if found.truncated:
            break
    return found


def _covered(manifest: str, locks: list[str]) -> str:
    """The lock file in the manifest's folder or a folder above it, or ""."""
    folder = posix_dirname(manifest)
    best = ""
    for lock in locks:
        lock_folder = posix_dirname(lock)
        if (folder == lock_folder or folder.startswith(lock_folder + "/") or not lock_folder) and (
            not best or len(lock_folder) > len(posix_dirname(best))
        ):
            best = lock
    return best


def _npm_covered(root: Path, manifest: str, locks: list[str]) -> bool:
    """Whether a package.json's dependencies are locked: a lock file in its folder, or in
    the folder of the monorepo it is a member of (the root's `workspaces` in package.json
    or `packages` in pnpm-workspace.yaml name its folder)."""
    folder = posix_dirname(manifest)
    for lock in locks:
        top = posix_dirname(lock)
        if top == folder:
            return True
        if top and not folder.startswith(top + "/"):
            continue
        member = folder[len(top) + 1 :] if top else folder
        if folder and any(_glob_match(member, p) for p in _workspace_globs(root / top)):
            return True
    return False


def _workspace_globs(folder: Path) -> list[str]:
    globs = []
    members = _json_value(folder / "package.json", "workspaces")
    if isinstance(members, dict):  # Yarn 1's {"packages": [...], "nohoist": [...]}
        members = members.get("packages")
    if isinstance(members, list):
        globs += [m for m in members if isinstance(m, str)]
    try:
        text = (folder / "pnpm-workspace.yaml").read_bytes()[: 1 << 20].decode("utf-8", "replace")
    except OSError:
        text = ""
    in_packages = False
    for line in text.splitlines():
        if re.match(r"^packages\s*:", line):
            in_packages = True
        elif in_packages and (m := re.match(r"^\s+-\s*['\"]?([^'\"#]+?)['\"]?\s*(#.*)?$", line)):
            globs.append(m.group(1))
        elif line.strip() and not line.startswith((" ", "\t", "#")):
            in_packages = False
    return [g.strip().removeprefix("./").rstrip("/") for g in globs if not g.startswith("!")]


def _glob_match(member: str, pattern: str) -> bool:
    """A workspace glob (`packages/*`, `apps/**`, `tools/site`) against a folder."""
    regex = re.escape(pattern).replace(r"\*\*", "\0").replace(r"\*", "[^/]*")
    regex = regex.replace("\0/", "(?:.*/)?").replace("\0", ".*")
    return re.fullmatch(regex, member) is not None


def posix_dirname(rel: str) -> str:
    return rel.rpartition("/")[0]


# ---------------------------------------------------------------- the plan


@dataclasses.dataclass
class Ecosystem:
    """The packages one registry gives a workspace."""

    name: str  # "npm" / "pypi"
    wanted: list[Wanted]
    files: list[str]  # the files they were read from
    skipped: Counter  # entries not from the registry, by reason
    covered: list[str] = dataclasses.field(default_factory=list)  # manifests a lock covers

    @property
    def label(self) -> str:
        return {"npm": "npm", "pypi": "PyPI"}[self.name]


@dataclasses.dataclass
class Stdlib:
    language: str
    spec: str
    version: str
    available: bool
    reason: str = ""  # why not, when not available

    def label(self) -> str:
        short = ".".join(self.version.removeprefix("go").split(".")[:2]) if self.version else ""
        name = _LANGUAGE_NAMES.get(self.language, self.language)
        return f"{name} {short}'s standard library".replace("  ", " ")


@dataclasses.dataclass
class WorkspacePlan:
    """What a workspace depends on, read from its files; nothing fetched yet."""

    folder: Path
    ecosystems: list[Ecosystem]
    stdlibs: list[Stdlib]
    not_indexed: list[dict]  # {"file", "ecosystem", "reason"}
    languages: dict[str, int]
    problems: list[str]  # files that could not be read
    truncated: bool = False
    python: str = ""  # the workspace's interpreter, when it has a virtual environment

    def packages(self) -> int:
        return sum(len(e.wanted) for e in self.ecosystems)

    def estimate(self) -> dict:
        words = sum(WORDS_PER_PACKAGE[e.name] * len(e.wanted) for e in self.ecosystems)
        words += sum(STDLIB_WORDS.get(s.language, 5_000_000) for s in self.stdlibs if s.available)
        seconds = words / WORDS_PER_SECOND + SECONDS_PER_PACKAGE * self.packages()
        return {"words": words, "bytes": words * BYTES_PER_WORD, "seconds": round(seconds)}

    def parts(self) -> list[str]:
        out = []
        for e in self.ecosystems:
            n = len(e.wanted)
            if n:
                files = ", ".join(sorted({os.path.basename(f) for f in e.files}))
                out.append(f"{n:,} {e.label} package{'s' if n != 1 else ''} ({files})")
        out += [s.label() for s in self.stdlibs if s.available]
        return out

    def summary(self) -> str:
        parts = self.parts()
        if not parts:
            return "nothing to index: no dependencies and no standard library found"
        e = self.estimate()
        return (
            f"{', '.join(parts)} — about {_words(e['words'])} words, {_bytes(e['bytes'])}, "
            f"{_duration(e['seconds'])}"
        )

    def digest(self) -> str:
        """What the workspace's dependencies are: changes when a manifest or a standard
        library's version does."""
        h = hashlib.sha256()
        for e in self.ecosystems:
            for w in sorted(e.wanted, key=lambda w: (w.name.lower(), w.constraint)):
                h.update(f"{e.name}\0{w.name.lower()}\0{w.constraint}\n".encode())
        for s in self.stdlibs:
            h.update(f"{s.spec}\0{s.version}\0{s.available}\n".encode())
        for n in self.not_indexed:
            h.update(f"{n['file']}\0{n['reason']}\n".encode())
        return h.hexdigest()[:32]

    def popular_specs(self, count: int) -> list[str]:
        """`popular:npm:N` / `popular:pypi:N` for the ecosystems this workspace uses (by its
        manifests or its files' languages): the opt-in beyond its lock files."""
        if count <= 0:
            return []
        uses = {e.name for e in self.ecosystems if e.wanted}
        if {"javascript", "typescript"} & set(self.languages):
            uses.add("npm")
        if "python" in self.languages:
            uses.add("pypi")
        return [f"popular:{name}:{count}" for name in ("npm", "pypi") if name in uses]

    def to_dict(self) -> dict:
        return {
            "workspace": str(self.folder),
            "index": str(workspace_index_path(self.folder)),
            "ecosystems": [
                {
                    "ecosystem": e.name,
                    "packages": len(e.wanted),
                    "files": sorted(e.files),
                    "covered_by_locks": sorted(e.covered),
                    "not_from_registry": sum(e.skipped.values()),
                }
                for e in self.ecosystems
            ],
            "stdlibs": [
                {"language": s.language, "spec": s.spec, "version": s.version}
                for s in self.stdlibs
                if s.available
            ],
            "not_indexed": self.not_indexed,
            "languages": dict(sorted(self.languages.items(), key=lambda kv: -kv[1])),
            "problems": self.problems,
            "truncated": self.truncated,
            "estimate": self.estimate(),
            "summary": self.summary(),
        }


def _words(n: int) -> str:
    return (
        f"{n / 1e9:.1f}B"
        if n >= 1e9
        else f"{max(n / 1e6, 0.1):.0f}M"
        if n >= 1e6
        else f"{n / 1e3:.0f}K"
    )


def _bytes(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{max(1, round(n / 1e6))} MB"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} seconds"
    return f"{round(seconds / 60)} minutes"


def plan_workspace(folder: str | os.PathLike) -> WorkspacePlan:
    """What `workspace:folder` holds: its manifests read, its toolchains looked up; nothing
    fetched. A manifest that cannot be read is a problem of the plan, not an error."""
    root = Path(os.path.expanduser(os.fspath(folder))).resolve()
    if not root.is_dir():
        raise SourceError(f"{folder}: no such folder")
    found = find_manifests(root)
    problems: list[str] = []
    ecosystems = [_npm(root, found, problems), _pypi(root, found, problems)]
    languages = dict(found.languages)
    not_indexed = [
        {
            "file": rel,
            "ecosystem": eco,
            "reason": f"{eco} dependencies are not fetched yet (npm and PyPI are)",
        }
        for rel, eco in found.not_fetched
    ]
    python = _workspace_python(root, found.venvs)
    stdlibs = _stdlibs(found, python, root)
    for s in stdlibs:
        if not s.available:
            not_indexed.append({"file": "", "ecosystem": s.spec, "reason": s.reason})
    return WorkspacePlan(
        folder=root,
        ecosystems=[e for e in ecosystems if e.wanted or e.files],
        stdlibs=stdlibs,
        not_indexed=not_indexed,
        languages=languages,
        problems=problems,
        truncated=found.truncated,
        python=python,
    )


def _read(reader, root: Path, rel: str, skipped: Counter, problems: list[str]) -> list[Wanted]:
    try:
        return reader(str(root / rel), skipped)
    except (RegistryError, SourceError) as e:
        problems.append(f"{rel}: {str(e).removeprefix(str(root / rel) + ': ')}")
        return []


def _merge(wanted: list[Wanted], own: set[str]) -> list[Wanted]:
    """One entry a (name, constraint), the workspace's own packages left out."""
    seen: dict[tuple[str, str], Wanted] = {}
    for w in wanted:
        if w.name.lower() in own:
            continue
        seen.setdefault((w.name.lower(), w.constraint), w)
    return list(seen.values())


def _npm(root: Path, found: Found, problems: list[str]) -> Ecosystem:
    from .npm_locks import read_npm_file

    skipped: Counter = Counter()
    wanted: list[Wanted] = []
    files, covered = [], []
    own = set()
    for rel in found.npm_manifests:  # the workspace's own packages are never fetched
        name = _json_field(root / rel, "name")
        if name:
            own.add(name.lower())
    for rel in found.npm_locks:
        wanted += _read(read_npm_file, root, rel, skipped, problems)
        files.append(rel)
    for rel in found.npm_manifests:
        if _npm_covered(root, rel, found.npm_locks):
            covered.append(rel)
            continue
        wanted += _read(read_npm_file, root, rel, skipped, problems)
        files.append(rel)
    return Ecosystem("npm", _merge(wanted, own), files, skipped, covered)


def _pypi(root: Path, found: Found, problems: list[str]) -> Ecosystem:
    from .python_locks import read_pypi_file

    skipped: Counter = Counter()
    wanted: list[Wanted] = []
    files, covered = [], []
    own = set()
    for rel in found.pypi_manifests:
        name = _toml_project_name(root / rel)
        if name:
            own.add(name.lower())
    for rel in found.pypi_locks + found.requirements:
        wanted += _read(read_pypi_file, root, rel, skipped, problems)
        files.append(rel)
    for rel in found.pypi_manifests:
        if _covered(rel, found.pypi_locks):
            covered.append(rel)
            continue
        wanted += _read(read_pypi_file, root, rel, skipped, problems)
        files.append(rel)
    own_normalized = {re.sub(r"[-_.]+", "-", n) for n in own}
    kept = [w for w in wanted if re.sub(r"[-_.]+", "-", w.name.lower()) not in own_normalized]
    return Ecosystem("pypi", _merge(kept, set()), files, skipped, covered)


def _json_field(path: Path, field: str) -> str:
    value = _json_value(path, field)
    return value if isinstance(value, str) else ""


def _json_value(path: Path, field: str) -> object:
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read(4 << 20).decode("utf-8-sig"))
        return doc.get(field) if isinstance(doc, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


def _toml_project_name(path: Path) -> str:
    try:
        text = path.read_bytes()[: 4 << 20].decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return ""
    m = re.search(r'(?ms)^\[(?:project|tool\.poetry)\]\s*$.*?^name\s*=\s*["\']([^"\']+)', text)
    return m.group(1) if m else ""


def _workspace_python(root: Path, venvs: list[str]) -> str:
    """The interpreter of the workspace's own virtual environment, if it has one."""
    for rel in sorted(venvs, key=lambda r: (r.count("/"), r)):
        for exe in ("bin/python3", "bin/python", "Scripts/python.exe"):
            candidate = root / rel / exe
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return ""


def _stdlibs(found: Found, python: str, folder: Path) -> list[Stdlib]:
    from .python_env import interpreter_version
    from .toolchains import find_toolchains

    wanted_languages = {lang for lang in STDLIB_SPECS if found.languages.get(lang)}
    if found.pypi_locks or found.pypi_manifests or found.requirements:
        wanted_languages.add("python")
    for rel, _eco in found.not_fetched:
        language = _STDLIB_FROM_MANIFEST.get(rel.rsplit("/", 1)[-1])
        if language:
            wanted_languages.add(language)
    out = []
    if "python" in wanted_languages:
        spec = f"python:stdlib={python}" if python else "python:stdlib"
        version = interpreter_version(python) if python else ""
        if python and not version:  # the environment's interpreter does not run
            spec, version = "python:stdlib", ""
        version = version or ".".join(map(str, sys.version_info[:3]))
        out.append(Stdlib("python", spec, version, True))
    have = {t.language: t for t in find_toolchains(folder, with_missing=True)}
    for language in ("go", "java", "rust"):
        if language not in wanted_languages:
            continue
        t = have.get(language)
        if t is None or t.missing:
            name = _LANGUAGE_NAMES[language]
            why = t.missing if t is not None else f"no {name} toolchain on this machine"
            out.append(
                Stdlib(language, STDLIB_SPECS[language], t.version if t else "", False,
                       f"{name}'s standard library: {why}")
            )  # fmt: skip
        else:
            out.append(Stdlib(language, t.spec, t.version, True))
    return out
