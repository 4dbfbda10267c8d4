"""An index kept current by `add` stays in shape: each add joins its shards with the
smaller ones before it (`settled`), within the build's own shard limit, and the joined index
answers exactly as the one left in every add's shards (and as the brute-force reference);
an add given all of its index's sources builds it anew once half its words are in documents
no file holds any more (old versions), and answers as a fresh build."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from test_compact import answers, queries_of
from test_duplication import (
    agrees_with_reference,
    as_text,
    random_corpus,
    random_words,
    write_files,
)

from index_tools import BuildOptions, add_to_index, build_index, open_index
from index_tools.build import local
from index_tools.build.local import dead_words, settled
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


def rewrite(rng: random.Random, folder: Path, share: float) -> None:
    """A new version of `folder`: `share` of its files with new contents."""
    for path in sorted(folder.iterdir()):
        if rng.random() < share:
            path.write_text(as_text(random_words(rng, rng.randint(40, 120))), encoding="utf-8")


def dead_share(root: Path) -> float:
    gen, header = store.read_header(root)
    return dead_words(gen, header) / header.words


def test_an_add_of_the_whole_index_builds_it_anew_once_half_its_words_are_dead(tmp_path):
    rng = random.Random(8)
    names = [f"f{i:02d}.py" for i in range(30)]
    src = Path(write_files(tmp_path / "src", {n: as_text(random_words(rng, 80)) for n in names}))
    idx = tmp_path / "idx"
    build_index([str(src)], idx, BuildOptions(**OPTS))
    shares, rebuilt = [], []
    for _ in range(3):
        rewrite(rng, src, 0.6)
        summary = add_to_index(idx, [str(src)], BuildOptions(**OPTS))
        rebuilt.append(summary.rebuilt)
        shares.append(dead_share(idx))
    assert rebuilt[:2] == [None, None] and 0.3 < shares[0] < 0.5 <= shares[1]
    assert rebuilt[2] is not None and rebuilt[2] >= 0.5 and shares[2] == 0.0
    build_index([str(src)], tmp_path / "fresh", BuildOptions(**OPTS))
    new, fresh = (store.read_header(p)[1] for p in (idx, tmp_path / "fresh"))
    facts = lambda h: (h.words, h.documents, h.files, h.shards, h.sources)  # noqa: E731
    assert facts(new) == facts(fresh)
    every = [(src / n).read_text(encoding="utf-8").split() for n in names]
    queries = queries_of(rng, every, 10)
    with open_index(idx) as a, open_index(tmp_path / "fresh") as b:
        assert answers(a, queries) == answers(b, queries)
        texts = [(src / n).read_text(encoding="utf-8") for n in names]
        agrees_with_reference(a, rng, every, texts, min_tokens=10)


def test_an_add_of_part_of_the_index_keeps_its_documents(tmp_path, capsys):
    """Another source held and not given: building anew would drop it, so the add adds."""
    rng = random.Random(9)
    src = Path(
        write_files(
            tmp_path / "src", {f"f{i}.py": as_text(random_words(rng, 80)) for i in range(20)}
        )
    )
    other = write_files(tmp_path / "other", {"o.py": as_text(random_words(rng, 30))})
    idx = tmp_path / "idx"
    build_index([str(src), other], idx, BuildOptions(**OPTS))
    for _ in range(3):
        rewrite(rng, src, 0.9)
        assert add_to_index(idx, [str(src)], BuildOptions(**OPTS)).rebuilt is None
    assert dead_share(idx) > 0.5
    assert len(store.read_header(idx)[1].sources) == 2
    with open_index(idx) as i:
        dead = i.summary()["dead_words"]
        assert dead == dead_words(*store.read_header(idx)) > 0
    assert main(["stats", str(idx)]) == 0
    said = f"old versions: {dead:,} words ({dead_share(idx):.0%}) in documents no file holds"
    assert said in capsys.readouterr().out


def test_the_add_command_says_it_built_the_index_anew(tmp_path, capsys):
    rng = random.Random(10)
    src = Path(
        write_files(
            tmp_path / "src", {f"f{i}.py": as_text(random_words(rng, 80)) for i in range(10)}
        )
    )
    idx = str(tmp_path / "idx")
    assert main(["build", str(src), "--out", idx, "--quiet", "--jobs", "1"]) == 0
    for _ in range(2):
        rewrite(rng, src, 1.0)
        assert main(["add", idx, str(src), "--quiet", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    said = re.search(r"built anew: (\d+)% of the index's words were in documents no file", out)
    assert said and 50 <= int(said[1]) <= 60, out


def test_an_add_whose_join_fails_is_published_and_says_why(tmp_path, monkeypatch):
    from index_tools.build import compact

    rng = random.Random(12)
    (first, _), (second, _), (third, _) = folders(tmp_path, rng, 3)
    idx = tmp_path / "idx"
    build_index([first], idx, BuildOptions(**OPTS))

    def broken(*args, **kwargs):
        raise local.BuildError(f"cannot write the index at {idx}: No space left on device")

    with monkeypatch.context() as m:
        m.setattr(compact, "_write_group", broken)
        summary = add_to_index(idx, [second], BuildOptions(**OPTS))
    assert summary.not_joined and "No space left on device" in summary.not_joined
    line = next(ln for ln in summary.lines() if ln.startswith("shards:"))
    assert line.startswith("shards: 2 (not joined with the ones before, the index as added:")
    header = store.read_header(idx)[1]
    assert header.shards == 2 and len(header.sources) == 2
    assert store.verify(idx) == []
    assert add_to_index(idx, [third], BuildOptions(**OPTS)).not_joined is None
    assert store.read_header(idx)[1].shards < 3


def test_an_add_links_the_shards_it_keeps_and_checks_them(tmp_path, monkeypatch):
    """The shards an add leaves as they are are the live generation's files, linked (their
    digests checked), not copies: an add costs what it adds, not the index's size; a
    damaged one stops it, the index as it was."""
    rng = random.Random(13)
    (first, _), (second, _) = folders(tmp_path, rng, 2)
    idx = tmp_path / "idx"
    build_index([first], idx, BuildOptions(**OPTS))
    gen, header = store.read_header(idx)
    kept = {n: (gen / n).stat().st_ino for n in header.file_sizes if n.startswith("shard")}
    assert kept
    monkeypatch.setattr(local, "JOIN_RATIO", 0)  # (no join: the add's shard stays apart)
    add_to_index(idx, [second], BuildOptions(**OPTS))
    new_gen, new = store.read_header(idx)
    assert new_gen != gen and new.shards == header.shards + 1
    assert {n: (new_gen / n).stat().st_ino for n in kept} == kept
    assert store.verify(idx) == []
    sa = new_gen / "shard-000.sa"
    data = bytearray(sa.read_bytes())
    data[len(data) // 2] ^= 0x5A
    sa.write_bytes(bytes(data))
    ((third, _),) = folders(tmp_path / "more", rng, 1)
    with pytest.raises(local.BuildError, match=r"is damaged \(shard-000\.sa: "):
        add_to_index(idx, [third], BuildOptions(**OPTS))
    assert store.current_generation(idx) == new_gen.name
