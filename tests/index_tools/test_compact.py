"""`recitation-index compact`: an index's shards joined into fewer answer exactly as before
(against the brute-force reference too), with dead documents, renamed copies and shards of
3- and 4-byte ids; a damaged shard stops it with the usual message and the index unchanged."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest
from test_duplication import (
    agrees_with_reference,
    alternate,
    as_text,
    mutate,
    random_corpus,
    random_query,
    random_words,
    write_files,
)

from index_tools import BuildOptions, FollowingIndex, add_to_index, build_index, open_index
from index_tools.build.compact import compact_index, groups
from index_tools.build.local import DEFAULT_COMPACT_WORDS, DEFAULT_SHARD_WORDS, BuildError
from index_tools.cli.commands import main
from index_tools.store import generations as store
from index_tools.store.shards import shard_file

OPTS = dict(jobs=1, progress=False)
pytestmark = pytest.mark.usefixtures("search_path")  # every test on both search paths


def test_groups_join_neighbours_within_the_limit():
    assert groups([100, 100, 300, 50, 50], 200) == [[0, 1], [2], [3, 4]]
    assert groups([100, 100, 100], 1000) == [[0, 1, 2]]
    assert groups([500, 10], 200) == [[0], [1]]  # a shard over the limit stays alone
    assert groups([], 10) == []


def answers(idx, queries) -> list:
    out = []
    for context, suggestion, language in queries:
        matches = idx.match(suggestion, context, min_tokens=10, language=language)
        out.append([m.to_dict() for m in matches])
    return out


def queries_of(rng: random.Random, files: list[list[str]], n: int) -> list:
    out = []
    for k in range(n):
        qwords, cut = random_query(rng, files)
        out.append((as_text(qwords[:cut]), as_text(qwords[cut:]), "python" if k % 2 else None))
    return out


def replaced_index(root: Path, rng: random.Random) -> tuple[list[list[str]], list[str]]:
    """Two folders indexed in shards of 300 words, then a new version of the first added
    (its dropped files' documents dead): the files, and the texts indexed now."""
    files = random_corpus(rng, look_alikes=rng.randint(5, 30))
    half = len(files) // 2
    first, second = files[:half], files[half:]
    a = write_files(root / "a", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(first)})
    b = write_files(root / "b", {f"g{i:03d}.py": as_text(f) for i, f in enumerate(second)})
    build_index([a, b], root / "idx", BuildOptions(shard_words=300, **OPTS))
    kept = []
    for i, f in enumerate(first):
        path = root / "a" / f"f{i:03d}.py"
        if rng.random() < 0.4:
            path.unlink()
            continue
        if rng.random() < 0.5:
            f = mutate(rng, f, 2) + random_words(rng, 3)
            path.write_text(as_text(f), encoding="utf-8")
        kept.append(f)
    add_to_index(root / "idx", [a], BuildOptions(shard_words=300, **OPTS))
    return files + kept, [as_text(f) for f in kept + second]


@pytest.mark.parametrize("seed", range(3))
def test_a_compacted_index_answers_as_before(tmp_path, monkeypatch, seed):
    if seed == 1:  # shards of 3- and 4-byte ids side by side, joined into 4-byte ones
        alternate(monkeypatch)
    rng = random.Random(seed)
    root = tmp_path / f"c{seed}-{uuid.uuid4().hex[:6]}"
    files, texts = replaced_index(root, rng)
    queries = queries_of(rng, files, 12)
    with open_index(root / "idx") as idx:
        before, header = answers(idx, queries), idx.header
    assert header.shards >= 4
    limit = 2 * max(header.shard_words) if seed == 2 else 1 << 29
    summary = compact_index(root / "idx", limit, progress=False)
    assert summary.shards_before == header.shards
    assert summary.shards_after == len(groups(header.shard_words, limit))
    assert 1 <= summary.shards_after < header.shards
    assert store.verify(root / "idx") == []
    with open_index(root / "idx") as idx:
        h = idx.header
        assert h.shards == summary.shards_after and h.words == header.words
        assert h.documents == header.documents and h.files == header.files
        assert h.sources == header.sources
        assert answers(idx, queries) == before
        agrees_with_reference(idx, rng, files, texts, min_tokens=10)


def test_nothing_to_join_leaves_the_index_as_it_is(tmp_path):
    corpus = write_files(tmp_path / "src", {"a.py": as_text(random_words(random.Random(1), 80))})
    build_index([corpus], tmp_path / "idx", BuildOptions(**OPTS))
    generation = store.current_generation(tmp_path / "idx")
    summary = compact_index(tmp_path / "idx", 1000, progress=False)
    assert (summary.shards_before, summary.shards_after) == (1, 1)
    assert "none joined" in "\n".join(summary.lines())
    assert store.current_generation(tmp_path / "idx") == generation


def test_a_damaged_shard_stops_compact_and_the_index_still_answers(tmp_path):
    rng = random.Random(7)
    root = tmp_path / "d"
    files, _ = replaced_index(root, rng)
    queries = queries_of(rng, files, 4)
    with open_index(root / "idx") as idx:
        before = answers(idx, queries)
    gen = root / "idx" / store.current_generation(root / "idx")
    target = gen / shard_file(1, "rids")
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x5A
    target.write_bytes(bytes(data))
    with pytest.raises(BuildError, match=r"is damaged \(shard-001\.rids: contents differ"):
        compact_index(root / "idx", 1 << 29, progress=False)
    assert store.current_generation(root / "idx") == gen.name
    assert [p.name for p in (root / "idx").iterdir() if p.name.startswith("gen-")] == [gen.name]
    data[len(data) // 2] ^= 0x5A  # repaired: the same answers (nothing else was touched)
    target.write_bytes(bytes(data))
    with open_index(root / "idx") as idx:
        assert answers(idx, queries) == before


def test_the_command_says_what_it_joined(tmp_path, capsys):
    rng = random.Random(3)
    files, _ = replaced_index(tmp_path, rng)
    idx = str(tmp_path / "idx")
    shards = store.read_header(tmp_path / "idx")[1].shards
    assert main(["stats", idx]) == 0
    assert f"would join its {shards} shards into 1" in capsys.readouterr().out
    assert main(["compact", idx, "--shard-words", "1000000", "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["shards_before"], out["shards_after"]) == (shards, 1)
    assert main(["compact", idx, "--quiet"]) == 0
    assert "none joined" in capsys.readouterr().out
    assert main(["stats", idx]) == 0
    out = capsys.readouterr().out
    assert "in 1 shard(s)" in out and "compact" not in out
    assert main(["compact", idx, "--shard-words", "0"]) == 2
    assert "--shard-words: '0' is not an integer from 1 to 2147483647" in capsys.readouterr().err
    assert main(["compact", str(tmp_path / "missing"), "--quiet"]) != 0
    assert "missing" in capsys.readouterr().err


def test_an_index_without_the_renamed_view_compacts_too(tmp_path):
    rng = random.Random(11)
    files = random_corpus(rng, look_alikes=10)
    corpus = write_files(
        tmp_path / "src", {f"f{i:03d}.py": as_text(f) for i, f in enumerate(files)}
    )
    build_index([corpus], tmp_path / "idx", BuildOptions(shard_words=200, renamed=False, **OPTS))
    queries = queries_of(rng, files, 6)
    with open_index(tmp_path / "idx") as idx:
        before, shards = answers(idx, queries), idx.header.shards
    assert shards > 2
    summary = compact_index(tmp_path / "idx", 1 << 20, progress=False)
    assert (summary.shards_before, summary.shards_after) == (shards, 1)
    with open_index(tmp_path / "idx") as idx:
        assert idx.header.shard_renamed_places == [] and not idx.header.renamed_languages
        assert answers(idx, queries) == before


def test_an_interrupted_compact_leaves_the_index_as_it_was(tmp_path, monkeypatch):
    from index_tools.build import compact

    rng = random.Random(5)
    files, _ = replaced_index(tmp_path, rng)
    generation = store.current_generation(tmp_path / "idx")
    sorted_shards = []

    def interrupted(*args, **kwargs):
        if sorted_shards:
            raise KeyboardInterrupt
        sorted_shards.append(args[1])
        return write_joined(*args, **kwargs)

    from index_tools.build.suffix import write_joined

    monkeypatch.setattr(compact, "write_joined", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compact_index(tmp_path / "idx", 2 * max(store.read_header(tmp_path / "idx")[1].shard_words))
    assert sorted_shards  # (interrupted while the second joined shard was written)
    assert store.current_generation(tmp_path / "idx") == generation
    assert [p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("gen-")] == [
        generation
    ]
    assert store.verify(tmp_path / "idx") == []


def test_the_progress_bar_says_each_step(tmp_path, capsys):
    rng = random.Random(8)
    replaced_index(tmp_path, rng)
    compact_index(tmp_path / "idx", 1 << 20, progress=True)
    err = capsys.readouterr().err
    for step in ("shard 1 of 1", "reading", "sorting the rename-insensitive view", "writing"):
        assert step in err


def test_a_build_of_many_shards_says_compact_would_join_them(tmp_path, capsys):
    """A build bounded by its memory writes many shards, each searched by every lookup: its
    summary says `compact` joins them; a build of one shard says nothing of it."""
    rng = random.Random(4)
    corpus = write_files(
        tmp_path / "src", {f"m{i}.py": as_text(random_words(rng, 400)) for i in range(6)}
    )
    many, one = str(tmp_path / "many"), str(tmp_path / "one")
    assert main(["build", corpus, "--out", many, "--shard-words", "600", "--quiet"]) == 0
    shards = store.read_header(tmp_path / "many")[1].shards
    assert shards > 1
    assert (
        f"shards: {shards} (a lookup searches each: `recitation-index compact` joins them into "
        "about 1 for faster lookups" in capsys.readouterr().out
    )
    assert main(["build", corpus, "--out", one, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "shards: 1\n" in out and "compact" not in out


def test_the_join_after_a_build_follows_the_memory_the_build_was_given():
    """By default a build's shards are compacted when the shard size is the default (the
    memory bound the builder was measured in); a smaller one given bounds the memory, and
    nothing is joined unless asked."""
    assert BuildOptions().join_limit() == DEFAULT_COMPACT_WORDS
    assert BuildOptions(shard_words=DEFAULT_SHARD_WORDS * 2).join_limit() == DEFAULT_COMPACT_WORDS
    assert BuildOptions(shard_words=600).join_limit() == 0
    assert BuildOptions(shard_words=600, compact_words=5000).join_limit() == 5000
    assert BuildOptions(compact_words=0).join_limit() == 0


def test_a_build_compacts_its_shards_and_answers_as_the_shards_it_wrote(tmp_path, capsys):
    """`build --compact-words N`: the shards the build wrote within --shard-words, joined
    into shards of at most N words, one generation published after the other; the
    compacted index answers exactly as the build's shards (and as the brute-force
    reference), and the summary says what became of them."""
    rng = random.Random(13)
    files = random_corpus(rng, look_alikes=12)
    texts = {f"f{i:03d}.py": as_text(f) for i, f in enumerate(files)}
    corpus = write_files(tmp_path / "src", texts)
    apart, joined = str(tmp_path / "apart"), str(tmp_path / "joined")
    common = ["--shard-words", "300", "--quiet", "--jobs", "1"]
    assert main(["build", corpus, "--out", apart, *common]) == 0
    built = store.read_header(Path(apart))[1]
    assert built.shards >= 4
    capsys.readouterr()
    limit = 2 * max(built.shard_words)
    assert main(["build", corpus, "--out", joined, *common, "--compact-words", str(limit)]) == 0
    out = capsys.readouterr().out
    after = len(groups(built.shard_words, limit))
    assert 1 <= after < built.shards
    assert (
        f"shards: {after} (compacted from the build's {built.shards}, each sorted within its "
        "memory)" in out
    )
    header = store.read_header(Path(joined))[1]
    assert header.shards == after
    facts = lambda h: (h.words, h.documents, h.files, h.sources)  # noqa: E731
    assert facts(header) == facts(built)
    assert store.verify(Path(joined)) == []
    queries = queries_of(rng, files, 12)
    with open_index(apart) as a, open_index(joined) as b:
        assert answers(b, queries) == answers(a, queries)
        agrees_with_reference(b, rng, files, list(texts.values()), min_tokens=10)
    assert main(["build", corpus, "--out", joined, *common, "--compact-words", "1000000",
                 "--json"]) == 0  # fmt: skip
    said = json.loads(capsys.readouterr().out)
    assert (said["joined"], said["shards"]) == (built.shards, 1)
    assert said["bytes"] == sum(store.read_header(Path(joined))[1].file_sizes.values())
    assert main(["build", corpus, "--out", joined, "--compact-words", "-1"]) == 2
    assert "--compact-words: '-1' is not an integer from 0" in capsys.readouterr().err


def test_a_build_whose_compaction_fails_is_published_and_says_why(tmp_path, monkeypatch, capsys):
    from index_tools.build import compact

    rng = random.Random(14)
    corpus = write_files(
        tmp_path / "src", {f"m{i}.py": as_text(random_words(rng, 400)) for i in range(6)}
    )
    idx = tmp_path / "idx"

    def broken(*args, **kwargs):
        raise BuildError(f"cannot write the index at {idx}: No space left on device")

    monkeypatch.setattr(compact, "_write_group", broken)
    args = ["--out", str(idx), "--shard-words", "600", "--compact-words", "100000", "--quiet"]
    assert main(["build", corpus, *args]) == 0
    header = store.read_header(idx)[1]
    assert header.shards > 1 and store.verify(idx) == []
    assert (
        f"shards: {header.shards} (not compacted, the index as built: cannot write the index at "
        in capsys.readouterr().out
    )


def test_an_editors_add_create_compacts_the_index_it_builds(tmp_path, capsys):
    rng = random.Random(15)
    corpus = write_files(
        tmp_path / "src", {f"m{i}.py": as_text(random_words(rng, 400)) for i in range(6)}
    )
    idx = tmp_path / "idx"
    args = ["--shard-words", "600", "--compact-words", "100000", "--quiet", "--jobs", "1"]
    assert main(["add", "--create", str(idx), corpus, *args]) == 0
    assert "shards: 1 (compacted from the build's" in capsys.readouterr().out
    assert store.read_header(idx)[1].shards == 1 and store.verify(idx) == []


def test_a_server_following_the_index_switches_to_the_compacted_generation(tmp_path):
    """`compact` links the documents' database into the new generation (one file, two
    names): an index followed across generations (the language server's, `serve`'s) opens
    it while the old generation is still open, and answers from it, the same matches."""
    rng = random.Random(5)
    words = [random_words(rng, 400) for _ in range(6)]
    corpus = write_files(tmp_path / "src", {f"m{i}.py": as_text(w) for i, w in enumerate(words)})
    build_index([corpus], tmp_path / "idx", BuildOptions(shard_words=600, **OPTS))
    query = as_text(words[2][100:200])
    switched, errors = [], []
    following = FollowingIndex(
        tmp_path / "idx", poll_seconds=0, on_switch=switched.append, on_error=errors.append
    )
    try:
        with following.using() as idx:
            before = [m.to_dict() for m in idx.match(query, min_tokens=20)]
        assert before and before[0]["length"] == 100
        compact_index(tmp_path / "idx", 1 << 29, progress=False)
        with following.using() as idx:
            after = [m.to_dict() for m in idx.match(query, min_tokens=20)]
            assert idx.header.shards == 1
    finally:
        following.close()
    assert errors == []
    assert switched == [store.current_generation(tmp_path / "idx")]
    assert after == before
