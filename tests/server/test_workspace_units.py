"""The pure parts of a folder's own index: which changed files are its manifests, what an
index holds in a few words, the build's progress lines, a plan bounded for the status, and
the matches a check on another index replaces."""

from __future__ import annotations

from index_tools import Match
from server.detection import PendingCheck, merge_checks
from server.diagnostics import MatchStore, StoredMatch
from server.workspace_plan import (
    covers,
    has_something,
    is_manifest_name,
    manifest_of,
    parse_progress,
    plan_parts,
    progress_text,
    recorded_plan,
    short_version,
)


def test_what_an_index_holds_in_a_few_words():
    summary = {
        "sources": [
            {"kind": "npm", "packages": [{"name": "lodash", "version": "4.17.21"}]},
            {"kind": "npm", "packages": [{"name": "ms", "version": v} for v in ("2.1.2", "2.1.3")]},
            {"kind": "pypi", "packages": [{"name": "six", "version": "1.16.0"}]},
            {"kind": "python-stdlib", "version": "3.11.7"},
            {"kind": "go-stdlib", "version": "go1.22.1"},
            {"kind": "java-stdlib", "version": "17.0.9+9"},
            {"kind": "workspace", "unavailable": ["left-pad: 404", "x: 404"]},
            {"kind": "jsonl"},
        ]
    }
    assert covers(summary) == (
        "3 npm, 1 PyPI, Python 3.11 stdlib, Go 1.22 stdlib, Java 17 stdlib, "
        "1 other source (2 left out)"
    )
    assert covers({"sources": [{"kind": "npm", "packages": [{}] * 1234}]}) == "1,234 npm"
    assert covers({"sources": []}) == "nothing yet"
    assert covers(None) == ""
    assert short_version("rust-stdlib", "1.75.0") == "1.75"
    # what was not indexed, from the plan the index records
    summary["sources"][6]["plan"] = {"not_indexed": [{"file": "go.mod", "reason": "r"}]}
    assert recorded_plan(summary) == {"not_indexed": [{"file": "go.mod", "reason": "r"}]}
    assert recorded_plan({"sources": [{"kind": "npm"}]}) is None
    assert short_version("python-stdlib", "") == ""


def test_progress_lines():
    record = parse_progress('{"stage": "fetching npm", "done": 3, "total": 143, "unit": "pkg"}')
    assert progress_text(record) == "fetching npm 3/143"
    assert progress_text(
        parse_progress('{"stage": "indexing", "done": 1200, "total": null, "unit": "files"}')
    ) == ("indexing 1,200 files")
    assert progress_text(parse_progress('{"stage": "reading"}')) == "reading"
    assert parse_progress("recitation-index: cannot read package-lock.json") is None
    assert parse_progress("{not json") is None
    assert parse_progress('{"done": 3}') is None  # no stage
    assert progress_text(None) == ""


def test_which_changed_files_are_the_folder_s_manifests(tmp_path):
    root = tmp_path / "app"
    (root / "tools" / "env-of-mine").mkdir(parents=True)
    (root / "tools" / "env-of-mine" / "pyvenv.cfg").write_text("home = /usr\n")
    planned = {"constraints/base.txt"}

    def manifest(rel: str) -> bool:
        return manifest_of(root, root / rel, planned)

    assert manifest("package-lock.json")
    assert manifest("web/yarn.lock")
    assert manifest("services/api/poetry.lock")
    assert manifest("requirements.txt") and manifest("dev-requirements.txt")
    assert manifest("requirements/test.txt")
    assert manifest("constraints/base.txt")  # read by the plan (a -c or -r include)
    assert not manifest("node_modules/ms/package.json")
    assert not manifest("web/node_modules/.package-lock.json")
    assert not manifest(".venv/lib/python3.11/site-packages/x/pyproject.toml")
    assert not manifest("tools/env-of-mine/requirements.txt")  # a virtual environment
    assert not manifest("dist/package.json") and not manifest("build/pyproject.toml")
    assert not manifest("docs/notes.txt") and not manifest("src/index.js")
    assert not manifest_of(root, tmp_path / "elsewhere" / "package.json", planned)
    assert is_manifest_name("Pipfile.lock") and not is_manifest_name("Pipfile")


def test_a_plan_is_bounded_in_the_status():
    plan = {
        "summary": "2 npm packages (package-lock.json) — about 1M words, 13 MB, 1 seconds",
        "ecosystems": [
            {"ecosystem": "npm", "packages": 2, "files": [f"p{i}/package.json" for i in range(500)]}
        ],
        "stdlibs": [],
        "not_indexed": [
            {"file": f"m{i}/go.mod", "ecosystem": "Go modules", "reason": "r"} for i in range(90)
        ],
        "problems": [],
        "estimate": {"words": 1, "bytes": 1, "seconds": 1},
    }
    parts = plan_parts(plan)
    assert len(parts["ecosystems"][0]["files"]) == 20 and len(parts["notIndexed"]) == 20
    assert parts["summary"] == plan["summary"]
    assert has_something(plan)
    assert not has_something({"ecosystems": [{"packages": 0}], "stdlibs": []})
    assert plan_parts(None) is None


def stored(start: int, end: int, repository: str) -> StoredMatch:
    d = {
        "kind": "recitation",
        "length": 80,
        "suggestion_words": 80,
        "range": None,
        "file_count": 1,
        "file_count_exact": True,
        "text": "x",
        "sources": [
            {
                "repository": repository,
                "path": "index.js",
                "license": "MIT",
                "commit": "",
                "url": "",
                "start_line": 1,
                "end_line": 9,
            }
        ],
    }
    return StoredMatch.create(Match.from_dict(d), start, end, ("x",))


def test_a_check_on_another_index_replaces_the_matches_inside_its_span():
    store = MatchStore()
    uri = "file:///app/x.js"
    same, moved, gone, outside = (
        stored(10, 50, "npm:ms@2.1.3"),
        stored(60, 90, "npm:ms@2.1.3"),
        stored(100, 120, "npm:ms@2.1.3"),
        stored(200, 260, "npm:ms@2.1.3"),
    )
    for m in (same, moved, gone, outside):
        store.add(uri, m)
    found = [stored(10, 50, "npm:ms@2.1.3"), stored(60, 90, "npm:ms@2.1.2")]
    new, changed = store.replace_span(uri, 0, 150, found)
    assert changed
    assert [m.sources[0].repository for m in new] == ["npm:ms@2.1.2"]
    # the same quote said the same way keeps its id; what is no longer found is gone
    assert [m.id for m in store.get(uri)] == [same.id, found[1].id, outside.id]
    new, changed = store.replace_span(uri, 0, 150, [same, found[1]])
    assert new == [] and not changed


def test_a_check_again_stays_one_when_merged():
    merged = merge_checks(
        [PendingCheck(0, 10, replace=True), PendingCheck(5, 20), PendingCheck(30, 40)]
    )
    assert [(c.start, c.end, c.replace) for c in merged] == [(0, 20, True), (30, 40, False)]
