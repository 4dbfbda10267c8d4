"""The Spark builder: the local builder's map/reduce on Apache Spark, writing the same files.

    staging (driver)  the sources are read once, in order, into compressed chunk files of
                      (seq, text, origin, language); seq is the file's place in that order
    pass 1 (Spark)    chunk -> (content hash, seq, origin); reduced by hash to the first seq,
                      the number of occurrences and the first ORIGIN_CAP origins; sorted by
                      first seq and numbered: document ids exactly as the local builder
                      assigns them (order of first occurrence)
    pass 2 (Spark)    chunk -> `process()` of each first occurrence -> a document record and
                      the document's postings, grouped per bucket; postings are shuffled to
                      their shard and sorted by bucket, and each shard task sorts one bucket
                      at a time by (key, document, position) and appends it to its
                      postings-NNN.mdb with the local builder's `append_bucket`
    docs (driver)     document records in id order, joined with their occurrences ->
                      docs.mdb and text.zst, as the local builder writes them

The result is the same index, key for key and value for value, as `build_index` makes of
the same sources; it is published atomically in the same way. Executors write the shard
files into the new generation directory and read the staged chunks from beside it, so on a
cluster the output directory must be on a filesystem that every node mounts.

PySpark is an optional dependency (`pip install 'recitation[spark]'`, Java 17): it is
imported only when a Spark build runs.
"""

from __future__ import annotations

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
from .local import (
    _RUN_DTYPE,
    ORIGIN_CAP,
    BuildError,
    BuildOptions,
    BuildSummary,
    DocStore,
    _documents,
    abandon,
    append_bucket,
    new_generation,
    new_header,
    prepare_build,
    writing,
)
from .lookpast import UNCAPPED, LookPastParams, finish_caps, look_past_docs
from .process import ProcessedDoc, content_hash, process

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


def _stage(sources, stage: Path, chunk_bytes: int, summary: BuildSummary) -> tuple[list, int]:
    """Chunk files of the sources' documents, in source order; returns (paths, files)."""
    paths: list[str] = []
    batch: list = []
    size = 0
    seq = 0
    for doc in _documents(sources, summary):
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


def _merge_occurrences(a, b):
    """First seq, count and the earliest ORIGIN_CAP origins of one content hash."""
    origins = sorted(a[2] + b[2], key=lambda o: o[0])[:ORIGIN_CAP]
    return min(a[0], b[0]), a[1] + b[1], origins


# --- pass 2: processing, postings per shard --------------------------------------------------


def _process_doc(text: str, language: str, k: int, window: int, renamed: bool) -> ProcessedDoc:
    if renamed:  # also the rename-insensitive fingerprints, as the local builder does
        return process(text, k, window, language, True)
    return process(text, k, window)


def _families(pd: ProcessedDoc, families: int):
    """(fingerprints, positions) of each postings family: exact, then rename-insensitive."""
    yield pd.fps, pd.positions
    if families > 1:
        yield pd.renamed_fps, pd.renamed_positions


def _process_chunk(path: str, k: int, window: int, families: int, doc_of_seq: np.ndarray):
    """("d", doc, record) per first occurrence, then, per postings family and bucket,
    ("p", (family, bucket, first doc of the chunk), postings)."""
    parts: list[list] = [[] for _ in range(families)]
    first_doc = -1
    for seq, text, _origin, language in _read_chunk(path):
        doc_id = int(doc_of_seq[seq])
        if doc_id < 0:
            continue  # a later copy of a file already stored
        if first_doc < 0:
            first_doc = doc_id
        pd = _process_doc(text, language, k, window, families > 1)
        yield "d", doc_id, (pd.words, language, pd.content_hash, pd.blocks, pd.ztext)
        for family, (fps, positions) in enumerate(_families(pd, families)):
            if len(fps):
                rec = np.empty(len(fps), dtype=_RUN_DTYPE)
                rec["fp"] = store.keys_of(fps)
                rec["doc"] = doc_id
                rec["pos"] = positions
                parts[family].append(rec)
    for family, recs in enumerate(parts):
        if not recs:
            continue
        rec = np.concatenate(recs)
        buckets = store.bucket_of(rec["fp"])
        order = np.argsort(buckets, kind="stable")
        rec, buckets = rec[order], buckets[order]
        edges = np.searchsorted(buckets, np.arange(store.BUCKETS + 1))
        for b in range(store.BUCKETS):
            lo, hi = edges[b], edges[b + 1]
            if hi > lo:
                yield "p", (family, b, first_doc), rec[lo:hi].tobytes()


def _shard_file(index: int, shards: int) -> str:
    """Partition `index` writes shard index % shards of family index // shards."""
    family, shard = divmod(index, shards)
    return store.shard_name(shard, True) if family else store.shard_name(shard)


def _write_shard(index: int, items, gen: str, shards: int, cap: int):
    """Append the (bucket-sorted) postings of one shard to its LMDB file."""
    path = Path(gen) / _shard_file(index, shards)
    path.unlink(missing_ok=True)  # a retried task starts over
    env = store.open_env(path, readonly=False)
    txn = env.begin(write=True)
    totals = [0, 0, 0]
    bucket, blobs = -1, []

    def flush():
        rec = np.frombuffer(b"".join(blobs), dtype=_RUN_DTYPE)
        rec = rec[np.lexsort((rec["pos"], rec["doc"], rec["fp"]))]
        for i, n in enumerate(append_bucket(txn, rec, cap)):
            totals[i] += n

    for (_family, b, _first_doc), blob in items:
        if b != bucket and blobs:
            flush()
            blobs = []
        bucket = b
        blobs.append(blob)
    if blobs:
        flush()
    txn.commit()
    env.sync(True)
    env.close()
    yield tuple(totals)


# --- docs (driver) ----------------------------------------------------------------------------


class _DocsWriter:
    """The driver's side: documents arrive in id order and go to a `DocStore`."""

    def __init__(self, gen: Path):
        self.docs = DocStore(gen)
        self.next_doc = 0

    def add(self, doc_id: int, record: tuple, occurrences: int, origins: list) -> int:
        words, language, chash, blocks, ztext = record
        if doc_id != self.next_doc:
            raise BuildError(f"internal error: document {doc_id} arrived, {self.next_doc} due")
        self.next_doc += 1
        pd = ProcessedDoc(chash, words, blocks, ztext, np.empty(0), np.empty(0))
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


def _context(master: str, opts: BuildOptions, local_dir: Path):
    from pyspark import SparkConf, SparkContext

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = (
        SparkConf()
        .setAppName("recitation-index build")
        .setMaster(master)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.python.worker.memory", f"{max(opts.memory_mb, 64)}m")
        .set("spark.local.dir", str(local_dir))
    )
    if master.startswith("local"):
        conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
        if not conf.contains("spark.driver.memory"):
            conf.set("spark.driver.memory", "2g")
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
) -> BuildSummary:
    """Build a new index of `specs` on Spark and publish it at `out`.

    `master` defaults to local mode with `options.jobs` cores (all when 0); an existing
    SparkContext can be passed instead (it is left running).
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
            chunks, files = _stage(sources, stage, chunk_bytes, summary)
            sc = spark_context or _context(
                master or f"local[{opts.jobs or '*'}]", opts, Path(tempfile.mkdtemp(dir=stage))
            )
            if spark_context is None and not sc.master.startswith("local"):
                sc.addPyFile(_package_zip(stage))
            _run(sc, chunks, files, gen, opts, header, summary)
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
            raise
        finally:
            if sc is not None and spark_context is None:
                sc.stop()
            shutil.rmtree(stage, ignore_errors=True)


def _run(sc, chunks, files, gen: Path, opts: BuildOptions, header, summary: BuildSummary):
    from pyspark import StorageLevel

    summary.files = files
    parallel = max(2, sc.defaultParallelism)
    paths = sc.parallelize(chunks, max(len(chunks), 1))

    # pass 1: content-hash dedup; document ids in order of first occurrence
    unique = paths.flatMap(_occurrences).reduceByKey(_merge_occurrences, parallel)
    numbered = (
        unique.map(lambda kv: (kv[1][0], (kv[1][1], [o for _, o in kv[1][2]])))
        .sortByKey(numPartitions=parallel)
        .zipWithIndex()
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    # seq -> document id (-1 for later copies): 4 bytes per file, filled one partition of
    # first seqs (in document id order) at a time, then broadcast
    doc_of_seq = np.full(files, -1, dtype=np.int32)
    documents = 0
    firsts = numbered.mapPartitions(lambda it: [np.fromiter((x[0][0] for x in it), dtype=np.int64)])
    for part in firsts.toLocalIterator():
        doc_of_seq[part] = np.arange(documents, documents + len(part))
        documents += len(part)
    summary.documents = documents
    summary.duplicates = files - documents
    occurrences = numbered.map(lambda x: (x[1], x[0][1]))  # doc id -> (n, origins)

    # pass 2: process each unique document once
    k, window = opts.k, opts.window
    families = 2 if getattr(header, "renamed_languages", None) else 1
    table = sc.broadcast(doc_of_seq)
    processed = paths.flatMap(
        lambda p: _process_chunk(p, k, window, families, table.value)
    ).persist(StorageLevel.MEMORY_AND_DISK)
    shards, cap = opts.shards, UNCAPPED  # lists written whole; `finish_caps` cuts them
    gen_dir = str(gen)
    totals = (
        processed.filter(lambda r: r[0] == "p")
        .map(lambda r: (r[1], r[2]))
        .repartitionAndSortWithinPartitions(
            numPartitions=families * shards,
            partitionFunc=lambda key: key[0] * shards + store.shard_of_bucket(key[1], shards),
        )
        .mapPartitionsWithIndex(lambda i, it: _write_shard(i, it, gen_dir, shards, cap))
        .collect()
    )
    for family, prefix in enumerate(("", "renamed_")[:families]):
        part = totals[family * shards : (family + 1) * shards]
        for i, name in enumerate(("fingerprints", "postings", "capped")):
            setattr(header, prefix + name, sum(t[i] for t in part))
    summary.fingerprints, summary.postings = header.fingerprints, header.postings

    docs = processed.filter(lambda r: r[0] == "d").map(lambda r: (r[1], r[2]))
    ordered = docs.join(occurrences, parallel).sortByKey(numPartitions=parallel)
    writer = _DocsWriter(gen)
    try:
        for doc_id, (record, (n, origins)) in ordered.toLocalIterator():
            summary.words += writer.add(doc_id, record, n, origins)
    finally:
        writer.close()
    if writer.next_doc != summary.documents:
        raise BuildError(
            f"internal error: {writer.next_doc} documents written, {summary.documents} expected"
        )
    processed.unpersist()
    numbered.unpersist()
    table.unpersist()
    finish_caps(gen, header, _spark_mapper(sc, parallel))
    summary.fingerprints, summary.postings = header.fingerprints, header.postings


def _spark_mapper(sc, parallel: int):
    """The look-past pass's documents winnowed again on the executors."""

    def run(params: LookPastParams, doc_ids: np.ndarray):
        if not len(doc_ids):
            return iter(())
        ids = sc.parallelize(doc_ids.tolist(), min(parallel, len(doc_ids)))
        return ids.mapPartitions(lambda it: look_past_docs(params, it)).toLocalIterator()

    return run
