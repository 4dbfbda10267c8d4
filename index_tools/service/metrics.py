"""Prometheus metrics of the index service, summed over its worker processes.

Every worker writes its counters to memory-mapped files in one directory
(`prometheus_client`'s multiprocess mode, `PROMETHEUS_MULTIPROC_DIR`, set by `serve` before
the workers start); `/metrics`, whichever worker answers it, reads them all.
"""

from __future__ import annotations

import os
from pathlib import Path

METRICS_DIR_ENV = "PROMETHEUS_MULTIPROC_DIR"
# lookups take from a fraction of a millisecond to a second on large indexes
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0
)  # fmt: skip


class ServiceMetrics:
    def __init__(self) -> None:
        from prometheus_client import Counter, Gauge, Histogram

        self.requests = Counter(
            "recitation_requests",
            "HTTP requests answered, by endpoint and status code",
            ["endpoint", "status"],
        )
        self.errors = Counter(
            "recitation_request_errors",
            "Requests refused or failed, by reason",
            ["reason"],
        )
        self.latency = Histogram(
            "recitation_request_seconds",
            "Time from the request's arrival to its answer",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
        )
        self.lookup = Histogram(
            "recitation_lookup_seconds",
            "Time of the lookup itself (matching on the index)",
            buckets=LATENCY_BUCKETS,
        )
        self.expired = Counter(
            "recitation_lookups_expired",
            "Lookups stopped at their deadline: before they started (queued) or at the "
            "matcher's next check (running)",
            ["stage"],
        )
        self.generation = Gauge(
            "recitation_index_generation_info",
            "1 for the index generation a live worker serves",
            ["generation"],
            multiprocess_mode="livemax",
        )
        self.words = Gauge(
            "recitation_index_words",
            "Words in the served index generation",
            multiprocess_mode="livemax",
        )

    def serving(self, generation: str, previous: str | None, words: int) -> None:
        if previous is not None and previous != generation:
            self.generation.labels(previous).set(0)
        self.generation.labels(generation).set(1)
        self.words.set(words)

    def exposition(self) -> tuple[bytes, str]:
        """The text format, summed over every worker's files."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        registry = CollectorRegistry()
        if os.environ.get(METRICS_DIR_ENV):
            MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        from prometheus_client import REGISTRY

        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


def forget_dead_workers() -> None:
    """Drop the live gauges of workers that died (uvicorn starts a new one in their place):
    the generation a dead worker served is not served any more."""
    directory = os.environ.get(METRICS_DIR_ENV)
    if not directory or os.name != "posix":  # os.kill(pid, 0) probes only on POSIX
        return
    from prometheus_client import multiprocess

    for path in Path(directory).glob("gauge_live*_*.db"):
        try:
            pid = int(path.stem.rsplit("_", 1)[1])
            os.kill(pid, 0)
        except ValueError:
            continue
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid)
        except PermissionError:
            continue
