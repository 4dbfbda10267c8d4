"""The source view in the engine: the stored text found by its origin, the quote aligned in it
(exact and renamed copies, moved lines, a quote only partly there), the window and its
limits, what a removed source says, the JSON both ways; the index service's `/v1/source`
(the same answer as the local index, its token, size limit and refusals); `show`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from engine_fixtures import GEO, HAVERSINE
from service_helpers import Service, cli

from index_tools import (
    BuildOptions,
    RemoteIndex,
    SourceRef,
    SourceRequest,
    SourceView,
    build_index,
    open_index,
    source_view,
    tokenize,
)
from index_tools.match import source_view as sv
from index_tools.match.source_texts import source_texts

RENAMES = {"lat1": "a", "lon1": "b", "lat2": "c", "lon2": "d", "dlon": "dx", "dlat": "dy"}
REPO = "acme/widgets"


def rename(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


def words(text: str) -> list[str]:
    return [w.text for w in tokenize(text)]


def line_of(text: str, part: str, last: bool = False) -> int:
    at = text.index(part) + (len(part.rstrip("\n")) if last else 0)
    return text.count("\n", 0, at) + 1


def rows(path: Path, files: list[tuple[str, str, str]]) -> str:
    """A dataset of (repository, path, content) rows, commit "c1", MIT."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for repo, name, content in files:
            row = {"repository": repo, "path": name, "commit": "c1", "license": "MIT"}
            f.write(json.dumps({**row, "content": content}) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("source-view")
    data = rows(
        root / "rows.jsonl",
        [
            (REPO, "src/geo.py", GEO),
            ("other/fork", "geo_copy.py", "# fork\n\n" + GEO),
            ("acme/dup", "same.py", "x = 1\n" * 3 + HAVERSINE),
            ("acme/dup", "same.py", "# unrelated\n"),  # the same origin listed twice
        ],
    )
    build_index([data], root / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(root / "idx") as idx:
        yield idx


def ask(idx, source: dict | None = None, quote: str = HAVERSINE, **kw) -> SourceView:
    src = {"repository": REPO, "path": "src/geo.py", "commit": "c1"}
    src.update(source or {})
    return source_view(idx, SourceRequest.from_dict({"source": src, "quote": quote, **kw}))


def marked(text: str, marks, kind: str | None = None) -> list[str]:
    return [
        w for m in marks if kind is None or m.kind == kind for w in words(text[m.start : m.end])
    ]


# --- the stored text by its origin -------------------------------------------------------------


def test_the_stored_text_is_found_by_its_origin(index):
    (found,) = source_texts(index, REPO, "src/geo.py", "c1")
    assert found.text == GEO and found.language == "python"
    assert found.generation == index.generation
    assert source_texts(index, REPO, "src/geo.py", "c2") == []
    assert source_texts(index, REPO, "src/nowhere.py", "c1") == []
    # a path listed twice with different contents: both documents
    assert len(source_texts(index, "acme/dup", "same.py", "c1")) == 2


def test_an_exact_quote_is_marked_word_for_word(index):
    a, b = line_of(GEO, HAVERSINE), line_of(GEO, HAVERSINE, last=True)
    view = ask(index, {"start_line": a, "end_line": b}, context_lines=2)
    assert view.status == "ok" and (view.start_line, view.end_line) == (a, b)
    assert view.first_line == a - 2
    assert view.text == "".join(GEO.splitlines(keepends=True)[a - 3 : b + 2])
    assert marked(view.text, view.marks) == words(HAVERSINE)
    assert marked(HAVERSINE, view.quote_marks) == words(HAVERSINE)
    assert view.exact and view.renamed == [] and view.aligned_words == view.quote_words
    assert view.text[view.quoted[0] : view.quoted[1]] == HAVERSINE.rstrip("\n")
    assert view.title == f"{REPO} src/geo.py L{a}\u2013L{b} \u00b7 MIT"
    assert view.message == ""


def test_lines_that_moved_are_found_again(index):
    """The lines the match reported are a hint: a rebuilt index may have moved them."""
    view = ask(index, {"repository": "other/fork", "path": "geo_copy.py", "start_line": 1})
    a = line_of(GEO, HAVERSINE) + 2
    assert (view.start_line, view.end_line) == (a, a + HAVERSINE.count("\n") - 1)
    assert marked(view.text, view.marks) == words(HAVERSINE)


def test_a_renamed_copy_marks_the_renamed_names(index):
    copy = rename(HAVERSINE, RENAMES)
    view = ask(index, quote=copy, exact=False, language="python")
    assert view.exact is False and dict(view.renamed) == RENAMES
    theirs = marked(view.text, view.marks, "renamed")
    mine = marked(copy, view.quote_marks, "renamed")
    assert [RENAMES[w] for w in theirs] == mine and set(theirs) == set(RENAMES)
    assert len(theirs) + len(marked(view.text, view.marks, "same")) == len(words(HAVERSINE))
    # asked as an exact copy (a match whose primary span is exact, its renamed part not):
    # the exact words leave the renamed names out, the rename-insensitive view covers them
    plain = ask(index, quote=copy)
    assert plain.exact is False and dict(plain.renamed) == RENAMES
    assert plain.aligned_words == len(words(copy))
    # an exact copy stays exact: nothing is left for the renamed view to cover
    assert ask(index, language="python").exact is True


def test_a_quote_partly_in_the_source_and_not_at_all(index):
    partly = HAVERSINE + "".join(f"print('new line {i} of code here')\n" for i in range(5))
    view = ask(index, quote=partly)
    assert view.aligned_words == len(words(HAVERSINE)) < view.quote_words
    assert "of the" in view.message and "words of the quote are in it" in view.message
    a = line_of(GEO, HAVERSINE)
    nothing = ask(index, {"start_line": a, "end_line": a + 2}, quote="completely = different(1)")
    assert nothing.status == "ok" and nothing.aligned_words == 0 and nothing.marks == []
    assert (nothing.start_line, nothing.end_line) == (a, a + 2)
    assert "not in this file" in nothing.message


def test_the_document_the_quote_is_in_of_two_sharing_an_origin(index):
    view = ask(index, {"repository": "acme/dup", "path": "same.py"})
    assert view.aligned_words == len(words(HAVERSINE)) and view.start_line == 4


def test_a_removed_source_and_a_changed_generation_say_so(index):
    gone = ask(index, {"path": "src/nowhere.py"})
    assert gone.status == "removed" and gone.text == ""
    assert gone.message == f"{REPO} src/nowhere.py is no longer in the index."
    assert gone.to_dict()["status"] == "removed" and "text" not in gone.to_dict()
    moved = ask(index, {}, generation="gen-older")
    assert moved.status == "ok" and moved.generation_changed
    assert moved.message.startswith("The index changed since this quote was found")
    assert moved.to_dict()["requested_generation"] == "gen-older"
    gone_since = ask(index, {"path": "src/nowhere.py"}, generation="gen-older")
    assert "rebuilt since" in gone_since.message


def test_the_window_is_bounded(index, monkeypatch):
    monkeypatch.setattr(sv, "MAX_WINDOW_LINES", 4)
    view = ask(index, context_lines=0)
    assert view.truncated and view.text.count("\n") == 4
    assert all(m.end <= len(view.text) for m in view.marks)
    with pytest.raises(ValueError, match="context_lines"):
        SourceRequest.from_dict({"source": {"path": "x"}, "context_lines": 201})


@pytest.mark.parametrize(
    "raw, field",
    [
        ([], "object"),
        ({}, "source"),
        ({"source": {}}, "repository or a path"),
        ({"source": {"path": 3}}, "source.path"),
        ({"source": {"path": "x", "start_line": True}}, "source.start_line"),
        ({"source": {"path": "x", "end_line": -2}}, "source.end_line"),
        ({"source": {"path": "x"}, "quote": 5}, "quote"),
        ({"source": {"path": "x"}, "exact": 1}, "exact"),
        ({"source": {"path": "x"}, "generation": ["g"]}, "generation"),
        ({"source": {"path": "x"}, "language": "x" * 41}, "language"),
        ({"source": {"path": "x" * 5000}}, "source.path"),
    ],
)
def test_malformed_requests_name_the_field(raw, field):
    with pytest.raises(ValueError, match=re.escape(field)):
        SourceRequest.from_dict(raw)


def test_the_json_both_ways(index):
    copy = rename(HAVERSINE, RENAMES)
    request = SourceRequest.from_dict(
        {"source": {"repository": REPO, "path": "src/geo.py", "commit": "c1"}, "quote": copy,
         "exact": False, "language": "python"}
    )  # fmt: skip
    view = source_view(index, request)
    again = SourceView.from_dict(json.loads(json.dumps(view.to_dict(copy))), request)
    assert again.text == view.text and again.marks == view.marks
    assert again.quote_marks == view.quote_marks and again.quoted == view.quoted
    assert again.renamed == view.renamed and again.title == view.title
    # a service's hostile answer: metadata made printable, bad marks left out
    hostile = {
        **view.to_dict(copy),
        "path": "x\x1b[2J\u202e.py",
        "marks": [{"range": {"start": {"line": "a"}}}, 5, {"range": None}],
        "url": "javascript:alert(1)\n",
    }
    read = SourceView.from_dict(hostile, request)
    assert read.path == "x\ufffd[2J\ufffd.py" and read.marks == [] and read.url == ""
    with pytest.raises(ValueError):
        SourceView.from_dict({"status": "ok"}, request)
    with pytest.raises(ValueError):
        SourceView.from_dict({"status": "weird"}, request)


# --- through the index service and the CLI -----------------------------------------------------


@pytest.fixture(scope="module")
def served(index, tmp_path_factory):
    token = tmp_path_factory.mktemp("token") / "token"
    token.write_text("s3cret\n")
    args = ("--token-file", str(token), "--max-request-bytes", "20000")
    with Service(index.root, *args) as s:
        s.token_file = token
        yield s


def test_the_service_answers_what_the_local_index_does(index, served):
    request = SourceRequest(SourceRef(REPO, "src/geo.py", "c1", 1, 1), HAVERSINE)
    local = source_view(index, request)
    remote = RemoteIndex(served.url, token="s3cret").source_view(request)
    assert remote.to_dict(HAVERSINE) == local.to_dict(HAVERSINE)
    removed = SourceRequest(SourceRef(REPO, "src/nowhere.py", "c1"), HAVERSINE)
    assert RemoteIndex(served.url, token="s3cret").source_view(removed).status == "removed"


def test_the_service_refuses_as_it_does_for_matches(served):
    body = json.dumps({"source": {"path": "src/geo.py"}, "quote": "x"}).encode()
    ok = {"authorization": "Bearer s3cret", "content-type": "application/json"}
    assert served.request("POST", "/v1/source", body)[0] == 401
    assert served.request("POST", "/v1/source", body, {"authorization": "Bearer no"})[0] == 401
    status, raw, headers = served.request("POST", "/v1/source", body, ok)
    assert status == 200 and headers["x-recitation-generation"].startswith("gen-")
    big = json.dumps({"source": {"path": "x"}, "quote": "x" * 30000}).encode()
    assert served.request("POST", "/v1/source", big, ok)[0] == 413
    for bad in (b"{", b"[]", b'{"source": {"path": 1}}', b'{"source": {"path": "x"}, "quote": 3}'):
        status, raw, _ = served.request("POST", "/v1/source", bad, ok)
        answer = json.loads(raw)
        assert status == 400 and answer["reason"] in ("bad_json", "bad_request"), bad
    # a refusal names the field, never the request's content
    status, raw, _ = served.request(
        "POST", "/v1/source", b'{"source": {"path": "SECRET-CODE"}, "quote": ["SECRET"]}', ok
    )
    assert status == 400 and b"SECRET" not in raw
    assert served.get("/v1/source", ok)[0] == 405


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ("commit", "`source.commit` is too long: 10,000 characters, at most 4,000"),
        ("path", "`source.path` is too long: 10,000 characters, at most 4,000"),
        ("generation", "`generation` is too long: 10,000 characters, at most 200"),
    ],
)
def test_a_value_too_long_is_said_to_be(served, index, field, said):
    """A 100,000-character `commit` was answered "must be a string" (10,000 here: the
    fixture's service takes bodies of 20,000 bytes)."""
    source = {"repository": REPO, "path": "src/geo.py", "commit": "c1"}
    request = {"source": source, "quote": "x"}
    if field == "generation":
        request["generation"] = "g" * 10_000
    else:
        source[field] = "c" * 10_000
    ok = {"authorization": "Bearer s3cret", "content-type": "application/json"}
    status, raw, _ = served.request("POST", "/v1/source", json.dumps(request).encode(), ok)
    assert status == 400 and json.loads(raw)["reason"] == "bad_request"
    assert json.loads(raw)["error"] == said, raw
    if field != "generation":  # `show` says the same of a report's source
        report = {"matches": [{"text": HAVERSINE, "sources": [source]}]}
        r = cli("show", str(index.root), input=json.dumps(report))
        assert r.returncode == 2
        assert r.stderr == f"recitation-index: the match's source cannot be asked for: {said}\n"


def test_show_prints_the_lines_with_the_quote_marked(index, served, tmp_path):
    a, b = line_of(GEO, HAVERSINE), line_of(GEO, HAVERSINE, last=True)
    shown = cli("show", str(index.root), "--context-lines", "1", input=HAVERSINE)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"{REPO} src/geo.py L{a}\u2013L{b} \u00b7 MIT")
    body = [line for line in lines if re.match(r"^[> ] +\d+ \| ", line)]
    assert [int(line[1:].split("|")[0]) for line in body] == list(range(a - 1, b + 2))
    quoted = [line.split("| ", 1)[1] for line in body if line.startswith(">")]
    assert "\n".join(quoted) + "\n" == HAVERSINE
    assert "\x1b" not in shown.stdout  # not a terminal: no colour
    coloured = cli("show", str(index.root), "--color", "always", input=HAVERSINE)
    assert "\x1b[1;32mdef haversine" in coloured.stdout
    # from what `query --json` printed, and through the service: the same lines
    report = cli("query", str(index.root), "--json", input=HAVERSINE).stdout
    again = cli("show", str(index.root), "--context-lines", "1", input=report)
    assert again.stdout == shown.stdout
    env = {"RECITATION_INDEX_TOKEN_FILE": str(served.token_file)}
    remote = cli("show", served.url, "--context-lines", "1", input=HAVERSINE, env=env)
    assert remote.returncode == 0 and remote.stdout == shown.stdout
    as_json = json.loads(cli("show", str(index.root), "--json", input=HAVERSINE).stdout)
    assert as_json["status"] == "ok" and as_json["start_line"] == a
    # nothing to show: exit 1 with one line
    none = cli("show", str(index.root), input="x = 1\n")
    assert (
        none.returncode == 1 and none.stderr.strip() == "recitation-index: no quoted span to show"
    )
    past = cli("show", str(index.root), "--source", "9", input=HAVERSINE)
    assert past.returncode == 1 and "--source 9" in past.stderr


@pytest.mark.parametrize(
    ("report", "args", "said"),
    [
        (
            {"matches": [{"parts": [{"sources": 5}]}]},
            ["--part", "1"],
            "`sources` of part 1 of match 1",
        ),
        ({"matches": [{"sources": 5}]}, [], "`sources` of match 1"),
        ({"matches": [{"sources": [1, 2]}]}, [], "`sources` of match 1"),
        ({"matches": [{"parts": {"a": 1}}]}, ["--part", "1"], "`parts` of match 1"),
        ({"matches": [5]}, [], "`matches`"),
    ],
)
def test_show_reads_a_malformed_report_as_one_line(index, report, args, said):
    """`show --part 1` fed JSON with `"sources": 5` once ended in a TypeError."""
    r = cli("show", str(index.root), *args, input=json.dumps(report))
    assert r.returncode == 2
    expected = f"recitation-index: the query report on stdin cannot be read: {said} is not a list of objects\n"
    assert r.stderr == expected


def test_show_keeps_hostile_text_off_the_terminal(tmp_path):
    hostile = (
        "def drain(queue, limit):\n"
        "    # \x1b]0;owned\x07\x1b[2J \u202eevil\u202c\n"
        + "".join(
            f"    item_{i} = queue.pop(limit - {i}) or queue.peek({i}, True)\n" for i in range(8)
        )
        + "    return item_0\n"
    )
    data = rows(tmp_path / "rows.jsonl", [("evil/\x1b[31mrepo", "a\u202e.py", hostile)])
    build_index([data], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    for colour in ("never", "always"):
        shown = cli("show", str(tmp_path / "idx"), "--color", colour, input=hostile)
        assert shown.returncode == 0, shown.stderr
        out = shown.stdout.replace("\x1b[1;32m", "").replace("\x1b[0m", "").replace("\x1b[2m", "")
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
        assert "<U+001B>]0;owned<U+0007><U+001B>[2J <U+202E>evil<U+202C>" in out


def test_check_takes_a_token_file_as_query_does(served, tmp_path):
    """`check` had no `--token-file` while `query` had one."""
    (tmp_path / "geo.py").write_text(HAVERSINE)
    clean = {"RECITATION_INDEX_TOKEN": "", "RECITATION_INDEX_TOKEN_FILE": ""}
    args = ("check", str(tmp_path / "geo.py"), "--index", served.url, "--format", "json")
    with_token = cli(*args, "--token-file", str(served.token_file), env=clean)
    assert with_token.returncode == 1, with_token.stderr
    (found,) = json.loads(with_token.stdout)["results"]
    assert found["file"].endswith("/geo.py") and found["sources"][0]["path"] == "src/geo.py"
    without = cli(*args, env=clean)
    assert without.returncode == 2 and "401" in without.stderr, without.stderr
    none = tmp_path / "none"
    missing = cli(*args, "--token-file", str(none), env=clean)
    assert missing.returncode == 2
    assert missing.stderr == f"recitation-index: cannot read {none}: No such file or directory\n"


@pytest.mark.parametrize(
    ("repository", "said"),
    [("pypi:requests==2.32.3", "version"), ("npm:left-pad@1.3.0", "version"), ("acme/w", "commit")],
)
def test_show_calls_a_package_version_a_version(tmp_path, repository, said):
    """A package's origin holds its version where a repository's holds a commit: `show`
    says which it is."""
    data = tmp_path / "rows.jsonl"
    version = repository.rpartition("=")[2] if "==" in repository else "1.3.0"
    row = {"repository": repository, "path": "api.py", "commit": version, "license": "MIT"}
    data.write_text(json.dumps({**row, "content": GEO}) + "\n")
    build_index([str(data)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    shown = cli("show", str(tmp_path / "idx"), input=HAVERSINE)
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert head.endswith(f"\u00b7 {said} {version}"), head
    other = "commit" if said == "version" else "version"
    assert f"\u00b7 {other} " not in head


def test_show_counts_one_match_in_the_singular(index):
    past = cli("show", str(index.root), "--match", "3", input=HAVERSINE)
    assert past.returncode == 1
    assert "there is 1 match; --match 3 is none of them" in past.stderr, past.stderr
