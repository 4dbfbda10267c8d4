"""`add` is idempotent per source: what the index holds already changes no count. (Issue
26, 5: after `build R`, `add R`, `add R`, a quote in 2 files of R counted 6 files and listed
each path three times.) A source held at another version is replaced: its old files leave
every count, listing and match."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from engine_fixtures import GEO, HAVERSINE, git, make_repo

from index_tools import (
    BuildError,
    BuildOptions,
    add_to_index,
    build_index,
    open_index,
    tokenize,
)
from index_tools.cli import main
from index_tools.store import generations as store
from index_tools.store.shards import SHARES_NAME

OPTS = dict(jobs=1, progress=False)
CLI = [sys.executable, "-m", "index_tools.cli"]


def quote(index_dir):
    with open_index(index_dir) as idx:
        (m,) = idx.match(HAVERSINE)
    return m.file_count, sorted((s.repository, s.path) for s in m.sources)


@pytest.fixture
def repo(tmp_path):
    """R: the quote in 2 files."""
    path, _ = make_repo(
        tmp_path / "widgets",
        {"src/geo.py": GEO, "lib/geo_copy.py": "# a copy\n" + HAVERSINE},
        "https://github.com/acme/widgets.git",
    )
    return path


def test_build_r_add_r_add_r_counts_each_file_once(tmp_path, repo):
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    before = quote(idx)
    assert before == (2, [("acme/widgets", "lib/geo_copy.py"), ("acme/widgets", "src/geo.py")])
    live = store.read_header(idx)[0]
    for _ in range(2):
        summary = add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
        assert summary.files == 0 and summary.skipped == {"source already in the index": 1}
    assert quote(idx) == before
    assert store.read_header(idx)[0] == live  # nothing written: the index as it was
    # the CLI says so
    r = subprocess.run([*CLI, "add", str(idx), str(repo), "-q"], capture_output=True, text=True)
    assert r.returncode == 0 and "skipped: 1 source already in the index" in r.stdout
    assert "nothing written: the index is as it was" in r.stdout
    assert "index size" not in r.stdout and "shards" not in r.stdout
    assert quote(idx) == before


def test_the_same_source_twice_in_one_command_counts_once(tmp_path, repo):
    idx = tmp_path / "idx"
    build_index([str(repo), str(repo)], idx, BuildOptions(**OPTS))
    assert quote(idx)[0] == 2
    other, _ = make_repo(tmp_path / "other", {"x.py": "# x\n" + HAVERSINE}, None)
    add_to_index(idx, [str(other), str(other), str(repo)], BuildOptions(**OPTS))
    assert quote(idx)[0] == 3


def test_a_folder_added_again_unchanged_counts_once(tmp_path):
    folder = tmp_path / "plain"
    (folder / "a").mkdir(parents=True)
    (folder / "a" / "geo.py").write_text(GEO)
    (folder / "b.py").write_text(HAVERSINE)
    idx = tmp_path / "idx"
    build_index([str(folder)], idx, BuildOptions(**OPTS))
    add_to_index(idx, [str(folder)], BuildOptions(**OPTS))
    assert quote(idx)[0] == 2
    header = json.loads((store.read_header(idx)[0] / "HEADER.json").read_text())
    (entry,) = header["sources"]
    assert entry["key"] == f"folder:{folder.resolve()}" and entry["version"]


def test_a_new_commit_replaces_the_old_one_and_says_so(tmp_path, repo, capsys):
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    old = git(repo, "rev-parse", "HEAD")
    (repo / "lib" / "geo_copy.py").unlink()
    git(repo, "commit", "-qam", "drop the copy")
    new = git(repo, "rev-parse", "HEAD")
    assert main(["add", str(idx), str(repo), "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        f"replaced: acme/widgets {old[:8]} \u2192 {new[:8]} (2 files of the old version out)" in out
    )
    assert "files: 1 (0 unique documents, 1 duplicates)" in out  # src/geo.py is unchanged
    assert "skipped: none" in out
    count, sources = quote(idx)
    assert count == 1 and sources == [("acme/widgets", "src/geo.py")]
    with open_index(idx) as i:
        (m,) = i.match(HAVERSINE)
        assert [s.commit for s in m.sources] == [new]  # linked at the new commit
        assert m.sources[0].url.startswith(f"https://github.com/acme/widgets/blob/{new}/src/")
        (entry,) = i.header.sources
        assert entry["version"] == new and i.header.files == 1
        assert i.header.source_files == [1] and i.header.name == "acme/widgets"
    # the new version again: held now, nothing written; as JSON the same as `skipped`
    live = store.read_header(idx)[0]
    assert main(["add", str(idx), str(repo), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["skipped"] == {"source already in the index": 1} and report["replaced"] == []
    assert store.read_header(idx)[0] == live and quote(idx) == (count, sources)


def test_the_summary_reports_what_was_replaced(tmp_path, repo):
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    old = git(repo, "rev-parse", "HEAD")
    (repo / "lib" / "geo_copy.py").write_text("# changed\n" + HAVERSINE)
    git(repo, "commit", "-qam", "change the copy")
    new = git(repo, "rev-parse", "HEAD")
    summary = add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    assert summary.replaced == [("acme/widgets", old, new)] and summary.removed == 2
    assert (summary.files, summary.documents, summary.duplicates) == (2, 1, 1)
    assert summary.to_dict()["replaced"] == [
        {"source": "acme/widgets", "version_held": old, "version_given": new}
    ]
    assert quote(idx)[0] == 2  # the changed copy still holds the quote: counted once


def test_a_quote_only_in_the_dropped_file_is_no_match_at_all(tmp_path):
    only = "\n".join(f"def step_{i}(state):\n    return state * {i} + {i * i}" for i in range(12))
    repo, _ = make_repo(
        tmp_path / "r",
        {"geo.py": GEO, "only.py": only, "also.py": "# also\n" + only},
        "https://github.com/acme/r.git",
    )
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    with open_index(idx) as i:
        (m,) = i.match(only)
        assert m.file_count == 2
    for name in ("only.py", "also.py"):
        (repo / name).unlink()
    git(repo, "commit", "-qam", "drop them")
    add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    with open_index(idx) as i:
        assert i.match(only) == [] and i.match(only, language="python") == []
        assert i.match(only, min_tokens=10) == []
        assert i.header.documents == 3  # still in the shards, with no file left
        assert i.occurrences.tolist().count(0) == 2
    assert quote(idx)[0] == 1


def test_a_document_shared_with_another_source_keeps_its_files_there(tmp_path, repo):
    other, _ = make_repo(
        tmp_path / "other",
        {"vendor/geo_copy.py": "# a copy\n" + HAVERSINE},  # the same file as R's copy
        "https://github.com/other/app.git",
    )
    idx = tmp_path / "idx"
    build_index([str(repo), str(other)], idx, BuildOptions(**OPTS))
    assert quote(idx)[0] == 3
    (repo / "lib" / "geo_copy.py").unlink()
    git(repo, "commit", "-qam", "drop the copy")
    add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    assert quote(idx) == (
        2,
        [("acme/widgets", "src/geo.py"), ("other/app", "vendor/geo_copy.py")],
    )
    with open_index(idx) as i:
        (m,) = i.match("# a copy\n" + HAVERSINE)
        assert [(s.repository, s.path) for s in m.sources if s.path.endswith("copy.py")] == [
            ("other/app", "vendor/geo_copy.py")
        ]
        assert [e["name"] for e in i.header.sources] == [
            "other/app",
            "acme/widgets",
        ]  # the new version's entry comes last, as its files do
    # and back: R's copy returns, counted with the other source's document
    (repo / "lib" / "geo_copy.py").write_text("# a copy\n" + HAVERSINE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the copy again")
    add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    count, sources = quote(idx)
    assert count == 3 and ("acme/widgets", "lib/geo_copy.py") in sources


def test_an_index_built_before_shares_refuses_a_new_version(tmp_path, repo):
    """An index written before each source's files were recorded (no shares.u32) cannot take
    an old version out: it says to rebuild, and still takes new sources."""
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    gen = store.read_header(idx)[0]
    header = json.loads((gen / store.HEADER_NAME).read_text())
    (gen / SHARES_NAME).unlink()
    for table in ("file_sizes", "file_hashes", "file_mtimes"):
        del header[table][SHARES_NAME]
    del header["source_files"]
    (gen / store.HEADER_NAME).write_text(json.dumps(header))
    assert quote(idx)[0] == 2  # it opens and answers
    (repo / "lib" / "geo_copy.py").unlink()
    git(repo, "commit", "-qam", "drop the copy")
    with pytest.raises(BuildError, match="holds acme/widgets at another version") as e:
        add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    assert "rebuild the index with `build`" in str(e.value) and "\n" not in str(e.value)
    assert quote(idx)[0] == 2  # unchanged
    other, _ = make_repo(tmp_path / "other", {"x.py": "# x\n" + HAVERSINE}, None)
    add_to_index(idx, [str(other)], BuildOptions(**OPTS))
    assert quote(idx)[0] == 3
    gen, h = store.read_header(idx)
    assert SHARES_NAME not in h.file_sizes and not (gen / SHARES_NAME).exists()


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_new_version_of_a_source_replaces_its_documents(tmp_path, repo, kind):
    if kind == "folder":
        repo = tmp_path / "plain"
        repo.mkdir()
        (repo / "geo.py").write_text(GEO)
        (repo / "geo_copy.py").write_text("# a copy\n" + HAVERSINE)
    idx = tmp_path / "idx"
    build_index([str(repo)], idx, BuildOptions(**OPTS))
    (repo / "lib" / "geo_copy.py" if kind == "git" else repo / "geo_copy.py").unlink()
    if kind == "git":
        git(repo, "commit", "-qam", "drop the copy")
    add_to_index(idx, [str(repo)], BuildOptions(**OPTS))
    count, sources = quote(idx)
    assert count == 1 and [path for _, path in sources] == [
        "src/geo.py" if kind == "git" else "geo.py"
    ]


# --- dead documents: what only the old version held is found nowhere ------------------------

DEAD = "\n".join(f"def stage_{k}(data):\n    return data[{k}] * {k} - {k * 3}" for k in range(10))
A = "\n".join(f"total_{k} = weight_{k} * value_{k} + offset_{k}" for k in range(9))
B = "\n".join(f"ratio_{k} = total_{k} / (count_{k} or 1)" for k in range(9))
RENAMES = {"lat1": "a", "lon1": "b", "lat2": "c", "lon2": "d", "dlon": "dx", "dlat": "dy"}


def renamed(text: str) -> str:
    return re.sub(r"\b\w+\b", lambda m: RENAMES.get(m.group(), m.group()), text)


def answers(index_dir, queries) -> list:
    """What each query shows: matches with their counts, sources and parts."""
    out = []
    with open_index(index_dir) as idx:
        for text, language in queries:
            found = []
            for m in idx.match(text, min_tokens=30, language=language, max_sources=50):
                parts = [
                    (p.query_start, p.query_end, p.file_count, sorted(s.path for s in p.sources))
                    for p in m.parts
                ]
                found.append(
                    (m.query_start, m.query_end, m.file_count, m.exact,
                     sorted((s.repository, s.path) for s in m.sources), parts)
                )  # fmt: skip
            out.append(found)
    return out


def write_tree(root, files: dict[str, str]) -> str:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return str(root)


def replaced_and_rebuilt(tmp_path, first: dict, later: dict, others: dict, **options):
    """An index of folder R (`first`) and folder O, then R's new version (`later`) added;
    and an index built of R's new version and O."""
    opts = BuildOptions(**OPTS, **options)
    r = write_tree(tmp_path / "v" / "R", first)
    o = write_tree(tmp_path / "O", others)
    idx = tmp_path / "idx"
    build_index([r, o], idx, opts)
    for name in set(first) - set(later):
        (tmp_path / "v" / "R" / name).unlink()
    write_tree(tmp_path / "v" / "R", later)
    summary = add_to_index(idx, [r], opts)
    assert summary.replaced and summary.removed == len(first)
    fresh = tmp_path / "fresh"
    build_index([write_tree(tmp_path / "w" / "R", later), o], fresh, opts)
    return idx, fresh


@pytest.mark.parametrize(
    "enumerate_, read_places",
    [(10**9, 256), (2, 0), (2, 256)],
    ids=["one-by-one", "from-counts", "counts-then-read"],
)
def test_crowded_quotes_of_dead_documents_are_no_match(
    tmp_path, monkeypatch, enumerate_, read_places
):
    """Quotes in more places than ENUMERATE (spans from counts): one held only by the old
    version's files gives nothing; a block held by the other source's files, which the old
    version's files continued with more, gives the other source's files alone."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", enumerate_)
    monkeypatch.setattr(suffix, "READ_PLACES", read_places)
    first = {f"dead{i}.py": f"# dead {i}\n{DEAD}\n" for i in range(5)}
    first |= {f"ab{i}.py": f"# ab {i}\n{A}\n{B}\n" for i in range(4)}
    first |= {f"h{i}.py": f"# h {i}\n{HAVERSINE}" for i in range(4)}
    later = {f"h{i}.py": f"# h {i}\n{HAVERSINE}" for i in range(2, 4)}
    others = {f"a{i}.py": f"# a {i}\n{A}\nvalue_{i} = {i}\n" for i in range(4)}
    others |= {f"o{i}.py": f"# o {i}\n{HAVERSINE}" for i in range(3)}
    idx, fresh = replaced_and_rebuilt(tmp_path, first, later, others)
    queries = [(DEAD, None), (DEAD, "python"), (renamed(DEAD), "python"), (f"{A}\n{B}", None),
               (HAVERSINE, None), (f"{DEAD}\n{A}\n{B}\n{HAVERSINE}", "python")]  # fmt: skip
    got = answers(idx, queries)
    assert got == answers(fresh, queries)  # as if the old version had never been indexed
    dead, dead_py, dead_renamed, ab, haversine, everything = got
    assert dead == dead_py == dead_renamed == []
    ((start, end, count, exact, sources, _),) = ab  # the block A alone, in O's 4 files
    assert (start, count, exact) == (0, 4, True) and end == len(tokenize(A))
    assert sources == [("O", f"a{i}.py") for i in range(4)]
    ((_, _, count, _, sources, _),) = haversine
    assert count == 5 and sorted(p for _, p in sources) == ["h2.py", "h3.py", "o0.py", "o1.py", "o2.py"]  # fmt: skip
    assert [m[2] for m in everything] == [4, 5]
    # the crowded spans' own listings hold live documents only
    with open_index(idx) as i:
        q = i.word_ids(tokenize_words(f"{DEAD}\n{A}\n{B}"))
        _, crowded = suffix.search(i.shards, q, 30, 0)
        for span in crowded:
            assert span.documents == len(span.listing()) > 0
            assert (i.occurrences[span.listing()] > 0).all()


def tokenize_words(text: str) -> list[str]:
    return [w.text for w in tokenize(text)]


def test_a_renamed_copy_counts_the_live_files_only(tmp_path, monkeypatch):
    """The rename-insensitive view leaves out shapes in more than ENUMERATE places: the
    places of dead documents do not count there either."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 6)  # 7 places with the old version, 5 after
    first = {f"h{i}.py": f"# h {i}\n{HAVERSINE}" for i in range(4)}
    later = {f"h{i}.py": f"# h {i}\n{HAVERSINE}" for i in range(2, 4)}
    others = {f"o{i}.py": f"# o {i}\n{HAVERSINE}" for i in range(3)}
    # every position sorted, so that the places counted are these 7 and 5 (a sampled view
    # counts one in `stride`, against ENUMERATE / stride)
    idx, fresh = replaced_and_rebuilt(tmp_path, first, later, others, renamed_stride=1)
    queries = [(renamed(HAVERSINE), "python")]
    got = answers(idx, queries)
    assert got == answers(fresh, queries)
    ((m,),) = got
    assert m[2] == 5 and m[3] is False
