"""merge_matches: one region per quote across indexes."""

from __future__ import annotations

from index_tools import Match, Position, Range, Source, merge_matches

QUERY = "a b c d e f g h i j k l m n o p"  # word i is at character 2*i


def match(start: int, end: int, repo: str, files: int = 1, exact: bool = True) -> Match:
    text = QUERY[2 * start : 2 * end - 1]
    return Match(
        kind="recitation",
        length=end - start,
        query_start=start,
        query_end=end,
        char_start=2 * start,
        char_end=2 * end - 1,
        text=text,
        file_count=files,
        file_count_exact=exact,
        sources=[Source(repo, "f.py", "c0", "MIT", "", 1, 1)],
        range=Range(Position(0, 2 * start), Position(0, 2 * end - 1)),
        suggestion_words=end - start,
    )


def test_disjoint_matches_stay_apart_in_query_order():
    merged = merge_matches([match(8, 12, "local")], [match(0, 4, "remote")])
    assert [(m.query_start, m.sources[0].repository) for m in merged] == [
        (0, "remote"),
        (8, "local"),
    ]


def test_overlapping_matches_become_one_region_with_both_sources():
    (m,) = merge_matches([match(0, 6, "local")], [match(4, 14, "remote", files=3)])
    assert (m.query_start, m.query_end, m.length) == (0, 14, 14)
    assert (m.char_start, m.char_end) == (0, 27)
    assert m.text == QUERY[0:27]  # the words of both, once
    assert m.range == Range(Position(0, 0), Position(0, 27))
    assert m.suggestion_words == 14
    assert m.sources[0].repository == "remote"  # the longest span leads
    assert [s.repository for s in m.sources] == ["remote", "local"]
    assert m.file_count == 3 and m.file_count_exact
    assert [(p.query_start, p.query_end) for p in m.parts] == [(0, 6)]


def test_the_same_span_in_both_is_a_lower_bound_count():
    (m,) = merge_matches([match(2, 9, "local", files=2)], [match(2, 9, "remote", files=5)])
    assert m.file_count == 5 and not m.file_count_exact
    assert {s.repository for s in m.sources} == {"local", "remote"}
    assert m.parts == []
    # identical answers (the same index twice) stay exact
    (same,) = merge_matches([match(2, 9, "local", files=2)], [match(2, 9, "local", files=2)])
    assert same.file_count == 2 and same.file_count_exact and len(same.sources) == 1


def test_the_round_trip_through_json_keeps_what_the_cli_prints():
    m = match(1, 7, "local")
    assert Match.from_dict(m.to_dict()).to_dict() == m.to_dict()
