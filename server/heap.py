"""The server's long-lived objects kept out of the collector's full passes.

A full pass visits every object the collector tracks: with an index of 1.5B words open
(its header, shard views, caches) one takes 9 to 13 ms, a pause that lands inside a
lookup now and then (the editor's p99). The modules loaded at start and each index opened
are frozen: passes then visit only what came after (0.6 ms). A generation replaced by a
newer one is garbage the frozen set would keep: unfrozen and collected first.
"""

from __future__ import annotations

import gc


def settle() -> None:
    """Collect what is garbage now, then freeze what is left (it lives on)."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
