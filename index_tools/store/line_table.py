"""A document's line table (format 8): the line each of its words is on, kept beside its text
so that a source's lines are read without decompressing and splitting the text into words.

For each line holding a word: the index of its first word and its line number (0-based,
lines ended by a line feed, as a source's lines are counted), each as its difference from
the line's before (the first as it is), uint32 little-endian, the first words' then the
line numbers, in one zstd frame with its checksum (a changed byte is an error when read).
A document's word p is on the line of the last first word at or before p.
"""

from __future__ import annotations

import threading

import numpy as np
import zstandard

LEVEL = 3  # (the differences are small numbers: any level packs them about as well)

_local = threading.local()  # a (de)compressor per thread: neither is safe to share


def line_table(firsts: list[int], lines: list[int]) -> bytes:
    """The stored line table of a document whose lines `lines` (ascending) start with the
    words `firsts` (ascending, the first 0)."""
    values = np.empty(2 * len(firsts), dtype="<u4")
    if firsts:
        values[: len(firsts)] = np.diff(firsts, prepend=0)
        values[len(firsts) :] = np.diff(lines, prepend=0)
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
    return compressor.compress(values.tobytes())


def read_line_table(raw: bytes, words: int) -> tuple[np.ndarray, np.ndarray]:
    """(first words, line numbers) of a stored line table of a document of `words` words,
    both int64 and ascending; ValueError when they cannot be the table of such a document
    (damaged stored data)."""
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor()
    try:
        data = decompressor.decompress(raw)
    except zstandard.ZstdError:
        raise ValueError("line table") from None
    if len(data) % 8:
        raise ValueError("line table")
    values = np.frombuffer(data, dtype="<u4")
    half = len(values) // 2
    steps, line_steps = values[:half], values[half:]
    if words == 0 or half == 0:
        if words or half:
            raise ValueError("line table")
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    # the first word starts the first line; each line after holds words past the one before
    if steps[0] != 0 or (half > 1 and (steps[1:].min() == 0 or line_steps[1:].min() == 0)):
        raise ValueError("line table")
    firsts = np.cumsum(steps, dtype=np.int64)
    lines = np.cumsum(line_steps, dtype=np.int64)
    if firsts[-1] >= words:
        raise ValueError("line table")
    return firsts, lines
