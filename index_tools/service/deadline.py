"""The time a lookup has. The service gives each lookup a `Deadline` from the moment its
request was received; the lookup checks it before it starts (a lookup that waited in the
queue past its time never runs) and the matcher between its steps (`Index.match(...,
deadline=)`), so a lookup past its time stops and frees its worker thread instead of
running on after its request was answered. Expiry is an exception, never a shorter answer.
"""

from __future__ import annotations

import time


class LookupExpired(Exception):
    """The lookup's time is up; `stage` says whether it had started."""

    def __init__(self, stage: str) -> None:
        super().__init__(f"the lookup's time was up ({stage})")
        self.stage = stage


class Deadline:
    __slots__ = ("at", "started")

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.started = False

    def remaining(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def start(self) -> None:
        """Called as the lookup begins: raises if it waited in the queue past its time."""
        if time.monotonic() >= self.at:
            raise LookupExpired("queued")
        self.started = True

    def check(self) -> None:
        """Called by the matcher between its steps."""
        if time.monotonic() >= self.at:
            raise LookupExpired("running")
