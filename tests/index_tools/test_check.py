"""`recitation-index check` in CI: folders (tracked files only in git), excludes, the editor's
verdicts (attribution, the decisions file, the license policy), baselines, SARIF
suppressions and exit codes — real processes on a real index and a real git repository."""

from __future__ import annotations

import json
import subprocess

import pytest
from engine_fixtures import HAVERSINE, make_corpus
from test_cli import run

from index_tools import DecisionsFile, QuoteIdentity

ATTRIBUTION = "# Adapted from https://github.com/acme/widgets/blob/main/src/geo.py, MIT license\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("check")
    info = make_corpus(tmp)
    r = run("build", *info["repos"], "--out", tmp / "idx", "--jobs", 1, "-q")
    assert r.returncode == 0, r.stderr
    return tmp / "idx"


def git(cwd, *args):
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path):
    """A repository with a quoted file, a clean one, a vendored copy and an untracked one."""
    r = tmp_path / "repo"
    (r / "src").mkdir(parents=True)
    (r / "vendor").mkdir()
    (r / "src" / "geo.py").write_text("import math\n\n\n" + HAVERSINE)
    (r / "src" / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    (r / "vendor" / "geo_copy.py").write_text(HAVERSINE)
    git(r, "init", "-q")
    git(r, "add", "src", "vendor")
    (r / "src" / "scratch.py").write_text(HAVERSINE)  # not tracked
    return r


def check(index, *args, cwd):
    return run("check", *args, "--index", index, cwd=cwd)


def results(r) -> list[dict]:
    return json.loads(r.stdout)["results"]


def test_a_folder_in_git_means_its_tracked_files_minus_excludes(index, repo):
    r = check(index, ".", "--format", "json", cwd=repo)
    assert r.returncode == 1, r.stderr
    assert sorted(x["file"] for x in results(r)) == ["src/geo.py", "vendor/geo_copy.py"]
    r = check(index, ".", "--exclude", "vendor/*", "--format", "json", cwd=repo)
    assert [x["file"] for x in results(r)] == ["src/geo.py"]
    assert "1 quote to act on in 2 file(s) (1 warning)" in r.stderr
    r = check(index, "src", "--exclude", "geo.py", cwd=repo)
    assert r.returncode == 0 and "0 quotes to act on in 1 file(s)" in r.stderr


def test_a_folder_outside_git_is_read_whole(index, repo):
    (repo / ".git").rename(repo / "not-git")
    r = check(index, "src", "--format", "json", cwd=repo)
    assert sorted(x["file"] for x in results(r)) == ["src/geo.py", "src/scratch.py"]


def test_an_attributed_quote_does_not_fail_and_is_suppressed_in_source(index, repo):
    (repo / "src" / "geo.py").write_text("import math\n\n" + ATTRIBUTION + HAVERSINE)
    r = check(index, "src", cwd=repo)
    assert r.returncode == 0 and "(1 attributed)" in r.stderr
    assert "src/geo.py" not in r.stdout  # suppressed results are listed only when asked
    r = check(index, "src", "--show-suppressed", cwd=repo)
    assert "src/geo.py:4:1: attributed: Quoted: acme/widgets src/geo.py" in r.stdout
    assert "attributed on line 3" in r.stdout
    r = check(index, "src", "--format", "sarif", cwd=repo)
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    assert res["level"] == "note"
    assert res["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "attributed on line 3"}
    ]


def test_the_decisions_file_dismisses_and_sets_the_policy(index, repo):
    r = check(index, "src", "--format", "json", cwd=repo)
    (found,) = results(r)
    DecisionsFile(repo).dismiss(QuoteIdentity.of_text(found["text"]), "def haversine", "", "")
    r = check(index, ".", "--format", "sarif", cwd=repo)
    # a dismissal is by content: the vendored copy of the same quote is dismissed too
    assert r.returncode == 0 and "(2 dismissed)" in r.stderr
    by_file = {
        x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: x
        for x in json.loads(r.stdout)["runs"][0]["results"]
    }
    assert set(by_file) == {"src/geo.py", "vendor/geo_copy.py"}
    for res in by_file.values():
        (suppression,) = res["suppressions"]
        assert suppression["kind"] == "external"
        assert suppression["justification"].startswith("dismissed (")


def test_policy_sets_the_level_and_fail_on_the_threshold(index, repo):
    (repo / ".recitation.toml").write_text('[policy]\npermissive = "information"\n')
    r = check(index, "src", "--format", "sarif", cwd=repo)
    assert r.returncode == 0  # information is below the default --fail-on warning
    (res,) = json.loads(r.stdout)["runs"][0]["results"]
    assert res["level"] == "note" and res["suppressions"] == []
    assert res["properties"]["verdict"]["reason"] == "license policy for permissive: information"
    assert check(index, "src", "--fail-on", "information", cwd=repo).returncode == 1
    (repo / ".recitation.toml").write_text('[policy]\n"MIT" = "error"\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 1 and "src/geo.py:4:1: error: Quoted:" in r.stdout
    (repo / ".recitation.toml").write_text('[allow]\nsources = ["acme/widgets"]\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 0 and "(1 allowed)" in r.stderr


def test_a_broken_decisions_file_is_exit_2_with_its_line(index, repo):
    (repo / ".recitation.toml").write_text('version = 1\n[policy]\nMIT = "loud"\n')
    r = check(index, "src", cwd=repo)
    assert r.returncode == 2 and r.stdout == ""
    assert ".recitation.toml: line 3: MIT = 'loud': expected one of" in r.stderr


def test_a_baseline_lets_only_new_quotes_fail(index, repo):
    r = check(index, ".", "--baseline", "recitation-baseline.json", "--update-baseline", cwd=repo)
    assert r.returncode == 0 and "wrote 2 quote(s) to the baseline" in r.stderr
    baseline = json.loads((repo / "recitation-baseline.json").read_text())
    assert sorted(x["file"] for x in baseline["results"]) == ["src/geo.py", "vendor/geo_copy.py"]
    r = check(index, ".", "--baseline", "recitation-baseline.json", cwd=repo)
    assert r.returncode == 0 and "(2 baseline)" in r.stderr
    # the same quote in a new file is new
    (repo / "src" / "more.py").write_text("x = 1\n" + HAVERSINE)
    git(repo, "add", "src/more.py")
    r = check(index, ".", "--baseline", "recitation-baseline.json", cwd=repo)
    assert r.returncode == 1 and "src/more.py:2:1: warning: Quoted:" in r.stdout
    # run from elsewhere: baseline paths are relative to the baseline file
    r = check(index, repo, "--baseline", repo / "recitation-baseline.json", cwd=repo.parent)
    assert r.returncode == 1 and "(2 baseline, " not in r.stderr and "2 baseline" in r.stderr
    r = check(index, ".", "--baseline", "missing.json", cwd=repo)
    assert r.returncode == 2 and "no such baseline" in r.stderr


def test_exit_codes_are_in_the_help():
    r = run("check", "--help")
    assert r.returncode == 0
    assert "0  no open quote at or above --fail-on" in r.stdout
    assert "--update-baseline" in r.stdout and "--exclude" in r.stdout


def test_the_pre_commit_hook_runs_check_on_the_staged_files(index, repo):
    """pre-commit runs `entry` with the staged files' paths appended."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    hook = (root / ".pre-commit-hooks.yaml").read_text()
    entry = next(line.split(":", 1)[1].split() for line in hook.splitlines() if "entry:" in line)
    assert entry[:2] == ["recitation-index", "check"]
    assert 'recitation-index = "index_tools.cli:main"' in (root / "pyproject.toml").read_text()
    assert "language: python" in hook and "id: recitation-check" in hook
    r = check(index, "src/clean.py", cwd=repo)
    assert r.returncode == 0
    r = check(index, "src/clean.py", "src/geo.py", cwd=repo)
    assert r.returncode == 1 and "src/geo.py:4:1: warning:" in r.stdout


def test_a_mistyped_path_is_an_error_not_a_pass(index, repo):
    r = check(index, "src", "scr/geo.py", cwd=repo)
    assert r.returncode == 2 and "cannot read scr/geo.py: no such file or folder" in r.stderr
