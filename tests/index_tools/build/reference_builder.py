"""The local builder's vocabulary and shard buffer as they were before the build's memory
was bounded by the shard (commit 440a5b9): a Python dict of every word, and every document
of the shard being filled kept in memory. The byte-for-byte tests build with these in place
of today's to compare the two builders' output."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from index_tools.build.process import ProcessedDoc
from index_tools.build.suffix import write_shard
from index_tools.store import shards as files


class DictVocabulary:
    """Word -> id, ids given in order of first appearance (documents in id order)."""

    def __init__(self, words: list[str] | None = None):
        self.words = list(words or [])
        self.ids = {w: files.FIRST_WORD_ID + i for i, w in enumerate(self.words)}

    def __len__(self) -> int:
        return len(self.words)

    def map(self, pd: ProcessedDoc) -> np.ndarray:
        """The document's word ids (new words get the next ids)."""
        ids, words = self.ids, self.words
        vocabulary = pd.vocabulary  # (as today's workers hand it over: packed)
        if pd.packed is not None:
            vocabulary = pd.packed[0].decode("utf-8", "surrogatepass").split("\n")[:-1]
        table = np.empty(len(vocabulary), dtype=np.uint32)
        for i, w in enumerate(vocabulary):
            word_id = ids.get(w)
            if word_id is None:
                word_id = ids[w] = files.FIRST_WORD_ID + len(words)
                words.append(w)
            table[i] = word_id
        return table[pd.local_ids]

    def write(self, gen: Path) -> None:
        files.write_vocabulary(gen, self.words)

    @classmethod
    def of_generation(cls, gen: Path) -> DictVocabulary:
        return cls(files.read_vocabulary(gen))


class ListShardBuffer:
    """The unique documents of the shards being written; a full shard is written (its
    suffix arrays sorted) in a thread while the next one fills."""

    def __init__(
        self, gen: Path, first_shard: int, limit: int, renamed: bool, stride: int, top: int
    ):
        self.gen = gen
        self.top = top
        self.next_shard = first_shard
        self.limit = max(1, min(limit, files.MAX_SHARD_WORDS))
        self.renamed = renamed
        self.stride = stride
        self.docs: list[np.ndarray] = []
        self.masks: list[np.ndarray | None] = []
        self.words = 0
        self.written: list[tuple[int, int, int, int]] = []
        self._pool = ThreadPoolExecutor(1)
        self._pending: Future | None = None

    def add(self, ids: np.ndarray, mask: np.ndarray | None) -> None:
        if self.docs and self.words + len(ids) > self.limit:
            self.flush()
        self.docs.append(ids)
        self.masks.append(mask)
        self.words += len(ids)

    def flush(self) -> None:
        if not self.docs:
            return
        self._wait()
        docs, masks = self.docs, self.masks if self.renamed else None
        self._pending = self._pool.submit(
            write_shard, self.gen, self.next_shard, docs, masks, self.stride, self.top
        )
        self.next_shard += 1
        self.docs, self.masks, self.words = [], [], 0

    def _wait(self) -> None:
        if self._pending is not None:
            self.written.append(self._pending.result())
            self._pending = None

    def close(self) -> list[tuple[int, int, int, int]]:
        try:
            self.flush()
            self._wait()
        finally:
            self._pool.shutdown(wait=True)
        return self.written
