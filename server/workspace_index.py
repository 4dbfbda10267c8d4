"""The index a workspace folder gets by itself: the public code it depends on, offered at
first run, built in the background and kept current.

Per workspace folder:
- Which index: `indexPath` (a folder or an index service) wins; else the folder's own index
  when it exists (`workspace_index_path`: in the user cache folder, keyed by the folder's
  real path, never inside it) and `workspaceIndex` is not "off"; else the default index.
- With no index of its own yet, the folder is planned (`recitation-index plan workspace:DIR
  --json` in a child process: manifests and lock files read, nothing fetched). When there is
  something to index, it is offered with what it will cost (`workspaceIndex`: "offer"),
  either by the client's own interface (a client that says so in `initializationOptions`:
  `clientFeatures: ["workspaceIndex"]`, from `recitation/status`) or by
  `window/showMessageRequest`; or built at once ("auto"). "Not now" is remembered for the
  folder, in the user cache beside its index.
- Building and updating: `recitation-index add --create IDX workspace:DIR --progress-json
  --keep-going` in a child process, one at a time in this server, with progress
  (`recitation/status`, and `$/progress` with a cancel button for a client without its
  own interface) and its error said, never "nothing found". The server owns every build
  of a workspace index, so that two never run for one folder.
- Kept current: a manifest or lock file of the folder that changes (reported by the
  client's file watcher, `workspace/didChangeWatchedFiles`, else seen by polling the files
  the plan read) runs `add` again once the files have been quiet for a moment; a change
  during an update runs it once more after it. The add keeps the index in few shards and
  builds it anew once half its words are old versions' (`add_to_index`), so an index kept
  current for months answers as fast as a fresh one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from index_tools import printable, workspace_index_path

from .indexes import uri_to_path
from .workspace_plan import (
    WATCH_GLOBS,
    Job,
    cli_command,
    covers,
    has_something,
    index_exists,
    is_manifest_name,
    last_line,
    manifest_of,
    now_iso,
    parse_progress,
    plan_parts,
    progress_text,
    recorded_plan,
    stamp,
    workspace_record,
)

__all__ = ["CLIENT_FEATURE", "WATCH_GLOBS", "WorkspaceIndexes"]

log = logging.getLogger(__name__)

OFFER, AUTO, OFF = "offer", "auto", "off"
CLIENT_FEATURE = "workspaceIndex"  # in initializationOptions.clientFeatures

# what a folder's own index is doing: `workspaceIndex.state` in `recitation/status`
PLANNING = "planning"  # its manifests are being read
OFFERED = "offered"  # something to index: offered, not built
DECLINED = "declined"  # "Not now", remembered for the folder
NOTHING = "nothing"  # no dependencies and no standard library found
BUILDING = "building"  # the first build runs
UPDATING = "updating"  # a manifest changed (or the user asked): `add` runs again
READY = "ready"
FAILED = "failed"  # the last build or update failed (`error` says why)
CANCELLED = "cancelled"  # the last build or update was stopped

INDEX_THIS = "Index this workspace"
NOT_NOW = "Not now"

QUIET_SECONDS = 1.5  # a manifest change waits for the files to be quiet this long
POLL_SECONDS = 2.0  # how often the files are looked at without a client's watcher
PROGRESS_SECONDS = 0.5  # status and $/progress updates during a build, at most this often
PLAN_TIMEOUT = 120.0


@dataclass
class Folder:
    """One workspace folder's own index."""

    uri: str
    path: Path
    index: Path
    state: str = ""
    mode: str = OFFER
    plan: dict | None = None
    error: str = ""
    progress: dict | None = None
    updated: str | None = None  # when a build or an update last succeeded
    job: Job | None = None
    again: bool = False  # a manifest changed during a job: run once more after it
    asked: bool = False  # offered by showMessageRequest this session
    planning: asyncio.Task | None = None
    timer: asyncio.TimerHandle | None = None
    seen: dict[str, tuple[int, int] | None] = field(default_factory=dict)  # polled files

    @property
    def name(self) -> str:
        return printable(self.path.name or str(self.path), 100)

    @property
    def declined_file(self) -> Path:
        return self.index.with_name(self.index.name + ".declined.json")

    def planned_files(self) -> set[str]:
        out: set[str] = set()
        for e in (self.plan or {}).get("ecosystems") or []:
            if isinstance(e, dict):
                out.update(str(f) for f in e.get("files") or [])
                out.update(str(f) for f in e.get("covered_by_locks") or [])
        return out


class WorkspaceIndexes:
    """Every folder's own index, for one server (`server`: the `RecitationServer`, whose
    `scopes`, `send_status`, messages and progress this uses; it calls `consider` when a
    folder's settings are applied, `index_for` to choose its index, `on_files_changed`
    for the client's file events, and `workspace_index_published` is called back)."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.folders: dict[str, Folder] = {}
        self.client_ui = False  # the client offers and shows progress itself
        self.client_watches = False  # the client reports changes of the manifests
        self._one_at_a_time: asyncio.Lock | None = None
        self._poller: asyncio.Task | None = None
        self._tokens: dict[str, Folder] = {}

    # -- which index ---------------------------------------------------------------------

    @staticmethod
    def key(uri: str) -> str:
        return uri.rstrip("/")

    def applies(self, scope: Any) -> bool:
        """Whether the folder may have an index of its own: a local folder, on, no index
        set in `indexPath`, `workspaceIndex` not "off"."""
        return bool(scope.uri) and not self.why_not(scope)

    def folder(self, scope: Any) -> Folder | None:
        if not scope.uri:
            return None
        found = self.folders.get(self.key(scope.uri))
        if found is None:
            path = uri_to_path(scope.uri)
            if path is None:
                return None
            found = Folder(scope.uri, path, workspace_index_path(path))
            self.folders[self.key(scope.uri)] = found
        return found

    def why_not(self, scope: Any) -> str:
        """Why the folder gets no index of its own ("" when it may)."""
        name = scope.name or scope.uri
        if not scope.settings.enable:
            return f"Recitation is off for {name}."
        if scope.settings.index_path:
            return (
                f"recitation.indexPath is set for {name}: that index is used, and no index "
                "of the workspace is built."
            )
        if scope.settings.workspace_index == OFF:
            return f"recitation.workspaceIndex is off for {name}."
        if not scope.uri or uri_to_path(scope.uri) is None:
            return f"{name} is not a folder on this machine."
        return ""

    def index_for(self, scope: Any) -> Path | None:
        """The folder's own index when it is the one to use (it applies and exists)."""
        if not self.applies(scope):
            return None
        f = self.folder(scope)
        return f.index if f is not None and index_exists(f.index) else None

    def pending(self, scope: Any) -> bool:
        """The folder's own index is coming: planned, offered, being built or updated.
        What is checked meanwhile (on the index in use, if any) is checked again on it once
        it is published."""
        f = self.folders.get(self.key(scope.uri)) if scope.uri else None
        if f is None or not self.applies(scope):
            return False
        return (f.job is not None and not f.job.cancelled) or f.state in (PLANNING, OFFERED)

    # -- the folder's state, as its settings say ------------------------------------------

    def consider(self, scope: Any) -> None:
        """The folder's settings were applied: plan, offer, build or stand down."""
        if not scope.uri:
            return
        if not self.applies(scope):
            f = self.folders.get(self.key(scope.uri))
            if f is not None:
                self._stand_down(f, off=scope.settings.workspace_index == OFF)
            return
        f = self.folder(scope)
        if f is None:
            return
        before, f.mode = f.mode, scope.settings.workspace_index
        if f.state == READY and f.job is None and not index_exists(f.index):
            f.state = ""  # removed from the cache meanwhile: as at a first start
        if f.state == "":
            if index_exists(f.index):
                f.state = READY
                if not self.client_watches:
                    self._plan_in_background(f)  # (the files to poll)
            elif f.declined_file.exists():
                f.state = DECLINED
            else:
                self._plan_in_background(f)
        elif f.mode == AUTO and before != AUTO and f.state == OFFERED:
            self.start(f)
        if not self.client_watches:
            self._poll_soon()

    def _stand_down(self, f: Folder, off: bool) -> None:
        """The folder no longer uses its own index: nothing more is planned, offered or
        updated (a build under way is stopped when the setting is "off")."""
        if f.timer is not None:
            f.timer.cancel()
            f.timer = None
        if f.planning is not None:
            f.planning.cancel()
            f.planning = None
        if off and f.job is not None:
            f.job.cancel()
        if f.job is None:
            f.state = ""

    def forget(self, uri: str) -> None:
        """The folder left the workspace."""
        f = self.folders.pop(self.key(uri), None)
        if f is not None:
            self._stand_down(f, off=True)

    # -- planning and offering --------------------------------------------------------

    def _plan_in_background(self, f: Folder, again: bool = False) -> None:
        """Read the folder's manifests (again: a plan under way is started over). Without
        an index of its own, what the plan finds is offered; with one, the plan only says
        which files to watch."""
        if f.planning is not None and not f.planning.done():
            if not again:
                return
            f.planning.cancel()
        if f.job is None and f.state != DECLINED and not index_exists(f.index):
            f.state = PLANNING
        self._remember_files(f)
        f.planning = asyncio.ensure_future(self._plan(f))

    async def _plan(self, f: Folder) -> None:
        try:
            proc = await asyncio.create_subprocess_exec(
                *cli_command("plan", f"workspace:{f.path}", "--json"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(f.path),
            )
            try:
                out, err = await asyncio.wait_for(proc.communicate(), PLAN_TIMEOUT)
            except asyncio.TimeoutError:
                proc.kill()
                raise OSError(f"reading its manifests took over {PLAN_TIMEOUT:.0f} s") from None
            except asyncio.CancelledError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                raise
            if proc.returncode != 0:
                raise OSError(last_line(err.decode("utf-8", "replace")) or "it failed")
            plan = json.loads(out.decode("utf-8"))
            if not isinstance(plan, dict):
                raise ValueError("not a plan")
        except asyncio.CancelledError:
            return
        except (OSError, ValueError) as exc:
            log.warning("planning the index of %s: %s", f.path, exc)
            if f.state == PLANNING:
                f.state, f.error = FAILED, f"Cannot read the workspace's manifests: {exc}"
                self._send_status(f)
            return
        f.plan = plan
        self._remember_files(f)
        if f.state != PLANNING:
            return  # the index exists (the plan only names the files to watch)
        if index_exists(f.index):
            f.state = READY
        elif not has_something(plan):
            f.state = NOTHING
        elif f.mode == AUTO:
            self.start(f)
            return
        else:
            f.state, f.error = OFFERED, ""
            if not self.client_ui and not f.asked:
                f.asked = True
                asyncio.ensure_future(self._ask(f))
        self._send_status(f)

    async def _ask(self, f: Folder) -> None:
        """The offer, for a client without an interface of its own for it."""
        summary = printable((f.plan or {}).get("summary") or "", 600)
        not_indexed = [
            f"{printable(n.get('file') or n.get('ecosystem'), 100)} ({printable(n.get('reason'), 200)})"
            for n in (f.plan or {}).get("not_indexed") or []
            if isinstance(n, dict)
        ][:3]
        message = (
            f"Recitation: index the public code {f.name} depends on, to recognise code "
            f"quoted from it? Found {summary}. Built in the background into your cache "
            "folder (never into the workspace), and kept current when a lock file changes."
        )
        if not_indexed:
            message += " Not indexed: " + "; ".join(not_indexed) + "."
        try:
            answer = await self.server.window_show_message_request_async(
                types.ShowMessageRequestParams(
                    type=types.MessageType.Info,
                    message=message,
                    actions=[types.MessageActionItem(INDEX_THIS), types.MessageActionItem(NOT_NOW)],
                )
            )
        except Exception as exc:
            log.info("the offer to index %s was not shown: %s", f.path, exc)
            return
        title = getattr(answer, "title", None) or (
            answer.get("title") if isinstance(answer, dict) else None
        )
        if self.folders.get(self.key(f.uri)) is not f or f.state != OFFERED:
            return
        if title == INDEX_THIS:
            self.start(f)
        elif title == NOT_NOW:
            self.decline(f)

    def decline(self, f: Folder) -> None:
        """The answer "Not now", remembered for the folder: nothing is offered again until
        the user asks for the index (`recitation.buildWorkspaceIndex`)."""
        try:
            f.declined_file.parent.mkdir(parents=True, exist_ok=True)
            f.declined_file.write_text(
                json.dumps({"folder": str(f.path), "declined": now_iso()}) + "\n",
                encoding="utf-8",
            )
        except OSError as exc:
            log.warning("remembering 'not now' for %s: %s", f.path, exc)
        if f.job is None and not index_exists(f.index):
            f.state = DECLINED
        self._send_status(f)

    # -- building -------------------------------------------------------------------------

    def start(self, f: Folder) -> bool:
        """Build the folder's index, or update it; a job under way runs once more after."""
        if f.job is not None:
            f.again = not f.job.cancelled  # (it may have read the manifests before a change)
            return False
        with contextlib.suppress(OSError):
            f.declined_file.unlink(missing_ok=True)
        if f.timer is not None:
            f.timer.cancel()
            f.timer = None
        first = not index_exists(f.index)
        f.job = Job(first=first)
        f.state, f.error, f.again = (BUILDING if first else UPDATING), "", False
        f.progress = {"stage": "starting"}
        self._send_status(f)
        asyncio.ensure_future(self._run(f, f.job))
        return True

    def cancel(self, f: Folder) -> bool:
        if f.job is None:
            return False
        f.again = False
        f.job.cancel()
        self._send_status(f)
        return True

    async def _run(self, f: Folder, job: Job) -> None:
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()
        tail: deque[str] = deque(maxlen=20)
        code: int | None = None
        if self._one_at_a_time.locked():
            f.progress = {"stage": "waiting for another folder's index"}
            self._send_status(f)
        async with self._one_at_a_time:
            if not job.cancelled:
                await self._begin_progress(f, job)
                code = await self._spawn(f, job, tail)
        self._finish(f, job, code, tail)

    async def _spawn(self, f: Folder, job: Job, tail: deque[str]) -> int | None:
        args = ["add", "--create", str(f.index), f"workspace:{f.path}"]
        log.info("indexing %s: %s", f.path, " ".join(args))
        try:
            f.index.parent.mkdir(parents=True, exist_ok=True)
            job.proc = await asyncio.create_subprocess_exec(
                *cli_command(*args, "--progress-json", "--keep-going"),
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(f.path),
                limit=1 << 20,
            )
        except OSError as exc:
            tail.append(f"the indexer did not start: {exc}")
            return None
        if job.cancelled:  # cancelled while it started
            job.cancel()
        output = asyncio.ensure_future(self._log_output(f, job.proc.stdout))
        assert job.proc.stderr is not None
        while True:
            try:
                raw = await job.proc.stderr.readline()
            except ValueError:  # a line over the limit: not progress
                continue
            if not raw:
                break
            line = raw.decode("utf-8", "replace").rstrip()
            record = parse_progress(line)
            if record is None:
                if line.strip():
                    tail.append(line)
                    log.info("indexing %s: %s", f.path, line)
                continue
            if record.get("stage") != "done":
                f.progress = record
                self._progressed(f, job)
        code = await job.proc.wait()
        await output
        return code

    async def _log_output(self, f: Folder, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        with contextlib.suppress(ValueError):
            async for raw in stream:
                log.info("indexed %s: %s", f.path, raw.decode("utf-8", "replace").rstrip())

    def _finish(self, f: Folder, job: Job, code: int | None, tail: deque[str]) -> None:
        if f.job is job:
            f.job = None
        f.progress = None
        current = self.folders.get(self.key(f.uri)) is f
        if job.cancelled:
            f.state, f.error = CANCELLED, ""
            outcome = "cancelled"
        elif code == 0:
            f.state, f.error, f.updated = READY, "", now_iso()
            outcome = "done"
        else:
            f.state = FAILED
            why = last_line("\n".join(tail)) or f"the indexer exited with {code}"
            f.error = printable(why.removeprefix("recitation-index: "), 1000)
            outcome = f"failed: {f.error}"
        log.info("indexing %s: %s", f.path, outcome)
        self._end_progress(job, outcome)
        if current and code == 0 and not job.cancelled:
            scope = self._scope(f)
            if scope is not None:
                asyncio.ensure_future(self.server.workspace_index_published(scope, job.first))
            if not self.client_watches:
                self._plan_in_background(f)  # the files to watch may have changed
        if not current:
            return
        self._send_status(f)
        if not self.client_ui:
            self._say(f, job, code)
        if f.again and f.state in (READY, FAILED) and self._applies(f):
            f.again = False
            self._schedule(f)

    def _say(self, f: Folder, job: Job, code: int | None) -> None:
        """The end of a build, told to a client without an interface of its own for it."""
        if job.cancelled:
            return
        if code == 0 and job.first:
            self.server.show(
                types.MessageType.Info,
                f"Recitation: {f.name}'s index is ready; code entered meanwhile is checked "
                "against it.",
            )
        elif code != 0:
            what = "index" if job.first else "update the index of"
            self.server.show(
                types.MessageType.Error,
                f"Recitation could not {what} {f.name}: {f.error}"
                + ("" if job.first else " (the index built before stays in use)"),
            )

    # -- progress -------------------------------------------------------------------------

    async def _begin_progress(self, f: Folder, job: Job) -> None:
        """`$/progress` with a cancel button, for a client without its own progress."""
        if self.client_ui or not self.server.client_supports("window.work_done_progress"):
            return
        token = f"recitation-workspace-{uuid.uuid4().hex[:8]}"
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as exc:
            log.info("no progress reporting: %s", exc)
            return
        job.token = token
        self._tokens[token] = f
        title = f"Recitation: indexing {f.name}" if job.first else f"Recitation: updating {f.name}"
        with contextlib.suppress(Exception):
            self.server.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=title,
                    cancellable=True,
                    message=printable((f.plan or {}).get("summary") or "", 300) or None,
                ),
            )

    def _progressed(self, f: Folder, job: Job) -> None:
        now = time.monotonic()
        if now - job.reported < PROGRESS_SECONDS:
            return
        job.reported = now
        self._send_status(f)
        if job.token is not None:
            with contextlib.suppress(Exception):
                self.server.work_done_progress.report(
                    job.token, types.WorkDoneProgressReport(message=progress_text(f.progress))
                )

    def _end_progress(self, job: Job, outcome: str) -> None:
        if job.token is None:
            return
        self._tokens.pop(job.token, None)
        with contextlib.suppress(Exception):
            self.server.work_done_progress.end(
                job.token, types.WorkDoneProgressEnd(message=outcome)
            )
            self.server.work_done_progress.tokens.pop(job.token, None)
        job.token = None

    def cancel_token(self, token: Any) -> None:
        """The client's cancel button on a build's progress."""
        f = self._tokens.get(str(token))
        if f is not None:
            self.cancel(f)

    # -- kept current ---------------------------------------------------------------------

    def on_files_changed(self, paths: list[Path]) -> None:
        """Files of the workspace changed (the client's watcher, or polling)."""
        for f in list(self.folders.values()):
            planned = f.planned_files()
            if any(manifest_of(f.path, p, planned) for p in paths) and self._applies(f):
                self._schedule(f)

    def _schedule(self, f: Folder) -> None:
        """Once the files have been quiet a moment: update the index, or plan again a
        folder without one (a manifest may have come)."""
        if f.timer is not None:
            f.timer.cancel()
        f.timer = asyncio.get_running_loop().call_later(QUIET_SECONDS, self._changed, f)

    def _changed(self, f: Folder) -> None:
        f.timer = None
        if self.folders.get(self.key(f.uri)) is not f or not self._applies(f):
            return
        if f.job is not None:
            f.again = not f.job.cancelled
            return
        if index_exists(f.index):
            self.start(f)
        elif f.state != DECLINED:
            self._plan_in_background(f, again=True)
            self._send_status(f)

    def _poll_soon(self) -> None:
        if self._poller is None or self._poller.done():
            self._poller = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        """Without the client's watcher: the manifests' sizes and times, every few seconds."""
        while not self.client_watches and self.folders:
            await asyncio.sleep(POLL_SECONDS)
            try:
                for f in list(self.folders.values()):
                    if self._applies(f) and f.state not in ("", DECLINED, PLANNING):
                        changed = self._look(f)
                        if changed:
                            self.on_files_changed(changed)
            except Exception:
                log.exception("looking at the workspaces' manifests")

    def _remember_files(self, f: Folder) -> None:
        """The files to poll, as they are now; those known already keep what was seen of
        them (a change while the plan ran is a change)."""
        if not self.client_watches:
            for p in self._watched(f):
                f.seen.setdefault(p, stamp(Path(p)))

    def _watched(self, f: Folder) -> set[str]:
        """The files the plan read, and the manifests beside them and at the top."""
        planned = {str(f.path / rel) for rel in f.planned_files()}
        folders = {f.path, *(Path(p).parent for p in planned)}
        out = set(planned)
        for folder in folders:
            with contextlib.suppress(OSError), os.scandir(folder) as entries:
                out.update(e.path for e in entries if is_manifest_name(e.name))
        return out

    def _look(self, f: Folder) -> list[Path]:
        now = {p: stamp(Path(p)) for p in self._watched(f) | set(f.seen)}
        changed = [Path(p) for p, s in now.items() if f.seen.get(p) != s]
        f.seen = {p: s for p, s in now.items() if s is not None}
        return changed

    # -- the status -----------------------------------------------------------------------

    def status(self, scope: Any, handle: Any) -> dict | None:
        """`workspaceIndex` of the folder's `recitation/status` (None: no index of its own
        applies: another is set, it is off, or the scope is no folder)."""
        if not scope.uri or not self.applies(scope):
            return None
        f = self.folders.get(self.key(scope.uri))
        if f is None or not f.state:
            return None
        in_use = handle is not None and str(f.index) in str(getattr(handle, "path", ""))
        summary = handle.summary if in_use and handle.ready else None
        return {
            "state": f.state,
            "folder": str(f.path),
            "path": str(f.index),
            "inUse": in_use,
            "exists": index_exists(f.index),
            "covers": covers(summary) if summary else None,
            "plan": plan_parts(f.plan or recorded_plan(summary)),
            "leftOut": [
                printable(x, 300) for x in workspace_record(summary).get("unavailable") or []
            ][:20],
            "progress": {**f.progress, "text": progress_text(f.progress)} if f.progress else None,
            "cancelling": bool(f.job and f.job.cancelled),
            "error": f.error or None,
            "updated": f.updated,
        }

    def _send_status(self, f: Folder) -> None:
        scope = self._scope(f)
        if scope is not None:
            self.server.send_status(scope)

    def _scope(self, f: Folder) -> Any:
        return self.server.scopes.folders.get(self.key(f.uri))

    def _applies(self, f: Folder) -> bool:
        scope = self._scope(f)
        return scope is not None and self.applies(scope)

    def close(self) -> None:
        """The server stops: every build stops with it."""
        if self._poller is not None:
            self._poller.cancel()
        for f in self.folders.values():
            if f.planning is not None:
                f.planning.cancel()
            if f.timer is not None:
                f.timer.cancel()
            if f.job is not None and f.job.proc is not None and f.job.proc.returncode is None:
                f.job.cancelled = True
                with contextlib.suppress(ProcessLookupError, OSError):
                    f.job.proc.terminate()
