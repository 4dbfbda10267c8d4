"""Bounded work per lookup whatever the input: long identifier-only and highly repetitive
queries stay within a memory bound, and what a budget leaves out makes counts lower
bounds, never "exact"."""

from __future__ import annotations

import tracemalloc

import pytest

from index_tools import BuildOptions, build_index, open_index, tokenize

MEMORY_BOUND = 400 * 2**20  # bytes allocated at peak by one lookup


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("budgets")
    src = root / "src"
    src.mkdir()
    # a long list of names (rename-insensitive: one identifier after another) and a file
    # that repeats one word: the worst cases for the two views
    (src / "names.py").write_text("\n".join(f"name{i}" for i in range(20_000)) + "\n")
    (src / "repeats.py").write_text("x\n" * 20_000)
    build_index([str(src)], root / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(root / "idx") as idx:
        yield idx


def peak_of(fn):
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("language", [None, "python"])
def test_identifier_only_query_is_bounded(index, language):
    text = "\n".join(f"other{i}" for i in range(30_000))
    matches, peak = peak_of(lambda: index.match(text, language=language))
    assert peak < MEMORY_BOUND
    if language:
        # renamed copies of a list of names are not code: nothing to say
        assert matches == []


@pytest.mark.parametrize("language", [None, "python"])
def test_repetitive_query_is_bounded_and_honest(index, language):
    matches, peak = peak_of(lambda: index.match("x\n" * 30_000, language=language))
    assert peak < MEMORY_BOUND
    (m,) = matches
    assert [s.path for s in m.sources] == ["repeats.py"]
    # thousands of equal diagonals exceed the verification budget: the count is said to
    # be a lower bound, and the span is a real common run
    assert not m.file_count_exact
    assert 60 <= m.primary_length <= 20_000
    assert len(m.parts) <= 32


def test_short_repetitive_query_is_whole(index):
    # within the budget the same repetition gives the whole run; its only k-gram has more
    # postings than the cap, so the count is a lower bound
    (m,) = index.match("x\n" * 300)
    assert m.length == m.primary_length == 300
    assert m.file_count == 1 and not m.file_count_exact


def test_budget_left_out_documents_make_lower_bounds(tmp_path, monkeypatch):
    from index_tools.match import matcher

    src = tmp_path / "src"
    src.mkdir()
    body = "".join(f"total_{i} = compute(values[{i}], weight_{i})\n" for i in range(12))
    for i in range(6):
        (src / f"copy{i}.py").write_text(f"# copy {i}\n" + body)
    build_index([str(src)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(body)
        assert m.file_count == 6 and m.file_count_exact
        assert m.length == len(tokenize(body))
        monkeypatch.setattr(matcher, "MAX_DOCUMENTS", 3)
        (m,) = idx.match(body)
        assert m.file_count == 3 and not m.file_count_exact
        monkeypatch.setattr(matcher, "MAX_DOCUMENTS", 4096)
        monkeypatch.setattr(matcher, "MAX_DIAGONALS", 2)
        (m,) = idx.match(body)
        assert m.file_count == 2 and not m.file_count_exact
        # the span itself stays whole
        assert m.length == len(tokenize(body))
