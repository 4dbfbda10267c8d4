"""Check a whole folder from the editor, on every core (`recitation.checkFolder`).

The scan is `recitation-index check --jobs N` in a child process (check_work.py: the files
shared between worker processes, one per core), against each index the folder uses (a local
index and a service used together are both scanned), so the editor stays responsive and a
large folder takes the time `check` takes on all cores. Each file the scan finds quoting
indexed code is then checked again by the server itself, as a file written outside the
editor is (file_watch.py): its warnings are the editor's own, with its verdicts, hover and
fixes, shown in the Problems panel although the file is not open. A scan that fails says
why (never "nothing found"); files `check` could not read are counted and named.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from lsprotocol import types

from index_tools import language_for_path, printable

from .detection import PendingCheck
from .file_watch import read_code
from .indexes import uri_to_path
from .workspace_plan import cli_command

log = logging.getLogger(__name__)

SHOWN_FILES = 5  # files named in a message


class FolderCheckError(Exception):
    """The scan could not run or failed: said to the user as it is."""


@dataclass
class Scanned:
    """What the scans found: the files quoting indexed code, and those not checked."""

    quoting: list[str] = field(default_factory=list)
    files: int = 0  # files checked (the largest count of the scans)
    not_checked: list[str] = field(default_factory=list)
    untracked: int = 0
    seconds: float = 0.0


def index_locations(handle: Any) -> list[str]:
    """The index paths or service URLs a folder's index handle reads (both of a combined
    handle); a scan of each finds every file any of them would flag."""
    parts = getattr(handle, "parts", None) or (handle,)
    return [str(p.path) for p in parts if p is not None and p.path]


def uri_for(folder_uri: str, folder: Path, path: str) -> str:
    """A file's URI as the editor spells it (the folder's URI and the relative path)."""
    rel = os.path.relpath(path, folder).replace(os.sep, "/")
    return folder_uri.rstrip("/") + "/" + quote(rel, safe="/")


async def scan(folder: Path, indexes: list[str], min_tokens: int, jobs: int) -> Scanned:
    """`recitation-index check --format json --jobs N` of `folder` against each index."""
    out = Scanned()
    began = time.perf_counter()
    quoting: dict[str, None] = {}
    for index in indexes:
        report = await _check(folder, index, min_tokens, jobs)
        for result in report.get("results", []):
            if isinstance(result, dict) and isinstance(result.get("file"), str):
                quoting.setdefault(result["file"], None)
        out.files = max(out.files, _count(report.get("files_checked")))
        untracked = report.get("untracked")
        if isinstance(untracked, list):
            out.untracked = max(
                out.untracked, sum(_count(u.get("files")) for u in untracked if isinstance(u, dict))
            )
        for item in report.get("not_checked") or []:
            if isinstance(item, dict) and str(item.get("file")) not in out.not_checked:
                out.not_checked.append(str(item.get("file")))
    out.quoting = list(quoting)
    out.seconds = time.perf_counter() - began
    return out


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0


async def _check(folder: Path, index: str, min_tokens: int, jobs: int) -> dict:
    args = ["check", "--format", "json", "--show-suppressed", "--allow-skipped"]
    args += ["--index", index, "--min-tokens", str(min_tokens), "--jobs", str(jobs)]
    try:
        proc = await asyncio.create_subprocess_exec(
            *cli_command(*args, str(folder)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.DEVNULL,
        )
    except OSError as exc:
        raise FolderCheckError(f"cannot start `recitation-index check`: {exc}") from None
    try:
        stdout, stderr = await proc.communicate()
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        raise
    said = stderr.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode not in (0, 1):  # 1: quotes found; anything else: it failed
        why = said[-1] if said else f"exit code {proc.returncode}"
        raise FolderCheckError(printable(why, 500))
    try:
        report = json.loads(stdout)
    except ValueError:
        raise FolderCheckError("`recitation-index check` printed no report") from None
    if not isinstance(report, dict):
        raise FolderCheckError("`recitation-index check` printed no report")
    return report


class FolderChecks:
    """One folder check at a time per folder, for one server (`RecitationServer`)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.running: dict[str, asyncio.Task] = {}

    async def check(self, scope: Any) -> dict:
        key = scope.uri.rstrip("/")
        if key in self.running and not self.running[key].done():
            return {"started": False, "running": True}
        task = asyncio.ensure_future(self._check(scope))
        self.running[key] = task
        try:
            return await task
        finally:
            self.running.pop(key, None)

    async def _check(self, scope: Any) -> dict:
        server = self.server
        folder = uri_to_path(scope.uri)
        handle = await server.wait_index(scope)
        if folder is None or not folder.is_dir():
            raise FolderCheckError(f"{scope.name} is not a folder on this machine")
        if handle is None or not handle.ready:
            why = getattr(handle, "message", "") or "no index is ready"
            raise FolderCheckError(why)
        jobs = os.cpu_count() or 1
        token = await self._begin(scope, jobs)
        outcome = "failed"
        try:
            scanned = await scan(folder, index_locations(handle), scope.settings.min_tokens, jobs)
            shown = await self._show(scope, folder, scanned)
            outcome = self._summary(scope, scanned, shown, jobs)
        except FolderCheckError as exc:
            outcome = f"failed: {exc}"
            raise
        finally:
            self._end(token, outcome)
        server.show(types.MessageType.Info, f"Recitation: {outcome}")
        return {
            "files": scanned.files,
            "quoting": len(scanned.quoting),
            "shown": shown,
            "notChecked": len(scanned.not_checked),
            "seconds": round(scanned.seconds, 2),
            "jobs": jobs,
        }

    async def _show(self, scope: Any, folder: Path, scanned: Scanned) -> int:
        """Each file the scan flagged checked whole by the server (open: the editor's
        text; not open: as read from disk); how many now show warnings."""
        server = self.server
        shown = 0
        for path in scanned.quoting:
            uri = uri_for(scope.uri, folder, path)
            doc = server.file_watch.disk_document(uri) or server.documents.get(uri)
            if doc is None:
                text = (await asyncio.to_thread(read_code, path)).text
                if text is None:
                    scanned.not_checked.append(path)
                    continue
                doc = server.documents.add_from_disk(uri, text, language_for_path(path))
            await server.run_check(doc.uri, PendingCheck(0, len(doc.text), whole=True))
            if server.matches.get(doc.uri):
                shown += 1
            elif not doc.opened:
                server.documents.close(doc.uri)
        return shown

    def _summary(self, scope: Any, scanned: Scanned, shown: int, jobs: int) -> str:
        cores = f"{jobs} core{'s' if jobs != 1 else ''}"
        text = (
            f"checked {scanned.files} file{'s' if scanned.files != 1 else ''} of {scope.name} "
            f"in {scanned.seconds:.1f} s on {cores}: "
        )
        text += f"{shown} quote indexed code" if shown != 1 else "1 quotes indexed code"
        if scanned.not_checked:
            names = ", ".join(
                printable(Path(p).name, 80) for p in scanned.not_checked[:SHOWN_FILES]
            )
            more = len(scanned.not_checked) - SHOWN_FILES
            text += f"; not checked: {names}" + (f" and {more} more" if more > 0 else "")
        if scanned.untracked:
            text += f"; {scanned.untracked} untracked files left out (git)"
        return text

    async def _begin(self, scope: Any, jobs: int) -> str | None:
        server = self.server
        if not server.client_supports("window.work_done_progress"):
            return None
        token = f"recitation-check-{uuid.uuid4().hex[:8]}"
        try:
            await server.work_done_progress.create_async(token)
        except Exception as exc:
            log.info("no progress reporting: %s", exc)
            return None
        with contextlib.suppress(Exception):
            server.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=f"Recitation: checking {scope.name}",
                    message=f"on {jobs} core{'s' if jobs != 1 else ''}",
                ),
            )
        return token

    def _end(self, token: str | None, outcome: str) -> None:
        if token is None:
            return
        with contextlib.suppress(Exception):
            self.server.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))
            self.server.work_done_progress.tokens.pop(token, None)
