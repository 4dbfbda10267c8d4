"""`workspace:DIR` end to end with real packages: lodash 4.17.21 and ms 2.1.3 published to
verdaccio on loopback and locked by npm itself, six 1.16.0 served by pypiserver, and the
Python standard library. The index a workspace gets names each package at its version, a
pasted dependency function is one warning naming it, and `add` keeps the index current
with what the lock file says.

The package files are the registries' own (scripts/registry-servers.sh fetches them once
into ~/.cache/recitation-test-packages)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from registry_helpers import PypiServer, Verdaccio, have_verdaccio, served

from index_tools.build.sources.languages import language_for_path

PACKAGES = Path(
    os.environ.get("RECITATION_TEST_PACKAGES")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "recitation-test-packages"
)
NPM_FILES = {("lodash", "4.17.21"), ("ms", "2.1.2"), ("ms", "2.1.3")}

pytestmark = [
    pytest.mark.skipif(
        not have_verdaccio(), reason="verdaccio is not installed (scripts/registry-servers.sh)"
    ),  # fmt: skip
    pytest.mark.skipif(
        not all((PACKAGES / "npm" / f"{n}-{v}.tgz").exists() for n, v in NPM_FILES)
        or not (PACKAGES / "pypi" / "six-1.16.0.tar.gz").exists(),
        reason="the real test packages are not fetched (scripts/registry-servers.sh)",
    ),
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
]


def _manifest(tgz: Path) -> dict:
    with tarfile.open(tgz) as tar:
        return json.load(tar.extractfile("package/package.json"))


def _member(archive: Path, name: str) -> str:
    with tarfile.open(archive) as tar:
        return tar.extractfile(name).read().decode()


@pytest.fixture(scope="module")
def registries(tmp_path_factory):
    root = tmp_path_factory.mktemp("registries")
    with served(Verdaccio(root / "verdaccio")) as npm, served(PypiServer(root / "pypi")) as pypi:
        for name, version in sorted(NPM_FILES):
            tgz = PACKAGES / "npm" / f"{name}-{version}.tgz"
            manifest = {k: v for k, v in _manifest(tgz).items() if not k.startswith("_")}
            npm.publish(name, version, tgz.read_bytes(), manifest)
        pypi.add("six-1.16.0.tar.gz", (PACKAGES / "pypi" / "six-1.16.0.tar.gz").read_bytes())
        yield npm, pypi


def _env(registries, cache: Path) -> dict:
    npm, pypi = registries
    env = dict(os.environ)
    env.update(
        RECITATION_NPM_REGISTRY=npm.url,
        RECITATION_PYPI_URL=pypi.url,
        RECITATION_PACKAGE_CACHE=str(cache),
        npm_config_registry=npm.url,
        npm_config_cache=str(cache / "npm-cache"),
    )
    return env


def _npm_lock(folder: Path, env: dict, *specs: str) -> None:
    """package.json and package-lock.json written by npm itself, against verdaccio."""
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--no-audit", "--no-fund", "--save-exact",
         "--ignore-scripts", *specs],
        cwd=folder, env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip


def cli(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "index_tools.cli", *args],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip


def _renamed(text: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        text = re.sub(rf"\b{old}\b", new, text)
    return text


@pytest.fixture(scope="module")
def workspace(registries, tmp_path_factory):
    """A JavaScript and Python project: npm's lock of lodash and ms, a requirements.txt."""
    folder = tmp_path_factory.mktemp("app")
    cache = tmp_path_factory.mktemp("cache")
    env = _env(registries, cache)
    (folder / "package.json").write_text('{"name": "demo-app", "version": "1.0.0"}\n')
    _npm_lock(folder, env, "lodash@4.17.21", "ms@2.1.3")
    (folder / "requirements.txt").write_text("six==1.16.0\n")
    (folder / "main.py").write_text("import six\n\nprint(six.PY3)\n")
    (folder / "main.js").write_text("const _ = require('lodash');\n")
    # what must never be read as the workspace's manifests
    (folder / "node_modules" / "left-pad").mkdir(parents=True)
    (folder / "node_modules" / "left-pad" / "package.json").write_text(
        '{"name": "left-pad", "dependencies": {"not-a-dependency": "1.0.0"}}'
    )
    venv = folder / ".venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /nowhere\n")
    (venv / "requirements.txt").write_text("not-a-dependency==1.0\n")
    index = tmp_path_factory.mktemp("index") / "idx"
    done = cli("build", f"workspace:{folder}", "--out", str(index), "--quiet", env=env)
    assert done.returncode == 0, done.stderr
    return folder, index, env, done.stdout


def test_the_lock_file_is_npm_s_own(workspace):
    folder, _, _, _ = workspace
    lock = json.loads((folder / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3
    assert lock["packages"]["node_modules/lodash"]["version"] == "4.17.21"


def test_stats_names_each_package_at_its_version_and_the_standard_library(workspace):
    folder, index, env, built = workspace
    stats = json.loads(cli("stats", str(index), "--json", env=env).stdout)
    got = {
        (s["kind"], p["name"], p["version"], p["license"])
        for s in stats["sources"]
        for p in s.get("packages") or []
    }
    assert got == {
        ("npm", "lodash", "4.17.21", "MIT"),
        ("npm", "ms", "2.1.3", "MIT"),
        ("pypi", "six", "1.16.0", "MIT"),
    }
    stdlib = [s for s in stats["sources"] if s["kind"] == "python-stdlib"]
    assert [s["version"] for s in stdlib] == [".".join(map(str, sys.version_info[:3]))]
    record = next(s for s in stats["sources"] if s["kind"] == "workspace")
    assert record["plan"]["workspace"] == str(folder.resolve())
    assert {e["ecosystem"]: e["files"] for e in record["plan"]["ecosystems"]} == {
        "npm": ["package-lock.json"],
        "pypi": ["requirements.txt"],
    }
    # the summary of the build says the same, per ecosystem
    assert "npm (package-lock.json): 2 packages: lodash 4.17.21 (MIT), ms 2.1.3 (MIT)" in built
    assert "PyPI (requirements.txt): 1 package: six 1.16.0 (MIT)" in built
    text = cli("stats", str(index), env=env).stdout
    assert "standard libraries: Python" in text


def test_a_pasted_dependency_function_is_one_warning_naming_the_package(workspace, tmp_path):
    _, index, env, _ = workspace
    debounce = _member(PACKAGES / "npm" / "lodash-4.17.21.tgz", "package/debounce.js")
    body = debounce[debounce.index("function debounce(") : debounce.index("module.exports")]
    pasted_js = tmp_path / "timing.js"
    renamed = _renamed(body, {"leadingEdge": "startEdge", "trailingEdge": "endEdge"})
    assert renamed != body
    pasted_js.write_text(
        "// the app's own helpers\nconst isObject = require('lodash/isObject');\n"
        "const now = () => Date.now();\nconst toNumber = Number;\n\n" + renamed
    )
    six = _member(PACKAGES / "pypi" / "six-1.16.0.tar.gz", "six-1.16.0/six.py")
    start = six.index("def with_metaclass(")
    end = six.index("\ndef add_metaclass(")
    pasted_py = tmp_path / "meta.py"
    pasted_py.write_text("import sys\n\n\n" + six[start:end].rstrip() + "\n")
    for path, package in ((pasted_js, "npm:lodash@4.17.21"), (pasted_py, "pypi:six==1.16.0")):
        done = cli("check", str(path), "--index", str(index), "--format", "json", env=env)
        assert done.returncode == 1, done.stderr
        found = json.loads(done.stdout)["results"]
        assert len(found) == 1, found
        match = found[0]
        assert match["kind"] == "recitation"
        source = match["sources"][0]
        assert source["repository"] == package
        assert source["license"] == "MIT"


def test_add_fetches_only_what_the_lock_changed(workspace, tmp_path):
    folder, index, env, _ = workspace
    copy = tmp_path / "idx"
    shutil.copytree(index, copy)
    same = cli("add", str(copy), f"workspace:{folder}", "--quiet", env=env)
    assert same.returncode == 0, same.stderr
    assert "nothing written: the index is as it was" in same.stdout
    # ms down to 2.1.2 by npm itself, six removed from the requirements
    _npm_lock(folder, env, "ms@2.1.2")
    (folder / "requirements.txt").write_text("# nothing from PyPI any more\n")
    try:
        changed = cli("add", str(copy), f"workspace:{folder}", "--quiet", "--json", env=env)
        assert changed.returncode == 0, changed.stderr
        summary = json.loads(changed.stdout)
        assert [
            (r["source"], r["version_held"], r["version_given"]) for r in summary["replaced"]
        ] == [("npm:ms", "2.1.3", "2.1.2")]
        assert summary["left"] == ["pypi:six==1.16.0"]
        with tarfile.open(PACKAGES / "npm" / "ms-2.1.2.tgz") as tar:
            code = [m for m in tar.getnames() if language_for_path(m)]
        assert summary["files"] == len(code) >= 1  # ms 2.1.2's files, nothing else read
        stats = json.loads(cli("stats", str(copy), "--json", env=env).stdout)
        got = {(p["name"], p["version"]) for s in stats["sources"] for p in s.get("packages") or []}
        assert got == {("lodash", "4.17.21"), ("ms", "2.1.2")}
        six_file = tmp_path / "meta.py"
        six = _member(PACKAGES / "pypi" / "six-1.16.0.tar.gz", "six-1.16.0/six.py")
        six_file.write_text(
            six[six.index("def with_metaclass(") : six.index("\ndef add_metaclass(")]
        )
        gone = cli("check", str(six_file), "--index", str(copy), "--format", "json", env=env)
        assert gone.returncode == 0, gone.stdout  # six's code left with six
    finally:
        _npm_lock(folder, env, "ms@2.1.3")
        (folder / "requirements.txt").write_text("six==1.16.0\n")


def test_plan_reads_no_dependency_folder_and_says_what_it_costs(workspace):
    folder, _, env, _ = workspace
    done = cli("plan", f"workspace:{folder}", "--json", env=env)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert [(e["ecosystem"], e["packages"]) for e in plan["ecosystems"]] == [
        ("npm", 2),
        ("pypi", 1),
    ]
    assert plan["summary"].startswith(
        "2 npm packages (package-lock.json), 1 PyPI package (requirements.txt), Python "
    )
    assert plan["estimate"]["words"] > 0 and plan["estimate"]["seconds"] > 0


def test_popular_packages_are_held_one_by_one_as_a_workspace_s(registries, tmp_path, monkeypatch):
    """`popular:npm:N` from the shipped list (here cut to the two packages served), and
    `add` of a shorter list takes the rest out."""
    from index_tools import BuildOptions, add_to_index, build_index
    from index_tools.build.sources import RegistryOptions, popular

    npm, _ = registries
    monkeypatch.setattr(
        popular, "popular_list", lambda eco: [("ms", "2.1.3"), ("lodash", "4.17.21")]
    )
    options = BuildOptions(progress=False, registry=RegistryOptions(
        npm_registry=npm.url, cache=str(tmp_path / "cache"), progress=False))  # fmt: skip
    built = build_index(["popular:npm:2"], tmp_path / "idx", options)
    assert built.files > 100  # lodash's files and ms's
    shorter = add_to_index(tmp_path / "idx", ["popular:npm:1"], options)
    assert shorter.left == ["npm:lodash@4.17.21"]
    from index_tools import open_index

    with open_index(tmp_path / "idx") as idx:
        sources = idx.summary()["sources"]
    assert [(s["kind"], s["name"]) for s in sources] == [
        ("npm", "npm:ms@2.1.3"),
        ("workspace", "the 1 most downloaded npm packages"),
    ]


def test_json_progress_is_asked_for_and_never_leaks_into_the_next_command(
    workspace, tmp_path, monkeypatch
):
    """`--progress-json` writes one JSON object a line on stderr ending with done; a command
    run after it in the same process (an editor's server runs several) writes none."""
    from index_tools.cli import main

    folder, index, env, _ = workspace
    copy = tmp_path / "idx"
    shutil.copytree(index, copy)
    done = cli("add", str(copy), f"workspace:{folder}", "--progress-json", env=env)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert lines[-1] == {"stage": "done"}
    assert any(line.get("stage") == "fetching npm" and line.get("total") == 2 for line in lines)
    # in one process: the option of one command is not the next one's
    for key, value in env.items():
        if key.startswith("RECITATION_"):
            monkeypatch.setenv(key, value)
    assert main(["add", str(copy), f"workspace:{folder}", "--progress-json", "--json"]) == 0
    assert "RECITATION_PROGRESS" not in os.environ
    again = cli("add", str(copy), f"workspace:{folder}", env=env)
    assert again.returncode == 0 and '"stage"' not in again.stderr, again.stderr


def test_popular_packages_of_the_workspace_s_registries_with_the_workspace(
    workspace, tmp_path, monkeypatch
):
    """`--popular N` with a workspace adds the most downloaded packages of each registry it
    uses (here npm's list cut to what the test registry serves; PyPI's to six)."""
    from index_tools.build.sources import popular
    from index_tools.cli import main

    folder, _, env, _ = workspace
    lists = {"npm": [("ms", "2.1.2"), ("lodash", "4.17.21")], "pypi": [("six", "1.16.0")]}
    monkeypatch.setattr(popular, "popular_list", lambda eco: lists[eco])
    for key, value in env.items():
        if key.startswith("RECITATION_"):
            monkeypatch.setenv(key, value)
    out = tmp_path / "idx"
    args = ["build", f"workspace:{folder}", "--out", str(out), "--popular", "1", "--quiet"]
    assert main([*args, "--json"]) == 0
    from index_tools import open_index

    with open_index(out) as idx:
        sources = idx.summary()["sources"]
    records = sorted(s["name"] for s in sources if s["kind"] == "workspace")
    assert records == [
        "the 1 most downloaded PyPI packages",
        "the 1 most downloaded npm packages",
        f"workspace {folder.name}",
    ]
    ms = sorted(p["version"] for s in sources for p in s.get("packages") or [] if p["name"] == "ms")
    assert ms == ["2.1.2", "2.1.3"]  # the popular list's and the lock's, each held once
    assert main(["build", "python:stdlib", "--out", str(tmp_path / "x"), "--popular", "5"]) == 2
