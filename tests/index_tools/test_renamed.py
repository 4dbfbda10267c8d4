"""Copies with renamed identifiers: found, attributed, listed, and not confused with code
that merely has the same shape."""

from __future__ import annotations

import itertools
import re

import pytest
from engine_fixtures import GEO, HAVERSINE, ROUTES, line_of, make_corpus

from index_tools import BuildOptions, build_index, describe_match, open_index, tokenize
from index_tools.text.normalize import IDENT, identifier_mask, keywords, normalize_words

RENAMES = {"lat1": "a", "lon1": "b", "lat2": "c", "lon2": "d", "dlon": "dx", "dlat": "dy"}


def rename(text: str, names: dict[str, str]) -> str:
    return re.sub(r"\b\w+\b", lambda m: names.get(m.group(), m.group()), text)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("renamed")
    info = make_corpus(tmp)
    out = tmp / "index"
    build_index(info["repos"], out, BuildOptions(jobs=1, progress=False))
    info["index"] = open_index(out)
    yield info
    info["index"].close()


def test_keywords_come_from_the_grammars():
    for lang in ("python", "javascript", "typescript", "java", "go", "c", "cpp", "rust"):
        kws = keywords(lang)
        assert kws, lang
    assert {"def", "return", "lambda", "None"} <= keywords("python")
    assert {"function", "const", "return"} <= keywords("javascript")
    assert {"fn", "impl", "let"} <= keywords("rust")
    assert normalize_words(["def", "f", "(", "x", ")", ":", "return", "x", "+", "1"], "python") == [
        "def", IDENT, "(", IDENT, ")", ":", "return", IDENT, "+", "1",
    ]  # fmt: skip
    assert normalize_words(["x"], "cobol") is None
    assert identifier_mask(["let", "x", "=", "42"], "rust").tolist() == [False, True, False, False]


def test_renamed_copy_is_reported_with_its_renames(corpus):
    idx = corpus["index"]
    renamed = rename(HAVERSINE, RENAMES)
    assert idx.match(renamed) == []  # without the language: exact matching only
    (m,) = idx.match(renamed, "import math\n", language="python")
    assert m.exact is False
    assert m.length == len(tokenize(HAVERSINE))
    assert dict(m.renamed) == RENAMES
    assert m.file_count == 3
    acme = next(s for s in m.sources if s.repository == "acme/widgets")
    a, b = line_of(GEO, HAVERSINE), line_of(GEO, HAVERSINE, last=True)
    assert acme.url.endswith(f"/src/geo.py#L{a}-L{b}")
    text = describe_match(m)
    assert text.startswith("Renamed copy: ")
    assert "lat1 \u2192 a" in text
    d = m.to_dict()
    assert d["exact"] is False and {"from": "lat1", "to": "a"} in d["renamed"]


def test_exact_copy_is_not_reported_twice(corpus):
    ms = corpus["index"].match(HAVERSINE, language="python")
    assert len(ms) == 1 and ms[0].exact is True and ms[0].renamed == []


def test_inconsistent_renaming_is_not_a_copy(corpus):
    """Replacing every identifier by whatever name keeps the shape but is no renaming."""
    counter = iter(range(10_000))
    scrambled = re.sub(
        r"\b(lat1|lon1|lat2|lon2|dlon|dlat|a|c|r)\b", lambda m: f"v{next(counter)}", HAVERSINE
    )
    assert corpus["index"].match(scrambled, language="python") == []


def test_renamed_copy_inside_other_code(corpus):
    idx = corpus["index"]
    body = rename(ROUTES, {"points": "pts", **RENAMES})
    ms = [m for m in idx.match(body, language="python") if not m.exact]
    assert ms and all(len(m.renamed) >= 1 for m in ms)
    assert any(s.path == "routes.py" for m in ms for s in m.sources)


def test_index_without_renamed_fingerprints(tmp_path):
    info = make_corpus(tmp_path / "c")
    out = tmp_path / "idx"
    build_index(info["repos"], out, BuildOptions(jobs=1, progress=False, renamed=False))
    with open_index(out) as idx:
        assert idx.header.renamed_languages == []
        assert not list(idx.gen.glob("renamed-*.mdb"))
        assert idx.match(rename(HAVERSINE, RENAMES), language="python") == []


def test_shards_of_both_id_widths_answer_alike(corpus, tmp_path, monkeypatch):
    """Shards of 4-byte ids (a vocabulary past 2**24 words) beside 3-byte ones give the
    same renamed and exact copies with the same files as an index of 3-byte ids."""
    from index_tools.build import suffix

    widths = itertools.cycle((4, 3))
    monkeypatch.setattr(suffix, "id_width", lambda max_id: next(widths))
    out = tmp_path / "mixed"
    build_index(corpus["repos"], out, BuildOptions(jobs=1, progress=False, shard_words=300))
    renamed = rename(HAVERSINE, RENAMES)
    with open_index(out) as idx:
        assert idx.header.shards > 2 and set(idx.header.shard_id_bytes) == {3, 4}
        assert set(corpus["index"].header.shard_id_bytes) == {3}
        for text, context in ((renamed, "import math\n"), (HAVERSINE, ""), (ROUTES, "")):
            got = idx.match(text, context, language="python")
            want = corpus["index"].match(text, context, language="python")
            assert got and [m.to_dict() for m in got] == [m.to_dict() for m in want]


def test_rare_words_share_an_id_and_are_compared_in_the_documents(corpus, tmp_path, monkeypatch):
    """The view stores every word past RARE_ID as RARE_ID (2 bytes a word): with every word
    rare, punctuation and numbers included, renamed copies are what they are with none, and
    a copy with one number changed is cut there, not reported across it."""
    from index_tools.store import shards

    changed = rename(HAVERSINE, RENAMES).replace("6371", "6372")
    assert changed != rename(HAVERSINE, RENAMES)
    queries = [(rename(HAVERSINE, RENAMES), "import math\n"), (changed, "import math\n")]
    queries.append((rename(ROUTES, {"points": "pts", **RENAMES}), ""))
    want = [
        [m.to_dict() for m in corpus["index"].match(q, c, language="python")] for q, c in queries
    ]
    monkeypatch.setattr(shards, "RARE_ID", shards.FIRST_WORD_ID)  # building and looking up
    out = tmp_path / "all-rare"
    build_index(corpus["repos"], out, BuildOptions(jobs=1, progress=False))
    with open_index(out) as idx:
        got = [[m.to_dict() for m in idx.match(q, c, language="python")] for q, c in queries]
    assert got == want
    assert want[0][0]["exact"] is False and want[0][0]["length"] == len(tokenize(HAVERSINE))
    # the renamed copy stops right before the changed number (query words count the context)
    number = len(tokenize("import math\n")) + len(tokenize(changed.split("6372")[0]))
    renamed = [m for m in want[1] if not m["exact"]]
    assert renamed and renamed[0]["query_end"] == number
    assert all(not (m["query_start"] <= number < m["query_end"]) for m in renamed)


def test_copies_alike_are_each_placed_in_their_own_file(tmp_path):
    """The same function in five files, each after another number of blank lines (the
    same words: runs alike, their parts found once), renamed in the suggestion: one
    renamed copy in 5 files, each source's lines those of its own file (its last line
    3 lines further in each)."""
    from engine_fixtures import make_repo

    files = {f"src/geo{k}.py": "import math\n" + "\n" * (3 * k) + HAVERSINE for k in range(5)}
    repo, _ = make_repo(tmp_path / "repo", files, "https://github.com/acme/alike.git")
    build_index([str(repo)], tmp_path / "idx", BuildOptions(jobs=1, progress=False))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(rename(HAVERSINE, RENAMES), "import math\n", language="python")
        assert m.exact is False and dict(m.renamed) == RENAMES
        assert m.file_count == 5
        assert sorted(s.path for s in m.sources) == sorted(files)
        for s in m.sources:  # (the quote begins at the context's `import math`, line 1)
            last = line_of(files[s.path], HAVERSINE, last=True)
            assert (s.start_line, s.end_line) == (1, last), s.path
            assert s.url.endswith(f"/{s.path}#L1-L{last}")
