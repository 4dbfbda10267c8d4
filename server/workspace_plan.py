"""The files and commands behind a workspace folder's own index (workspace_index.py): which
files are its manifests, the child processes that plan and build it and their progress
lines, and what an index holds in a few words."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from index_tools import current_generation, printable

STOP_SECONDS = 15.0  # after a cancel, how long the build has to stop before it is killed

NPM_NAMES = (
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
)
PYPI_NAMES = ("pyproject.toml", "poetry.lock", "uv.lock", "Pipfile.lock", "pdm.lock")
MANIFEST_NAMES = frozenset(NPM_NAMES + PYPI_NAMES)
# the client's file watchers (dynamic registration of workspace/didChangeWatchedFiles)
WATCH_GLOBS = (
    *(f"**/{name}" for name in sorted(MANIFEST_NAMES)),
    "**/*requirements*.txt",
    "**/requirements/*.txt",
)
# folders whose files are never the workspace's manifests: dependencies, virtual
# environments, build outputs (and every hidden folder)
NOT_MANIFEST_DIRS = frozenset(
    {"node_modules", "bower_components", "jspm_packages", "web_modules", "site-packages",
     "dist-packages", "__pycache__", "__pypackages__", "env", "venv", "virtualenv",
     "build", "dist", "out", "target", "vendor"}
)  # fmt: skip

STDLIB_NAMES = {"python-stdlib": "Python", "go-stdlib": "Go", "java-stdlib": "Java",
                "rust-stdlib": "Rust"}  # fmt: skip


def is_manifest_name(name: str) -> bool:
    """A file name the workspace's plan reads (npm and PyPI manifests and lock files)."""
    if name in MANIFEST_NAMES:
        return True
    lower = name.lower()
    return lower.endswith(".txt") and "requirements" in lower


def manifest_of(folder: Path, path: Path, planned: set[str]) -> bool:
    """Whether a changed file is one of the folder's manifests: named as one (or read by
    its last plan: a `-r` include), inside the folder, outside dependencies, virtual
    environments, build outputs and hidden folders."""
    try:
        rel = path.relative_to(folder)
    except ValueError:
        return False
    if rel.as_posix() in planned:
        return True
    parts = rel.parts
    if not parts or not (
        is_manifest_name(parts[-1]) or (len(parts) > 1 and parts[-2] == "requirements")
    ):
        return False
    here = folder
    for part in parts[:-1]:
        here = here / part
        if part.startswith(".") or part in NOT_MANIFEST_DIRS or (here / "pyvenv.cfg").exists():
            return False
    return True


def short_version(kind: str, version: Any) -> str:
    """3.11.4 -> 3.11, go1.22.1 -> 1.22, 17.0.9 -> 17 (Java names its releases by one)."""
    text = str(version or "").removeprefix("go")
    parts = [p for p in text.replace("+", ".").replace("-", ".").split(".") if p]
    return ".".join(parts[: 1 if kind == "java-stdlib" else 2])


def covers(summary: dict | None) -> str:
    """What an index holds, in a few words: "143 npm, 12 PyPI, Python 3.11 stdlib", and
    how many of the packages asked for were left out."""
    if not isinstance(summary, dict):
        return ""
    counts = {"npm": 0, "pypi": 0}
    stdlibs: list[str] = []
    other = left_out = 0
    for s in summary.get("sources") or []:
        if not isinstance(s, dict):
            continue
        kind = s.get("kind")
        if kind in counts:
            counts[kind] += len(s.get("packages") or [])
        elif kind in STDLIB_NAMES:
            version = short_version(kind, s.get("version"))
            stdlibs.append(f"{STDLIB_NAMES[kind]} {version} stdlib".replace("  ", " "))
        elif kind == "workspace":
            left_out += len(s.get("unavailable") or [])
        else:
            other += 1
    parts = [f"{counts['npm']:,} npm"] if counts["npm"] else []
    parts += [f"{counts['pypi']:,} PyPI"] if counts["pypi"] else []
    parts += stdlibs
    if other:
        parts.append(f"{other} other source{'s' if other != 1 else ''}")
    text = ", ".join(parts) or "nothing yet"
    return text + (f" ({left_out} left out)" if left_out else "")


def parse_progress(line: str) -> dict | None:
    """One line of `--progress-json` (None for any other line)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("stage"), str):
        return None
    return record


def progress_text(record: dict | None) -> str:
    """`{"stage": "fetching npm", "done": 3, "total": 143}` -> "fetching npm 3/143"."""
    if not record:
        return ""
    stage = printable(record.get("stage"), 80)
    done, total = record.get("done"), record.get("total")
    unit = printable(record.get("unit") or "", 20)
    if isinstance(done, int) and isinstance(total, int) and total > 0:
        return f"{stage} {done:,}/{total:,}"
    if isinstance(done, int) and done:
        return f"{stage} {done:,}{' ' + unit if unit else ''}"
    return stage


def plan_parts(plan: dict | None) -> dict | None:
    """What a status says of a plan: bounded, whatever the size of the workspace."""
    if not isinstance(plan, dict):
        return None
    ecosystems = [
        {
            "ecosystem": e.get("ecosystem"),
            "packages": e.get("packages"),
            "files": list(e.get("files") or [])[:20],
        }
        for e in plan.get("ecosystems") or []
        if isinstance(e, dict)
    ]
    return {
        "summary": plan.get("summary"),
        "ecosystems": ecosystems,
        "stdlibs": list(plan.get("stdlibs") or [])[:10],
        "notIndexed": list(plan.get("not_indexed") or [])[:20],
        "problems": list(plan.get("problems") or [])[:20],
        "estimate": plan.get("estimate"),
    }


def workspace_record(summary: dict | None) -> dict:
    """What an index of a workspace records of it among its sources: the plan it was built
    from, and what was left out (packages that could not be fetched, manifests that could
    not be read)."""
    for s in (summary or {}).get("sources") or []:
        if isinstance(s, dict) and s.get("kind") == "workspace":
            return s
    return {}


def recorded_plan(summary: dict | None) -> dict | None:
    """The plan an index of a workspace was built from."""
    plan = workspace_record(summary).get("plan")
    return plan if isinstance(plan, dict) else None


def has_something(plan: dict) -> bool:
    return any(
        isinstance(e, dict) and e.get("packages") for e in plan.get("ecosystems") or []
    ) or bool(plan.get("stdlibs"))


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def index_exists(path: Path) -> bool:
    try:
        return current_generation(path) is not None
    except (OSError, ValueError):
        return False


def cli_command(*args: str) -> list[str]:
    """`python -m index_tools.cli ARGS` with the server's own interpreter (and libraries:
    the child inherits the environment), at a lower priority where `nice` exists, so that
    a build never slows the editor down."""
    command = [sys.executable, "-m", "index_tools.cli", *args]
    nice = shutil.which("nice") if os.name == "posix" else None
    return [nice, "-n", "10", *command] if nice else command


@dataclass
class Job:
    """A build or an update of one folder's index: a child process."""

    first: bool  # no index yet: a build; else an update
    proc: asyncio.subprocess.Process | None = None
    cancelled: bool = False
    token: str | None = None  # the client's work-done progress, when the server shows it
    reported: float = 0.0

    def cancel(self) -> None:
        self.cancelled = True
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, OSError):
            if os.name == "posix":
                proc.send_signal(signal.SIGINT)  # the tool stops, and cleans up what it began
            else:
                proc.terminate()
        asyncio.get_running_loop().call_later(STOP_SECONDS, self.kill)

    def kill(self) -> None:
        proc = self.proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, OSError):
                proc.kill()


def stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
