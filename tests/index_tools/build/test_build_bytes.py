"""The builder's output, byte for byte: every file of a generation (the header without its
timestamps) is what the builder made before its memory was bounded by the shard — on the
standard library cut into several shards, and on randomized corpora (distinct words growing
with the corpus, Unicode, identical files, files larger than a shard, empty files), built
and extended with `add`."""

from __future__ import annotations

import hashlib
import json
import random
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from index_tools import BuildOptions, add_to_index, build_index
from index_tools.store import generations as store

STDLIB = Path(sysconfig.get_paths()["stdlib"])
TIMESTAMPS = ("created", "file_mtimes")


def generation_digest(root: Path, left_out=TIMESTAMPS, format_version=None) -> dict[str, str]:
    """Each file of the live generation by its SHA-256; the header without timestamps (and
    whatever else `left_out` names), its format version read as `format_version` if given."""
    gen = root / (root / store.CURRENT_NAME).read_text().strip()
    out = {}
    for p in sorted(gen.iterdir()):
        if p.name == store.HEADER_NAME:
            header = json.loads(p.read_text())
            for key in left_out:
                header.pop(key, None)
            if format_version is not None:
                header["format_version"] = format_version
            data = json.dumps(header, sort_keys=True).encode()
        else:
            data = p.read_bytes()
        out[p.name] = hashlib.sha256(data).hexdigest()
    return out


def one_digest(root: Path, left_out=TIMESTAMPS, format_version=None) -> str:
    digest = generation_digest(root, left_out, format_version)
    return hashlib.sha256(json.dumps(digest).encode()).hexdigest()


# where the sources were read from and when (a folder's version): not the builder's
MACHINE = (*TIMESTAMPS, "sources")


@pytest.fixture
def one_frame(monkeypatch):
    """Texts stored one zstd frame a document and no line tables, as the builder before
    stored them (format 6, said in the header compared; format 7 keeps a long text in
    frames: tests/index_tools/test_frames.py)."""
    from index_tools.build import process

    monkeypatch.setattr(process, "FRAME_CHARS", 1 << 62)
    # nor a line table (format 8: tests/index_tools/test_line_table.py): docs.mdb as it was
    monkeypatch.setattr(store, "DOC_DBS", store.DOC_DBS[:4])


NAMES = ["alpha", "beta", "gamma", "delta", "value", "result", "index", "count", "self"]
UNICODE = ["naïve", "größe", "数据", "変数", "δ", "ñandú", "😀", "x\u0301"]
PUNCT = list("()[]{}:.,=+-*/%<>!&|^~@;")


def random_text(rng: random.Random, words: int, rare: float, tag: int) -> str:
    """Python-like lines; `rare` of the words are new to the corpus (vocabulary growth)."""
    out, line = [], []
    for i in range(words):
        r = rng.random()
        if r < rare:
            w = f"w{tag}_{rng.randrange(1 << 30):x}"
        elif r < rare + 0.05:
            w = rng.choice(UNICODE)
        elif r < 0.55:
            w = rng.choice(NAMES)
        else:
            w = rng.choice(PUNCT)
        line.append(w)
        if rng.random() < 0.12 or i == words - 1:
            out.append("    " * rng.randrange(3) + " ".join(line))
            line = []
    return "\n".join(out) + "\n"


def random_corpus(root: Path, seed: int, files: int = 120) -> list[str]:
    """Two sources (folders) of Python and JavaScript files, some identical, some empty,
    one larger than a small shard."""
    rng = random.Random(seed)
    texts: list[str] = []
    sources = [root / "one", root / "two"]
    for k in range(files):
        src = sources[k % 2]
        src.mkdir(parents=True, exist_ok=True)
        ext = ".py" if rng.random() < 0.7 else ".js"
        kind = rng.random()
        if kind < 0.15 and texts:
            text = rng.choice(texts)  # an identical file
        elif kind < 0.2:
            text = ""
        elif kind < 0.22:
            text = random_text(rng, 9000, 0.3, k)
        else:
            text = random_text(rng, rng.randrange(5, 900), rng.choice((0.0, 0.05, 0.4)), k)
        texts.append(text)
        (src / f"f{k:03d}{ext}").write_text(text, encoding="utf-8")
    return [str(s) for s in sources]


OPTS = dict(jobs=1, progress=False, shard_words=3000)

# the digests of these builds by the builder before its memory was bounded by the shard
# (commit 440a5b9): the same input gives the same bytes
BEFORE = {
    "random-7": "73d36477859771104f76524be8ddaf19bc7f0da09668e437e71c2f16740bc2ee",
    "random-7+add": "5a0244eba0e4de8eb71a6902f7913164b9c32c45f178f2559e01b78de7ee24c3",
    "random-11-plain": "5741db954747119bc25ffe88b86e8f4185c368ec92318dca92908ca44ba860ba",
}


def test_a_randomized_corpus_gives_the_bytes_of_the_builder_before(
    tmp_path, monkeypatch, one_frame
):
    monkeypatch.chdir(tmp_path)  # the sources named as the digests were taken
    sources = random_corpus(Path("src"), 7)
    summary = build_index(sources, "idx", BuildOptions(**OPTS))
    assert summary.shards > 10 and summary.duplicates > 10
    assert one_digest(Path("idx"), MACHINE, 6) == BEFORE["random-7"]
    more = random_corpus(Path("more"), 8, files=40)
    add_to_index("idx", more, BuildOptions(**OPTS))
    assert one_digest(Path("idx"), MACHINE, 6) == BEFORE["random-7+add"]


def test_workers_and_no_renamed_view_give_the_bytes_of_the_builder_before(
    tmp_path, monkeypatch, one_frame
):
    monkeypatch.chdir(tmp_path)
    sources = random_corpus(Path("src"), 11, files=60)
    options = BuildOptions(jobs=2, progress=False, shard_words=50_000, renamed=False)
    build_index(sources, "idx", options)
    assert one_digest(Path("idx"), MACHINE, 6) == BEFORE["random-11-plain"]


@pytest.fixture
def builder_before(monkeypatch):
    """Build with the vocabulary and shard buffer of the builder before (in memory)."""
    from reference_builder import DictVocabulary, ListShardBuffer

    from index_tools.build import local

    def use():
        monkeypatch.setattr(local, "Vocabulary", DictVocabulary)
        monkeypatch.setattr(local, "ShardBuffer", ListShardBuffer)

    return use


def test_the_standard_library_in_many_shards_gives_the_bytes_of_the_builder_before(
    tmp_path, builder_before
):
    parts = [str(STDLIB / p) for p in ("email", "json", "asyncio", "unittest", "xml")]
    more = [str(STDLIB / p) for p in ("http", "logging")]
    options = dict(jobs=2, progress=False, shard_words=40_000)
    summary = build_index(parts, tmp_path / "now", BuildOptions(**options))
    add_to_index(tmp_path / "now", more, BuildOptions(**options))
    builder_before()
    build_index(parts, tmp_path / "before", BuildOptions(**options))
    add_to_index(tmp_path / "before", more, BuildOptions(**options))
    assert summary.shards >= 10 and summary.words > 400_000
    assert generation_digest(tmp_path / "now") == generation_digest(tmp_path / "before")


@pytest.mark.parametrize("rehash_words", [1 << 20, 97])
def test_the_vocabulary_numbers_words_as_a_dict_does_whatever_their_hashes(
    monkeypatch, rehash_words
):
    """Words of equal hashes (forced: a handful of values for thousands of words) are told
    apart by their bytes; ids come in order of first appearance, as the dict's did; the
    table grown by placing all its words at once, or a few at a time."""
    from reference_builder import DictVocabulary

    from index_tools.build import local
    from index_tools.build import process as process_module
    from index_tools.build.local import Vocabulary
    from index_tools.build.process import process
    from index_tools.store import shards

    monkeypatch.setattr(local, "REHASH_WORDS", rehash_words)

    rng = random.Random(3)
    docs = [random_text(rng, rng.randrange(0, 400), 0.5, k) for k in range(300)]
    docs += ["a\nb\n" * 3, "数据 x\u0301 😀", ""]

    def few_hashes(words):
        packed, hashes = shards.packed_words(words)
        return packed, hashes % np.uint64(97)

    for hashing in ("real", "colliding"):
        if hashing == "colliding":
            monkeypatch.setattr(process_module, "packed_words", few_hashes)
            docs = docs[:30] + docs[-3:]
        before, now = DictVocabulary(), Vocabulary()
        for text in docs:
            pd = process(text)
            expected = before.map(pd)
            assert np.array_equal(now.map(pd.pack()), expected)
        assert now.words == before.words
        again = Vocabulary(bytes(now.blob), np.frombuffer(now.hashes, dtype=np.uint64))
        for text in docs[:50]:
            assert np.array_equal(again.map(process(text).pack()), before.map(process(text)))


def test_finding_a_documents_words_takes_memory_of_its_words_not_of_the_vocabulary():
    """A document's lookup in a vocabulary of 400K words allocates memory for its own
    words: it copied every word's offset (8 bytes a word of the vocabulary) once per
    document, which made a build's documents slower as its vocabulary grew (3.2 MB here)."""
    import tracemalloc

    from index_tools.build.local import Vocabulary
    from index_tools.build.process import process
    from index_tools.store.shards import FIRST_WORD_ID

    vocabulary = Vocabulary()
    for start in range(0, 400_000, 50_000):
        vocabulary.map(process(" ".join(f"w{k}" for k in range(start, start + 50_000))).pack())
    doc = process("def w17(w399999):\n    return w5 + new_word\n").pack()
    first = vocabulary.map(doc)  # its new words numbered
    tracemalloc.start()
    try:
        ids = vocabulary.map(doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 << 10, peak
    assert np.array_equal(ids, first)
    words = vocabulary.words
    assert [words[i - FIRST_WORD_ID] for i in ids] == [
        "def", "w17", "(", "w399999", ")", ":", "return", "w5", "+", "new_word",
    ]  # fmt: skip


def held_by_the_builder(tmp_path: Path, name: str, sources: list[str]) -> tuple[int, int, int]:
    """(bytes the builder holds when its last shard is to be written, words, distinct
    words): Python's traced memory then, less what it held before the build."""
    import tracemalloc

    from index_tools.build import local

    held = []
    close = local.ShardBuffer.close

    def measured(self):
        held.append(tracemalloc.get_traced_memory()[0])
        return close(self)

    warm = tmp_path / f"{name}-warm"  # what a build imports, imported before
    warm.mkdir()
    (warm / "a.py").write_text("def f(x):\n    return x\n")
    build_index([str(warm)], tmp_path / f"{name}-warm-idx", BuildOptions(jobs=1, progress=False))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        local.ShardBuffer.close = measured
        summary = build_index(  # (the workers' caches of words are theirs, bounded)
            sources, tmp_path / name, BuildOptions(jobs=2, progress=False, shard_words=1 << 27)
        )
    finally:
        local.ShardBuffer.close = close
        tracemalloc.stop()
    return held[0] - before, summary.words, summary.vocabulary


def test_the_shard_being_filled_and_the_vocabulary_are_not_held_as_objects(
    tmp_path, builder_before
):
    """What grows with the corpus while documents are read: the shard being filled (on
    disk now, in memory before) and the vocabulary (its words packed now, a dict before)."""
    rng = random.Random(5)
    root = tmp_path / "src"
    root.mkdir()
    for k in range(80):
        (root / f"f{k:03d}.py").write_text(random_text(rng, 6000, 0.15, k))
    now, words, distinct = held_by_the_builder(tmp_path, "now", [str(root)])
    assert words > 400_000 and distinct > 60_000
    # the packed vocabulary (about 40 bytes a word) and the buffers of the shard's two files
    assert now < 50 * distinct + words // 4 + (4 << 20)
    builder_before()
    before, _, _ = held_by_the_builder(tmp_path, "before", [str(root)])
    assert before > 4 * words + 100 * distinct  # every id in memory, a dict of words
    assert now < before / 2


@pytest.fixture
def drops(monkeypatch) -> list[int]:
    """Each time the writer drops the pages of docs.mdb its map holds: the bytes it had,
    their pages really dropped (small transactions: the builder commits every DOC_BATCH
    documents, and drops after that)."""
    from index_tools.build import local

    monkeypatch.setattr(local, "DOC_BATCH", 4)
    count: list[int] = []
    real = local.drop_pages

    def counted(address: int, length: int) -> bool:
        dropped = real(address, length)
        count.append(length if dropped else 0)
        return dropped

    monkeypatch.setattr(local, "drop_pages", counted)
    return count


def test_dropping_the_documents_map_changes_no_byte(tmp_path, monkeypatch, one_frame, drops):
    """The writer drops the pages its map of docs.mdb holds as the file grows (they were the
    builder's memory): the same bytes whether it does so after every transaction or never,
    building and replacing a source's older version (`add`, which takes its files out)."""
    from index_tools.build import local

    monkeypatch.chdir(tmp_path)
    sources = random_corpus(Path("src"), 7)
    digests = {}
    for way, every in (("never", 1 << 40), ("always", 1)):
        monkeypatch.setattr(local, "DROP_BYTES", every)
        build_index(sources, way, BuildOptions(**OPTS))
        changed = Path(sources[0]) / "f000.py"
        kept = changed.read_text(encoding="utf-8")
        changed.write_text(kept + "x = 1\n", encoding="utf-8")
        add_to_index(way, [sources[0]], BuildOptions(**OPTS))
        changed.write_text(kept, encoding="utf-8")
        digests[way] = one_digest(Path(way), MACHINE)
        if way == "never":
            assert drops == []
    if sys.platform.startswith("linux"):
        assert len(drops) > 10 and all(drops)
    else:  # (the pages are the system's to keep)
        assert drops == []
    assert digests["never"] == digests["always"]
