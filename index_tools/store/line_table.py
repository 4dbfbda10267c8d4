"""A document's line table (format 8): the line each of its words is on, kept beside its text
so that a source's lines are read without decompressing and splitting the text into words.

For each line holding a word: the index of its first word and its line number (0-based,
lines ended by a line feed, as a source's lines are counted). The rows are stored in
chunks of `CHUNK_LINES`, so that a lookup decodes the chunk its word is in, never the
table of a whole generated file of a million lines: the number of chunks (uint32), per
chunk its first row's word and line and its compressed size (uint32 each), then the
chunks, each one zstd frame with its checksum (a changed byte is an error when read) of
its rows' words and then lines, each as its difference from the row's before (the
first 0), uint32. All little-endian. A document's word p is on the line of the last row
whose first word is at or before p.
"""

from __future__ import annotations

import struct
import threading
from bisect import bisect_right
from itertools import accumulate

import numpy as np
import zstandard

from .generations import decompress_bytes

CHUNK_LINES = 1024  # rows a chunk (a text's frame of 64K characters has about 2,000 lines)
SMALL_CHUNK = 128  # rows of a chunk read with Python's integers; more, with numpy
LEVEL = 3  # (the differences are small numbers: any level packs them about as well)

_local = threading.local()  # a compressor per thread: not safe to share


def line_table(firsts: list[int], lines: list[int]) -> bytes:
    """The stored line table of a document whose lines `lines` (ascending) start with the
    words `firsts` (ascending, the first 0)."""
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    heads, chunks = [], []
    for a in range(0, len(firsts), CHUNK_LINES):
        f, n = firsts[a : a + CHUNK_LINES], lines[a : a + CHUNK_LINES]
        values = np.empty(2 * len(f), dtype="<u4")
        values[: len(f)] = np.diff(f, prepend=f[0])
        values[len(f) :] = np.diff(n, prepend=n[0])
        chunks.append(compressor.compress(values.tobytes()))
        heads += [f[0], n[0], len(chunks[-1])]
    return b"".join((np.array([len(chunks), *heads], dtype="<u4").tobytes(), *chunks))


class LineTable:
    """A stored line table, read: the chunk a word is in decoded when first asked. Damage
    (a table that cannot be one of a document of `words` words) is a ValueError.

    A lookup reads the lines of a few dozen documents, each table once: the heads and a
    small chunk are read with the struct module and Python's integers, as numpy's calls
    on a few rows cost more than the work (a document's first line 37 -> 9 µs at ten rows)."""

    def __init__(self, raw: bytes, words: int):
        if len(raw) < 4:
            raise ValueError("line table")
        count = int.from_bytes(raw[:4], "little")
        end = 4 + 12 * count
        if count > len(raw) // 12 or len(raw) < end or (count == 0) != (words == 0):
            raise ValueError("line table")
        heads = struct.unpack_from(f"<{3 * count}I", raw, 4)
        firsts, lines, sizes = heads[0::3], heads[1::3], heads[2::3]
        if count and (
            firsts[0] != 0
            or firsts[-1] >= words
            or not _rising(firsts)
            or not _rising(lines)
            or 0 in sizes
            or end + sum(sizes) != len(raw)
        ):
            raise ValueError("line table")
        self.words = words
        self._raw = raw
        self._firsts = firsts  # each chunk's first word and line
        self._lines = lines
        self._at = tuple(accumulate(sizes, initial=end))  # each chunk's bytes
        self._chunks: dict[int, tuple[list[int], list[int]]] = {}

    def line(self, word: int) -> int:
        """The 0-based line of word `word` (0 <= word < words)."""
        k = bisect_right(self._firsts, word) - 1
        firsts, lines = self._chunk(k)
        return lines[bisect_right(firsts, word) - 1]

    def _chunk(self, k: int) -> tuple[list[int], list[int]]:
        """Chunk k's rows: their first words and lines, checked against the chunks around."""
        got = self._chunks.get(k)
        if got is not None:
            return got
        try:
            data = decompress_bytes(self._raw[self._at[k] : self._at[k + 1]])
        except zstandard.ZstdError:
            raise ValueError("line table") from None
        last = k == len(self._firsts) - 1
        rows = len(data) // 8
        if len(data) % 8 or not rows or rows > CHUNK_LINES or (rows < CHUNK_LINES and not last):
            raise ValueError("line table")
        if rows <= SMALL_CHUNK:  # (Python's integers: numpy's calls cost more than the work)
            values = struct.unpack(f"<{2 * rows}I", data)
            steps, line_steps = values[:rows], values[rows:]
            if steps[0] or line_steps[0] or 0 in steps[1:] or 0 in line_steps[1:]:
                raise ValueError("line table")
            firsts = list(accumulate(steps, initial=self._firsts[k]))[1:]
            lines = list(accumulate(line_steps, initial=self._lines[k]))[1:]
        else:
            values = np.frombuffer(data, dtype="<u4").reshape(2, rows)
            if values[:, 0].any() or not values[:, 1:].all():
                raise ValueError("line table")
            sums = np.cumsum(values, axis=1, dtype=np.int64)
            firsts = (sums[0] + self._firsts[k]).tolist()
            lines = (sums[1] + self._lines[k]).tolist()
        past, after = (self.words, None) if last else (self._firsts[k + 1], self._lines[k + 1])
        if firsts[-1] >= past or (after is not None and lines[-1] >= after):
            raise ValueError("line table")
        self._chunks[k] = firsts, lines
        return firsts, lines

    def rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Every row: the first words and the lines (each chunk decoded)."""
        chunks = [self._chunk(k) for k in range(len(self._firsts))]
        return (np.array([w for c in chunks for w in c[0]], dtype=np.int64),
                np.array([n for c in chunks for n in c[1]], dtype=np.int64))  # fmt: skip


def _rising(values: tuple[int, ...]) -> bool:
    """Whether each value is greater than the one before."""
    return all(a < b for a, b in zip(values, values[1:]))
