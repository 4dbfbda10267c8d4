"""Exact under duplication: copies with longer runs, self-similar files and look-alikes past
the posting cap give whole spans with honest counts, one match per quoted region — checked
on three reproductions and against a brute-force reference on randomized corpora."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_regions, reference_spans

from index_tools import BuildOptions, build_index, describe_match, open_index, tokenize
from index_tools.cli.sarif import sarif_report

OPTS = dict(jobs=1, progress=False)


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


def test_look_alikes_past_the_posting_cap_do_not_hide_the_quote(tmp_path):
    files = {f"gpl_{i:03d}.py": f"{GPL}\nVALUE_{i} = {i}\n" for i in range(300)}
    files.update({f"zz_agpl_{i}.py": f"{AGPL}\nOTHER_{i} = {i}\n" for i in range(3)})
    corpus = write_files(tmp_path / "src", files)
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    query = "".join(AGPL.splitlines(keepends=True)[:7])
    assert words(query) >= 80
    with open_index(tmp_path / "idx") as idx:
        assert idx.summary()["capped"] > 0  # the GPL's k-grams are past the cap of 256
        (m,) = idx.match(query)
        assert m.length == words(query)
        assert m.file_count == 3 and m.file_count_exact
        assert {s.path for s in m.sources} == {f"zz_agpl_{i}.py" for i in range(3)}
        # the whole GPL notice: a span of capped k-grams only, said as a lower bound
        (g,) = idx.match(GPL)
        assert g.length == words(GPL)
        assert not g.file_count_exact and 256 <= g.file_count <= 300
        assert describe_match(g).endswith(f"\u00b7 at least {g.file_count:,} files")


# --- randomized corpora against the brute-force reference --------------------------------

IDENTS = [f"n{i}" for i in range(40)]
PUNCT = list("+-*/=()[]{};,.<>")


def random_words(rng: random.Random, n: int) -> list[str]:
    return [rng.choice(IDENTS) if rng.random() < 0.7 else rng.choice(PUNCT) for _ in range(n)]


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


def check_against_reference(tmp_path: Path, seed: int, cap: int, min_tokens: int) -> None:
    rng = random.Random(seed)
    files = random_corpus(rng, look_alikes=cap + rng.randint(1, 8) if cap < 100 else 6)
    texts = [as_text(f) for f in files]
    root = tmp_path / f"case-{seed}-{cap}-{min_tokens}"
    corpus = write_files(root / "src", {f"f{i:03d}.py": t for i, t in enumerate(texts)})
    build_index(
        [corpus], root / "idx", BuildOptions(k=5, window=6, posting_cap=cap, **OPTS)
    )  # a common run of 10 words is always found
    with open_index(root / "idx") as idx:
        for _ in range(4):
            qwords, cut = random_query(rng, files)
            context, suggestion = as_text(qwords[:cut]), as_text(qwords[cut:])
            spans = reference_spans(texts, context, suggestion, min_tokens)
            matches = idx.match(suggestion, context, min_tokens=min_tokens)
            got = reported(matches)
            qwords_all = [w.text for w in tokenize(context)] + [
                w.text for w in tokenize(suggestion)
            ]
            capped = idx.capped_mask(idx.kgrams(qwords_all))
            for (a, b), (count, exact) in got.items():
                truth = spans.get((a, b))
                assert truth is not None, f"reported span {a}-{b} is not a maximal run"
                assert count <= truth.files
                if exact:
                    assert count == truth.files, f"span {a}-{b}: {count} != {truth.files}"
            want = reference_regions(spans)
            for region in want:
                for s in [region.primary, *region.parts]:
                    if capped[s.start : s.end - 5 + 1].all():
                        continue  # only capped k-grams: reported through capped lists
                    assert (s.start, s.end) in got, f"span {s.start}-{s.end} missed"
                    assert got[(s.start, s.end)] == (s.files, True)
            if not capped.any():
                # nothing capped: the same regions, primaries and parts, exactly
                assert [(m.query_start, m.query_end) for m in matches] == [
                    (r.start, r.end) for r in want
                ]
                for m, r in zip(matches, want):
                    assert (m.primary_start, m.primary_end) == (r.primary.start, r.primary.end)
                    assert [(p.query_start, p.query_end) for p in m.parts] == [
                        (p.start, p.end) for p in r.parts
                    ]
            # one warning per quoted region: matches never overlap
            for x, y in zip(matches, matches[1:]):
                assert x.query_end <= y.query_start


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    cap=st.sampled_from([3, 5, 10_000]),
    min_tokens=st.sampled_from([10, 14, 25]),
)
def test_matcher_agrees_with_brute_force_reference(tmp_path, seed, cap, min_tokens):
    check_against_reference(tmp_path, seed, cap, min_tokens)


@pytest.mark.parametrize("batched", [True, False], ids=["batched", "per-diagonal"])
# RECITATION_REFERENCE_SEEDS=200 runs a longer comparison by hand
@pytest.mark.parametrize("seed", range(int(os.environ.get("RECITATION_REFERENCE_SEEDS", "6"))))
def test_reference_on_fixed_seeds(tmp_path, monkeypatch, seed, batched):
    # documents hit along many diagonals are compared in one batch: both ways agree
    from index_tools.match import matcher

    monkeypatch.setattr(matcher, "MANY_DIAGONALS", 1 if batched else 10**9)
    check_against_reference(tmp_path, seed, cap=4, min_tokens=10)
    check_against_reference(tmp_path, seed, cap=10_000, min_tokens=12)
