"""What `workspace:DIR` reads of a workspace, before anything is fetched: which manifests and
lock files count, what they name, which standard libraries, what is not indexed and why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from index_tools import plan_workspace, workspace_index_path
from index_tools.build.sources import SourceError
from index_tools.build.sources import toolchains as toolchains_module
from index_tools.build.sources.workspace import open_workspace

LODASH = "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def lock(packages: dict[str, str], root_name: str = "app") -> str:
    entries = {"": {"name": root_name, "version": "1.0.0"}}
    for name, version in packages.items():
        entries[f"node_modules/{name}"] = {
            "version": version,
            "resolved": f"https://registry.example/{name}/-/{name}-{version}.tgz",
            "integrity": LODASH,
        }
    return json.dumps({"name": root_name, "lockfileVersion": 3, "packages": entries})


@pytest.fixture(autouse=True)
def no_toolchains(monkeypatch):
    """The machine's Go, Java and Rust toolchains are the toolchain tests' business."""
    monkeypatch.setattr(toolchains_module, "find_toolchains", lambda *a, **k: [])


def wanted(plan, ecosystem: str) -> set[tuple[str, str]]:
    eco = next((e for e in plan.ecosystems if e.name == ecosystem), None)
    return {(w.name, w.constraint) for w in eco.wanted} if eco else set()


def test_a_lock_file_covers_the_manifests_below_it_and_the_workspace_s_own_packages(tmp_path):
    write(tmp_path, "package-lock.json", lock({"lodash": "4.17.21", "ms": "2.1.3"}))
    write(tmp_path, "package.json", '{"name": "app", "workspaces": ["packages/*"]}')
    write(
        tmp_path,
        "packages/a/package.json",
        '{"name": "@app/a", "dependencies": {"left-pad": "^1"}}',
    )
    write(
        tmp_path,
        "packages/b/package.json",
        '{"name": "@app/b", "dependencies": {"@app/a": "1.0.0"}}',
    )
    # a project of its own, with no lock file: its ranges are read
    write(tmp_path, "tools/site/package.json",
          '{"name": "site", "dependencies": {"@app/b": "^1.0.0", "is-number": "^7.0.0"}}')  # fmt: skip
    plan = plan_workspace(tmp_path)
    npm = next(e for e in plan.ecosystems if e.name == "npm")
    assert sorted(npm.files) == ["package-lock.json", "tools/site/package.json"]
    assert sorted(npm.covered) == [
        "package.json",
        "packages/a/package.json",
        "packages/b/package.json",
    ]
    # the workspace's own @app/b is never fetched, even where a range names it
    assert wanted(plan, "npm") == {("lodash", "4.17.21"), ("ms", "2.1.3"), ("is-number", "^7.0.0")}


def test_dependency_folders_environments_and_build_outputs_are_never_read(tmp_path):
    write(tmp_path, "requirements.txt", "six==1.16.0\n")
    for folder in (
        "node_modules/x",
        ".venv",
        "myenv",
        "build",
        "dist",
        "target",
        ".git",
        "vendor/y",
    ):
        write(tmp_path, f"{folder}/package.json", '{"dependencies": {"never": "1.0.0"}}')
        write(tmp_path, f"{folder}/requirements.txt", "never==1.0\n")
        write(tmp_path, f"{folder}/go.mod", "module never\n")
    write(tmp_path, "myenv/pyvenv.cfg", "home = /nowhere\n")  # a virtual environment by any name
    write(tmp_path, "myenv/lib/code.py", "x = 1\n")
    plan = plan_workspace(tmp_path)
    assert wanted(plan, "pypi") == {("six", "==1.16.0")}
    assert wanted(plan, "npm") == set()
    assert plan.not_indexed == []
    assert plan.languages == {}


def test_requirements_files_anywhere_and_a_lock_over_pyproject(tmp_path):
    write(tmp_path, "requirements/base.txt", "requests==2.32.3\n")
    write(tmp_path, "requirements/dev.txt", "-r base.txt\npytest==8.3.3\n")
    write(tmp_path, "requirements-docs.txt", "sphinx>=7\n")
    write(tmp_path, "requirements.in", "requests\n")  # pip-compile's input: its .txt counts
    write(tmp_path, "svc/pyproject.toml",
          '[project]\nname = "svc"\ndependencies = ["attrs>=23", "svc-helpers"]\n')  # fmt: skip
    write(tmp_path, "svc/helpers/pyproject.toml",
          '[project]\nname = "svc-helpers"\ndependencies = ["idna==3.10"]\n')  # fmt: skip
    plan = plan_workspace(tmp_path)
    assert wanted(plan, "pypi") == {
        ("requests", "==2.32.3"),
        ("pytest", "==8.3.3"),
        ("sphinx", ">=7"),
        ("attrs", ">=23"),
        ("idna", "==3.10"),
    }  # svc-helpers is the workspace's own
    assert [s.spec for s in plan.stdlibs] == ["python:stdlib"]


def test_manifests_of_ecosystems_without_a_source_are_listed_with_the_reason(tmp_path):
    files = {
        "go.mod": "Go modules",
        "crates/x/Cargo.lock": "crates.io",
        "java/pom.xml": "Maven",
        "android/build.gradle.kts": "Maven (Gradle)",
        "Gemfile.lock": "RubyGems",
        "php/composer.lock": "Packagist",
        "dotnet/App.csproj": "NuGet",
    }
    for rel in files:
        write(tmp_path, rel, "\n")
    plan = plan_workspace(tmp_path)
    listed = {n["file"]: n["ecosystem"] for n in plan.not_indexed if n["file"]}
    assert listed == files
    assert all("not fetched yet" in n["reason"] for n in plan.not_indexed if n["file"])
    # the standard libraries their languages call for, where this machine has none
    missing = {n["ecosystem"] for n in plan.not_indexed if not n["file"]}
    assert missing == {"go:stdlib", "java:stdlib", "rust:stdlib"}
    assert plan.summary() == "nothing to index: no dependencies and no standard library found"


def test_a_toolchain_the_machine_has_is_in_the_plan_with_its_version(tmp_path, monkeypatch):
    from index_tools.build.sources.toolchains import Toolchain

    have = Toolchain(language="go", version="go1.19.8", where="/usr/lib/go", spec="go:stdlib",
                     license="BSD-3-Clause")  # fmt: skip
    monkeypatch.setattr(toolchains_module, "find_toolchains", lambda *a, **k: [have])
    write(tmp_path, "cmd/main.go", "package main\n")
    write(tmp_path, "Main.java", "class Main {}\n")
    plan = plan_workspace(tmp_path)
    assert [(s.spec, s.version) for s in plan.stdlibs if s.available] == [("go:stdlib", "go1.19.8")]
    assert plan.parts() == ["Go 1.19's standard library"]
    assert [n["ecosystem"] for n in plan.not_indexed] == ["java:stdlib"]


def test_the_workspace_s_own_interpreter_gives_the_standard_library(tmp_path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")],
                   check=True, timeout=120)  # fmt: skip
    write(tmp_path, "app.py", "print(1)\n")
    plan = plan_workspace(tmp_path)
    (stdlib,) = plan.stdlibs
    python = "Scripts/python.exe" if os.name == "nt" else "bin/python3"
    assert stdlib.spec == f"python:stdlib={tmp_path.resolve() / 'env' / python}"
    assert stdlib.version == ".".join(map(str, sys.version_info[:3]))


def test_a_file_that_cannot_be_read_is_a_problem_of_the_plan_and_stops_the_build(tmp_path):
    write(tmp_path, "package-lock.json", "{ not json")
    write(tmp_path, "requirements.txt", "six==1.16.0\n")
    plan = plan_workspace(tmp_path)
    assert len(plan.problems) == 1 and plan.problems[0].startswith("package-lock.json: ")
    assert wanted(plan, "pypi") == {("six", "==1.16.0")}
    with pytest.raises(SourceError, match=r"cannot read package-lock\.json.*--keep-going"):
        open_workspace(f"workspace:{tmp_path}")


def test_the_summary_says_what_and_how_much(tmp_path):
    write(tmp_path, "package-lock.json", lock({f"p{i}": "1.0.0" for i in range(143)}))
    write(tmp_path, "requirements.txt", "".join(f"q{i}==1.0\n" for i in range(12)))
    plan = plan_workspace(tmp_path)
    summary = plan.summary()
    assert summary.startswith(
        "143 npm packages (package-lock.json), 12 PyPI packages (requirements.txt), "
        f"Python {sys.version_info[0]}.{sys.version_info[1]}'s standard library — about "
    )
    e = plan.estimate()
    assert e["words"] > 143 * 1000 and e["bytes"] > e["words"] and e["seconds"] > 10
    d = plan.to_dict()
    assert d["index"] == str(workspace_index_path(tmp_path))
    assert d["summary"] == summary


def test_the_index_lives_in_the_user_cache_keyed_by_the_real_path(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    path = workspace_index_path(tmp_path / "real")
    assert path == workspace_index_path(tmp_path / "link")
    assert path != workspace_index_path(tmp_path)
    assert not str(path).startswith(str(tmp_path))


def test_not_a_folder(tmp_path):
    with pytest.raises(SourceError, match="no such folder"):
        plan_workspace(tmp_path / "missing")


def test_a_toolchain_without_its_sources_says_what_to_install(tmp_path, monkeypatch):
    from index_tools.build.sources.toolchains import Toolchain

    bare = Toolchain(language="rust", version="1.95.0", where="", spec="rust:stdlib",
                     license="MIT OR Apache-2.0", missing="rustup component add rust-src")  # fmt: skip
    monkeypatch.setattr(toolchains_module, "find_toolchains", lambda *a, **k: [bare])
    write(tmp_path, "src/main.rs", "fn main() {}\n")
    plan = plan_workspace(tmp_path)
    assert [s.available for s in plan.stdlibs] == [False]
    (missing,) = plan.not_indexed
    assert missing["ecosystem"] == "rust:stdlib"
    assert missing["reason"] == "Rust's standard library: rustup component add rust-src"
