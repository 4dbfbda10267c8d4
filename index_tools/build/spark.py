"""The Spark builder: the local builder's map/reduce on Apache Spark, writing the same files.

    staging (driver)  the sources are read once, in order, into compressed chunk files of
                      (seq, text, origin, language); seq is the file's place in that order
    pass 1 (Spark)    chunk -> (content hash, seq, origin); reduced by hash to the first seq,
                      the number of occurrences and the first ORIGIN_CAP origins; sorted by
                      first seq and numbered: document ids exactly as the local builder
                      assigns them (order of first occurrence); every file's (seq, hash)
                      joined with them: the document of each file, the sources' shares
    pass 2 (Spark)    chunk -> `process()` of each first occurrence -> a document record, its
                      distinct words and their places; each word reduced to its first
                      (document, place): the vocabulary's ids in the local builder's order,
                      joined back to each document's words (no task holds the vocabulary)
    docs (driver)     document records in id order, joined with their occurrences ->
                      docs.mdb and text.zst, as the local builder writes them; the words of
                      each document decide the shards (the local builder's rule)
    shards (Spark)    each document's word ids go to its shard; each shard task sorts its
                      suffix arrays and writes its files (`joined_shard`, `write_joined`);
                      an executor's shard tasks take turns (`shard_turn`): its memory is
                      one shard's sort beside the JVM, whatever the corpus

The result is the same index, byte for byte, as `build_index` makes of the same sources; it
is published atomically in the same way. Executors write the shard
files into the new generation directory and read the staged chunks from beside it, so on a
cluster the output directory must be on a filesystem that every node mounts.

PySpark is an optional dependency (`pip install 'recitation[spark]'`, Java 17): it is
imported only when a Spark build runs.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import sys
import tempfile
import time
import uuid
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import zstandard

from ..store import generations as store
from ..store import shards as files
from ..store.lock import turn
from .local import (
    ORIGIN_CAP,
    BuildError,
    BuildOptions,
    BuildSummary,
    DocStore,
    _documents,
    abandon,
    compacted_shards,
    give_back_memory,
    new_generation,
    new_header,
    prepare_build,
    writing,
)
from .process import ProcessedDoc, content_hash, process
from .suffix import joined_shard, write_joined

DEFAULT_CHUNK_BYTES = 8 << 20  # text per staged chunk (one map task each)
STAGE_PREFIX = store.STAGE_PREFIX

PYSPARK_MISSING = (
    "--engine spark needs PySpark: pip install 'recitation[spark]' (and Java 17 on PATH)"
)


def require_pyspark() -> None:
    """Raise a one-line BuildError when PySpark or Java is not available."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise BuildError(PYSPARK_MISSING) from None
    java_home = os.environ.get("JAVA_HOME")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        raise BuildError("--engine spark needs Java 17 (no `java` on PATH and no JAVA_HOME)")


# --- staging (driver) ----------------------------------------------------------------------


def _write_chunk(path: Path, records: list) -> None:
    data = zstandard.ZstdCompressor(level=1).compress(pickle.dumps(records, protocol=5))
    path.write_bytes(data)


def _read_chunk(path: str) -> list:
    with open(path, "rb") as f:
        return pickle.loads(zstandard.ZstdDecompressor().decompress(f.read()))


def _stage(
    sources, stage: Path, chunk_bytes: int, summary: BuildSummary, files_per_source: list[int]
) -> tuple[list, int]:
    """Chunk files of the sources' documents, in source order; returns (paths, files)."""
    paths: list[str] = []
    batch: list = []
    size = 0
    seq = 0
    for doc in _documents(sources, summary, files_per_source):
        batch.append((seq, doc.text, doc.origin.to_dict(), doc.language))
        seq += 1
        size += len(doc.text)
        if size >= chunk_bytes:
            path = stage / f"chunk-{len(paths):06d}.pkl.zst"
            _write_chunk(path, batch)
            paths.append(str(path))
            batch, size = [], 0
    if batch:
        path = stage / f"chunk-{len(paths):06d}.pkl.zst"
        _write_chunk(path, batch)
        paths.append(str(path))
    return paths, seq


# --- pass 1: deduplication and document ids -------------------------------------------------


def _occurrences(path: str):
    for seq, text, origin, _language in _read_chunk(path):
        yield content_hash(text), (seq, 1, [(seq, origin)])


def _seq_hashes(path: str):
    for seq, text, _origin, _language in _read_chunk(path):
        yield content_hash(text), seq


def _merge_occurrences(a, b):
    """First seq, count and the earliest ORIGIN_CAP origins of one content hash."""
    origins = sorted(a[2] + b[2], key=lambda o: o[0])[:ORIGIN_CAP]
    return min(a[0], b[0]), a[1] + b[1], origins


# --- pass 2: processing, the vocabulary -------------------------------------------------------


def _process_chunk(path: str, renamed: bool, doc_of_seq: np.ndarray):
    """(doc, (record, distinct words, local ids, identifiers)) per first occurrence."""
    for seq, text, _origin, language in _read_chunk(path):
        doc_id = int(doc_of_seq[seq])
        if doc_id < 0:
            continue  # a later copy of a file already stored
        pd = process(text, language, renamed)
        record = (pd.words, language, pd.content_hash, pd.blocks, pd.ztext, pd.frames, pd.lines)
        yield doc_id, (record, pd.vocabulary, pd.local_ids, pd.identifiers)


def _first_places(item):
    """(word, (document, its place among the document's distinct words))."""
    doc_id, (_record, vocabulary, _ids, _mask) = item
    return ((w, (doc_id, i)) for i, w in enumerate(vocabulary))


def _word_places(item):
    """(word, (document, its place among the document's distinct words))."""
    doc_id, (_record, words, _local, _mask) = item
    return ((w, (doc_id, i)) for i, w in enumerate(words))


def _table(places) -> np.ndarray:
    """A document's distinct words' ids, from (place, index in the vocabulary) pairs."""
    places = list(places)
    table = np.empty(len(places), dtype=np.uint32)
    for i, index in places:
        table[i] = files.FIRST_WORD_ID + index
    return table


def _shard_docs(item, shard_of_doc: np.ndarray):
    doc_id, ((local, mask), table) = item
    ids = table[local] if table is not None else np.empty(0, dtype=np.uint32)
    return int(shard_of_doc[doc_id]), (doc_id, ids, mask)


def _write_shard_task(index: int, items, gen: str, first_shard: int, stride: int, top: int):
    with shard_turn(gen):  # before the shuffle's documents are read
        yield from _write_shard(index, items, gen, first_shard, stride, top)


def _write_shard(index: int, items, gen: str, first_shard: int, stride: int, top: int):
    docs = sorted(items, key=lambda x: x[1][0])
    ids = [d[1][1] for d in docs]
    masks = [d[1][2] for d in docs] if stride else None
    del docs  # (the lists hold the arrays alone: `joined_shard` lets each go once joined)
    shard = first_shard + index
    for part in files.SHARD_PARTS + files.RENAMED_PARTS + files.TOP_PARTS:  # a retried
        (Path(gen) / files.shard_file(shard, part)).unlink(missing_ok=True)  # task starts over
    if ids:
        joined = joined_shard(ids, masks)
        give_back_memory()  # (the documents' many small arrays, freed: the C heap keeps them)
        try:
            yield index, write_joined(Path(gen), shard, joined, stride, top)
        finally:
            del joined
            give_back_memory()


def shard_turn(gen: str):
    """One shard task at a time on an executor (its memory is then one shard's): an OS lock
    in the executor's own local directory (every task of this build on it takes turns; a
    task that waits has read nothing yet)."""
    local = (os.environ.get("SPARK_LOCAL_DIRS") or tempfile.gettempdir()).split(",")[0]
    key = hashlib.sha256(gen.encode()).hexdigest()[:16]
    return turn(Path(local) / f"recitation-shard-{key}.lock")


def shard_cuts(words_per_doc: np.ndarray, limit: int) -> np.ndarray:
    """The shard of each document, by the local builder's rule: a shard takes documents in
    id order until the next would take it past `limit` words."""
    shard = np.empty(len(words_per_doc), dtype=np.int64)
    current, used = 0, 0
    for i, w in enumerate(words_per_doc.tolist()):
        if used and used + w > limit:
            current, used = current + 1, 0
        shard[i] = current
        used += w
    return shard


# --- docs (driver) ----------------------------------------------------------------------------


class _DocsWriter:
    """The driver's side: documents arrive in id order and go to a `DocStore`."""

    def __init__(self, gen: Path):
        self.docs = DocStore(gen)
        self.next_doc = 0

    def add(self, doc_id: int, record: tuple, occurrences: int, origins: list) -> int:
        words, language, chash, blocks, ztext, frames, lines = record
        if doc_id != self.next_doc:
            raise BuildError(f"internal error: document {doc_id} arrived, {self.next_doc} due")
        self.next_doc += 1
        pd = ProcessedDoc(
            chash,
            words,
            blocks,
            ztext,
            [],
            np.empty(0, dtype=np.uint32),
            frames=frames,
            lines=lines,
        )
        self.docs.put(doc_id, pd, language, origins, occurrences)
        self.docs.tick()
        return words

    def close(self) -> None:
        self.docs.close()


# --- Spark ------------------------------------------------------------------------------------


def _package_zip(tmp: Path) -> str:
    """index_tools as a zip, shipped to a cluster's executors."""
    pkg = Path(__file__).resolve().parent.parent
    path = tmp / "index_tools.zip"
    with zipfile.ZipFile(path, "w") as z:
        for p in pkg.rglob("*.py"):
            z.write(p, p.relative_to(pkg.parent).as_posix())
    return str(path)


def _context(master: str, local_dir: Path, settings: dict[str, str]):
    from pyspark import SparkConf, SparkContext

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = (
        SparkConf()
        .setAppName("recitation-index build")
        .setMaster(master)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.local.dir", str(local_dir))
        .setIfMissing("spark.python.worker.memory", "512m")
        .setIfMissing("spark.python.worker.reuse", "false")  # a task's memory ends with it
        .setAll(list(settings.items()))
    )
    if master.startswith("local"):
        conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
        conf.setIfMissing("spark.python.daemon.module", "index_tools.build.spark_daemon")
        if not conf.contains("spark.driver.memory"):
            conf.set("spark.driver.memory", "1g")
    sc = SparkContext(conf=conf)
    sc.setLogLevel("ERROR")
    return sc


def build_index_spark(
    specs: list,
    out: str | os.PathLike,
    options: BuildOptions | None = None,
    *,
    master: str | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    spark_context=None,
    settings: dict[str, str] | None = None,
) -> BuildSummary:
    """Build a new index of `specs` on Spark and publish it at `out`.

    `master` defaults to local mode with `options.jobs` cores (all when 0); `settings` are
    Spark's (`spark.driver.memory`...), over the builder's; an existing SparkContext can be
    passed instead (it is left running).
    """
    require_pyspark()
    opts = options or BuildOptions()
    sources, root = prepare_build(specs, out, opts)
    with writing(root):
        started = time.perf_counter()
        gen = new_generation(root)
        header = new_header(opts, sources)
        summary = BuildSummary(path=str(root))
        stage = root / f"{STAGE_PREFIX}{uuid.uuid4().hex[:8]}"
        sc = None
        try:
            stage.mkdir()
            per_source: list[int] = []
            chunks, files_seen = _stage(sources, stage, chunk_bytes, summary, per_source)
            header.source_files = per_source
            sc = spark_context or _context(
                master or f"local[{opts.jobs or '*'}]",
                Path(tempfile.mkdtemp(dir=stage)),
                settings or {},
            )
            if spark_context is None and not sc.master.startswith("local"):
                sc.addPyFile(_package_zip(stage))
            _run(sc, chunks, files_seen, gen, opts, header, summary)
            h = header
            h.documents, h.words, h.files = summary.documents, summary.words, summary.files
            h.skipped = dict(Counter(h.skipped) + summary.skipped)
            store.finalize_generation(gen, h)
            store.publish(root, gen)
            summary.bytes = sum(h.file_sizes.values())
            summary.seconds = time.perf_counter() - started
            return summary
        except BaseException as e:
            abandon(gen, e)
            if type(e).__module__.startswith(("py4j", "pyspark")):
                raise BuildError(spark_failure(e)) from None
            raise
        finally:
            if sc is not None and spark_context is None:
                sc.stop()
            shutil.rmtree(stage, ignore_errors=True)


def spark_failure(e: BaseException) -> str:
    """One line for a failed Spark build: Java's exception, or that Spark's JVM is gone
    (its message is then out of reach: asking the JVM for it would fail again)."""
    try:
        java = e.java_exception.toString()  # type: ignore[attr-defined]
    except Exception:
        java = ""
    if java:
        causes = [line for line in java.splitlines() if "Error" in line or "Exception" in line]
        return f"the Spark build failed: {(causes[-1] if causes else java).strip()[:500]}"
    return (
        "the Spark build failed: Spark's JVM did not start or ended (its log above says "
        "why; when it ran out of memory, give it more: --spark-conf spark.driver.memory=4g)"
    )


def _run(sc, chunks, files_seen, gen: Path, opts: BuildOptions, header, summary: BuildSummary):
    from pyspark import StorageLevel

    summary.files = files_seen
    parallel = max(2, sc.defaultParallelism)
    # what the driver reads one partition at a time (the documents' records, the
    # vocabulary) is cut into as many partitions as staged chunks: each about a chunk's
    # size, never a share of the corpus (the JVM's memory stays the same at any size)
    many = max(parallel, len(chunks))
    paths = sc.parallelize(chunks, max(len(chunks), 1))

    # the RDDs kept between passes are kept on disk: the JVM's heap never holds the corpus
    # pass 1: content-hash dedup; document ids in order of first occurrence
    unique = paths.flatMap(_occurrences).reduceByKey(_merge_occurrences, parallel)
    numbered = (
        unique.map(lambda kv: (kv[1][0], (kv[1][1], [o for _, o in kv[1][2]], kv[0])))
        .sortByKey(numPartitions=parallel)
        .zipWithIndex()
        .persist(StorageLevel.DISK_ONLY)
    )
    # seq -> document id (-1 for later copies): 4 bytes per file, filled one partition of
    # first seqs (in document id order) at a time, then broadcast
    doc_of_seq = np.full(files_seen, -1, dtype=np.int32)
    documents = 0
    firsts = numbered.mapPartitions(lambda it: [np.fromiter((x[0][0] for x in it), dtype=np.int64)])
    for part in firsts.toLocalIterator():
        doc_of_seq[part] = np.arange(documents, documents + len(part))
        documents += len(part)
    summary.documents = documents
    summary.duplicates = files_seen - documents
    occurrences = numbered.map(lambda x: (x[1], x[0][1][:2]))  # doc id -> (n, origins)
    # the document of every file (seq): the sources' shares, as the local builder writes them
    shares = np.zeros(files_seen, dtype="<u4")
    of_hash = numbered.map(lambda x: (x[0][1][2], x[1]))
    of_seq = paths.flatMap(_seq_hashes).join(of_hash, parallel).values()
    pairs = of_seq.mapPartitions(lambda it: [np.array(list(it), dtype=np.int64).reshape(-1, 2)])
    for part in pairs.toLocalIterator():
        shares[part[:, 0]] = part[:, 1]

    # pass 2: process each unique document once; the vocabulary in order of first appearance
    renamed = bool(header.renamed_languages)
    table = sc.broadcast(doc_of_seq)
    processed = paths.flatMap(lambda p: _process_chunk(p, renamed, table.value)).persist(
        StorageLevel.DISK_ONLY
    )
    firsts_of_words = processed.flatMap(_first_places).reduceByKey(min, parallel)
    ordered_words = firsts_of_words.sortBy(lambda kv: kv[1], numPartitions=many).keys()
    numbered_words = ordered_words.zipWithIndex().persist(StorageLevel.DISK_ONLY)

    # docs (driver): documents in id order, with their occurrences
    docs = processed.map(lambda r: (r[0], r[1][0]))
    ordered = docs.join(occurrences, many).sortByKey(numPartitions=many)
    writer = _DocsWriter(gen)
    counts = np.zeros(documents, dtype="<u4")
    words_per_doc = np.zeros(documents, dtype=np.int64)
    try:
        for doc_id, (record, (n, origins)) in ordered.toLocalIterator():
            words_per_doc[doc_id] = writer.add(doc_id, record, n, origins)
            counts[doc_id] = n
    finally:
        writer.close()
    if writer.next_doc != summary.documents:
        raise BuildError(
            f"internal error: {writer.next_doc} documents written, {summary.documents} expected"
        )
    summary.words = int(words_per_doc.sum())

    # shards (Spark): each shard's documents, ids and suffix arrays, in parallel
    shard_of_doc = shard_cuts(words_per_doc, opts.shard_words)
    shards = int(shard_of_doc.max()) + 1 if documents else 0
    cuts = sc.broadcast(shard_of_doc)
    gen_dir = str(gen)
    stride = header.renamed_stride  # 0: no rename-insensitive view
    top = header.top_step
    # each document's words' ids by a join with the numbered vocabulary: no executor (and
    # not the driver) holds the whole vocabulary
    tables = (
        processed.flatMap(_word_places)
        .join(numbered_words, parallel)
        .map(lambda kv: (kv[1][0][0], (kv[1][0][1], kv[1][1])))
        .groupByKey(parallel)
        .mapValues(_table)
    )
    local_ids = processed.map(lambda item: (item[0], (item[1][2], item[1][3])))
    written = dict(
        local_ids.leftOuterJoin(tables, parallel)
        .map(lambda item: _shard_docs(item, cuts.value))
        .partitionBy(max(shards, 1), lambda shard: shard)
        .mapPartitionsWithIndex(lambda i, it: _write_shard_task(i, it, gen_dir, 0, stride, top))
        .collect()
    )
    header.shard_words = [written[i][0] for i in range(shards)]
    header.shard_documents = [written[i][1] for i in range(shards)]
    header.shard_id_bytes = [written[i][2] for i in range(shards)]
    if renamed:
        header.shard_renamed_places = [written[i][3] for i in range(shards)]
    header.shards = shards
    header.vocabulary = files.write_vocabulary_of(gen, numbered_words.keys().toLocalIterator())
    files.write_array(gen / files.OCCURRENCES_NAME, counts)
    files.write_array(gen / files.SHARES_NAME, shares)
    summary.vocabulary, summary.shards = header.vocabulary, header.shards
    summary.compacted = compacted_shards(header.shard_words)
    processed.unpersist()
    numbered.unpersist()
    numbered_words.unpersist()
    table.unpersist()
    cuts.unpersist()
