"""A command's memory: the largest process of it, and the whole process tree together.

Runs COMMAND and, every second, finds every process of its tree (each thread's children,
so that a process started by any thread counts, and each process once however many threads
it has) and reads each one's `/proc/PID/smaps_rollup`: the proportional set size (PSS:
pages shared between processes split among them, so the sum is what the tree occupies) and
the anonymous memory, summed over the tree. Reported: the peak of the sum, the processes at
that moment, and the largest process — each process's high-water mark (`VmHWM`, the
operating system's peak resident set of the process, sampled until it ends; beside it the
peaks of its anonymous memory and of its file pages mapped, `RssAnon` and `RssFile`, as
sampled: a memory-mapped file read counts in the high-water mark, and its pages are the
page cache's, given back under pressure) and
`wait4`'s maximum resident set (which `/usr/bin/time -v` reports: the command and the
descendants it waited for; a process no one waits for, such as a JVM that a driver stops,
is missing there, not from the high-water marks). Linux only.

    .venv/bin/python bench/tree_memory.py --json OUT.json -- \\
        .venv/bin/recitation-index build SOURCE --out IDX --quiet --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    """The children of every thread of `pid`."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        with contextlib.suppress(OSError):  # the thread or the process ended
            found += map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def tree(root: int) -> list[int]:
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo += children(pid)
    return sorted(seen)


def memory(pid: int) -> dict | None:
    """Kilobytes: Pss, Anonymous, Rss (smaps_rollup) and VmHWM; the command's name."""
    try:
        fields = {}
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
            key, value = line.split(":", 1)
            fields[key] = int(value.split()[0])
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmHWM:", "RssAnon:", "RssFile:")):
                fields[line.split(":")[0]] = int(line.split()[1])
        fields["comm"] = Path(f"/proc/{pid}/comm").read_text().strip()
        return fields
    except (OSError, ValueError):
        return None  # ended meanwhile


class Sampler:
    def __init__(self, root: int, every: float):
        self.root, self.every = root, every
        self.started = time.monotonic()
        self.series: list[tuple] = []  # (seconds, processes, pss, anonymous, rss) kB
        self.peak: dict = {"pss_kb": 0}
        # pid -> [name, VmHWM, peak PSS, peak RssAnon, peak RssFile] kB
        self.largest: dict[int, list] = {}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def sample(self) -> None:
        seen = {pid: m for pid in tree(self.root) if (m := memory(pid))}
        pss = sum(m.get("Pss", 0) for m in seen.values())
        anon = sum(m.get("Anonymous", 0) for m in seen.values())
        rss = sum(m.get("Rss", 0) for m in seen.values())
        t = round(time.monotonic() - self.started, 1)
        self.series.append((t, len(seen), pss, anon, rss))
        if pss > self.peak["pss_kb"]:
            at_peak = [
                {"name": m["comm"], "pid": pid, "pss_kb": m.get("Pss", 0),
                 "anonymous_kb": m.get("Anonymous", 0)}
                for pid, m in seen.items()
            ]  # fmt: skip
            at_peak.sort(key=lambda p: -p["pss_kb"])
            self.peak = {"pss_kb": pss, "anonymous_kb": anon, "rss_kb": rss, "at_s": t,
                         "processes": at_peak}  # fmt: skip
        for pid, m in seen.items():
            entry = self.largest.setdefault(pid, [m["comm"], 0, 0, 0, 0])
            entry[0] = m["comm"]  # the name after exec
            for k, key in enumerate(("VmHWM", "Pss", "RssAnon", "RssFile"), 1):
                entry[k] = max(entry[k], m.get(key, 0))

    def run(self) -> None:
        while not self.done.is_set():
            self.sample()
            self.done.wait(self.every)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", required=True, help="where to write the figures and the series")
    ap.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command")
    started = time.monotonic()
    child = subprocess.Popen(command)
    sampler = Sampler(child.pid, args.every)
    sampler.thread.start()
    _, status, usage = os.wait4(child.pid, 0)
    sampler.done.set()
    sampler.thread.join()
    largest = sorted(sampler.largest.items(), key=lambda kv: -kv[1][1])
    report = {
        "command": command,
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": round(time.monotonic() - started, 1),
        "largest_process_mb": round(largest[0][1][1] / 1024) if largest else 0,
        "wait4_maxrss_mb": round(usage.ru_maxrss / 1024),
        "tree_pss_peak_mb": round(sampler.peak["pss_kb"] / 1024),
        "tree_anonymous_at_peak_mb": round(sampler.peak.get("anonymous_kb", 0) / 1024),
        "most_processes": max((s[1] for s in sampler.series), default=0),
        "peak": sampler.peak,
        "processes": [
            {
                "name": n,
                "pid": pid,
                "hwm_kb": hwm,
                "pss_peak_kb": pss,
                "anonymous_peak_kb": anon,
                "file_peak_kb": file,
            }  # (RssAnon, RssFile: sampled)
            for pid, (n, hwm, pss, anon, file) in largest
        ],
        "series": sampler.series,
    }
    Path(args.json).write_text(json.dumps(report, indent=1))
    summary = {k: v for k, v in report.items() if k not in ("peak", "processes", "series")}
    print(json.dumps(summary), file=sys.stderr)
    code = report["exit"]
    sys.exit(code if code >= 0 else 128 - code)  # a signal: as a shell says it


if __name__ == "__main__":
    main()
