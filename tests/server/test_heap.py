"""The server's long-lived objects frozen out of the collector's full passes (heap.py),
and what a newer generation replaced collected, not kept frozen."""

from __future__ import annotations

import gc
import weakref

from server import heap


class Generation:
    """Stands for an index generation: objects that refer to one another (a cycle, which
    only the collector frees)."""

    def __init__(self) -> None:
        self.me = self
        self.tables = [{"k": [k]} for k in range(1000)]


def test_what_lives_on_is_frozen_and_what_was_replaced_is_collected():
    try:
        first = Generation()
        gone = weakref.ref(first)
        heap.settle()  # the first generation opened: frozen with the rest
        assert gc.get_freeze_count() >= len(first.tables)
        del first  # replaced by a newer one: garbage, in a cycle
        second = Generation()
        gc.collect()
        assert gone() is not None  # frozen: no full pass frees it
        heap.settle()
        assert gone() is None  # collected when the newer one settled
        assert gc.get_freeze_count() >= len(second.tables)
    finally:
        gc.unfreeze()
