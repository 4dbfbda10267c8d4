"""The language server: its state and the operations the LSP handlers share.

Handlers live in `features.py`; they call the methods here. Matching stays in the engine
(`index_tools`); this layer maps matches to document ranges and keeps them current.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
import time
import uuid
from collections import deque
from typing import Any
from urllib.parse import unquote, urlsplit

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import FeatureRequestError
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

from index_tools import (
    DecisionsError,
    Match,
    Verdict,
    judge,
    pick_language,
    printable,
    search_status,
)

from . import __version__
from .detection import Checker, PendingCheck
from .diagnostics import Announcement, MatchStore, StoredMatch, to_diagnostic
from .documents import DocumentLines, DocumentStore, TextDocument
from .event_loop import run_session
from .file_watch import FileWatch
from .folder_check import FolderChecks
from .folders import Scope, Scopes
from .framing import FrameReader
from .indexes import ERROR, LOADING, NO_INDEX, READY, Found, IndexManager, LookupFailed
from .protocol import MATCH, STATUS, RecitationProtocol, match_payload, plain, status_payload
from .rehearsal import rehearse
from .remote_indexes import handle_for_settings
from .settings import SECTION, Settings, layered_settings
from .words import context_start, words_of
from .workspace_index import WorkspaceIndexes

log = logging.getLogger(__name__)

# How long to wait for the client to answer workspace/configuration before carrying on.
CONFIGURATION_TIMEOUT = 5.0
WATCH_SECONDS = 1.0  # how often decisions files and missing indexes are looked at
# the editor's checks quiet this long before a lookup's parts are made (an accepted
# suggestion often comes right after another: its lookup goes first)
QUIET_SECONDS = 0.02
QUIET_AT_MOST = 2.0  # ... or this long, whatever the checks do (one waiting for an index)


def document_name(uri: str) -> str:
    """A document's file name as the status and the log name it (printable)."""
    path = unquote(urlsplit(uri).path) or uri
    return printable(path.rstrip("/").rsplit("/", 1)[-1] or uri, 200)


class RecitationServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            name="recitation",
            version=__version__,
            protocol_cls=RecitationProtocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.documents = DocumentStore()
        self.matches = MatchStore()
        self.scopes = Scopes()
        self.indexes = IndexManager()
        self.folder_checks = FolderChecks(self)
        self.folder_indexes = WorkspaceIndexes(self)  # each folder's own index
        self.file_watch = FileWatch(self)  # code written to the folders' files outside the editor
        self.checker = Checker(self.run_check)
        self.init_options: Any = None
        self.client_commands: set[str] = set()  # client-side commands it declared (compare)
        self.pushed_settings: Any = None
        self._refreshing: asyncio.Lock | None = None
        self._settings_known: asyncio.Event | None = None
        self.global_pulled = False  # settings for documents outside the folders were read
        self._watching: asyncio.Task | None = None
        # documents whose text a lookup could not check: uri -> (why, whether another
        # index checked it); said in the status until they are checked
        self.not_checked: dict[str, tuple[str, bool]] = {}
        self.read_as: dict[str, str] = {}  # uri -> the language its text was read as
        # lookups whose parts are to be made, then their quotes announced (`announce`)
        self._to_settle: deque[tuple[Any, str, Found, list[Announcement], list[Match]]] = deque()
        self._settler: asyncio.Task | None = None

    # -- transport -----------------------------------------------------------------------

    def start_stdio(self) -> None:
        """LSP over stdin/stdout. When stdin is a pipe or socket (as editors start language
        servers) it is read by the event loop itself, without a reader thread in between;
        otherwise by pygls' reader. The session ends within a bound (`run_session`)."""
        try:
            mode = os.fstat(sys.stdin.fileno()).st_mode
        except (OSError, ValueError):
            mode = 0
        self._stop_event = stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(sys.stdout.buffer))

        async def serve() -> None:
            if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):  # a file, a terminal
                lines = StdinAsyncReader(sys.stdin.buffer, self.thread_pool)
                await run_async(stop_event, lines, self.protocol, log, self.report_server_error)
                return
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader()
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer
            )
            await self._serve_frames(FrameReader(reader, self.report_framing_error))

        try:
            run_session(serve())
        except BrokenPipeError:
            log.error("the connection to the client is lost")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """LSP with a client over TCP, through pygls' reader; ended as stdio is."""
        self._stop_event = stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)
            await run_async(stop_event, reader, self.protocol, log, self.report_server_error)
            self.shutdown()

        async def serve() -> None:
            self._server = server = await asyncio.start_server(connection, host, port)
            async with server:
                await server.serve_forever()

        try:
            run_session(serve())
        except (asyncio.CancelledError, KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    async def _serve_frames(self, frames: FrameReader) -> None:
        """Hand each framed message to the protocol until the input ends. A framing error
        or a body that is not JSON is reported and skipped; the session goes on."""
        while not self._stop_event.is_set():
            body = await frames.read_body()
            if body is None:
                break
            try:
                message = json.loads(body)  # the whole body is one message (protocol.py)
            except (ValueError, RecursionError) as exc:
                self.report_framing_error(
                    f"a message that is not JSON ({type(exc).__name__}): {body[:80]!r}"
                )
                continue
            if not isinstance(message, dict):
                self.report_framing_error(f"a message that is not a JSON object: {body[:80]!r}")
                continue
            try:
                self.protocol.handle_message(message)
            except Exception as exc:
                log.exception("handling a message")
                self.report_server_error(exc, None)

    def report_framing_error(self, what: str) -> None:
        """Input that is not a framed LSP message: said on stderr and in the client's log."""
        log.warning("recitation: %s", what)
        with contextlib.suppress(Exception):
            self.protocol.notify(
                types.WINDOW_LOG_MESSAGE,
                types.LogMessageParams(
                    type=types.MessageType.Warning, message=f"Recitation: {what}"[:500]
                ),
            )

    def rehearse_first_warning(self) -> None:
        """The work of a first warning besides its lookup (the converter's functions, the
        license database, the SPDX parser: rehearsal.py) done now on a thread of its own,
        so the first suggestion's warning comes as fast as later ones; said in the log."""

        def run() -> None:
            try:
                ms = rehearse(self.protocol)
            except Exception:  # the warnings work without it: said, not raised
                log.exception("rehearsing a warning")
                return
            log.info("a warning's work rehearsed in %.1f ms", ms)

        threading.Thread(target=run, name="recitation-rehearsal", daemon=True).start()

    def report_search(self) -> None:
        """Which search runs (compiled or Python, and why), once: in the log, and in the
        client's log as a warning when the compiled one did not load."""
        status = search_status()
        log.info("search: %s", status)
        if status.search != "native":
            with contextlib.suppress(Exception):
                self.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Warning,
                        message=f"Recitation: the Python search runs: {status.reason}",
                    )
                )

    # -- errors --------------------------------------------------------------------------

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a request go to the client's log, not to a popup; a failed
        request already carries its error in the response."""
        log.error("%s", error)
        if source is FeatureRequestError:
            return
        try:
            self.window_log_message(
                types.LogMessageParams(type=types.MessageType.Error, message=f"{error}")
            )
        except Exception:
            log.exception("reporting an error")

    # -- capabilities --------------------------------------------------------------------

    def client_supports(self, field: str) -> bool:
        return bool(get_capability(self.client_capabilities, field, False))

    # -- settings and status -------------------------------------------------------------

    def settings_for(self, uri: str | None) -> Settings:
        return self.scopes.for_uri(uri).settings

    def active_scopes(self) -> list[Scope]:
        """Folders, plus the global scope when there are no folders or a document is
        open outside them."""
        scopes = list(self.scopes.folders.values())
        if not scopes or any(
            self.scopes.for_uri(d.uri) is self.scopes.global_scope for d in self.documents
        ):
            scopes.append(self.scopes.global_scope)
        return scopes

    def settings_known(self) -> asyncio.Event:
        """Set once the first `workspace/configuration` answer has been applied."""
        if self._settings_known is None:
            self._settings_known = asyncio.Event()
        return self._settings_known

    def init_layers(self, scope: Scope) -> list[Any]:
        """initializationOptions for a scope: the shared settings, then the folder's own
        (`{"folders": [{"uri": ..., "settings": {...}}]}`) when the client sent them."""
        layers = [self.init_options]
        folders = self.init_options.get("folders") if isinstance(self.init_options, dict) else None
        if scope.uri and isinstance(folders, list):
            for entry in folders:
                if (
                    isinstance(entry, dict)
                    and isinstance(entry.get("uri"), str)
                    and entry["uri"].rstrip("/") == scope.uri.rstrip("/")
                    and isinstance(entry.get("settings"), dict)
                ):
                    layers.append(entry["settings"])
        return layers

    def apply_initial_settings(self) -> None:
        """Until the client answers `workspace/configuration`, use initializationOptions."""
        for scope in self.scopes.all():
            scope.settings, _ = layered_settings(*self.init_layers(scope))

    async def refresh_settings(self) -> None:
        """Pull `recitation` settings for every scope and apply them."""
        if self._refreshing is None:
            self._refreshing = asyncio.Lock()
        try:
            async with self._refreshing:
                await self._refresh_settings()
        finally:
            self.settings_known().set()

    async def _refresh_settings(self) -> None:
        scopes = self.active_scopes()
        if self.scopes.global_scope in scopes:
            self.global_pulled = True
        pulled: list[Any] = [None] * len(scopes)
        if self.client_supports("workspace.configuration"):
            items = [types.ConfigurationItem(scope_uri=s.uri, section=SECTION) for s in scopes]
            try:
                result = await asyncio.wait_for(
                    self.workspace_configuration_async(types.ConfigurationParams(items=items)),
                    CONFIGURATION_TIMEOUT,
                )
                result = plain(result)
                if isinstance(result, list) and len(result) == len(scopes):
                    pulled = result
            except Exception as exc:
                log.warning("workspace/configuration failed: %s", exc)
        for scope, raw in zip(scopes, pulled, strict=True):
            settings, problems = layered_settings(
                *self.init_layers(scope), self.pushed_settings, raw
            )
            self.apply_settings(scope, settings, problems)
        in_use = {s.index for s in self.scopes.all() if s.index is not None and s.settings.enable}
        self.indexes.retain(in_use)

    def apply_settings(self, scope: Scope, settings: Settings, problems: list[str]) -> None:
        scope.settings = settings
        if problems and tuple(problems) != scope.problems_shown:
            where = f" ({scope.name})" if scope.uri else ""
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message=f"Recitation settings{where}: "
                    + "; ".join(problems)
                    + ". Using the defaults for these.",
                )
            )
        scope.problems_shown = tuple(problems)
        self.folder_indexes.consider(scope)
        self.file_watch.consider(scope)
        if settings.enable:
            self.use_index(scope)
        else:
            scope.index = None
            self.send_status(scope)
        for doc in self.documents:
            if self.scopes.for_uri(doc.uri) is scope:
                self.publish(doc.uri)

    def use_index(self, scope: Scope, keep_matches: bool = False) -> None:
        """Open the index the folder's settings name: `indexPath`, else the folder's own
        index when it has one (`workspace_index.py`), else the default index."""
        index_path = scope.settings.index_path
        own = None if index_path else self.folder_indexes.index_for(scope)
        handle, created = handle_for_settings(
            self.indexes,
            str(own) if own is not None else index_path,
            scope.settings.remote_index,
            scope.uri,
        )
        if scope.index is not None and scope.index is not handle and not keep_matches:
            # another index: what the old one found says nothing about the new corpus
            for doc in self.documents:
                if self.scopes.for_uri(doc.uri) is scope:
                    self.matches.clear(doc.uri)
        scope.index = handle
        if created:
            loop = asyncio.get_running_loop()
            handle.on_change = lambda h: loop.call_soon_threadsafe(self._index_changed, h)
            asyncio.ensure_future(self._open_index(handle))
        elif handle.state != LOADING:
            self.send_status(scope)

    async def wait_index(self, scope: Scope):
        """The scope's index handle once it has opened (or failed to): the one its settings
        name, opened now if nothing asked for it yet."""
        if scope.index is None:
            self.use_index(scope)
        return await scope.index.wait()

    async def _open_index(self, handle) -> None:
        handle.open()  # starts at once; the progress report is only the client's view of it
        token = None
        if self.client_supports("window.work_done_progress"):
            token = f"recitation-index-{uuid.uuid4().hex[:8]}"
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="Recitation: opening index", message=str(handle.path)
                    ),
                )
            except Exception as exc:
                log.info("no progress reporting: %s", exc)
                token = None
        try:
            await handle.wait()
        finally:
            if token is not None:
                self.work_done_progress.end(
                    token, types.WorkDoneProgressEnd(message=handle.message or handle.state)
                )
        self._index_changed(handle)

    def _index_changed(self, handle) -> None:
        """A new generation was published (or the index broke): say so, and show the
        warnings as the index's state allows."""
        for scope in self.active_scopes():
            if scope.index is handle:
                self.send_status(scope)
                uris = [d.uri for d in self.documents if self.scopes.for_uri(d.uri) is scope]
                for uri in uris:
                    self.publish(uri)
                if handle.ready:  # what arrived while there was no index is checked now
                    self.checker.resume(uris)

    def send_status(self, scope: Scope) -> None:
        if not scope.settings.enable:
            payload = status_payload("disabled", "Recitation is off here", scope.uri, None)
        elif scope.index is None or scope.index.state == LOADING:
            return
        else:
            handle = scope.index
            summary = handle.summary if handle.state == READY else None
            state, message = handle.state, handle.message
            own = self.folder_indexes.status(scope, handle)
            if own is not None and own["inUse"] and state == READY:
                message = f"Workspace index: {own['covers']}"
            unchecked = [
                (uri, why)
                for uri, why in self.not_checked.items()
                if self.scopes.for_uri(uri) is scope
            ]
            if unchecked:
                uri, (reason, partly) = unchecked[0]
                note = f"{document_name(uri)} was not checked: {reason}"
                if len(unchecked) > 1:
                    note += f" (and {len(unchecked) - 1} more)"
                if state == READY and not all(partly for _, (_, partly) in unchecked):
                    state, message = ERROR, f"error: {note}"
                else:
                    message = f"{message}; {note}" if message else note
            watch = self.file_watch.status(scope)
            payload = status_payload(state, message, scope.uri, summary, own, watch)
        self.protocol.notify(STATUS, payload)

    async def workspace_index_published(self, scope: Scope, first: bool) -> None:
        """A build or an update of the folder's own index was published: the folder uses
        it at once (no restart), and what was found on the index before, and what was
        entered while it was built, is checked on it, those matches replaced."""
        if self.scopes.folders.get((scope.uri or "").rstrip("/")) is not scope:
            return  # the folder left meanwhile
        uris = [d.uri for d in self.documents if self.scopes.for_uri(d.uri) is scope]
        for uri in uris:
            for m in self.matches.get(uri):
                self.checker.defer(uri, PendingCheck(m.start, m.end, replace=True))
        if not scope.settings.enable:
            return
        handle, own = scope.index, self.folder_indexes.index_for(scope)
        if handle is not None and own is not None and str(own) in str(handle.path):
            await handle.follow_now()  # an update: its new generation
        else:
            self.use_index(scope, keep_matches=True)
            self.indexes.retain(
                {s.index for s in self.scopes.all() if s.index is not None and s.settings.enable}
            )
            handle = scope.index
        self.send_status(scope)
        if handle is not None and handle.ready:
            self.checker.resume(uris)

    def mark_not_checked(self, uri: str, scope: Scope, failure: LookupFailed) -> None:
        """A lookup failed: the text was not checked. Said in the log and the client's log
        (once per reason) and in the folder's status until it is checked."""
        partly = failure.found is not None
        if self.not_checked.get(uri) == (failure.reason, partly):
            return
        self.not_checked[uri] = (failure.reason, partly)
        what = f"{document_name(uri)} was not checked: {failure.reason}"
        log.warning("%s (%s)", what, uri)
        with contextlib.suppress(Exception):
            self.window_log_message(
                types.LogMessageParams(
                    type=types.MessageType.Warning, message=f"Recitation: {what}"
                )
            )
        self.send_status(scope)

    def mark_checked(self, uri: str, scope: Scope, whole: bool) -> None:
        """A lookup succeeded: the document is checked once nothing of it waits."""
        if whole:
            self.checker.forget_deferred(uri)
        if uri in self.not_checked and not self.checker.deferred(uri):
            del self.not_checked[uri]
            self.send_status(scope)

    # -- diagnostics ---------------------------------------------------------------------

    def verdict(self, scope: Scope, doc: TextDocument, m: StoredMatch) -> Verdict:
        """What the team's decisions make of a match where it now sits."""
        first = doc.position_at(m.start).line
        last = doc.position_at(max(m.start, m.end - 1)).line
        return judge(
            m.match,
            m.identity,
            scope.decisions.decisions,
            scope.settings.severity.for_kind,
            DocumentLines(doc),
            first,
            last,
        )

    def index_usable(self, scope: Scope) -> bool:
        return (
            scope.settings.enable
            and scope.index is not None
            and scope.index.state not in (NO_INDEX, ERROR)
        )

    def judged_matches(
        self, uri: str, start: int = 0, end: int | None = None
    ) -> list[tuple[StoredMatch, Verdict]]:
        """The document's matches that are shown, with their verdicts; only those touching
        `[start, end]` when given (hover, code actions judge only what is under the cursor)."""
        doc = self.documents.get(uri)
        scope = self.scopes.for_uri(uri)
        if doc is None or not self.index_usable(scope):
            return []
        out = []
        for m in self.matches.get(uri):
            if m.length < scope.settings.min_tokens or m.end < start:
                continue
            if end is not None and m.start > end:
                continue
            verdict = self.verdict(scope, doc, m)
            if verdict.action != "off":
                out.append((m, verdict))
        return out

    def publish(self, uri: str) -> dict[str, Verdict]:
        """The document's diagnostics sent; returns the verdict of each match shown, by id."""
        doc = self.documents.get(uri)
        if doc is None:
            return {}
        scope = self.scopes.for_uri(uri)
        first_line = scope.settings.underline == "firstLine"
        judged = self.judged_matches(uri)
        diagnostics = [to_diagnostic(doc, m, verdict, first_line) for m, verdict in judged]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version)
        )
        return {m.id: verdict for m, verdict in judged}

    def publish_scope(self, scope: Scope) -> None:
        for doc in self.documents:
            if self.scopes.for_uri(doc.uri) is scope:
                self.publish(doc.uri)

    # -- checking ------------------------------------------------------------------------

    async def run_check(self, uri: str, check: PendingCheck) -> int:
        """Look up one span of a document; store, publish and announce what is new.
        Returns how many matches were stored."""
        await self.settings_known().wait()
        doc = self.documents.get(uri)
        scope = self.scopes.for_uri(uri)
        settings = scope.settings
        if doc is None or not settings.enable:
            return 0
        handle = await self.wait_index(scope)
        if not handle.ready:
            # checked once an index is ready (the checker keeps the span on its text)
            self.checker.defer(uri, check)
            return 0
        if check.whole:
            start, end = 0, len(doc.text)
        else:
            start, end = check.start, min(check.end, len(doc.text))
        if end <= start:
            return 0
        text = doc.text
        suggestion = text[start:end]
        context_at = context_start(text, start, settings.context_tokens)
        context = text[context_at:start]
        seq = doc.seq
        if self.folder_indexes.pending(scope):
            # the folder's own index is coming (offered, built, updated): checked again on it
            self.checker.defer(uri, PendingCheck(start, end, whole=check.whole, replace=True))
        t0 = time.perf_counter()
        whole = check.whole
        try:
            language = self.view_language(uri, doc.language_id, text)
            # (the parts' kinds and sources, which only the hover and the references log
            # show, made after the diagnostic is published: `settle` below)
            found = await handle.match(
                suggestion, context, settings.min_tokens, language, defer_parts=True
            )
            failure = None
        except LookupFailed as exc:  # never "nothing found": said, and kept to check again
            failure, found, whole = exc, exc.found or [], False
        new: list[Announcement] = []
        t1 = t2 = time.perf_counter()
        try:
            generation = getattr(handle, "generation", None)
            if self.documents.get(uri) is not doc:
                return 0  # closed (or reopened) meanwhile
            if failure is not None:
                self.checker.defer(uri, check)
                self.mark_not_checked(uri, scope, failure)
                if failure.found is None:
                    return 0
            else:
                self.mark_checked(uri, scope, check.whole)
            stored, new = self.accept(
                doc,
                scope,
                found,
                text,
                context_at,
                start,
                end,
                seq,
                whole,
                generation,
                check.replace,
                outside=check.disk or not doc.opened,
            )
            t2 = time.perf_counter()  # (the diagnostics written)
        finally:
            self.announce(handle, uri, found, new)
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "checked %s: %d words, %d matches; queued %.2f ms, lookup %.2f ms, "
                "published %.2f ms, announced %.2f ms",
                uri,
                len(suggestion.split()),
                stored,
                (t0 - check.created) * 1000,
                (t1 - t0) * 1000,
                (t2 - t1) * 1000,
                (time.perf_counter() - t2) * 1000,
            )
        return stored

    def view_language(self, uri: str, language_id: str, text: str) -> str:
        """The language renamed copies are looked for in: the editor's when the engine
        parses it, else read from the document's text (a shebang, a parse), said once a
        document and language in the client's log."""
        picked = pick_language(language_id, text)
        if picked is None:
            return ""
        if picked.how != "named" and self.read_as.get(uri) != picked.language:
            self.read_as[uri] = picked.language
            how = "its shebang" if picked.how == "shebang" else "a parse of its text"
            what = (
                f"{document_name(uri)} is read as {picked.language} ({how}; the editor "
                f"calls it {printable(language_id, 40) or 'nothing'})"
            )
            log.info("%s (%s)", what, uri)
            with contextlib.suppress(Exception):
                self.window_log_message(
                    types.LogMessageParams(
                        type=types.MessageType.Info, message=f"Recitation: {what}"
                    )
                )
        return picked.language

    def accept(
        self,
        doc: TextDocument,
        scope: Scope,
        found: list[Match],
        text_then: str,
        query_at: int,
        start: int,
        end: int,
        seq: int,
        whole: bool,
        generation: str | None = None,
        replace: bool = False,
        outside: bool = False,
    ) -> tuple[int, list[Announcement]]:
        """Store matches computed on `text_then`, the text at edit `seq` (the query began
        at its offset `query_at`, the suggestion was `[start, end)`), re-based onto the
        current text; those whose words have changed since are dropped. With `replace`
        (a check again on another index), they replace the matches inside the span;
        `outside`: the text was written to the file outside the editor. Returns how many
        were stored, and the new ones to announce to the references log (`announce`)."""
        fresh: list[StoredMatch] = []
        for match in found:
            # the engine's offsets in the query, clipped to the suggestion
            a = max(start, query_at + match.char_start)
            b = min(end, query_at + match.char_end)
            if b <= a:
                continue
            words = tuple(words_of(text_then[a:b]))
            rebased = doc.rebase(a, b, seq)
            if rebased is None:
                continue
            a, b, touched = rebased
            if touched and tuple(words_of(doc.text[a:b])) != words:
                continue  # the quoted words changed under an edit since the lookup
            fresh.append(StoredMatch.create(match, a, b, words, generation, outside))
        changed = whole
        if whole:
            known = {(m.start, m.end) for m in self.matches.get(doc.uri)}
            self.matches.replace(doc.uri, fresh)
            new = [m for m in fresh if (m.start, m.end) not in known]
        elif replace and (span := doc.rebase(start, end, seq)) is not None:
            new, changed = self.matches.replace_span(doc.uri, span[0], span[1], fresh)
        else:
            new = [m for m in fresh if self.matches.add(doc.uri, m)]
        shown = self.publish(doc.uri) if new or changed else {}
        announce: list[Announcement] = []
        if self.index_usable(scope):
            for m in new:
                verdict = shown.get(m.id) or self.verdict(scope, doc, m)  # (judged once)
                if verdict.action == "off" or m.length < scope.settings.min_tokens:
                    continue
                rng = self.protocol._converter.unstructure(doc.range_of(m.start, m.end))
                announce.append(Announcement(doc.uri, rng, m, doc.text[m.start : m.end]))
        return len(fresh), announce

    def announce(self, handle, uri: str, found: list[Match], new: list[Announcement]) -> None:
        """After a lookup's diagnostics (on document `uri`), its new quotes sent to the
        references log (`recitation/match`): at once, or, when the lookup left parts for
        later, once they are made (`_settle_queued`). Closing the document meanwhile loses
        neither."""
        if not isinstance(found, Found):
            self._send_matches(new)
            return
        # (the matches published without their parts: a hover may make them before `settle`)
        unsaid = [m for m in found if not m.parts_made]
        self._to_settle.append((handle, uri, found, new, unsaid))
        if self._settler is None or self._settler.done():
            self._settler = asyncio.ensure_future(self._settle_queued())

    async def _settle_queued(self) -> None:
        """The parts lookups left for later made in turn, each lookup's once the editor's
        checks have been quiet for QUIET_SECONDS (suggestions accepted one after another
        are looked up first; at most QUIET_AT_MOST later), on its index's worker (a lookup
        asked meanwhile first); then the diagnostics published again where a quote's parts
        were found only now (its message says them), and its quotes announced. At the
        session's end, what is still queued lets its generation go (the one being made:
        `IndexHandle.settle`)."""
        try:
            while self._to_settle:
                await self.checker.quiet(QUIET_SECONDS, QUIET_AT_MOST)
                handle, uri, found, new, unsaid = self._to_settle.popleft()
                try:
                    await handle.settle(found)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("making a lookup's parts")
                said = {id(m) for m in unsaid if m.parts_made and m.parts}
                if said and any(id(s.match) in said for s in self.matches.get(uri)):
                    self.publish(uri)
                self._send_matches(new)
        except asyncio.CancelledError:
            for _, _, found, _, _ in self._to_settle:
                found.lease.release()
            self._to_settle.clear()
            raise

    def _send_matches(self, new: list[Announcement]) -> None:
        for a in new:
            try:
                match = a.stored.match.to_dict()
            except Exception as exc:  # (the index broke meanwhile: its status says so)
                log.warning("a quote's parts could not be read: %s", exc)
                match = a.stored.match.to_dict(parts_listed=False)
            self.protocol.notify(
                MATCH,
                match_payload(a.uri, a.range, match, a.stored.id, a.text, outside=a.stored.outside),
            )

    # -- documents -----------------------------------------------------------------------

    def open_document(self, item: types.TextDocumentItem) -> TextDocument:
        """A document the editor opens. A file with warnings of code written outside the
        editor is the same document, opened: its warnings (and checks under way) stay with
        it, moved to the editor's text where it differs from what was read on disk."""
        disk = self.file_watch.disk_document(item.uri)
        if disk is None or disk.opened:
            return self.documents.open(item)
        old_uri = disk.uri
        self.documents.adopt(disk, item)
        if old_uri != item.uri:  # (the same file spelled another way)
            self.matches.move(old_uri, item.uri)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=old_uri, diagnostics=[])
            )
        if disk.text != item.text:
            edit = disk.apply(types.TextDocumentContentChangeWholeDocument(text=item.text))
            self.matches.on_edit(disk, edit)
            self.checker.on_edit(disk, edit)
        self.publish(item.uri)
        return disk

    def close_document(self, uri: str) -> None:
        """The editor closed a document. One with warnings of code written outside the
        editor, whose file on disk holds its text, stays as a file not open (its warnings
        too); any other goes with its warnings."""
        self.checker.cancel(uri)
        doc = self.documents.get(uri)
        if doc is not None and doc.opened and self.file_watch.keeps(doc):
            doc.opened, doc.version = False, None
            self.publish(uri)
            return
        self.matches.clear(uri)
        self.read_as.pop(uri, None)
        if self.not_checked.pop(uri, None) is not None:
            self.send_status(self.scopes.for_uri(uri))
        if self.documents.close(uri) is not None:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )

    # -- commands ------------------------------------------------------------------------

    def dismiss(self, uri: str, stored: StoredMatch) -> dict:
        """Record the quote as dismissed in the folder's decisions file and say so."""
        scope = self.scopes.for_uri(uri)
        best = stored.match.best_source
        source = " ".join(p for p in (best.repository, best.path) if p) if best else ""
        first_line = next((line for line in stored.match.text.splitlines() if line.strip()), "")
        try:
            where = scope.decisions.dismiss(
                stored.identity, first_line.strip(), source, best.license if best else ""
            )
        except (DecisionsError, OSError) as exc:
            self.show(types.MessageType.Error, f"Recitation could not dismiss the quote: {exc}")
            return {"dismissed": 0, "error": str(exc)}
        self.publish_scope(scope)
        self.show(
            types.MessageType.Info,
            f"Recitation: dismissed the {stored.length}-word quote"
            + (f" of {source}" if source else "")
            + f", recorded {where}. Undo it from the decisions list.",
        )
        return {
            "dismissed": 1,
            "quoteId": stored.identity.id,
            "file": scope.decisions.to_dict()["file"],
        }

    def show(self, kind: types.MessageType, message: str) -> None:
        with contextlib.suppress(Exception):
            self.window_show_message(types.ShowMessageParams(type=kind, message=message[:2000]))

    # -- watching decisions files and missing indexes ------------------------------------

    def start_watching(self) -> None:
        if self._watching is None:
            self._watching = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                self.refresh_decisions()
                for scope in self.active_scopes():
                    handle = scope.index
                    if scope.settings.enable and handle is not None and not handle.ready:
                        await handle.poll()
            except Exception:
                log.exception("watching decisions and indexes")

    def refresh_decisions(self, force: bool = False) -> None:
        for scope in self.scopes.all():
            if scope.decisions.refresh(force):
                if scope.decisions.problem:
                    self.show(
                        types.MessageType.Warning,
                        f"Recitation: {scope.decisions.problem}. "
                        "The decisions read before stay in force until it is fixed.",
                    )
                self.publish_scope(scope)

    def shutdown_indexes(self) -> None:
        self.file_watch.close()
        self.folder_indexes.close()
        self.indexes.close_all()
