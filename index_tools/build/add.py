"""`recitation-index add`: more sources into an index, the index kept in shape.

The add itself (`local.add_sources`: new versions replace old ones, an index given all its
sources built anew once half its words are old versions') and then its shards joined with
the smaller ones before them (`compact.settle_index`), so that an index kept current by
many adds stays in few shards (an index built anew is compacted as `build` compacts it). A
join that fails leaves the add published and says why.
"""

from __future__ import annotations

import os

from .compact import compact_built, record_join, settle_index
from .local import BuildError, BuildOptions, BuildSummary, add_sources


def add_to_index(
    path: str | os.PathLike, specs: list[str], options: BuildOptions | None = None
) -> BuildSummary:
    """Extend the index at `path` with more sources, atomically (see `add_sources`), then
    join its new shards with the smaller ones before them."""
    opts = options or BuildOptions()
    summary = add_sources(path, specs, opts)
    if summary.rebuilt is not None:  # built anew: compacted as a build is
        return compact_built(path, summary, opts)
    if not summary.bytes:  # nothing new
        return summary
    try:
        joined = settle_index(path, opts.shard_words, opts.progress)
    except BuildError as e:  # the add is published: the index answers, in more shards
        summary.not_joined = str(e)
        return summary
    return record_join(path, summary, joined)


__all__ = ["add_to_index"]
