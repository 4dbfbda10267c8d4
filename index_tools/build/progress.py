"""Progress of long work: a bar on a terminal, or JSON lines for a program that shows its
own (`--progress-json`: `show="json"`; or `RECITATION_PROGRESS=json` in the environment).

A JSON line is one object on stderr: `{"stage": "fetching npm", "done": 3, "total": 143,
"unit": "pkg"}` (total null when unknown), at most a few a second and once when a stage
ends; `done()` writes the last, `{"stage": "done"}`.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from tqdm import tqdm

ENV_PROGRESS = "RECITATION_PROGRESS"
_EVERY = 0.25  # seconds between two lines of one stage


def json_progress() -> bool:
    return os.environ.get(ENV_PROGRESS, "").strip().lower() == "json"


def bar(desc: str, *, total: int | None = None, unit: str = "", show: bool | str | None = None):
    """A progress bar: tqdm on stderr (shown when `show`, or when stderr is a terminal if
    None), or JSON lines when `show` is "json" or `RECITATION_PROGRESS=json`."""
    if show == "json" or json_progress():
        return JsonBar(desc, total, unit)
    visible = show if show is not None else sys.stderr.isatty()
    return tqdm(
        total=total, desc=desc, unit=unit, disable=not visible, file=sys.stderr,
        dynamic_ncols=True,
    )  # fmt: skip


def done() -> None:
    """The last line of a run's JSON progress."""
    _write({"stage": "done"})


def _write(record: dict) -> None:
    try:
        sys.stderr.write(json.dumps(record) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: the reader has gone
        pass


class JsonBar:
    """tqdm's few methods the builders use, written as JSON lines."""

    def __init__(self, desc: str, total: int | None, unit: str) -> None:
        self.desc, self.total, self.unit = desc, total, unit.strip()
        self.n = 0
        self.postfix = ""
        self._last = 0.0
        self._lock = threading.Lock()
        self._emit(force=True)

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.n += n
            self._emit()

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text

    def close(self) -> None:
        with self._lock:
            self._emit(force=True)

    def _emit(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < _EVERY:
            return
        self._last = now
        record = {"stage": self.desc, "done": self.n, "total": self.total, "unit": self.unit}
        if self.postfix:
            record["detail"] = self.postfix
        _write(record)

    def __enter__(self) -> JsonBar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
