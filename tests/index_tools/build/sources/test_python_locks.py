"""Python lock files and manifests as package lists, read from files written by the real
tools (poetry, uv, pip-tools, pipenv, pdm: `fixtures/locks/pypi/regenerate.py`) and
fetched from pypiserver on loopback serving the very distributions they were locked
against."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from registry_helpers import PypiServer

from index_tools.build.sources import SourceError, open_source, python_locks
from index_tools.build.sources.packages import NOT_FROM_REGISTRY, RegistryOptions
from index_tools.build.sources.pypi import open_pypi
from index_tools.build.sources.python_locks import (
    _poetry_to_pep440,
    read_pipfile_lock,
    read_pypi_file,
)
from index_tools.build.sources.registry_http import RegistryError

FIXTURES = Path(__file__).parent / "fixtures" / "locks" / "pypi"


def _distributions() -> dict[str, bytes]:
    spec = importlib.util.spec_from_file_location(
        "lock_distributions", FIXTURES / "distributions.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.distributions()


DISTRIBUTIONS = _distributions()


def sha256(filename: str) -> str:
    return hashlib.sha256(DISTRIBUTIONS[filename]).hexdigest()


def options(tmp_path, **kw) -> RegistryOptions:
    kw.setdefault("cache", str(tmp_path / "cache"))
    kw.setdefault("progress", False)
    kw.setdefault("retries", 1)
    kw.setdefault("timeout", 20)
    return RegistryOptions(**kw)


@pytest.fixture(scope="module")
def pypi(tmp_path_factory):
    server = PypiServer(tmp_path_factory.mktemp("pypiserver"))
    for filename, data in DISTRIBUTIONS.items():
        server.add(filename, data)
    yield server
    server.stop()


# ---------------------------------------------------------------- pins


@pytest.mark.parametrize(
    "pinned, fetched",
    [
        # a lock lists the digests of every file of a release: the download must match one
        # of them (pip's rule), not all
        pytest.param(["alpha-1.0.0-py3-none-any.whl", "alpha-1.0.0.tar.gz"],
                     "alpha-1.0.0.tar.gz", id="every-file-of-the-release"),
        pytest.param(["alpha-1.0.0-py3-none-any.whl"], "alpha-1.0.0-py3-none-any.whl",
                     id="the-wheel-alone"),
    ],
)  # fmt: skip
def test_the_file_the_pins_name_is_the_one_fetched(pypi, tmp_path, pinned, fetched):
    req = tmp_path / "requirements.txt"
    req.write_text(f"alpha==1.0.0 {' '.join(f'--hash=sha256:{sha256(f)}' for f in pinned)}\n")
    src = open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                    max_file_bytes=10**6)  # fmt: skip
    assert [f.resolved.filename for f in src.fetched] == [fetched]
    docs = {d.origin.path: d.origin for d in src.documents()}
    assert docs["alpha/__init__.py"].repository == "pypi:alpha==1.0.0"


def test_pins_that_name_no_file_of_the_release_still_fail(pypi, tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text(f"alpha==1.0.0 --hash=sha256:{'0' * 64} --hash=sha256:{'1' * 64}\n")
    with pytest.raises(RegistryError, match=r"digest mismatch: alpha-1\.0\.0\.tar\.gz"):
        open_pypi("pypi:r", str(req), options=options(tmp_path, pypi_url=pypi.url),
                  max_file_bytes=10**6)  # fmt: skip


# ---------------------------------------------------------------- what each file names


def released(name: str, version: str) -> set[str]:
    """The sha256 of every file of a release the index serves."""
    stem = f"{canonicalize_name(name).replace('-', '_')}-{version}"
    return {sha256(f) for f in DISTRIBUTIONS if f.startswith((f"{stem}-", f"{stem}."))}


LOCKED = {("alpha", "1.0.0"), ("beta", "2.0.0"), ("gamma-pkg", "0.3.0"), ("winonly", "1.0.0"),
          ("delta", "3.0.0")}  # fmt: skip


@pytest.mark.parametrize(
    "rel, locked, loose, local",
    [
        ("poetry/poetry.lock", LOCKED, set(), 1),  # lock-version 2.1, local-lib a directory
        ("poetry1/poetry.lock", LOCKED, set(), 1),  # lock-version 1.1, [metadata.files]
        ("uv/uv.lock", LOCKED, set(), 2),  # the project (virtual) and its member (editable)
        ("pdm/pdm.lock", LOCKED, set(), 1),  # local-lib editable
        # pipenv locked on Linux: the Windows-only package is left "version": "*"
        ("pipenv/Pipfile.lock", LOCKED - {("winonly", "1.0.0")}, {("winonly", "")}, 0),
        ("pip-tools/requirements-hashes.txt", LOCKED - {("winonly", "1.0.0")}, set(), 0),
        ("pip-tools/requirements.txt", LOCKED - {("winonly", "1.0.0")}, set(), 0),
    ],
)
def test_each_lock_names_its_packages_at_their_versions_with_their_digests(
    rel, locked, loose, local
):
    skipped = Counter()
    wanted = read_pypi_file(str(FIXTURES / rel), skipped)
    exact = {
        (canonicalize_name(w.name), w.constraint[2:]) for w in wanted if w.constraint[:2] == "=="
    }
    assert exact == locked
    assert {(w.name, w.constraint) for w in wanted if w.constraint[:2] != "=="} == loose
    assert skipped[NOT_FROM_REGISTRY] == local and sum(skipped.values()) == local
    base = rel.rsplit("/", 1)[1]
    for w in wanted:
        assert w.where == f"{base} {w.name}" or w.where.startswith(f"{base}:")
        if w.constraint.startswith("==") and rel != "pip-tools/requirements.txt":
            # every file of the release, sdist and wheels: the download matches one
            assert {(d.algorithm, d.hex) for d in w.pinned} == {
                ("sha256", h) for h in released(w.name, w.constraint[2:])
            }, w
        else:
            assert w.pinned == ()


def spec_set(wanted):
    return {(canonicalize_name(w.name), str(SpecifierSet(w.constraint))) for w in wanted}


@pytest.mark.parametrize(
    "rel, expected, local",
    [
        # Poetry's ~1.0, ^2.0, >=0.3 and * as PEP 440; `python` is no package
        ("poetry/pyproject.toml",
         {("alpha", ">=1.0,<1.1"), ("beta", ">=2.0,<3"), ("gamma-pkg", ">=0.3"), ("delta", "")},
         1),
        ("poetry1/pyproject.toml",
         {("alpha", ">=1.0,<1.1"), ("beta", ">=2.0,<3"), ("gamma-pkg", ">=0.3"),
          ("delta", ">=3,<4")}, 1),
        # the member comes from the workspace; the test group includes dev and adds alpha>=1
        ("uv/pyproject.toml",
         {("alpha", "<1.1"), ("beta", ">=2"), ("gamma-pkg", ""), ("delta", ""), ("alpha", ">=1")},
         1),
        ("uv/packages/member/pyproject.toml", {("beta", "")}, 0),
        ("pdm/pyproject.toml",
         {("alpha", "<1.1"), ("beta", ""), ("gamma-pkg", ""), ("delta", "")}, 1),  # -e local-lib
        ("pip-tools/requirements.in",
         {("alpha", "<1.1"), ("beta", ""), ("gamma-pkg", ""), ("delta", "")}, 0),
    ],
)  # fmt: skip
def test_manifests_without_a_lock_give_ranges(rel, expected, local):
    skipped = Counter()
    wanted = read_pypi_file(str(FIXTURES / rel), skipped)
    assert spec_set(wanted) == {(n, str(SpecifierSet(c))) for n, c in expected}
    assert len(wanted) == len(expected)
    assert skipped[NOT_FROM_REGISTRY] == local and all(not w.pinned for w in wanted)


@pytest.mark.parametrize(
    "poetry, pep440",
    [
        ("^1.2.3", ">=1.2.3,<2"), ("^1.2", ">=1.2,<2"), ("^1", ">=1,<2"),
        ("^0.2.3", ">=0.2.3,<0.3"), ("^0.0.3", ">=0.0.3,<0.0.4"), ("^0.0", ">=0.0,<0.1"),
        ("^0", ">=0,<1"), ("^2.0.0rc1", ">=2.0.0rc1,<3"),
        ("~1.2.3", ">=1.2.3,<1.3"), ("~1.2", ">=1.2,<1.3"), ("~1", ">=1,<2"),
        ("~=1.2", "~=1.2"), ("1.2.3", "==1.2.3"), ("=1.2.3", "==1.2.3"), ("1.2.*", "==1.2.*"),
        ("*", ""), ("", ""), (">= 1.2, < 2.0", ">=1.2,<2.0"), (">=1.2 <2.0", ">=1.2,<2.0"),
        ("!=1.5, >1", "!=1.5,>1"), ("^1.0 || ^2.0", ">=2.0,<3"), ("<1 | >=3", ">=3"),
    ],
)  # fmt: skip
def test_poetry_constraints_as_pep440(poetry, pep440):
    assert SpecifierSet(_poetry_to_pep440(poetry)) == SpecifierSet(pep440)


# ---------------------------------------------------------------- not from the registry


def write(tmp_path, name: str, text: str) -> str:
    folder = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    (folder / name).write_text(text)
    return str(folder / name)


H = "sha256:" + "ab" * 32

ENTRIES_NOT_FROM_THE_REGISTRY = [
    ("poetry.lock", f"""
[[package]]
name = "fromgit"
version = "1.0"
files = []
[package.source]
type = "git"
url = "https://example.org/fromgit.git"
reference = "main"
resolved_reference = "0123456789abcdef"
[[package]]
name = "fromurl"
version = "1.0"
files = []
[package.source]
type = "url"
url = "https://example.org/fromurl-1.0.tar.gz"
[[package]]
name = "fromfile"
version = "1.0"
[package.source]
type = "file"
url = "dist/fromfile-1.0.tar.gz"
[[package]]
name = "private"
version = "2.0"
files = [{{file = "private-2.0.tar.gz", hash = "{H}"}}]
[package.source]
type = "legacy"
url = "https://index.example.org/simple"
reference = "corp"
[metadata]
lock-version = "2.0"
""", {("private", "==2.0")}, 3),
    ("uv.lock", f"""
version = 1
[[package]]
name = "app"
version = "0.1.0"
source = {{ editable = "." }}
[[package]]
name = "fromgit"
version = "1.0"
source = {{ git = "https://example.org/fromgit?rev=main#0123456789abcdef" }}
[[package]]
name = "frompath"
version = "1.0"
source = {{ path = "../frompath-1.0.tar.gz" }}
sdist = {{ hash = "{H}" }}
[[package]]
name = "fromdir"
version = "1.0"
source = {{ directory = "../fromdir" }}
[[package]]
name = "fromurl"
version = "1.0"
source = {{ url = "https://example.org/fromurl-1.0.tar.gz" }}
[[package]]
name = "alpha"
version = "1.0.0"
source = {{ registry = "https://index.example.org/simple" }}
[[package]]
name = "alpha"
version = "1.1.0"
source = {{ registry = "https://index.example.org/simple" }}
wheels = [{{ url = "https://index.example.org/a.whl", hash = "{H}" }}]
""", {("alpha", "==1.0.0"), ("alpha", "==1.1.0")}, 5),
    ("Pipfile.lock", """{
"_meta": {"pipfile-spec": 6},
"default": {
  "fromgit": {"git": "https://example.org/fromgit.git", "ref": "0123456789abcdef"},
  "frompath": {"path": "./frompath"},
  "fromfile": {"file": "https://example.org/fromfile-1.0.tar.gz"},
  "mine": {"editable": true, "path": "."},
  "beta": {"version": "==2.0.0", "markers": "sys_platform == 'win32'"}
},
"develop": {"beta": {"version": "==2.0.0", "hashes": ["sha256:""" + "ab" * 32 + """"]},
            "ranged": {"version": ">=1,<2"}}
}""", {("beta", "==2.0.0"), ("ranged", "<2,>=1")}, 4),
    ("pdm.lock", f"""
[metadata]
lock_version = "4.4"
[[package]]
name = "frompath"
version = "1.0"
path = "./frompath"
[[package]]
name = "fromurl"
version = "1.0"
url = "https://example.org/fromurl-1.0.tar.gz"
[[package]]
name = "fromgit"
version = "1.0"
git = "https://example.org/fromgit.git"
revision = "0123456789abcdef"
[[package]]
name = "mine"
version = "0.1"
editable = true
path = "."
[[package]]
name = "old"
version = "3.0"
[metadata.files]
"old 3.0" = [{{url = "https://index.example.org/old-3.0.tar.gz", hash = "{H}"}}]
""", {("old", "==3.0")}, 4),
    ("pyproject.toml", """
[project]
name = "My_App"
dependencies = [
  "requests>=2",
  "fromurl @ https://example.org/fromurl-1.0.tar.gz",
  "fromsource",
  "member",
  "six; python_version < '3'",
]
[project.optional-dependencies]
all = ["my-app[extra]", "extra-dep~=1.0"]
[dependency-groups]
dev = [{include-group = "lint"}, "pytest"]
lint = ["ruff==0.6.0"]
[tool.uv]
dev-dependencies = ["old-style"]
[tool.uv.sources]
fromsource = { git = "https://example.org/fromsource.git" }
member = { workspace = true }
requests = { index = "corp" }
[tool.pdm.dev-dependencies]
test = ["-e file:///${PROJECT_ROOT}/sub", "hypothesis"]
""", {("requests", ">=2"), ("six", ""), ("extra-dep", "~=1.0"), ("pytest", ""),
      ("ruff", "==0.6.0"), ("old-style", ""), ("hypothesis", "")}, 5),
    ("pyproject.toml", """
[tool.poetry]
name = "poetry-app"
[tool.poetry.dependencies]
python = "^3.10"
fromgit = { git = "https://example.org/fromgit.git", branch = "main" }
frompath = { path = "../frompath", develop = true }
fromurl = { url = "https://example.org/fromurl-1.0.tar.gz" }
numpy = [
  { version = "<1.25", python = "<3.9" },
  { version = "^1.25", python = ">=3.9", markers = "sys_platform == 'win32'" },
]
poetry-app = { path = ".", extras = ["x"] }
[tool.poetry.group.docs.dependencies]
Sphinx = { version = "^7.1", optional = true }
""", {("numpy", "<1.25"), ("numpy", ">=1.25,<2"), ("sphinx", ">=7.1,<8")}, 4),
]  # fmt: skip


@pytest.mark.parametrize("name, text, expected, local", ENTRIES_NOT_FROM_THE_REGISTRY)
def test_entries_not_from_the_registry_are_counted_and_markers_kept(
    tmp_path, name, text, expected, local
):
    skipped = Counter()
    wanted = read_pypi_file(write(tmp_path, name, text), skipped)
    assert spec_set(wanted) == {(n, str(SpecifierSet(c))) for n, c in expected}
    assert skipped == Counter({NOT_FROM_REGISTRY: local})


def test_the_same_package_twice_is_one_wanted_with_both_pins(tmp_path):
    other = "sha512:" + "cd" * 64
    path = write(tmp_path, "Pipfile.lock", json.dumps({
        "default": {"Alpha": {"version": "==1.0.0", "hashes": [H]}},
        "develop": {"alpha": {"version": "==1.0", "hashes": [H, other, "md5:abc", "sha256:zz"]}},
    }))  # fmt: skip
    (w,) = read_pipfile_lock(path, Counter())
    assert (w.name, w.constraint, w.where) == ("Alpha", "==1.0.0", "Pipfile.lock Alpha")
    assert [str(d) for d in w.pinned] == [H, other]  # md5 and a malformed one left out


# ---------------------------------------------------------------- constraints files


def test_a_constraints_file_pins_what_the_requirements_name(tmp_path):
    """`-c`: versions and digests for the packages named, none added (pip's rule); the
    constraints here are pip-compile's output with --generate-hashes."""
    constraints = FIXTURES / "pip-tools" / "requirements-hashes.txt"
    (tmp_path / "base.txt").write_text("Gamma_Pkg>=0.1  # from an include\n")
    req = tmp_path / "requirements.txt"
    req.write_text(f"beta\n-r base.txt\n-c {constraints}\nwinonly>=1\n")
    skipped = Counter()
    wanted = read_pypi_file(str(req), skipped)
    assert [(w.name, w.constraint) for w in wanted] == [
        ("beta", "==2.0.0"), ("Gamma_Pkg", "==0.3.0"), ("winonly", ">=1")]  # fmt: skip
    assert {d.hex for d in wanted[0].pinned} == released("beta", "2.0.0")
    assert {d.hex for d in wanted[1].pinned} == released("gamma-pkg", "0.3.0")
    assert wanted[2].pinned == () and not skipped
    # --constraint=FILE; a requirement's own pin wins; a range the constraint narrows
    (tmp_path / "c.txt").write_text(f"alpha<1.1 --hash={H}\nbeta>=1,!=1.5\n")
    req.write_text(f"--constraint=c.txt\nalpha>=1.0 --hash=sha256:{'ef' * 32}\nbeta<3\n")
    wanted = read_pypi_file(str(req), Counter())
    assert [(w.name, str(SpecifierSet(w.constraint))) for w in wanted] == [
        ("alpha", str(SpecifierSet("<1.1,>=1.0"))), ("beta", str(SpecifierSet("!=1.5,<3,>=1")))]  # fmt: skip
    assert [d.hex for d in wanted[0].pinned] == ["ef" * 32]
    req.write_text("-c nowhere.txt\nalpha\n")
    with pytest.raises(RegistryError, match=r"nowhere\.txt: no such file$"):
        read_pypi_file(str(req), Counter())


# ---------------------------------------------------------------- fetched and indexed


def registry(pypi, tmp_path) -> RegistryOptions:
    return options(tmp_path, pypi_url=pypi.url)


@pytest.mark.parametrize(
    "rel",
    ["poetry/poetry.lock", "poetry1/poetry.lock", "uv/uv.lock", "pdm/pdm.lock",
     "pipenv/Pipfile.lock", "pip-tools/requirements-hashes.txt"],
)  # fmt: skip
def test_each_lock_fetches_the_locked_files_verified_by_their_pins(pypi, tmp_path, rel):
    src = open_source(f"pypi:{FIXTURES / rel}", registry=registry(pypi, tmp_path))
    got = {(canonicalize_name(f.resolved.name), f.resolved.version) for f in src.fetched}
    # pip-compile left out the Windows-only package; pipenv left it unpinned (the newest)
    assert got == {(n, v) for n, v in LOCKED if "pip-tools" not in rel or n != "winonly"}
    # the sdist wherever the lock lists one; delta has only a wheel
    assert {f.resolved.filename for f in src.fetched} >= {
        "alpha-1.0.0.tar.gz", "beta-2.0.0.tar.gz", "delta-3.0.0-py3-none-any.whl"}  # fmt: skip


def test_a_lock_file_built_into_an_index_names_its_packages_and_versions(pypi, tmp_path):
    lock = FIXTURES / "uv" / "uv.lock"
    out = tmp_path / "idx"
    common = ["--pypi-url", pypi.url, "--package-cache", tmp_path / "cache", "--jobs", 1]
    r = cli("build", lock, "--out", out, *common)  # the bare path: a uv.lock
    assert r.returncode == 0, r.stderr
    assert "2 not from the registry" in r.stdout
    stats = json.loads(cli("stats", out, "--json").stdout)
    (source,) = stats["sources"]
    assert {(canonicalize_name(p["name"]), p["version"], p["license"])
            for p in source["packages"]} == {(n, v, "MIT") for n, v in LOCKED}  # fmt: skip
    module = _module_text("beta", "2.0.0")  # beta's module, pasted whole
    r = cli("query", out, "--json", stdin=module)
    sources = [s for m in json.loads(r.stdout)["matches"] for s in m["sources"]]
    assert ("pypi:beta==2.0.0", "2.0.0", "beta/__init__.py", "MIT") in {
        (s["repository"], s["commit"], s["path"], s["license"]) for s in sources}  # fmt: skip


def test_lock_specs_open_through_open_source(pypi, tmp_path, monkeypatch):
    reg = registry(pypi, tmp_path)
    monkeypatch.chdir(FIXTURES / "pdm")
    src = open_source("pypi:pdm.lock", registry=reg)  # a lock's name alone is a file
    assert src.name == "pypi:pdm.lock" and len(src.fetched) == 5
    monkeypatch.chdir(FIXTURES / "pipenv")
    src = open_source("Pipfile.lock", registry=reg)
    assert {f.resolved.version for f in src.fetched} == {"1.0.0", "2.0.0", "0.3.0", "3.0.0"}
    src = open_source(str(FIXTURES / "poetry" / "pyproject.toml"), registry=reg)
    got = {(canonicalize_name(f.resolved.name), f.resolved.version) for f in src.fetched}
    assert got == {("alpha", "1.0.0"), ("beta", "2.0.0"), ("gamma-pkg", "0.3.0"),
                   ("delta", "3.0.0")}  # fmt: skip
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SourceError, match=r"^uv\.lock: no such file$"):
        open_source("pypi:uv.lock", registry=reg)


def test_a_lock_whose_digests_the_index_does_not_serve_fails_naming_it(pypi, tmp_path):
    text = (FIXTURES / "uv" / "uv.lock").read_text()
    for filler, filename in (("0", "alpha-1.0.0.tar.gz"), ("1", "alpha-1.0.0-py3-none-any.whl")):
        text = text.replace(sha256(filename), filler * 64)
    lock = write(tmp_path, "uv.lock", text)
    with pytest.raises(
        RegistryError,
        match=r"^pypi:alpha==1\.0\.0 \(uv\.lock alpha\): digest mismatch: alpha-1\.0\.0\.tar\.gz "
        r"does not have any of the 2 digests pinned by the list$",
    ):
        open_source(f"pypi:{lock}", registry=registry(pypi, tmp_path))


# ---------------------------------------------------------------- hostile files


def one_line_error(path, match: str) -> None:
    with pytest.raises(RegistryError) as e:
        read_pypi_file(path, Counter())
    message = str(e.value)
    named = os.path.basename(path) + ":" if path.endswith(".txt") else f"{path}: "
    assert message.startswith(named) and "\n" not in message, message
    assert re.search(match, message), message


@pytest.mark.parametrize(
    "name, text, match",
    [
        ("poetry.lock", "[[package]\nname = ", r"not valid TOML \(.+\)$"),
        ("poetry.lock", '[[package]]\nname = "alpha"\nversion = "1.0"\n', r"no \[metadata\]"),
        ("poetry.lock", 'package = "alpha"\n[metadata]\n', r"'package' is not a list of tables"),
        ("uv.lock", "version = 1\n[[package]]\nname = 'x'\nsource = {registry = 'r'}\n",
         r"x has no version$"),
        ("uv.lock", "[[package]]\n", r"not a uv\.lock"),
        ("uv.lock", "version = 1\n[[package]]\nname = '../../etc'\nversion = '1'\n"
                    "source = {registry = 'r'}\n", r"not a package name: '\.\./\.\./etc'$"),
        ("pdm.lock", "[metadata]\n[[package]]\nname = 'a b'\nversion = '1'\n",
         r"not a package name: 'a b'$"),
        ("pdm.lock", "[metadata]\n[[package]]\nname = 'ok'\nversion = 'one; rm -rf'\n",
         r"ok: not a version: 'one; rm -rf'$"),
        ("pdm.lock", "[metadata]\n[[package]]\nname = 7\nversion = '1'\n",
         r"not a package name: '7'$"),
        ("Pipfile.lock", '{"default": {"alpha": {"version": "==1.0",}}}', r"not valid JSON$"),
        ("Pipfile.lock", "[1, 2]", r"not a JSON object$"),
        ("Pipfile.lock", '{"default": ["alpha"]}', r"'default' is not an object$"),
        ("Pipfile.lock", '{"default": {"alpha": "==1.0"}}', r"'alpha' is not an object$"),
        ("Pipfile.lock", '{"default": {"alpha": {"version": "~~1"}}}',
         r"alpha: not a version constraint: '~~1'$"),
        ("Pipfile.lock", '{"nothing": 1}', r"not a Pipfile\.lock"),
        ("Pipfile.lock", "[" * 100_000 + "]" * 100_000, r"not valid JSON$"),
        ("uv.lock", "a = " + "[" * 100_000 + "]" * 100_000, r"not valid TOML"),
        ("pyproject.toml", "[project]\ndependencies = 'alpha'\n", r"project\.dependencies is not a list"),
        ("pyproject.toml", "[project]\ndependencies = ['alpha >>> 1']\n",
         r"not a package requirement: 'alpha >>> 1'$"),
        ("pyproject.toml", "[project]\ndependencies = [{a = 1}]\n", r"not a requirement: "),
        ("pyproject.toml", "[tool.poetry.dependencies]\nalpha = '^x'\n",
         r"alpha: not a version constraint: '\^x'$"),
        ("pyproject.toml", "[tool.poetry.dependencies]\nalpha = '>=1.*'\n",
         r"alpha: not a version constraint: '>=1\.\*'$"),
        ("pyproject.toml", "[tool.poetry.dependencies]\n'al pha' = '1'\n",
         r"not a package name: 'al pha'$"),
        ("pyproject.toml", "[tool.poetry.dependencies]\nalpha = 1\n",
         r"alpha: not a version constraint$"),
        ("pyproject.toml", "tool = 3\n", r"'tool' is not a table$"),
        ("requirements.txt", "alpha\n\u202ebeta\n", r"requirements\.txt:2: not a package requirement"),
    ],
)  # fmt: skip
def test_malformed_files_are_one_line_naming_the_file(tmp_path, name, text, match):
    one_line_error(write(tmp_path, name, text), match)


def test_huge_unreadable_and_missing_files(tmp_path):
    huge = tmp_path / "huge" / "uv.lock"
    huge.parent.mkdir()
    with open(huge, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: nothing is written
    one_line_error(str(huge), r"cannot read it \(larger than 64 MiB, the most read here\)$")
    binary = write(tmp_path, "poetry.lock", "")
    Path(binary).write_bytes(b"\xff\xfe\x00garbage")
    one_line_error(binary, r"cannot read it \(")
    folder = tmp_path / "dir" / "pdm.lock"
    folder.mkdir(parents=True)
    one_line_error(str(folder), r"cannot read it \(a folder, not a regular file\)$")
    one_line_error(str(tmp_path / "Pipfile.lock"), r"no such file$")


def test_toml_read_by_tomlkit_where_python_has_no_tomllib(monkeypatch):
    """Python 3.10 has no tomllib: tomlkit reads the same files the same way."""
    by_tomllib = {rel: read_pypi_file(str(FIXTURES / rel), Counter())
                  for rel in ("poetry/poetry.lock", "poetry1/poetry.lock", "uv/uv.lock",
                              "pdm/pdm.lock", "poetry/pyproject.toml", "uv/pyproject.toml")}  # fmt: skip
    monkeypatch.setattr(python_locks, "tomllib", None)
    for rel, wanted in by_tomllib.items():
        assert read_pypi_file(str(FIXTURES / rel), Counter()) == wanted, rel


def test_malformed_toml_by_tomlkit_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(python_locks, "tomllib", None)
    one_line_error(write(tmp_path, "poetry.lock", "[[package]\nname = "), r"not valid TOML \(")
    one_line_error(write(tmp_path, "uv.lock", "a = " + "[" * 5_000 + "]" * 5_000),
                   r"not valid TOML")  # fmt: skip


# ---------------------------------------------------------------- helpers


CLI = [sys.executable, "-m", "index_tools.cli"]


def cli(*args, stdin=""):
    return subprocess.run([*CLI, *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def _module_text(name: str, version: str) -> str:
    with tarfile.open(fileobj=io.BytesIO(DISTRIBUTIONS[f"{name}-{version}.tar.gz"])) as tar:
        return tar.extractfile(f"{name}-{version}/{name}/__init__.py").read().decode()
