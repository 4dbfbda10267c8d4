"""Bad input and safety: missing, damaged and foreign indexes; interrupted builds; `add`."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from engine_fixtures import HAVERSINE, ROUTES, make_repo

from index_tools import (
    BuildError,
    BuildOptions,
    IndexOpenError,
    add_to_index,
    build_index,
    open_index,
    tokenize,
)
from index_tools.store.generations import verify

OPTS = BuildOptions(jobs=1, progress=False)


@pytest.fixture
def small_index(tmp_path):
    repo, _ = make_repo(
        tmp_path / "routes", {"routes.py": ROUTES}, "https://github.com/maps/routes"
    )
    out = tmp_path / "idx"
    build_index([str(repo)], out, OPTS)
    return out


def live_gen(root):
    return root / (root / "CURRENT").read_text().strip()


def test_missing_index(tmp_path):
    with pytest.raises(IndexOpenError, match="no index at"):
        open_index(tmp_path / "nowhere")


def test_folder_that_is_not_an_index(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(IndexOpenError, match="not a Recitation index"):
        open_index(tmp_path)


@pytest.mark.parametrize("version", [99, 9, 5])  # 5: 4-byte ids everywhere, before widths
def test_other_format_version_is_refused(small_index, version):
    header = live_gen(small_index) / "HEADER.json"
    data = json.loads(header.read_text())
    data["format_version"] = version
    header.write_text(json.dumps(data))
    with pytest.raises(
        IndexOpenError,
        match=f"format version {version}; this Recitation reads versions 6 to 8: rebuild it "
        "with `recitation-index build`",
    ):
        open_index(small_index)


def test_one_index_opened_twice_in_a_process(small_index, tmp_path):
    """Two workspaces naming one index (one through a link, one a copy of it made of hard
    links: `cp -al`, or a generation `compact` linked), or a handle reopened before the old
    one closed: all open and answer, and closing one leaves the others whole (LMDB refuses
    a second open of one file in a process: it was reported as damage)."""
    link = tmp_path / "link"
    link.symlink_to(small_index, target_is_directory=True)
    copy = tmp_path / "hard-linked copy"
    shutil.copytree(small_index, copy, copy_function=os.link)
    first, second, third = open_index(small_index), open_index(small_index), open_index(link)
    fourth = open_index(copy)
    try:
        (m,) = fourth.match(ROUTES)
        assert m.length == len(tokenize(ROUTES)) and m.file_count == 1
        fourth.close()
        for idx in (first, second, third):
            (m,) = idx.match(ROUTES)
            assert m.length == len(tokenize(ROUTES)) and m.file_count == 1
        first.close()
        second.close()
        (m,) = third.match(ROUTES)
        assert m.sources[0].path == "routes.py"
    finally:
        third.close()
    with open_index(small_index) as again:  # opened anew once every reader closed
        assert again.match(ROUTES)


def test_truncated_file_is_reported_as_damaged(small_index):
    shard = live_gen(small_index) / "shard-000.sa"
    shard.write_bytes(shard.read_bytes()[:-8])
    with pytest.raises(IndexOpenError, match="damaged"):
        open_index(small_index)


def test_header_missing_is_reported(small_index):
    (live_gen(small_index) / "HEADER.json").unlink()
    with pytest.raises(IndexOpenError, match="incomplete or damaged"):
        open_index(small_index)


def test_verify_detects_changed_bytes(small_index):
    assert verify(small_index) == []
    text = live_gen(small_index) / "text.zst"
    data = bytearray(text.read_bytes())
    data[10] ^= 0xFF
    text.write_bytes(bytes(data))
    assert any("text.zst" in p for p in verify(small_index))


def test_interrupted_build_leaves_the_previous_index_intact(small_index, tmp_path):
    before = open_index(small_index)
    expected = [m.to_dict() for m in before.match(HAVERSINE)]
    before.close()
    assert expected

    class Exploding:
        name, skipped = "exploding", {}

        def describe(self):
            return {"spec": "exploding", "name": self.name}

        def documents(self, own_licenses=True):
            from index_tools import Document, Origin

            yield Document(ROUTES, Origin("x/y", "a.py"), "python")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index([Exploding()], small_index, OPTS)
    gens = [p.name for p in small_index.iterdir() if p.name.startswith("gen-")]
    assert len(gens) == 1  # the half-written generation was removed
    with open_index(small_index) as idx:
        assert [m.to_dict() for m in idx.match(HAVERSINE)] == expected


def test_reader_keeps_working_while_a_new_generation_is_published(small_index, tmp_path):
    reader = open_index(small_index)
    repo, _ = make_repo(tmp_path / "other", {"geo.py": HAVERSINE}, None)
    build_index([str(repo)], small_index, OPTS)  # replaces the live generation
    (m,) = reader.match(HAVERSINE)  # the old mapping still answers
    assert m.sources[0].repository == "maps/routes"
    reader.close()
    with open_index(small_index) as idx:
        (m,) = idx.match(HAVERSINE)
        assert m.sources[0].repository == "other"


def test_add_extends_and_counts_duplicates(small_index, tmp_path):
    repo, _ = make_repo(
        tmp_path / "mirror", {"copy/routes.py": ROUTES, "geo.py": HAVERSINE},
        "https://gitlab.com/mirror/routes.git",
    )  # fmt: skip
    summary = add_to_index(small_index, [str(repo)], OPTS)
    assert summary.files == 2 and summary.duplicates == 1 and summary.documents == 1
    with open_index(small_index) as idx:
        s = idx.summary()
        assert s["files"] == 3 and s["documents"] == 2
        (m,) = idx.match(HAVERSINE)
        assert m.file_count == 3
        hosts = sorted(src.url.split("/")[2] for src in m.sources)
        assert hosts == ["github.com", "gitlab.com", "gitlab.com"]
    assert verify(small_index) == []


def test_empty_corpus_builds_an_empty_index(tmp_path):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "idx"
    summary = build_index([str(tmp_path / "empty")], out, OPTS)
    assert summary.files == 0 and summary.words == 0
    with open_index(out) as idx:
        assert idx.summary()["documents"] == 0
        assert idx.match(HAVERSINE) == []


def test_bad_files_are_skipped_by_reason(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "good.py").write_text(HAVERSINE)
    (corpus / "latin1.py").write_bytes(b"x = '\xe9\xe8'\n")
    (corpus / "nul.py").write_bytes(b"x = 1\x00\x00\n")
    (corpus / "huge.js").write_text("a" * 50_000_000)
    out = tmp_path / "idx"
    summary = build_index([str(corpus)], out, BuildOptions(jobs=2, progress=False))
    assert summary.documents == 1
    assert summary.skipped["undecodable"] == 1
    assert summary.skipped["binary"] == 1
    assert summary.skipped["oversize"] == 1
    with open_index(out) as idx:
        assert idx.summary()["skipped"]["oversize"] == 1
        assert len(idx.match(HAVERSINE)) == 1


def test_bad_sources_and_params(tmp_path):
    with pytest.raises(BuildError, match="no such file"):
        build_index([str(tmp_path / "missing")], tmp_path / "idx", OPTS)
    with pytest.raises(BuildError, match="shard words"):
        build_index(["python:stdlib"], tmp_path / "idx", BuildOptions(shard_words=0))
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "mine.txt").write_text("keep me")
    with pytest.raises(BuildError, match="not empty and is not an index"):
        build_index([str(tmp_path)], tmp_path / "occupied", OPTS)
    assert (tmp_path / "occupied" / "mine.txt").read_text() == "keep me"


def test_many_shards_give_the_same_answers(tmp_path):
    """Small shards (each a few documents) answer as one shard does: a lookup asks every
    shard and adds up their counts."""
    from engine_fixtures import GEO, make_corpus

    info = make_corpus(tmp_path / "corpus")
    one, many = tmp_path / "one", tmp_path / "many"
    build_index(info["repos"], one, BuildOptions(jobs=2, progress=False))
    build_index(info["repos"], many, BuildOptions(jobs=2, progress=False, shard_words=100))
    with open_index(one) as a, open_index(many) as b:
        sa, sb = a.summary(), b.summary()
        assert sa["shards"] == 1 and sb["shards"] == sb["documents"] > 1
        for key in ("documents", "files", "words", "vocabulary"):
            assert sa[key] == sb[key]
        assert [m.to_dict() for m in a.match(GEO)] == [m.to_dict() for m in b.match(GEO)]


def test_a_vocabulary_of_many_chunks_is_written_once_and_extended_by_add(tmp_path):
    """The vocabulary is written in chunks of 65,536 words: each word once (past two chunks
    it was not), so that `add` reads back exactly the ids the shards use."""
    from index_tools.store import shards

    src = tmp_path / "src"
    src.mkdir()
    names = [f"name_{i:06d}" for i in range(140_000)]
    for k in range(0, len(names), 10_000):
        (src / f"names_{k}.py").write_text(
            "\n".join(f"{n} = {i}" for i, n in enumerate(names[k : k + 10_000]))
        )
    build_index([str(src)], tmp_path / "idx", OPTS)
    gen = live_gen(tmp_path / "idx")
    words = shards.read_vocabulary(gen)
    assert len(words) == len(set(words)) and set(names) <= set(words)
    assert (gen / shards.WORDS_NAME).stat().st_size == sum(len(w.encode()) + 1 for w in words)
    more = tmp_path / "more"
    more.mkdir()
    tail = "\n".join(f"{n} = {n}_again + 1" for n in names[-200:])
    (more / "more.py").write_text(tail)
    add_to_index(tmp_path / "idx", [str(more)], OPTS)
    with open_index(tmp_path / "idx") as idx:
        (m,) = idx.match(tail, min_tokens=60)
        assert m.file_count == 1 and m.length == len(tokenize(tail))
        assert m.sources[0].path.endswith("more.py")
    assert verify(tmp_path / "idx") == []


def test_words_whose_hashes_collide_get_their_own_ids():
    """The vocabulary is searched by 64-bit hashes: where two words share one (made here by
    giving every word the same hash), the stored word decides, whichever entry comes first."""
    import numpy as np

    from index_tools.store import shards

    words = ["alpha", "beta", "gamma", "delta"]
    encoded = b"".join(w.encode() + b"\n" for w in words)
    offsets = np.zeros(len(words) + 1, dtype="<u8")
    np.cumsum([len(w) + 1 for w in words], out=offsets[1:])
    lookup = np.empty(len(words), dtype=shards.LOOKUP_DTYPE)
    lookup["hash"] = shards.word_hash("gamma")  # every entry: gamma's hash
    lookup["id"] = np.arange(len(words)) + shards.FIRST_WORD_ID
    vocabulary = shards.Vocabulary(encoded, offsets.tobytes(), lookup.tobytes(), len(words))
    # gamma (id 4) behind alpha and beta under its hash; alpha's own hash is not stored
    assert vocabulary.ids(["gamma", "alpha", "epsilon", "gamma"]) == {"gamma": 4}
    lookup["hash"] = [shards.word_hash(w) for w in words]
    lookup.sort(order=("hash", "id"))
    vocabulary = shards.Vocabulary(encoded, offsets.tobytes(), lookup.tobytes(), len(words))
    assert vocabulary.ids(words + ["epsilon"]) == {w: i + 2 for i, w in enumerate(words)}


def test_the_vocabulary_finds_every_word_in_any_order():
    """Words are searched in their hashes' order and answered in the asked order: a shuffled
    sample of a vocabulary, with words it lacks and words asked twice."""
    import random

    import numpy as np

    from index_tools.store import shards

    rng = random.Random(4)
    words = list(
        dict.fromkeys("".join(rng.choices("abcxyz_Ωé", k=rng.randint(1, 9))) for _ in range(3000))
    )
    encoded = b"".join(w.encode() + b"\n" for w in words)
    offsets = np.zeros(len(words) + 1, dtype="<u8")
    np.cumsum([len(w.encode()) + 1 for w in words], out=offsets[1:])
    lookup = np.empty(len(words), dtype=shards.LOOKUP_DTYPE)
    lookup["hash"] = [shards.word_hash(w) for w in words]
    lookup["id"] = np.arange(len(words)) + shards.FIRST_WORD_ID
    lookup.sort(order=("hash", "id"))
    vocabulary = shards.Vocabulary(encoded, offsets.tobytes(), lookup.tobytes(), len(words))
    ids = {w: i + shards.FIRST_WORD_ID for i, w in enumerate(words)}
    for _ in range(20):
        asked = rng.sample(words, 60) + [f"missing{rng.random()}" for _ in range(5)]
        asked += rng.sample(asked, 5)
        rng.shuffle(asked)
        assert vocabulary.ids(asked) == {w: ids[w] for w in asked if w in ids}
