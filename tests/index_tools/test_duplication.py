"""Exact under duplication: copies with longer runs, self-similar files and thousands of
look-alikes give whole spans with exact counts, one match per quoted region — checked on
reproductions and against a brute-force reference on randomized corpora, both ways the
suffix arrays are read (places one by one, or counts alone), each with the compiled search and
the Python one."""

from __future__ import annotations

import itertools
import os
import random
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_regions, reference_renamed_spans, reference_spans

from index_tools import (
    BuildOptions,
    add_to_index,
    build_index,
    describe_match,
    open_index,
    tokenize,
)
from index_tools.cli.sarif import sarif_report

OPTS = dict(jobs=1, progress=False)
pytestmark = pytest.mark.usefixtures("search_path")  # every test on both search paths


def write_files(root: Path, files: dict[str, str]) -> str:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return str(root)


def words(text: str) -> int:
    return len(tokenize(text))


def statements(first: int, last: int) -> str:
    return "".join(f"v{3 * i} = v{3 * i + 1} + v{3 * i + 2}\n" for i in range(first, last))


def test_longer_copy_in_a_later_file_is_not_cut_short(tmp_path):
    # a.py holds statements 4-17 (70 words), b.py all 20 (100 words)
    corpus = write_files(tmp_path / "src", {"a.py": statements(3, 17), "b.py": statements(0, 20)})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(statements(0, 20))
        assert m.length == 100 and m.primary_length == 100
        assert m.file_count == 1 and m.file_count_exact
        assert [s.path for s in m.sources] == ["b.py"]
        assert (m.range.start.line, m.range.end.line) == (0, 19)
        (part,) = m.parts
        assert part.length == 70
        assert part.file_count == 2 and part.file_count_exact
        assert {s.path for s in part.sources} == {"a.py", "b.py"}
        assert (part.range.start.line, part.range.end.line) == (3, 16)
        # the same one result in SARIF, its part a related location with its own count
        (result,) = sarif_report([("src/x.py", m)], "0")["runs"][0]["results"]
        (loc,) = result["relatedLocations"]
        assert loc["physicalLocation"]["region"]["startLine"] == 4
        assert "70 words of it" in loc["message"]["text"] and "in 2 files" in loc["message"]["text"]
        assert result["properties"]["parts"][0]["file_count"] == 2


def pw_sum(name: str, n: int) -> str:
    return f"{name} = " + " + ".join(f"pw[{i}]" for i in range(n)) + "\n"


def test_self_similar_code_is_not_skipped(tmp_path):
    text = "import math\n" + pw_sum("a", 12) + pw_sum("b", 14) + "print(a, b)\n"
    corpus = write_files(tmp_path / "src", {"sums.py": text})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    line = pw_sum("b", 14)
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(line)
        assert m.length == words(line)
        assert m.file_count == 1 and m.file_count_exact
        assert m.sources[0].start_line == m.sources[0].end_line == 3
        assert not m.parts  # a's shorter run is in the same file: it adds none


GPL = """\
# This program is free software: you can redistribute it and/or modify
# it under the terms of the GNU General Public License as published by
# the Free Software Foundation, either version 3 of the License, or
# (at your option) any later version.
#
# This program is distributed in the hope that it will be useful,
# but WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
# GNU General Public License for more details.
#
# You should have received a copy of the GNU General Public License
# along with this program.  If not, see <https://www.gnu.org/licenses/>.
"""
AGPL = GPL.replace("GNU General", "GNU Affero General")


def test_look_alikes_do_not_hide_the_quote(tmp_path):
    files = {f"gpl_{i:03d}.py": f"{GPL}\nVALUE_{i} = {i}\n" for i in range(300)}
    files.update({f"zz_agpl_{i}.py": f"{AGPL}\nOTHER_{i} = {i}\n" for i in range(3)})
    corpus = write_files(tmp_path / "src", files)
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    query = "".join(AGPL.splitlines(keepends=True)[:7])
    assert words(query) >= 80
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(query)
        assert m.length == words(query)
        assert m.file_count == 3 and m.file_count_exact
        assert {s.path for s in m.sources} == {f"zz_agpl_{i}.py" for i in range(3)}
        (g,) = idx.match(GPL)
        assert g.length == words(GPL)
        assert g.file_count == 300 and g.file_count_exact
        # its tail is in the 3 AGPL files too: 1% more documents, no line of its own
        assert describe_match(g).endswith("\u00b7 300 files") and not g.parts


AGPL_TAIL = """\
# This program is distributed in the hope that it will be useful,
# but WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
# GNU Affero General Public License for more details.
#
# You should have received a copy of the GNU Affero General Public License
# along with this program.  If not, see <http"""


def test_agpl_tail_among_its_gpl_twins_is_one_match_in_exactly_700_files(tmp_path):
    """700 files carry the AGPL notice and 1,350 its GPL twin, each with its own copyright
    line and code: the notice's 74-word tail is one match in exactly 700 files."""
    rng = random.Random(25)

    def code(i: int) -> str:
        names = [f"{rng.choice('abcdefgh')}{rng.randrange(10**6)}" for _ in range(6)]
        return f"def f_{i}({names[0]}, {names[1]}):\n    return {' + '.join(names)}\n"

    files = {}
    # the notice as most files carry it: <http://www.gnu.org/licenses/>
    agpl, gpl = AGPL.replace("https:", "http:"), GPL.replace("https:", "http:")
    for i in range(700):
        notice = agpl.replace(
            "This program", f"Copyright (C) {2000 + i % 25} Author {i}\n# This program", 1
        )
        files[f"agpl/m{i:04d}.py"] = f"{notice}\n{code(i)}"
    for i in range(1350):
        notice = gpl.replace(
            "This program", f"Copyright (C) {1990 + i % 30} Person {i}\n# This program", 1
        )
        files[f"gpl/m{i:04d}.py"] = f"{notice}\n{code(10_000 + i)}"
    root = tmp_path / "src"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    build_index([str(root)], tmp_path / "idx", BuildOptions(**OPTS))
    assert words(AGPL_TAIL) == 74
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(AGPL_TAIL)
        assert m.length == 74
        assert m.file_count == 700 and m.file_count_exact
        assert all(s.path.startswith("agpl/") for s in m.sources)


# --- randomized corpora against the brute-force reference --------------------------------

IDENTS = [f"n{i}" for i in range(40)]
PUNCT = list("+-*/=()[]{};,.<>")
# words that open a definition: where a renamed copy's last line opens with one, it ends
HEADS = ["def", "class", "@"]


def random_words(rng: random.Random, n: int) -> list[str]:
    others = PUNCT + HEADS
    return [rng.choice(IDENTS) if rng.random() < 0.7 else rng.choice(others) for _ in range(n)]


def mutate(rng: random.Random, ws: list[str], edits: int) -> list[str]:
    ws = list(ws)
    for _ in range(edits):
        if ws:
            ws[rng.randrange(len(ws))] = rng.choice(IDENTS)
    return ws


def as_text(ws: list[str]) -> str:
    lines = [" ".join(ws[i : i + 8]) for i in range(0, len(ws), 8)]
    return "\n".join(lines) + "\n"


def random_corpus(rng: random.Random, look_alikes: int) -> list[list[str]]:
    """Files made the way public code is: shared segments (templates, vendored code) with
    small edits, files that repeat themselves, byte-identical copies, copies that go on
    longer, and many look-alikes of one segment."""
    segments = [random_words(rng, rng.randint(15, 70)) for _ in range(6)]
    files: list[list[str]] = []
    for _ in range(rng.randint(12, 30)):
        kind = rng.random()
        if files and kind < 0.15:  # a byte-identical copy
            files.append(list(rng.choice(files)))
        elif files and kind < 0.3:  # a copy that goes on longer on one or both sides
            base = rng.choice(files)
            files.append(random_words(rng, rng.randint(0, 20)) + base + random_words(rng, 15))
        elif kind < 0.45:  # self-similar: a segment, then most of it again, edited
            seg = rng.choice(segments)
            cut = rng.randint(len(seg) // 2, len(seg))
            again = mutate(rng, seg[:cut], rng.randint(0, 2))
            files.append(seg + random_words(rng, rng.randint(0, 5)) + again)
        else:  # pieces of segments with edits and filler
            ws: list[str] = []
            for _ in range(rng.randint(1, 4)):
                seg = rng.choice(segments)
                a = rng.randint(0, len(seg) // 3)
                ws += mutate(rng, seg[a:], rng.randint(0, 2)) + random_words(rng, rng.randint(0, 8))
            files.append(ws)
    seg = rng.choice(segments)
    for _ in range(look_alikes):
        files.append(random_words(rng, rng.randint(1, 6)) + mutate(rng, seg, rng.randint(0, 1)))
    return files


def random_query(rng: random.Random, files: list[list[str]]) -> tuple[list[str], int]:
    """Words of a query cut from one or two files (edited a little), and where its
    suggestion starts."""
    ws: list[str] = []
    for _ in range(rng.randint(1, 2)):
        f = rng.choice(files)
        a = rng.randint(0, max(0, len(f) - 20))
        ws += f[a : a + rng.randint(20, 160)] + random_words(rng, rng.randint(0, 4))
    if rng.random() < 0.5:
        ws = mutate(rng, ws, rng.randint(1, 3))
    return ws, rng.randint(0, len(ws) - 1)


def reported(matches) -> dict[tuple[int, int], tuple[int, bool]]:
    out = {}
    for m in matches:
        out[(m.primary_start, m.primary_end)] = (m.file_count, m.file_count_exact)
        for p in m.parts:
            out[(p.query_start, p.query_end)] = (p.file_count, p.file_count_exact)
    return out


def check_against_reference(tmp_path: Path, seed: int, min_tokens: int, shard_words: int) -> None:
    rng = random.Random(seed)
    files = random_corpus(rng, look_alikes=rng.randint(1, 40))
    texts = [as_text(f) for f in files]
    root = tmp_path / f"case-{seed}-{min_tokens}-{shard_words}-{uuid.uuid4().hex[:8]}"
    corpus = write_files(root / "src", {f"f{i:03d}.py": t for i, t in enumerate(texts)})
    build_index([corpus], root / "idx", BuildOptions(shard_words=shard_words, **OPTS))
    with open_index(root / "idx") as idx:
        agrees_with_reference(idx, rng, files, texts, min_tokens)


def agrees_with_reference(idx, rng, files: list[list[str]], texts: list[str], min_tokens: int):
    """Random queries cut from `files` answered as the reference answers them from `texts`
    (the indexed files)."""
    for _ in range(4):
        qwords, cut = random_query(rng, files)
        context, suggestion = as_text(qwords[:cut]), as_text(qwords[cut:])
        spans = reference_spans(texts, context, suggestion, min_tokens)
        matches = idx.match(suggestion, context, min_tokens=min_tokens)
        answers_alike_deferred(idx, matches, suggestion, context, min_tokens)
        got = reported(matches)
        for (a, b), (count, exact) in got.items():
            truth = spans.get((a, b))
            assert truth is not None, f"reported span {a}-{b} is not a maximal run"
            assert exact and count == truth.files, f"span {a}-{b}: {count} != {truth.files}"
        want = reference_regions(spans)
        # the same regions, primaries and parts, exactly
        assert [(m.query_start, m.query_end) for m in matches] == [(r.start, r.end) for r in want]
        for m, r in zip(matches, want):
            assert (m.primary_start, m.primary_end) == (r.primary.start, r.primary.end)
            assert [(p.query_start, p.query_end) for p in m.parts] == [
                (p.start, p.end) for p in r.parts
            ]
        # one warning per quoted region: matches never overlap
        for x, y in zip(matches, matches[1:]):
            assert x.query_end <= y.query_start


def answers_alike_deferred(idx, matches, suggestion, context, min_tokens, **options) -> None:
    """The lookup with its parts left for later (as the language server asks) answers as
    the one that made them at once, once read: every field; a region's parts are left,
    and the kinds and sources of parts inside a primary span; the parts reaching past it
    are made with theirs when an attribution asks (`outer_parts`)."""
    deferred = idx.match(suggestion, context, min_tokens, defer_parts=True, **options)
    assert len(deferred) == len(matches)
    for m, whole in zip(deferred, matches):
        if not m.parts_made:  # (every region of two spans or more: one of one span has none)
            assert m.to_dict(parts_listed=False)["parts"] is None
            outer = m.outer_parts()  # (made here for a region reaching past its primary span)
            assert m.parts_made is m.reaches_past_primary
            assert [p.to_dict() for p in outer] == [p.to_dict() for p in whole.outer_parts()]
            m.settle_parts()
        for p in m.parts:
            inside = m.primary_start <= p.query_start and p.query_end <= m.primary_end
            assert p.settled is not inside
    assert [m.to_dict() for m in deferred] == [m.to_dict() for m in matches]
    assert all(p.settled for m in deferred for p in m.parts)


def alternate(monkeypatch) -> None:
    """Shards written with 4-byte ids and 3-byte ids in turn (a real index has 4-byte ones
    only once its vocabulary passes 2**24 words)."""
    from index_tools.build import suffix

    widths = itertools.cycle((4, 3))
    monkeypatch.setattr(suffix, "id_width", lambda max_id: next(widths))


def check_replaced_against_reference(tmp_path: Path, seed: int, min_tokens: int) -> None:
    """Two folders indexed, then a new version of the first added: files dropped, edited,
    new, the same. Queries cut from every file, dropped ones too, are answered as the
    reference answers them from the files indexed now (the dropped files' documents are
    dead: no span, count or listing of theirs)."""
    rng = random.Random(seed)
    files = random_corpus(rng, look_alikes=rng.randint(1, 40))
    half = len(files) // 2
    first, second = files[:half], files[half:]
    root = tmp_path / f"replaced-{seed}-{min_tokens}-{uuid.uuid4().hex[:8]}"
    a = write_files(root / "a", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(first)})
    b = write_files(root / "b", {f"g{i:03d}.py": as_text(f) for i, f in enumerate(second)})
    build_index([a, b], root / "idx", BuildOptions(shard_words=300, **OPTS))
    kept: list[list[str]] = []
    for i, f in enumerate(first):
        path = root / "a" / f"f{i:03d}.py"
        fate = rng.random()
        if fate < 0.4:
            path.unlink()
            continue
        if fate < 0.6:
            f = mutate(rng, f, rng.randint(1, 3)) + random_words(rng, 3)
            path.write_text(as_text(f), encoding="utf-8")
        kept.append(f)
    for j in range(rng.randint(0, 3)):  # new files, some copies of files kept elsewhere
        f = list(rng.choice(second)) if rng.random() < 0.5 else random_words(rng, 40)
        (root / "a" / f"new{j}.py").write_text(as_text(f), encoding="utf-8")
        kept.append(f)
    summary = add_to_index(root / "idx", [a], BuildOptions(**OPTS))
    assert summary.replaced and summary.removed == len(first)
    texts = [as_text(f) for f in kept + second]
    with open_index(root / "idx") as idx:
        assert idx.header.files == len(texts)
        agrees_with_reference(idx, rng, files + kept, texts, min_tokens)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    min_tokens=st.sampled_from([10, 14, 25]),
    shard_words=st.sampled_from([150, 600, 1 << 27]),
)
def test_matcher_agrees_with_brute_force_reference(tmp_path, seed, min_tokens, shard_words):
    check_against_reference(tmp_path, seed, min_tokens, shard_words)


@pytest.mark.parametrize("crowded", [False, True], ids=["one-by-one", "from-counts"])
# RECITATION_REFERENCE_SEEDS=200 runs a longer comparison by hand
@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_reference_on_fixed_seeds(tmp_path, monkeypatch, seed, crowded):
    # an anchor's places are read one by one up to ENUMERATE, past it spans come from counts:
    # both ways agree with the reference (READ_PLACES 0: counts all the way)
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 0 if crowded else 10**9)
    monkeypatch.setattr(suffix, "READ_PLACES", seed % 3 if crowded else 256)
    # crowded spans' documents counted by sorting their places, by marking all documents
    monkeypatch.setattr(suffix, "MARK_SHARE", (0, 10**9, 16)[seed // 2 % 3])
    # the counts of every span kept from one query to the next on an index, or of none
    monkeypatch.setattr(suffix, "POPULAR_PLACES", 1 if seed % 3 != 1 else 10**9)
    if seed % 2:  # shards of 3- and 4-byte ids side by side (4: a vocabulary past 2**24)
        alternate(monkeypatch)
    check_against_reference(tmp_path, seed, min_tokens=10, shard_words=1 << 27)
    check_against_reference(tmp_path, seed, min_tokens=12, shard_words=200)


@pytest.mark.parametrize("crowded", [False, True], ids=["one-by-one", "from-counts"])
@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_a_replaced_version_agrees_with_reference(tmp_path, monkeypatch, seed, crowded):
    """`add` of a source's new version leaves its dropped files' documents in the shards
    with no occurrences: both ways of reading the intervals skip them."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", (seed % 3) if crowded else 10**9)
    monkeypatch.setattr(suffix, "READ_PLACES", seed % 3 if crowded else 256)
    monkeypatch.setattr(suffix, "MARK_SHARE", (0, 10**9, 16)[seed // 2 % 3])
    monkeypatch.setattr(suffix, "POPULAR_PLACES", 1 if seed % 3 != 1 else 10**9)
    if seed % 2:
        alternate(monkeypatch)  # the added shards too
    check_replaced_against_reference(tmp_path, seed, min_tokens=10)
    check_replaced_against_reference(tmp_path, seed + 1000, min_tokens=12)


def tokenize_words(text: str) -> list[str]:
    return [w.text for w in tokenize(text)]


def spans_agree(idx, texts: list[str], context: str, suggestion: str, what: str) -> None:
    """Every span reported for the query (30 words or more) is a maximal run of the indexed
    `texts` with its exact count, and every region's primary span is reported."""
    spans = reference_spans(texts, context, suggestion, 30)
    got = reported(idx.match(suggestion, context, min_tokens=30))
    assert got, f"{what}: nothing found"
    for (a, b), (count, exact) in got.items():
        truth = spans.get((a, b))
        assert truth is not None, f"reported span {a}-{b} is not a maximal run"
        assert exact and count == truth.files
    primaries = {(r.primary.start, r.primary.end) for r in reference_regions(spans)}
    assert primaries <= set(got)


@pytest.mark.parametrize("crowded", [False, True], ids=["one-by-one", "from-counts"])
def test_periodic_code_agrees_with_reference(tmp_path, monkeypatch, crowded):
    """A line repeated throughout a file, and pasted many times: places end every few words
    but few of them are maximal; every maximal run is still reported with its exact count."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 0 if crowded else 10**9)
    monkeypatch.setattr(suffix, "READ_PLACES", 0 if crowded else 256)
    line = "x = f ( 1 )"
    texts = [
        "\n".join([line] * 400),
        "def head ( ) :\n" + "\n".join([line] * 150) + "\nreturn tail",
        "\n".join([line] * 30) + "\ny = g ( 2 )\n" + "\n".join([line] * 45),
    ]
    corpus = write_files(tmp_path / "src", {f"p{i}.py": t for i, t in enumerate(texts)})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    with open_index(tmp_path / "idx") as idx:
        for context, suggestion in [
            ("", "\n".join([line] * 60)),
            ("def head ( ) :\n", "\n".join([line] * 200) + "\nreturn tail"),
            ("\n".join([line] * 20), "y = g ( 2 )\n" + "\n".join([line] * 50)),
        ]:
            spans_agree(idx, texts, context, suggestion, "the periodic quote")


@pytest.mark.parametrize("crowded", [False, True], ids=["one-by-one", "from-counts"])
def test_separator_lines_agree_with_reference(tmp_path, monkeypatch, crowded):
    """A line of `#` is the same words wherever it sits: the spans it gives (a run of `#`
    of every length at every shift) are counted once per content, each still exact."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 0 if crowded else 10**9)
    monkeypatch.setattr(suffix, "READ_PLACES", 0 if crowded else 256)
    monkeypatch.setattr(suffix, "POPULAR_PLACES", 1)  # (each count kept: asked again below)
    rng = random.Random(5)
    texts = []
    for i in range(12):
        lines = [f"def f{i}_{k}(x):\n    return x + {k}\n" + "#" * rng.randint(30, 90)
                 for k in range(6)]  # fmt: skip
        texts.append("\n".join(lines))
    corpus = write_files(tmp_path / "src", {f"s{i}.py": t for i, t in enumerate(texts)})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    context = "def f0_0(x):\n    return x + 0\n"
    suggestion = "#" * 78 + "\nclass UserDict:\n    pass\n" + "#" * 64 + "\n" + "#" * 70
    with open_index(tmp_path / "idx") as idx:
        spans_agree(idx, texts, context, suggestion, "the separator lines")
        # one line per text: the parts are the reference's, no two with the same words
        # once each line of `#` is taken as one word
        words = tokenize_words(context) + tokenize_words(suggestion)
        want = reference_regions(reference_spans(texts, context, suggestion, 30))
        matches = idx.match(suggestion, context, min_tokens=30)
        assert len(matches) == len(want)
        for m, r in zip(matches, want):
            got = [(p.query_start, p.query_end) for p in m.parts]
            assert got == [(p.start, p.end) for p in r.parts]
            said = [tuple(w for w, _ in itertools.groupby(words[a:b])) for a, b in got]
            assert len(set(said)) == len(said)


def renamed_query(rng: random.Random, files: list[list[str]]) -> tuple[str, str]:
    """(context, suggestion) cut from a file with some of its names renamed consistently."""
    ws, cut = random_query(rng, files)
    names = {n: f"r{i}_{n}" for i, n in enumerate(rng.sample(IDENTS, rng.randint(8, 20)))}
    ws = [names.get(w, w) for w in ws]
    return as_text(ws[:cut]), as_text(ws[cut:])


def renamed_look_alikes(rng: random.Random, files: list[list[str]]) -> list[list[str]]:
    """Files holding copies of a piece of one file, each copy with names of its own (a
    permutation of the names): one file several times over (a table of cases), others
    once. Every copy has the shape of the others, its names renamed alike."""

    def renamed(ws: list[str]) -> list[str]:
        names = dict(zip(IDENTS, rng.sample(IDENTS, len(IDENTS))))
        return [names.get(w, w) for w in ws]

    f = max(files, key=len)
    a = rng.randint(0, max(0, len(f) - 60))
    piece = f[a : a + rng.randint(30, 90)]
    table: list[str] = []
    for _ in range(rng.randint(2, 6)):
        table += renamed(piece) + random_words(rng, rng.randint(0, 3))
    return [table] + [renamed(piece) for _ in range(rng.randint(1, 4))]


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_sampled_renamed_view_answers_as_a_full_one(tmp_path, monkeypatch, seed):
    """The rename-insensitive view's suffix array holds one position in `stride`, each
    anchor searched with that many windows, and gives rare words one id (checked in the
    documents): with every anchor read place by place, indexes of stride 1, 3 and the
    default (4), with half the punctuation rare or none, give the same answers, renamed
    copies and their counts included."""
    from index_tools.match import suffix
    from index_tools.store import shards

    monkeypatch.setattr(suffix, "ENUMERATE", 10**9)
    rng = random.Random(seed)
    files = random_corpus(rng, look_alikes=rng.randint(1, 40))
    corpus = write_files(
        tmp_path / "src", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(files)}
    )
    queries = [(*renamed_query(rng, files), (10, 12, 14)[k % 3]) for k in range(16)]
    answers = []
    for stride, rare in ((1, shards.RARE_ID), (shards.RENAMED_STRIDE, shards.RARE_ID), (3, 30)):
        monkeypatch.setattr(shards, "RARE_ID", rare)  # when building and when looking up
        if seed % 2:
            alternate(monkeypatch)
        out = tmp_path / f"idx-{stride}"
        shard_words = (150, 1 << 27)[seed % 2]
        build_index(
            [corpus], out, BuildOptions(shard_words=shard_words, renamed_stride=stride, **OPTS)
        )
        with open_index(out) as idx:
            assert idx.header.renamed_stride == stride
            answers.append(
                [
                    [m.to_dict() for m in idx.match(sug, ctx, t, language="python")]
                    for ctx, sug, t in queries
                ]
            )
    assert answers[1] == answers[0] and answers[2] == answers[0]
    # renamed copies were among the answers
    assert any(not m["exact"] for answer in answers[0] for m in answer)


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_renamed_copies_agree_with_reference(tmp_path, monkeypatch, seed):
    """Renamed copies of randomized corpora (queries cut across files, names renamed
    consistently, code around them) are the brute-force reference's, edges exactly: every
    renamed span reported is a consistent part stopped where the copy stops (no edge name
    whose renaming nothing inside supports), with its files and renames; the regions and
    their primary spans (the longest, renamed or not) are the reference's. Odd seeds read
    the documents' words of a few runs at a time. The corpora hold copies of one piece
    with names of their own, in one file and in many: the runs of one shape are checked
    once (`_consistent`'s `same`), each answered with its own document's names, as when
    each run is checked apart."""
    from index_tools.match import matcher, suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 10**9)  # no anchor left out as a shape
    if seed % 2:
        monkeypatch.setattr(matcher, "DIFFER_AT_ONCE", 1 + seed * 10)
    shapes: dict[tuple, set] = {}  # a shape's runs -> their documents' names
    consistent = matcher._consistent
    apart = [False]  # each run checked apart: nothing kept from run to run

    def seen(words, run, differ, names_at, least, edge, same):
        names = tuple(t for t, named in zip(differ.theirs, differ.named) if named)
        shapes.setdefault((run.start, run.end, differ.key), set()).add(names)
        return consistent(words, run, differ, names_at, least, edge, None if apart[0] else same)

    monkeypatch.setattr(matcher, "_consistent", seen)
    rng = random.Random(7000 + seed)
    files = random_corpus(rng, look_alikes=rng.randint(1, 40))
    files += renamed_look_alikes(rng, files)
    texts = [as_text(f) for f in files]
    corpus = write_files(tmp_path / "src", {f"f{i:03d}.py": t for i, t in enumerate(texts)})
    shard_words = (150, 1 << 27)[seed % 2]
    build_index([corpus], tmp_path / "idx", BuildOptions(shard_words=shard_words, **OPTS))
    renamed_seen = 0
    with open_index(tmp_path / "idx") as idx:
        for k in range(12):
            context, suggestion = renamed_query(rng, files)
            t = (10, 12, 14)[k % 3]
            exact = reference_spans(texts, context, suggestion, t)
            renamed = reference_renamed_spans(texts, context, suggestion, t, exact)
            matches = idx.match(suggestion, context, t, language="python")
            answers_alike_deferred(idx, matches, suggestion, context, t, language="python")
            apart[0] = True
            each = idx.match(suggestion, context, t, language="python")
            apart[0] = False
            assert [m.to_dict() for m in each] == [m.to_dict() for m in matches], f"query {k}"
            for m in matches:
                spans = [(m.primary_start, m.primary_end, m.exact, m.file_count, m.renamed)]
                spans += [(p.query_start, p.query_end, p.exact, p.file_count, p.renamed)
                          for p in m.parts]  # fmt: skip
                for a, b, is_exact, count, names in spans:
                    truth = (exact if is_exact else renamed).get((a, b))
                    assert truth is not None, f"query {k}: span {a}-{b} is not the reference's"
                    assert count == truth.files, f"query {k}: span {a}-{b}"
                    if not is_exact:
                        assert tuple(names) in truth.renamed, f"query {k}: span {a}-{b}"
                        renamed_seen += 1
            want = reference_regions({**exact, **renamed})
            assert [(m.query_start, m.query_end) for m in matches] == [
                (r.start, r.end) for r in want
            ], f"query {k}"
            assert [(m.primary_start, m.primary_end, m.exact) for m in matches] == [
                (r.primary.start, r.primary.end, r.primary.exact) for r in want
            ], f"query {k}"
    assert renamed_seen, "no renamed copy among the answers"
    assert any(len(names) > 1 for names in shapes.values()), "no shape with names of its own"


def test_runs_of_one_shape_are_each_answered_with_their_own_names():
    """Two documents' copies of `total = count + step; return total`, each with names of
    its own (ids 11-13, 21-23): one shape, its parts made once; the second run's part
    names its own document's names at its own place, as when checked apart."""
    from index_tools.match.matcher import Run, _consistent, _Differing

    words = ["total", "=", "count", "+", "step", ";", "return", "total"]
    names_at = [0, 1, 1, 2, 2, 3, 3, 3, 4]
    shape = b"one shape"  # (`_differing`'s: where words differ, which names are equal)

    def run(doc: int, theirs: list[int]) -> tuple[Run, _Differing]:
        differ = _Differing(shape, [0, 2, 4, 7], theirs, [True] * 4, [0, 1, 2, 0])
        return Run(0, 8, doc, 10 * doc), differ

    same: dict = {}
    first, second = run(3, [11, 12, 13, 11]), run(5, [21, 22, 23, 21])
    (a,) = _consistent(words, *first, names_at, 1, None, same)
    (b,) = _consistent(words, *second, names_at, 1, None, same)
    assert len(same) == 1  # (one shape)
    named = [(b.theirs[j], mine) for j, mine in b.renamed]
    assert named == [(21, "total"), (22, "count"), (23, "step")]
    assert (b.doc, b.doc_start) == (5, 50)
    assert [(a.theirs[j], mine) for j, mine in a.renamed] == [
        (11, "total"),
        (12, "count"),
        (13, "step"),
    ]
    assert _consistent(words, *second, names_at, 1, None, None) == [b]


def random_index(tmp_path: Path, rng: random.Random, look_alikes: int, seed: int):
    """A random corpus indexed at `tmp_path / "idx"`, in many small shards for odd seeds
    and one for even ones; its files' words."""
    files = random_corpus(rng, look_alikes=look_alikes)
    corpus = write_files(
        tmp_path / "src", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(files)}
    )
    shard_words = (150, 1 << 27)[seed % 2]
    build_index([corpus], tmp_path / "idx", BuildOptions(shard_words=shard_words, **OPTS))
    return files


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_without_crowded_anchors_the_context_is_searched_when_it_can_matter(
    tmp_path, monkeypatch, seed
):
    """With crowded anchors left out (the rename-insensitive view), the anchors before
    tail - t are searched only when one after it is crowded: the runs are those of every
    anchor searched (tail -1), then cut to those ending past the tail. Few places make an
    anchor crowded here, so that both cases occur, in both views."""
    from index_tools.match import suffix
    from index_tools.match.matcher import identifier_mask
    from index_tools.store.shards import renamed_ids

    rng = random.Random(9000 + seed)
    files = random_index(tmp_path, rng, rng.randint(1, 40), seed)
    found = 0
    with open_index(tmp_path / "idx") as idx:
        for k in range(12):
            monkeypatch.setattr(suffix, "ENUMERATE", (4, 8, 16, 10**9)[k % 4])
            context, suggestion = renamed_query(rng, files)
            t = (10, 12, 14)[k % 3]
            tail = len(tokenize(context))
            ids = idx.word_ids([w.text for w in tokenize(context + suggestion)])
            mask = identifier_mask([w.text for w in tokenize(context + suggestion)], "python")
            for shards, q in ((idx.shards, ids), (idx.renamed_shards, renamed_ids(ids, mask))):
                runs, _ = suffix.search(shards, q, t, tail, crowded=False)
                every, _ = suffix.search(shards, q, t, -1, crowded=False)
                assert runs.dtype == np.int64 and runs.shape[1:] == (4,)
                want = sorted(r for r in every.tolist() if r[1] > tail)
                assert sorted(runs.tolist()) == want, f"query {k}"
                found += len(runs)
    assert found  # (runs to compare were there)


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_a_bound_from_spans_counted_inside_is_never_below_the_count(tmp_path, monkeypatch, seed):
    """A part is left out without counting its places or documents when a span searched or
    counted inside it has fewer than the part would need: `Counts.places_at_most`,
    `documents_at_most`. On randomized corpora (few places make an anchor crowded), after
    some starts' spans are searched and some spans counted in a random order, the bounds of
    every crowded span are at least its places and documents, and equal to them for a
    span searched or counted itself."""
    rng = random.Random(7000 + seed)
    bounded = 0
    for _, crowded in _crowded_searches(tmp_path, monkeypatch, rng, seed):
        spans = [(c.start, c.end) for c in crowded]
        counts = crowded[0]._counts if crowded else None
        for s, _ in rng.sample(spans, len(spans) // 2):
            counts.fill_crowded(s)
        for s, e in spans:  # places, before any count searches more
            bound = counts.places_at_most(s, e)
            if bound is not None:
                bounded += 1
                searched = s in counts.filled and (s, e) in counts.memo
                places = counts.get(s, e)[0]
                assert bound == places if searched else bound >= places, (s, e)
        for s, e in rng.sample(spans, len(spans) // 2):
            counts.distinct(s, e)
        for s, e in spans:
            bound = counts.documents_at_most(s, e)
            if bound is None:
                continue
            bounded += 1
            counted = (s, e) in counts.counted  # (then itself among the spans inside)
            assert bound == counts.distinct(s, e) if counted else bound >= counts.distinct(s, e)
    assert bounded  # (bounds to check were there)


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_the_places_memoized_for_crowded_spans_are_each_spans_own(tmp_path, monkeypatch, seed):
    """The places of a start's crowded spans are memoized all at once (`fill_crowded`: one
    search, then `_remember`), and by their words when a span not memoized is asked for:
    the same words at another place of the query (a query holding its code twice) answer
    from them. On randomized corpora, every span memoized and every span of the query's
    second copy has the places and intervals a search of it alone finds (a fresh `Counts`),
    and the second copy's spans are answered from the first's words."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 4)
    rng = random.Random(9300 + seed)
    files = random_index(tmp_path, rng, rng.randint(10, 40), seed)
    checked = by_words = 0
    with open_index(tmp_path / "idx") as idx:
        for _ in range(6):
            qwords, _ = random_query(rng, files)
            ids = idx.word_ids(qwords + qwords)  # (the code twice: its words recur)
            _, crowded = suffix.search(idx.shards, ids, 10, -1)
            if not len(crowded):
                continue
            counts = crowded.counts
            starts = sorted(set(crowded.starts.tolist()))
            for start in rng.sample(starts, len(starts) // 2 + 1):
                counts.fill_crowded(start)
            alone = suffix.Counts(counts.shards, ids)
            half = len(qwords)
            for (s, e), (total, ivs) in list(counts.memo.items()):
                want = alone.get(s, e)
                assert (total, list(ivs)) == (want[0], list(want[1])), (s, e)
                checked += 1
                if s < half and e <= half and (s + half, e + half) not in counts.memo:
                    again = counts.get(s + half, e + half)
                    by_words += again[1] is counts.memo[(s, e)][1]  # (not searched again)
                    want = alone.get(s + half, e + half)
                    assert (again[0], list(again[1])) == (want[0], list(want[1])), (s, e)
    assert checked and by_words  # (spans memoized, and some answered by their words)


def _crowded_searches(tmp_path, monkeypatch, rng: random.Random, seed: int, queries: int = 8):
    """`suffix.search` (runs, spans from counts) of random queries against a randomized
    corpus, t = 10, with few places making an anchor crowded."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 4)
    files = random_index(tmp_path, rng, rng.randint(10, 40), seed)
    with open_index(tmp_path / "idx") as idx:
        for _ in range(queries):
            qwords, _ = random_query(rng, files)
            yield suffix.search(idx.shards, idx.word_ids(qwords), 10, -1)


@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_the_spans_found_from_counts_are_each_once_and_none_is_a_runs(tmp_path, monkeypatch, seed):
    """The search hands its spans from counts over as arrays (`CrowdedSpans`): each span
    once, in the order found, none a span of the runs around enumerated anchors, each of
    at least t words, the ends of each start listed by `Counts.crowded_ends` ascending, and
    each read as the same `Crowded` every time (its counts kept)."""
    seen = 0
    for runs, crowded in _crowded_searches(tmp_path, monkeypatch, random.Random(9100 + seed), seed):
        spans = [(c.start, c.end) for c in crowded]
        assert spans == list(zip(crowded.starts.tolist(), crowded.ends.tolist()))
        assert len(set(spans)) == len(spans)
        assert not set(spans) & {(r[0], r[1]) for r in runs.tolist()}
        assert all(e - s >= 10 for s, e in spans)
        ends: dict[int, list[int]] = {}
        for s, e in spans:
            ends.setdefault(s, []).append(e)
        for s, want in ends.items():
            assert crowded.counts.crowded_ends.get(s) == sorted(want)
        assert crowded.counts.crowded_ends.get(-1, "none") == "none"
        assert all(crowded[k] is crowded[k] for k in range(len(crowded)))
        seen += len(spans)
    assert seen  # (spans from counts were there)


def test_counts_of_popular_spans_are_kept_from_lookup_to_lookup(tmp_path, monkeypatch):
    """A span with many places (a separator comment in every file) is counted once: the
    next lookups holding it, of other code, read none of its places, and answer as an index
    opened anew does (its files and documents exactly, the parts alike)."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 0)  # (a small corpus: every anchor crowded)
    monkeypatch.setattr(suffix, "POPULAR_PLACES", 40)
    rule = "# " + "-" * 70
    texts = []
    for i in range(60):
        body = "\n".join(f"    v{i}_{k} = compute({k}, {i})" for k in range(8))
        texts.append(f"{rule}\n# module {i}\n{rule}\n\ndef run{i}():\n{body}\n{rule}\n")
    copies = {f"m{i}.py": t for i, t in enumerate(texts)}
    copies.update({f"copy{i}.py": texts[i] for i in range(3)})  # (each quoted in 2 files)
    corpus = write_files(tmp_path / "src", copies)
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    read: list[int] = []
    documents_at = suffix.ShardView.documents_at

    def counted(self, lo, hi):
        read.append(hi - lo)
        return documents_at(self, lo, hi)

    monkeypatch.setattr(suffix.ShardView, "documents_at", counted)
    with open_index(tmp_path / "idx") as idx:
        answers = []
        for i in range(3):
            read.clear()
            answers.append(idx.match(texts[i], min_tokens=30))
            if i == 0:
                first_read = sum(read)
            else:  # the rule's spans counted by the first lookup: their places not read
                assert sum(read) < first_read
        assert len(idx.popular_counts) > 0
    for i in range(3):
        with open_index(tmp_path / "idx") as fresh:
            alone = fresh.match(texts[i], min_tokens=30)
        assert [m.to_dict() for m in answers[i]] == [m.to_dict() for m in alone]
        m = answers[i][0]
        assert m.file_count == 2 and m.file_count_exact
        rules = [p for p in m.parts if p.file_count == 63]
        assert rules, [(p.query_start, p.query_end, p.file_count) for p in m.parts]


@pytest.mark.parametrize("shard_words", [150, 1 << 27])
def test_many_documents_words_read_at_once_are_each_ones_own(tmp_path, shard_words):
    """`documents_ids` (a renamed-view lookup's runs' words, read all at once) gives each
    range's words as `document_ids` reads them one by one, across shards and within one,
    empty ranges and whole documents too; a document no shard holds is an error."""
    rng = random.Random(shard_words)
    files = random_corpus(rng, look_alikes=5)
    corpus = write_files(
        tmp_path / "src", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(files)}
    )
    build_index([corpus], tmp_path / "idx", BuildOptions(shard_words=shard_words, **OPTS))
    with open_index(tmp_path / "idx") as idx:
        assert (len(idx.shards) > 1) == (shard_words == 150)
        sizes = [int(n) for sh in idx.shards for n in np.diff(np.append(sh.starts, sh.size))]
        docs, starts, lengths = [], [], []
        for _ in range(300):
            d = rng.randrange(len(sizes))
            words = sizes[d] - 1  # (the separator after each document is no word of it)
            a = rng.randint(0, words)
            docs.append(d)
            starts.append(a)
            lengths.append(rng.randint(0, words - a))
        docs += [len(sizes) - 1, 0]  # a whole document, an empty range
        starts += [0, 3]
        lengths += [sizes[-1] - 1, 0]
        got = idx.documents_ids(np.array(docs), np.array(starts), np.array(lengths))
        want = [idx.document_ids(d, a, a + n) for d, a, n in zip(docs, starts, lengths)]
        assert got.dtype == np.int64
        assert got.tolist() == np.concatenate(want).tolist()
        assert len(set(docs)) > 10 and sum(lengths) > 1000
        with pytest.raises(IndexError, match="no document"):
            idx.documents_ids(np.array([0, len(sizes)]), np.array([0, 0]), np.array([1, 1]))


def test_crowded_code_inside_one_files_quote_is_searched_for_its_parts_only(tmp_path, monkeypatch):
    """A file's header shared by 30 files (a package's separator lines and imports), quoted
    with the file's own code around it: the header's spans lie inside the file's quote, so
    the lookup that leaves its parts for later answers without searching them (the
    region, its one file, its primary span as before); its parts, once read, are the
    lookup's made at once: the header in 30 files. A header quoted between two files'
    code is searched before the answer: its spans reach no one file's quote whole."""
    from index_tools.match import suffix

    monkeypatch.setattr(suffix, "ENUMERATE", 8)  # (the header's 30 places: crowded)
    searched: list[list[int]] = []
    crowded_spans = suffix._crowded_spans

    def spy(counts, anchors, *args, **kwargs):
        searched.append([a for a, _ in anchors])
        return crowded_spans(counts, anchors, *args, **kwargs)

    monkeypatch.setattr(suffix, "_crowded_spans", spy)
    header = "#" + "-" * 40 + "\n# Imports\n#" + "-" * 40 + "\nfrom typing import TypeVar\n"

    def body(i: int) -> str:
        return "".join(f"def f{i}_{k}(a{k}, b{k}):\n    return a{k} * b{k} + {k}\n"
                       for k in range(8))  # fmt: skip

    texts = [header + body(i) + header for i in range(30)]
    corpus = write_files(tmp_path / "src", {f"m{i:02d}.py": t for i, t in enumerate(texts)})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    head = words(header)
    with open_index(tmp_path / "idx") as idx:
        context, suggestion = "unrelated ( code ) ;\n", header + body(3) + "\nnot = copied ( )"
        whole = idx.match(suggestion, context, min_tokens=20)
        searched.clear()
        deferred = idx.match(suggestion, context, min_tokens=20, defer_parts=True)
        assert searched == [[]]  # (the header's anchors: none searched before the answer)
        [m] = deferred
        at = words(context)
        assert (m.query_start, m.query_end) == (at, at + head + words(body(3)))
        assert (m.file_count, m.sources[0].path) == (1, "m03.py")
        assert not m.parts_made
        m.settle_parts()
        # (the header and the first word of each file's code: `def`)
        assert [(p.query_start, p.query_end, p.file_count) for p in m.parts] == [
            (at, at + head + 1, 30)
        ]
        assert [x.to_dict() for x in deferred] == [x.to_dict() for x in whole]
        # between two files' code: the header's spans reach past each file's quote
        context, suggestion = body(2), header + body(4)[:150]
        whole = idx.match(suggestion, context, min_tokens=20)
        searched.clear()
        deferred = idx.match(suggestion, context, min_tokens=20, defer_parts=True)
        assert len(searched) == 1 and searched[0]
        answers_alike_deferred(idx, whole, suggestion, context, 20)
