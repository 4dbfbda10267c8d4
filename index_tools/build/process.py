"""Turning one document into what the index stores: runs in the build's worker processes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xxhash
import zstandard

from ..store.line_table import line_table
from ..store.shards import packed_words
from ..text.normalize import identifier_mask_of_ids
from ..text.words import WORD_RE

BLOCK_CHARS = 1024  # text is split at line breaks into blocks of about this many characters
# a longer text is stored as frames of whole blocks, about this many characters each, so a
# source's lines and words are read from one frame, not the whole file
FRAME_CHARS = 1 << 16
ZSTD_LEVEL = 6

# each frame carries its checksum: a changed byte of a stored text is an error when read
_compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)


@dataclass
class ProcessedDoc:
    content_hash: bytes  # xxh3-128 of the UTF-8 text: identical files share it
    words: int
    blocks: bytes  # uint32 pairs (char offset, first word index) of each block
    ztext: bytes  # zstd-compressed UTF-8 text: one frame, or the `frames` back to back
    vocabulary: list[str]  # the document's distinct words, in order of first appearance
    local_ids: np.ndarray  # per word: its index in `vocabulary` (uint32)
    identifiers: np.ndarray | None = None  # per word: an identifier (rename-insensitive view)
    # `vocabulary` packed (`shards.packed_words`: the words file's bytes and each word's
    # lookup hash), as a worker hands it to the builder, which keeps no word as an object
    packed: tuple[bytes, np.ndarray] | None = None
    # a text of more than one frame: per frame, its first block, its compressed size and
    # the newlines before it (empty: the text is one frame)
    frames: list[tuple[int, int, int]] = field(default_factory=list)
    lines: bytes = b""  # the line table (store/line_table.py): each word's line

    def pack(self) -> ProcessedDoc:
        """This document with its vocabulary packed (the list let go)."""
        if self.packed is None:
            self.packed, self.vocabulary = packed_words(self.vocabulary), []
        return self


def content_hash(text: str) -> bytes:
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


def split_blocks(text: str) -> tuple[list[str], list[int]]:
    """Words of `text` and the block table: (char offset, word index) pairs, flattened.

    Blocks end at line breaks, which no word spans, so tokenizing a block alone gives
    exactly the words the whole text has there.
    """
    words, table, _, _ = split_lines(text)
    return words, table


def split_lines(text: str) -> tuple[list[str], list[int], list[int], list[int]]:
    """`split_blocks`, and the lines holding words: each one's first word and its line
    number (0-based, lines ended by a line feed). Each line is tokenized alone: no word
    spans a line break, so the words are the same."""
    words: list[str] = []
    table: list[int] = []
    firsts: list[int] = []
    lines: list[int] = []
    n = len(text)
    start = line = 0
    findall = WORD_RE.findall
    while start < n:
        end = text.find("\n", start + BLOCK_CHARS)
        end = n if end < 0 else end + 1
        table.append(start)
        table.append(len(words))
        pieces = text[start:end].split("\n")
        for k, piece in enumerate(pieces):
            found = findall(piece)
            if found:
                firsts.append(len(words))
                lines.append(line + k)
                words.extend(found)
        line += len(pieces) - 1  # (a block ends after a line feed: its last piece is empty)
        start = end
    return words, table, firsts, lines


def process(text: str, language: str = "", renamed: bool = False) -> ProcessedDoc:
    """Everything the index stores of one document; with `renamed`, also which words are
    identifiers when its language is supported."""
    raw = text.encode("utf-8", "surrogatepass")
    words, table, firsts, lines = split_lines(text)
    ztext, frames = compressed(text, raw, table[0::2])
    vocabulary = list(dict.fromkeys(words))  # distinct, in order of first appearance
    local = {w: i for i, w in enumerate(vocabulary)}
    ids = np.fromiter(map(local.__getitem__, words), dtype=np.uint32, count=len(words))
    mask = identifier_mask_of_ids(vocabulary, ids, language) if renamed and language else None
    return ProcessedDoc(
        content_hash=xxhash.xxh3_128_digest(raw),
        words=len(words),
        blocks=np.asarray(table, dtype="<u4").tobytes(),
        ztext=ztext,
        vocabulary=vocabulary,
        local_ids=ids,
        identifiers=mask if mask is not None and mask.any() else None,
        frames=frames,
        lines=line_table(firsts, lines),
    )


def compressed(
    text: str, raw: bytes, block_chars: list[int], frame_chars: int | None = None
) -> tuple[bytes, list]:
    """The stored text: one zstd frame, or for a text of more than FRAME_CHARS characters
    (`frame_chars`, given) in blocks, frames of whole blocks, each that many characters or
    more but the last, and per frame (first block, compressed size, newlines before it)."""
    frame_chars = FRAME_CHARS if frame_chars is None else frame_chars
    firsts = [0]
    for b, c in enumerate(block_chars):
        if c - block_chars[firsts[-1]] >= frame_chars:
            firsts.append(b)
    if len(firsts) == 1:
        return _compressor.compress(raw), []
    starts = [block_chars[b] for b in firsts] + [len(text)]
    parts, frames, lines = [], [], 0
    for b, start, end in zip(firsts, starts, starts[1:]):
        piece = text[start:end]
        z = _compressor.compress(piece.encode("utf-8", "surrogatepass"))
        parts.append(z)
        frames.append((b, len(z), lines))
        lines += piece.count("\n")
    return b"".join(parts), frames
