"""Joining an index's shards into fewer, larger ones (`recitation-index compact`).

A lookup searches every shard's suffix arrays, and counts, extends and lists places shard by
shard: the same documents answer faster in few shards than in many. A build's shards are as
large as its memory allows while documents are read, and every `add` writes shards of its
own, so an index grows shards. Compacting joins neighbouring shards (their documents keep
their order, so every document keeps its number) and sorts each joined shard's suffix
arrays again, one view after the other, each array let go once written; the documents,
texts, vocabulary and sources are carried over as they are (linked where the filesystem
allows, copied otherwise, their digests checked either way). The new generation is
published atomically, as `add` publishes its own: the old one answers until then.

After each `add`, `settle_index` joins the add's shards with the smaller ones before them
(`settled`, within the add's shard limit), so an index kept current by adds stays in about
log(adds) shards, each word sorted again a few times.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..store import generations as store
from ..store import shards as files
from .local import (
    DEFAULT_COMPACT_WORDS,
    BuildError,
    BuildOptions,
    BuildSummary,
    abandon,
    carry_over,
    compacted_shards,
    give_back_memory,
    groups,
    settled,
    writing,
)
from .progress import bar as progress_bar
from .suffix import JoinedShard, write_joined


@dataclass
class CompactSummary:
    path: str
    shards_before: int = 0
    shards_after: int = 0
    words: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        if self.shards_after == self.shards_before:
            return [
                f"index: {self.path}",
                f"shards: {self.shards_before}, none joined (each next pair is over the limit)",
            ]
        return [
            f"index: {self.path}",
            f"shards: {self.shards_before} -> {self.shards_after} ({self.words:,} words)",
            f"size: {self.bytes / 1e9:.2f} GB, in {self.seconds:.1f} s",
        ]


def compact_index(
    path: str | os.PathLike, shard_words: int = DEFAULT_COMPACT_WORDS, progress: bool | None = None
) -> CompactSummary:
    """Join the shards of the index at `path` into as few as hold at most `shard_words`
    words each, and publish the result as a new generation."""
    return _join(Path(path), lambda words: groups(words, shard_words), shard_words, progress)


def compact_built(
    path: str | os.PathLike, summary: BuildSummary, options: BuildOptions
) -> BuildSummary:
    """After a build (or an add that built its index anew): its shards, each as large as
    the build's memory allowed, joined into shards of at most `options.join_limit()` words
    (the compacted index a lookup searches faster), in the build's own process once the
    builder's memory is given back. A join that fails leaves the build published and
    `summary.not_joined` says why; `summary` is updated and returned."""
    limit = options.join_limit()
    summary.joined_by = "build"
    if limit <= 0 or not summary.bytes:
        return summary
    give_back_memory()
    try:
        joined = compact_index(path, limit, options.progress)  # (nothing to join: no write)
    except BuildError as e:  # the build is published: the index answers, in more shards
        summary.not_joined = str(e)
        return summary
    return record_join(path, summary, joined)


def record_join(
    path: str | os.PathLike, summary: BuildSummary, joined: CompactSummary
) -> BuildSummary:
    """`summary` of a build or an add told what a join after it did (nothing when it
    joined no shards)."""
    if joined.shards_after < joined.shards_before:
        summary.joined, summary.shards = joined.shards_before, joined.shards_after
        summary.bytes = joined.bytes
        summary.compacted = compacted_shards(store.read_header(path)[1].shard_words)
        summary.seconds += joined.seconds
    return summary


def settle_index(
    path: str | os.PathLike, shard_words: int, progress: bool | str | None = None
) -> CompactSummary:
    """After an `add`: its shards joined with the smaller ones before them (`settled`),
    within `shard_words` words a shard, so that adds keep an index in few shards."""
    return _join(Path(path), lambda words: settled(words, shard_words), shard_words, progress)


def _join(
    root: Path,
    plan_of: Callable[[list[int]], list[list[int]]],
    shard_words: int,
    progress: bool | str | None,
) -> CompactSummary:
    """The shards of the index at `root` joined as `plan_of` groups them (given each
    shard's words), published as a new generation; nothing written when none is joined."""
    if not (1 <= shard_words <= files.MAX_SHARD_WORDS):
        raise BuildError(f"shard words must be between 1 and {files.MAX_SHARD_WORDS:,}")
    store.read_header(root)  # a clear error before taking the lock when there is no index
    started = time.perf_counter()
    with writing(root):
        old_gen, header = store.read_header(root)
        problems = store.structure_problems(old_gen, header)
        if problems:
            raise BuildError(f"index at {root} is damaged ({problems[0]}); rebuild it")
        plan = plan_of(header.shard_words)
        summary = CompactSummary(str(root), header.shards, len(plan), header.words)
        if len(plan) == header.shards:  # nothing to join: the index stays as it is
            return summary
        gen = store.new_generation(root)
        try:
            _carry_over(old_gen, gen, header, root)
            new = dataclasses.replace(
                header,
                shards=len(plan),
                shard_words=[],
                shard_documents=[],
                shard_id_bytes=[],
                shard_renamed_places=[],
            )
            bar = progress_bar("joining shards", total=header.words, unit=" words", show=progress)
            with contextlib.closing(bar):
                for k, group in enumerate(plan):
                    step = f"shard {k + 1} of {len(plan)}"
                    words, docs, width, rplaces = _write_group(
                        old_gen, gen, header, k, group, root,
                        lambda doing, step=step: bar.set_postfix_str(f"{step}: {doing}"),
                    )  # fmt: skip
                    new.shard_words.append(words)
                    new.shard_documents.append(docs)
                    new.shard_id_bytes.append(width)
                    if header.renamed_languages:
                        new.shard_renamed_places.append(rplaces)
                    bar.update(words)
            if new.shard_words != [sum(header.shard_words[i] for i in g) for g in plan] or (
                new.shard_documents != [sum(header.shard_documents[i] for i in g) for g in plan]
            ):
                raise BuildError(f"index at {root} is damaged (shard counts); rebuild it")
            store.finalize_generation(gen, new)
            store.publish(root, gen)
            summary.bytes = sum(new.file_sizes.values())
            summary.seconds = time.perf_counter() - started
            return summary
        except BaseException as e:
            abandon(gen, e)
            raise


def _carry_over(old_gen: Path, gen: Path, header: store.Header, root: Path) -> None:
    """The files that are not shards, checked against the header's digests, then linked
    (or copied where links are refused)."""
    shard_names = set(
        files.shard_files(header.shards, bool(header.renamed_languages), bool(header.top_step))
    )
    for name in sorted(header.file_sizes):
        if name in shard_names:
            continue
        carry_over(old_gen / name, gen / name, header, root)


def _write_group(
    old_gen: Path,
    gen: Path,
    header: store.Header,
    k: int,
    group: list[int],
    root: Path,
    say: Callable[[str], None],
) -> tuple[int, int, int, int]:
    """Shard `k` of the new generation: the old shards of `group` joined (one alone is
    linked under its new number, sorted already); `say` is told each step."""
    renamed = bool(header.renamed_languages)
    parts = files.SHARD_PARTS + (files.RENAMED_PARTS if renamed else ())
    if header.top_step:
        parts += files.TOP_PARTS if renamed else files.TOP_PARTS[:1]
    say("reading")
    if len(group) == 1:  # carried over whole: every file of it checked
        (i,) = group
        for p in parts:
            src = old_gen / files.shard_file(i, p)
            carry_over(src, gen / files.shard_file(k, p), header, root)
        rplaces = header.shard_renamed_places[i] if renamed else 0
        return header.shard_words[i], header.shard_documents[i], header.shard_id_bytes[i], rplaces
    try:
        ids, starts = _joined(old_gen, header, group, "ids")
        rids = _joined(old_gen, header, group, "rids")[0] if renamed else None
        shard = JoinedShard(ids, starts, rids)
        del ids, rids
        return write_joined(gen, k, shard, header.renamed_stride, header.top_step, say=say)
    except ValueError as e:  # a shard file that does not hold what the header says
        raise BuildError(f"index at {root} is damaged ({e}); rebuild it") from None


def _joined(
    old_gen: Path, header: store.Header, group: list[int], part: str
) -> tuple[np.ndarray, np.ndarray]:
    """The ids of the shards of `group` (`part`: "ids" or the rename-insensitive "rids")
    back to back, one separator between shards, as uint32 (the rename-insensitive view's as
    uint16: each of its ids fits in two bytes), and where their documents
    start; each file read once and checked against the header's digest (the suffix arrays
    and top tables of joined shards are sorted anew, never read)."""
    sizes = []
    for i in group:
        width = header.shard_id_bytes[i] if part == "ids" else files.RENAMED_WIDTH
        sizes.append((i, width, header.shard_words[i] + header.shard_documents[i] + 1))
    dtype = np.uint32 if part == "ids" else np.uint16
    ids = np.empty(sum(n for _, _, n in sizes) - len(group) + 1, dtype=dtype)
    starts = []
    at = 0
    for j, (i, width, n) in enumerate(sizes):
        raw = _read_checked(old_gen, header, files.shard_file(i, part), np.uint8)
        if len(raw) != n * width:
            raise ValueError(f"{files.shard_file(i, part)} holds {len(raw)} bytes, not {n * width}")
        one = files.ids_of_bytes(raw, width)
        del raw
        skip = 0 if j == 0 else 1  # the shard's first separator is the previous one's last
        ids[at : at + n - skip] = one[skip:]
        if part == "ids":
            docs = _read_checked(old_gen, header, files.shard_file(i, "docs"), "<u4")
            if len(docs) != header.shard_documents[i]:
                raise ValueError(f"{files.shard_file(i, 'docs')} holds {len(docs)} documents")
            starts.append(docs.astype(np.int64) + (at - skip))
        at += n - skip
    return ids, (np.concatenate(starts) if starts else np.empty(0, np.int64))


def _read_checked(gen: Path, header: store.Header, name: str, dtype) -> np.ndarray:
    """A file of the generation as an array, its bytes checked against the header's digest
    (ValueError naming it otherwise)."""
    data = np.fromfile(gen / name, dtype=np.uint8)
    if store.data_digest(data) != header.file_hashes.get(name):
        raise ValueError(f"{name}: {store.DIFFERS}")
    return data.view(dtype)


__all__ = ["DEFAULT_COMPACT_WORDS", "CompactSummary", "compact_index", "groups", "settle_index"]
