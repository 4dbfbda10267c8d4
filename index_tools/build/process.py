"""Turning one document into what the index stores: runs in the build's worker processes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import xxhash
import zstandard

from ..store.generations import capped_mask
from ..text.fingerprint import WordHasher, kgram_fingerprints, winnow, winnow_past
from ..text.normalize import identifier_mask, normalized_hashes
from ..text.words import WORD_RE

BLOCK_CHARS = 1024  # text is split at line breaks into blocks of about this many characters
ZSTD_LEVEL = 6

_hasher = WordHasher()
# each frame carries its checksum: a changed byte of a stored text is an error when read
_compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)


_EMPTY_FPS = np.empty(0, dtype=np.uint64)
_EMPTY_POS = np.empty(0, dtype=np.uint32)


@dataclass
class ProcessedDoc:
    content_hash: bytes  # xxh3-128 of the UTF-8 text: identical files share it
    words: int
    blocks: bytes  # uint32 pairs (char offset, first word index) of each block
    ztext: bytes  # zstd-compressed UTF-8 text
    fps: np.ndarray  # kept fingerprints (uint64)
    positions: np.ndarray  # their word positions (uint32)
    renamed_fps: np.ndarray = field(default_factory=lambda: _EMPTY_FPS)  # rename-insensitive
    renamed_positions: np.ndarray = field(default_factory=lambda: _EMPTY_POS)


def content_hash(text: str) -> bytes:
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


def split_blocks(text: str) -> tuple[list[str], list[int]]:
    """Words of `text` and the block table: (char offset, word index) pairs, flattened.

    Blocks end at line breaks, which no word spans, so tokenizing a block alone gives
    exactly the words the whole text has there.
    """
    words: list[str] = []
    table: list[int] = []
    n = len(text)
    start = 0
    findall = WORD_RE.findall
    while start < n:
        end = text.find("\n", start + BLOCK_CHARS)
        end = n if end < 0 else end + 1
        table.append(start)
        table.append(len(words))
        words.extend(findall(text, start, end))
        start = end
    return words, table


def process(
    text: str, k: int, window: int, language: str = "", renamed: bool = False
) -> ProcessedDoc:
    """Everything the index stores of one document; with `renamed`, also the
    rename-insensitive fingerprints when its language is supported."""
    raw = text.encode("utf-8", "surrogatepass")
    words, table = split_blocks(text)
    hashes = _hasher.hashes(words)
    fps = kgram_fingerprints(hashes, k)
    picks = winnow(fps, window)
    rfps, rpicks = _EMPTY_FPS, _EMPTY_POS
    mask = identifier_mask(words, language) if renamed and language else None
    if mask is not None and mask.any():
        rall = kgram_fingerprints(normalized_hashes(hashes, mask), k)
        kept = winnow(rall, window)
        rfps, rpicks = rall[kept], kept.astype(np.uint32)
    return ProcessedDoc(
        content_hash=xxhash.xxh3_128_digest(raw),
        words=len(words),
        blocks=np.asarray(table, dtype="<u4").tobytes(),
        ztext=_compressor.compress(raw),
        fps=fps[picks],
        positions=picks.astype(np.uint32),
        renamed_fps=rfps,
        renamed_positions=rpicks,
    )


def look_past(
    text: str,
    k: int,
    window: int,
    language: str,
    capped: np.ndarray | None,
    renamed_capped: np.ndarray | None,
    prefix_bits: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The postings a document adds when capped fingerprints do not count: positions kept by
    `winnow_past` that plain winnowing did not keep, as (fps, positions) for the exact and
    (when `renamed_capped` is given) the rename-insensitive family."""
    words, _ = split_blocks(text)
    hashes = _hasher.hashes(words)
    out = [_EMPTY_FPS, _EMPTY_POS, _EMPTY_FPS, _EMPTY_POS]
    families = [(0, capped, None)]
    if renamed_capped is not None and language:
        mask = identifier_mask(words, language)
        if mask is not None and mask.any():
            families.append((2, renamed_capped, normalized_hashes(hashes, mask)))
    for slot, ids, fam_hashes in families:
        if ids is None or not len(ids):
            continue
        fps = kgram_fingerprints(hashes if fam_hashes is None else fam_hashes, k)
        mask = capped_mask(fps, ids, prefix_bits)
        if not mask.any():
            continue
        extra = np.setdiff1d(winnow_past(fps, window, mask), winnow(fps, window))
        out[slot], out[slot + 1] = fps[extra], extra.astype(np.uint32)
    return out[0], out[1], out[2], out[3]
