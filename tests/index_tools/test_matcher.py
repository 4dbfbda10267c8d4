"""The matcher on a real multi-repository corpus: spans, ranges, links, counts and kinds."""

from __future__ import annotations

import pytest
from engine_fixtures import (
    GEO,
    HAVERSINE,
    MIT,
    REGEX_TABLE,
    ROUTES,
    line_of,
    make_corpus,
    make_repo,
)

from index_tools import BuildOptions, build_index, describe_match, open_index, tokenize


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corpus")
    info = make_corpus(tmp)
    out = tmp / "index"
    summary = build_index(info["repos"], out, BuildOptions(jobs=2, progress=False))
    info["summary"] = summary
    info["index"] = open_index(out)
    yield info
    info["index"].close()


def words(text: str) -> int:
    return len(tokenize(text))


def test_build_dedupes_identical_files_and_counts_them(corpus):
    s = corpus["summary"]
    # widgets: LICENSE is not code, geo.py, regex_table.py; fork: geo.py (identical); routes.py
    assert s.files == 4
    assert s.documents == 3
    assert s.duplicates == 1
    assert s.skipped["unsupported"] == 2  # the two LICENSE files


def test_quoted_function_exact_span_sources_and_count(corpus):
    idx = corpus["index"]
    context = "import math\n\n# distance helpers for the rover\n"
    suggestion = HAVERSINE + "\n\nprint(haversine(0, 0, 1, 1))\n"
    (m,) = idx.match(suggestion, context)
    assert m.kind == "recitation"
    assert m.length == words(HAVERSINE)  # the maximal common span is exactly the function
    assert m.suggestion_words == m.length
    assert m.text == HAVERSINE.rstrip("\n")
    last = HAVERSINE.rstrip("\n").split("\n")
    assert m.range.to_dict() == {
        "start": {"line": 0, "character": 0},
        "end": {"line": len(last) - 1, "character": len(last[-1])},
    }
    # geo.py in two repositories (one unique document) + routes.py
    assert m.file_count == 3
    assert m.file_count_exact is True
    a, b = line_of(GEO, HAVERSINE), line_of(GEO, HAVERSINE, last=True)
    by_repo = {s.repository: s for s in m.sources}
    acme = by_repo["acme/widgets"]
    assert acme.path == "src/geo.py"
    assert acme.license == "MIT"
    assert (acme.start_line, acme.end_line) == (a, b)
    assert acme.url == (
        f"https://github.com/acme/widgets/blob/{corpus['acme_sha']}/src/geo.py#L{a}-L{b}"
    )
    fork = by_repo["other/fork"]
    assert fork.license == "Apache-2.0"
    assert fork.url.endswith(f"/other/fork/blob/{corpus['fork_sha']}/lib/geo.py#L{a}-L{b}")
    routes = next(s for s in m.sources if s.path == "routes.py")
    assert routes.license == "NOASSERTION"
    assert routes.url == ""  # no remote: no link
    ra, rb = line_of(ROUTES, HAVERSINE), line_of(ROUTES, HAVERSINE, last=True)
    assert (routes.start_line, routes.end_line) == (ra, rb)
    assert describe_match(m) == (
        f"Quoted: acme/widgets src/geo.py L{a}\u2013L{b} \u00b7 MIT \u00b7 {m.length} words "
        "\u00b7 3 files"
    )


def test_span_reaching_back_into_context_counts_those_words(corpus):
    idx = corpus["index"]
    cut = HAVERSINE.index("    dlat = lat2 - lat1")
    context, suggestion = HAVERSINE[:cut], HAVERSINE[cut:]
    (m,) = idx.match(suggestion, context)
    assert m.length == words(HAVERSINE)
    assert m.suggestion_words == words(suggestion)
    assert m.range.start.line == 0 and m.range.start.character == 4
    assert m.text == HAVERSINE.rstrip("\n")


def test_a_long_context_keeps_its_last_words_and_places_the_span_in_it(corpus, monkeypatch):
    """Context past MAX_CONTEXT_WORDS is left out; a span reaching back into what is kept
    starts at the right character of the whole context (and of non-ASCII text too)."""
    from index_tools.match import matcher

    monkeypatch.setattr(matcher, "MAX_CONTEXT_WORDS", 40)
    idx = corpus["index"]
    cut = HAVERSINE.index("    dlat = lat2 - lat1")
    for before in ("x = [1, 2, 3]\n" * 50, "é = 'ü'\n" * 50):
        context, suggestion = before + HAVERSINE[:cut], HAVERSINE[cut:]
        (m,) = idx.match(suggestion, context)
        kept = tokenize(context)[-40:]  # the quote's first word is the first one kept
        assert m.length == len(kept) + words(suggestion)
        assert m.char_start == kept[0].start
        assert m.text == context[kept[0].start :] + suggestion.rstrip("\n")
        assert m.suggestion_words == words(suggestion)


def test_context_only_match_is_not_reported(corpus):
    idx = corpus["index"]
    assert idx.match("x = 1\n", HAVERSINE) == []


def test_min_tokens_threshold(corpus):
    idx = corpus["index"]
    n = words(HAVERSINE)
    assert idx.match(HAVERSINE, min_tokens=n + 1) == []
    assert len(idx.match(HAVERSINE, min_tokens=n)) == 1


def test_whole_file_match_and_kinds(corpus):
    idx = corpus["index"]
    (m,) = idx.match(REGEX_TABLE, min_tokens=30)
    assert m.kind == "repetitive"
    assert m.file_count == 1
    license_text = MIT + "\n"
    # the LICENSE file itself is not indexed (not code); a license header in code is
    assert idx.match(license_text, min_tokens=30) == []


def test_utf16_range_after_astral_characters(corpus):
    idx = corpus["index"]
    prefix = "# 🚀🚀 rover 𝔘 "  # two astral emoji + a mathematical letter: 2 UTF-16 units each
    suggestion = prefix + HAVERSINE
    (m,) = idx.match(suggestion)
    assert m.range.start.line == 0
    assert m.range.start.character == len(prefix) + 3  # three astral characters
    assert m.length == words(HAVERSINE)


def test_renamed_copy_below_threshold_is_not_reported(corpus):
    idx = corpus["index"]
    renamed = HAVERSINE.replace("dlat", "d_lat").replace("dlon", "d_lon")
    assert idx.match(renamed) == []


@pytest.mark.parametrize("suggestion", ["", "x", "    \n\t"])
def test_empty_and_tiny_suggestions(corpus, suggestion):
    assert corpus["index"].match(suggestion, "import os\n") == []


def test_million_word_suggestion(corpus):
    idx = corpus["index"]
    filler = "value = compute(alpha, beta) + 1\n" * 100_000  # 1,000,000 words
    big = filler + HAVERSINE
    assert len(tokenize(big)) > 1_000_000
    (m,) = idx.match(big)
    assert m.length == words(HAVERSINE)


@pytest.mark.parametrize("crowded", [False, True], ids=["enumerated", "from-counts"])
def test_copies_are_counted_exactly_and_only_the_listing_is_bounded(tmp_path, monkeypatch, crowded):
    from engine_fixtures import make_repo

    from index_tools.match import suffix

    if crowded:  # every anchor's places counted, none read one by one
        monkeypatch.setattr(suffix, "ENUMERATE", 0)
        monkeypatch.setattr(suffix, "READ_PLACES", 0)
    repos = []
    for i in range(5):
        body = f"# copy {i}\nVERSION = {i}\n\n{HAVERSINE}\nprint({i})\n"
        repo, _ = make_repo(tmp_path / f"r{i}", {"geo.py": body}, f"https://github.com/o/r{i}")
        repos.append(str(repo))
    out = tmp_path / "idx"
    build_index(repos, out, BuildOptions(jobs=1, progress=False))
    with open_index(out) as idx:
        (m,) = idx.match(HAVERSINE, max_sources=2)
        assert m.file_count_exact is True
        assert m.file_count == 5 and len(m.sources) == 2
        assert m.length == words(HAVERSINE)
        assert describe_match(m).endswith("\u00b7 5 files")


def test_nested_quote_found_in_more_files_is_a_part_of_one_match(corpus):
    idx = corpus["index"]
    (m,) = idx.match(GEO)  # one quoted region, one match
    assert m.length == words(GEO)
    assert m.file_count == 2  # acme/widgets and its identical copy in other/fork
    assert m.file_count_exact is True
    assert {s.repository for s in m.sources} == {"acme/widgets", "other/fork"}
    (part,) = m.parts
    assert part.length == words(HAVERSINE) + 1  # both files go on with `def`
    assert part.file_count == 3  # the function alone is also in routes.py
    assert part.file_count_exact is True
    assert "routes.py" in {s.path for s in part.sources}
    assert part.range.start.line == GEO[: GEO.index(HAVERSINE)].count("\n")
    assert m.to_dict()["parts"][0]["file_count"] == 3
    assert "1 nested part (up to " in describe_match(m)


def test_a_part_left_for_later_is_made_as_the_lookup_would_have_made_it(corpus):
    """`defer_parts`: the part's kind and sources are made when first read (the server
    reads them after its diagnostic), the same as made at once; everything else at once;
    a pickled part carries its values."""
    import pickle

    idx = corpus["index"]
    (whole,) = idx.match(GEO)
    (m,) = idx.match(GEO, defer_parts=True)
    # the region is its primary span: its parts are searched when first read
    assert not m.parts_made and m.parts_later is not None and m.outer_parts() == []
    assert m.to_dict(parts_listed=False)["parts"] is None
    assert describe_match(m) == describe_match(whole, parts=False)
    (part,) = m.parts
    assert m.parts_made and m.parts_later is None
    assert not part.settled and part.later is not None
    assert (m.kind, m.file_count, m.sources) == (whole.kind, whole.file_count, whole.sources)
    assert (part.file_count, part.range) == (3, whole.parts[0].range)  # (counted at once)
    assert part.sources == whole.parts[0].sources  # (made here, the kind with them)
    assert part.settled and part.kind == whole.parts[0].kind
    assert m.to_dict() == whole.to_dict()
    assert describe_match(m) == describe_match(whole)
    (again,) = idx.match(GEO, defer_parts=True)
    assert pickle.loads(pickle.dumps(again.parts[0])) == whole.parts[0]
    assert again.parts[0].settled and again.parts[0].later is None
    (unread,) = idx.match(GEO, defer_parts=True)
    assert pickle.loads(pickle.dumps(unread)).to_dict() == whole.to_dict()
    assert unread.parts_made and unread.parts_later is None


def test_a_part_whose_making_fails_says_so_each_time_it_is_read():
    """A deferred part whose making fails (its index damaged or closed) raises when read,
    again when read again: never an empty list of sources."""
    from index_tools.model import Later, Part

    calls = []

    def make():
        calls.append(1)
        raise OSError("index closed")

    part = Part(Part.LATER, 60, 0, 60, 3, True, Part.LATER, later=Later(make))
    for _ in range(2):
        with pytest.raises(OSError, match="index closed"):
            _ = part.sources
        with pytest.raises(OSError):
            _ = part.kind
    assert len(calls) == 4 and not part.settled
    assert part.length == 60 and part.file_count == 3  # (what was made at once reads as ever)


def test_a_part_inside_the_quote_lists_a_few_files_and_counts_them_all(tmp_path):
    """A nested part (boilerplate inside the quoted function) lists PART_SOURCES of its
    files, the primary span up to max_sources; both counts stay exact."""
    from engine_fixtures import make_repo

    from index_tools.match.matcher import PART_SOURCES

    repos = []
    for i in range(8):  # the haversine function alone, in eight repositories
        body = f"# copy {i}\nVALUE = {i}\n\n{HAVERSINE}\nprint({i})\n"
        repo, _ = make_repo(tmp_path / f"h{i}", {"geo.py": body}, f"https://github.com/o/h{i}")
        repos.append(str(repo))
    quoted = f"import os\nimport sys\n\nSETTINGS = os.environ\n\n{HAVERSINE}\n\nmain(sys.argv)\n"
    for i in range(2):  # the whole module, twice
        repo, _ = make_repo(tmp_path / f"m{i}", {"app.py": quoted}, f"https://github.com/o/m{i}")
        repos.append(str(repo))
    build_index(repos, tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(quoted, max_sources=10)
        assert (m.file_count, len(m.sources)) == (2, 2)
        (part,) = m.parts
        assert part.file_count == 10 and part.file_count_exact is True
        assert len(part.sources) == PART_SOURCES
        # the files the quote itself lists come last: the part lists other ones
        assert {s.repository for s in part.sources}.isdisjoint({"o/m0", "o/m1"})


@pytest.mark.parametrize(("whole", "alone", "shown"), [(4, 1, True), (5, 1, False), (3, 0, False)])
def test_a_part_is_shown_when_a_quarter_more_files_hold_it(tmp_path, whole, alone, shown):
    """The function inside the quoted module gets its own line when it is held by at least
    a quarter more documents than the whole module (5 against 4); 6 against 5 is the same
    count to a reader: the module's line says it, and counting stays exact either way."""
    from engine_fixtures import make_repo

    quoted = f"import os\nimport sys\n\nSETTINGS = os.environ\n\n{HAVERSINE}\n\nmain(sys.argv)\n"
    repos = []
    for i in range(whole):  # the whole module (files that differ: identical ones are one text)
        module = f"# module {i}\n{quoted}"
        repo, _ = make_repo(tmp_path / f"m{i}", {"app.py": module}, f"https://github.com/o/m{i}")
        repos.append(str(repo))
    for i in range(alone):  # the function alone
        body = f"# copy {i}\nVALUE = {i}\n\n{HAVERSINE}\nprint({i})\n"
        repo, _ = make_repo(tmp_path / f"h{i}", {"geo.py": body}, f"https://github.com/o/h{i}")
        repos.append(str(repo))
    build_index(repos, tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(quoted)
        assert m.file_count == whole and m.file_count_exact is True
        assert m.length == words(quoted)
        if shown:
            (part,) = m.parts
            assert part.file_count == whole + alone and part.file_count_exact is True
            assert "o/h0" in {s.repository for s in part.sources}
            assert f"1 nested part (up to {whole + alone} files)" in describe_match(m)
        else:
            assert m.parts == []


def test_code_under_a_shorter_separator_line_gets_one_line(tmp_path):
    """A quoted function under a line of 70 `#` is in one file as it is; 12 files hold the
    same function under a line of another length (40 to 62 `#`). The shorter lines are the
    same text to a reader: one part says it, held by the 13 files, not a part for each
    length of the line (each a quarter more files than the one before)."""
    from engine_fixtures import make_repo

    quoted = "#" * 70 + f"\n{HAVERSINE}\n"
    repos = []
    for i, bar in enumerate([70] + [40 + 2 * k for k in range(12)]):
        body = f"VALUE = {i}\n" + "#" * bar + f"\n{HAVERSINE}\nprint({i})\n"
        repo, _ = make_repo(tmp_path / f"r{i}", {"geo.py": body}, f"https://github.com/o/r{i}")
        repos.append(str(repo))
    build_index(repos, tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(quoted)
        assert m.length == words(quoted) and m.file_count == 1
        (part,) = m.parts  # the function under the shortest line common to all
        assert part.file_count == 13 and part.file_count_exact is True
        assert part.length == words(HAVERSINE) + 40
        assert part.query_end == m.query_end


def test_a_shifted_separator_line_is_one_text(tmp_path):
    """A line `# ---- #` between two quoted functions; 10 other files hold lines of 66 to
    69 `-` before other code. Shifted into each other, the lines share runs at every
    shift: a part for each shift and length (6 before) would say the same thing. Shown:
    the whole line (3 files hold a line of 68) and the longest part all 11 files hold."""
    from engine_fixtures import make_repo

    quoted = f"{HAVERSINE}\n# " + "-" * 68 + f" #\n{ROUTES}\n"
    repos = []
    repo, _ = make_repo(tmp_path / "q", {"geo.py": quoted}, "https://github.com/o/q")
    repos.append(str(repo))
    for i in range(10):
        body = f"def f{i}():\n    return {i}\n# " + "-" * (66 + i % 4) + f" #\nX{i} = {i}\n"
        repo, _ = make_repo(tmp_path / f"s{i}", {"s.py": body}, f"https://github.com/o/s{i}")
        repos.append(str(repo))
    build_index(repos, tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(quoted)
        assert m.file_count == 1 and m.length == words(quoted)
        h = words(HAVERSINE)
        got = [(p.query_start, p.query_end, p.file_count, p.file_count_exact) for p in m.parts]
        assert got == [(h, h + 70, 3, True), (h, h + 67, 11, True)]


def _statements(first: int, last: int) -> str:
    return "".join(f"v{3 * i} = v{3 * i + 1} + v{3 * i + 2}\n" for i in range(first, last))


def _two_quotes(tmp_path):
    """An index of two repositories, `long` holding statements 0-19 and `other` 15-29:
    statements 0-29 are one region, its primary span long.py's (100 words), a part
    reaching past it other.py's (75 words)."""
    long, _ = make_repo(tmp_path / "long", {"src/long.py": _statements(0, 20)},
                        "https://github.com/acme/long")  # fmt: skip
    other, _ = make_repo(tmp_path / "other", {"lib/other.py": "x = 1\n" + _statements(15, 30)},
                         "https://github.com/acme/other")  # fmt: skip
    build_index([str(long), str(other)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    return open_index(tmp_path / "idx")


def test_a_part_reaching_past_its_primary_span_is_made_when_an_attribution_asks(tmp_path):
    """`defer_parts` leaves every region's parts for later, a region reaching past its
    primary span's too: its range, count and sources say nothing of them. A part reaching
    past the primary span, a quote of its own, is made with its kind and sources, listed
    in full, when `outer_parts` asks (an attribution must name its sources too): the same
    as made at once."""
    with _two_quotes(tmp_path) as idx:
        (whole,) = idx.match(_statements(0, 30), "", 20)
        (m,) = idx.match(_statements(0, 30), "", 20, defer_parts=True)
        assert not m.parts_made and m.reaches_past_primary
        assert (m.query_start, m.query_end, m.primary_start, m.primary_end) == (0, 150, 0, 100)
        assert (m.file_count, m.sources) == (whole.file_count, whole.sources)
        assert describe_match(m) == describe_match(whole, parts=False)
        assert m.to_dict(parts_listed=False)["parts"] is None
        (outer,) = m.outer_parts()
        assert m.parts_made and outer.settled and (outer.query_start, outer.query_end) == (75, 150)
        assert {s.path for s in outer.sources} == {"lib/other.py"}
        assert describe_match(m).endswith("1 nested part (up to 1 file)")
        assert m.to_dict() == whole.to_dict()


def test_a_verdict_reads_the_parts_past_a_primary_span_only_once_its_sources_are_named(
    tmp_path,
):
    """The verdict on a region whose parts were left for later: not attributed while no
    line names the primary span's file, its parts not made (most quotes are never
    attributed); a line naming it makes them, and the region is attributed once a line
    names the part's file too. Allowed sources likewise."""
    from index_tools import Decisions, QuoteIdentity, judge

    text = _statements(0, 30)
    lines = text.splitlines()
    q = QuoteIdentity.of_text(text)

    def verdict(m, above=(), decisions=None):
        return judge(m, q, decisions, lambda kind: "warning", [*above, *lines], len(above),
                     len(above) + len(lines) - 1)  # fmt: skip

    long_, other = "# Adapted from acme/long src/long.py", "# and acme/other lib/other.py"
    with _two_quotes(tmp_path) as idx:
        (m,) = idx.match(text, "", 20, defer_parts=True)
        assert verdict(m).state == "open" and not m.parts_made
        assert verdict(m, [other]).state == "open" and not m.parts_made
        assert verdict(m, [long_]).state == "open" and m.parts_made
        assert verdict(m, [long_, other]).state == "attributed"
        (m,) = idx.match(text, "", 20, defer_parts=True)
        assert verdict(m, decisions=Decisions(allowed=("acme/other",))).state == "open"
        assert not m.parts_made
        assert verdict(m, decisions=Decisions(allowed=("acme/long",))).state == "open"
        assert m.parts_made
        assert verdict(m, decisions=Decisions(allowed=("acme/*",))).state == "allowed"


def test_parts_whose_making_fails_say_so_each_time_they_are_read():
    """A region's parts left for later whose making fails (its index damaged or closed)
    raise when read, again when read again: never an empty list; the diagnostic's data
    says they are not known (`null`), its message says nothing of them."""
    from index_tools import Decisions, QuoteIdentity, judge
    from index_tools.model import Later, Match

    calls = []

    def make():
        calls.append(1)
        raise OSError("index closed")

    m = Match("recitation", 60, 0, 60, 0, 100, "x", 3, True, parts=Match.LATER,
              parts_later=Later(make))  # fmt: skip
    for _ in range(2):
        with pytest.raises(OSError, match="index closed"):
            _ = m.parts
    assert len(calls) == 2 and not m.parts_made and not m.settled
    assert m.to_dict(parts_listed=False)["parts"] is None and m.outer_parts() == []
    assert describe_match(m).endswith("\u00b7 60 words \u00b7 3 files")
    # a region reaching past its primary span: the verdict cannot look at its parts for an
    # attribution, and says so; the quote stays open at its severity
    wide = Match("recitation", 60, 0, 60, 0, 100, "x", 3, True, primary_start=10,
                 primary_end=60, parts=Match.LATER, parts_later=Later(make))  # fmt: skip
    with pytest.raises(OSError, match="index closed"):
        wide.outer_parts()
    v = judge(wide, QuoteIdentity.of_text("x"), Decisions(allowed=("*",)), lambda k: "warning")
    assert (v.action, v.state) == ("warning", "open")
    assert v.reason.endswith("(its parts past the primary span could not be read: index closed)")


def test_a_regions_parts_read_by_two_threads_at_once_are_made_once(corpus):
    """The hover (the event loop's thread) and the server's settling (the index's worker)
    can read a region's parts at once: one makes them, the other waits and reads the same
    list."""
    import threading

    idx = corpus["index"]
    (whole,) = idx.match(GEO)
    (m,) = idx.match(GEO, defer_parts=True)
    assert not m.parts_made
    make, calls, started = m.parts_later._make, [], threading.Event()

    def slow():
        calls.append(1)
        started.set()
        threading.Event().wait(0.2)  # (the other thread reads meanwhile)
        return make()

    m.parts_later._make = slow
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(m.parts)) for _ in range(2)]
    threads[0].start()
    started.wait(5)
    threads[1].start()
    for t in threads:
        t.join(10)
    assert len(calls) == 1 and len(seen) == 2 and seen[0] is seen[1]
    assert m.to_dict() == whole.to_dict()


@pytest.mark.parametrize("at_once", [1, 7, 1 << 21])
def test_each_spans_runs_are_each_documents_longest_around_it(monkeypatch, at_once):
    """A lookup's distinct spans, each with the runs around it, one a document (its longest;
    of equal ones the first in its file, then the first found), found for all spans at once
    in steps of any size, or for the span first asked alone first: as the definition gives
    them on random runs, asked in any order."""
    import numpy as np

    from index_tools.match import matcher

    monkeypatch.setattr(matcher, "HELD_AT_ONCE", at_once)
    rng = np.random.default_rng(11)
    for _ in range(400):
        n = int(rng.integers(1, 120))
        s = rng.integers(0, int(rng.integers(2, 80)), n)
        e = s + rng.integers(1, 40, n)
        docs = rng.integers(0, int(rng.integers(1, 12)), n)
        table = np.stack((s, e, docs, rng.integers(0, 50, n)), axis=1).astype(np.int64)
        got = matcher._spans(table, exact=True, alone_first=bool(rng.integers(2)))
        firsts = list(dict.fromkeys(zip(s.tolist(), e.tolist())))
        assert [(x.start, x.end) for x in got] == firsts
        for j in rng.permutation(len(got)).tolist():  # (the first asked: found alone)
            span = got[j]
            around = [i for i in range(n) if s[i] <= span.start and e[i] >= span.end]
            best: dict[int, int] = {}
            for i in around:  # each document's longest; ties: first in the file, then found
                d = int(docs[i])
                key = (-(e[i] - s[i]), table[i, 3], i)
                if d not in best or key < (-(e[best[d]] - s[best[d]]), table[best[d], 3], best[d]):
                    best[d] = i
            assert span.held_at().tolist() == [best[d] for d in sorted(best)]
