"""An index kept current by `add` stays in few shards: each add joins its shards with the
smaller ones before it (`settled`), within the build's own shard limit, and the joined index
answers exactly as the one left in every add's shards (and as the brute-force reference)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_compact import answers, queries_of
from test_duplication import agrees_with_reference, as_text, random_corpus, write_files

from index_tools import BuildOptions, add_to_index, build_index, open_index
from index_tools.build import local
from index_tools.build.local import settled
from index_tools.cli.commands import main
from index_tools.store import generations as store

OPTS = dict(jobs=1, progress=False)
pytestmark = pytest.mark.usefixtures("search_path")  # every test on both search paths


def test_an_adds_shard_joins_the_smaller_ones_before_it():
    assert settled([1000, 10, 10], 1 << 20) == [[0], [1, 2]]
    assert settled([1000, 30, 10, 10], 1 << 20) == [[0], [1, 2, 3]]  # 30 <= 2 * (10 + 10)
    assert settled([1000, 50, 10, 10], 1 << 20) == [[0], [1], [2, 3]]  # 50 > 2 * 20
    assert settled([100, 100], 150) == [[0], [1]]  # never past the shard limit
    assert settled([7], 100) == [[0]] and settled([], 100) == []


@pytest.mark.parametrize("sizes", ["equal", "mixed"])
def test_many_adds_leave_few_shards_each_word_sorted_a_few_times(sizes):
    """200 adds: the shards stay about log2 of the adds, the words sorted again by the
    joins a few times each (the work of an add stays about its own size)."""
    rng = random.Random(5)
    shards: list[int] = []
    added = sorted_again = most = 0
    for _ in range(200):
        words = 1000 if sizes == "equal" else rng.choice([10, 100, 1000, 10_000, 100_000])
        shards.append(words)
        added += words
        plan = settled(shards, 1 << 30)
        assert [i for g in plan for i in g] == list(range(len(shards)))  # in order, each once
        sorted_again += sum(shards[i] for i in plan[-1]) if len(plan[-1]) > 1 else 0
        shards = [sum(shards[i] for i in g) for g in plan]
        most = max(most, len(shards))
    assert sum(shards) == added
    assert most <= 8 and sorted_again <= 6 * added


def folders(root: Path, rng: random.Random, n: int) -> list[tuple[str, list[list[str]]]]:
    out = []
    for k in range(n):
        files = random_corpus(rng, look_alikes=rng.randint(2, 8))
        texts = {f"m{k}_{i:03d}.py": as_text(f) for i, f in enumerate(files)}
        out.append((write_files(root / f"more{k}", texts), files))
    return out


def test_adds_keep_an_index_in_few_shards_with_the_same_answers(tmp_path, monkeypatch):
    rng = random.Random(21)
    first, *more = folders(tmp_path, rng, 9)
    every = [f for _, files in [first, *more] for f in files]
    queries = queries_of(rng, every, 16)
    options = BuildOptions(shard_words=1 << 20, **OPTS)
    for name in ("apart", "settled"):
        build_index([first[0]], tmp_path / name, options)
    for folder, _ in more:
        with monkeypatch.context() as m:
            m.setattr(local, "JOIN_RATIO", 0)  # no shard is ever at most 0 times another
            add_to_index(tmp_path / "apart", [folder], options)
        summary = add_to_index(tmp_path / "settled", [folder], options)
        assert summary.shards == store.read_header(tmp_path / "settled")[1].shards
    apart, joined = (store.read_header(tmp_path / n)[1] for n in ("apart", "settled"))
    assert apart.shards == 9 and joined.shards <= 4
    facts = lambda h: (h.words, h.documents, h.files, h.sources)  # noqa: E731
    assert facts(joined) == facts(apart)
    assert store.verify(tmp_path / "settled") == []
    with open_index(tmp_path / "apart") as a, open_index(tmp_path / "settled") as b:
        assert answers(b, queries) == answers(a, queries)
        texts = [as_text(f) for f in every]
        agrees_with_reference(b, rng, every, texts, min_tokens=10)


def test_the_add_command_says_its_shards_were_joined(tmp_path, capsys):
    rng = random.Random(4)
    (first, _), (second, _) = folders(tmp_path, rng, 2)
    idx = str(tmp_path / "idx")
    assert main(["build", first, "--out", idx, "--quiet", "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(["add", idx, second, "--quiet", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "shards: 1 (joined from 2: the add's with the smaller ones before them)" in out
    assert store.read_header(Path(idx))[1].shards == 1
