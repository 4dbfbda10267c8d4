"""The LSP handlers: small functions that call into `RecitationServer`."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from index_tools import DECISIONS_FILE, DecisionsError, QuoteIdentity, judge, printable

from .code_actions import code_actions
from .compare import (
    CMD_COMPARE,
    SourceParamsError,
    SourceUnavailable,
    compare_link,
    source_result,
)
from .detection import PendingCheck, is_insertion
from .diagnostics import is_web_link
from .file_watch import code_globs
from .folder_check import FolderCheckError
from .hover import hover_markdown, hover_plaintext
from .indexes import LookupFailed, unusable_file_uri, uri_to_path
from .protocol import (
    CHECK,
    CMD_ALLOW_SOURCE,
    CMD_BUILD_WORKSPACE_INDEX,
    CMD_CANCEL_WORKSPACE_INDEX,
    CMD_CHECK_FOLDER,
    CMD_DECLINE_WORKSPACE_INDEX,
    CMD_DISMISS,
    CMD_OPEN_SOURCE,
    CMD_RESCAN,
    DECISIONS,
    SOURCE_REQUEST,
    plain,
)
from .server import RecitationServer
from .words import count_words
from .workspace_index import CLIENT_FEATURE, WATCH_GLOBS

log = logging.getLogger(__name__)


class RequestFailed(JsonRpcException):
    CODE = -32803  # LSP RequestFailed


def no_path(uri: Any) -> None:
    """A request about a folder's decisions file names a `file:` URI no file can have."""
    if unusable_file_uri(uri):
        raise JsonRpcInvalidParams(
            f"{printable(uri, 100)} ({len(uri)} characters) is no usable file path"
        )


async def register_dynamically(
    ls: RecitationServer, capability: str, registration: types.Registration
) -> bool:
    """Register a capability when the client supports registering it; a refusal is logged.
    Returns whether it was registered."""
    if not ls.client_supports(capability):
        return False
    try:
        await ls.client_register_capability_async(
            types.RegistrationParams(registrations=[registration])
        )
    except Exception as exc:
        log.info("registration of %s refused: %s", registration.method, exc)
        return False
    return True


async def watch_files(ls: RecitationServer, registration_id: str, globs: Iterable[str]) -> bool:
    """Ask the client to watch the files matching `globs` (didChangeWatchedFiles) when it
    supports registering that. Returns whether it watches them."""
    return await register_dynamically(
        ls,
        "workspace.did_change_watched_files.dynamic_registration",
        types.Registration(
            id=registration_id,
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=g) for g in globs]
            ),
        ),
    )


def create_server() -> RecitationServer:
    server = RecitationServer()
    register(server)
    return server


def register(server: RecitationServer) -> None:  # noqa: C901 - a list of small handlers
    # -- lifecycle -----------------------------------------------------------------------

    @server.feature(types.INITIALIZE)
    def initialize(ls: RecitationServer, params: types.InitializeParams) -> None:
        ls.init_options = plain(params.initialization_options)
        commands = (
            ls.init_options.get("clientCommands") if isinstance(ls.init_options, dict) else None
        )
        # commands the client runs itself, offered in hovers and quick fixes
        ls.client_commands = (
            {c for c in commands if c == CMD_COMPARE} if isinstance(commands, list) else set()
        )
        # what the client shows itself: the offer and progress of a folder's own index
        features = (
            ls.init_options.get("clientFeatures") if isinstance(ls.init_options, dict) else None
        )
        ls.folder_indexes.client_ui = isinstance(features, list) and CLIENT_FEATURE in features
        encoding = ls.workspace.position_encoding or "utf-16"
        ls.documents.encoding = getattr(encoding, "value", str(encoding))
        folders = [(f.uri, f.name) for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [(params.root_uri, params.root_uri.rstrip("/").rsplit("/", 1)[-1])]
        ls.scopes.set_folders(folders)
        ls.apply_initial_settings()

    @server.feature(types.INITIALIZED)
    async def initialized(ls: RecitationServer, params: types.InitializedParams) -> None:
        ls.report_search()
        ls.rehearse_first_warning()
        await register_dynamically(
            ls,
            "workspace.did_change_configuration.dynamic_registration",
            types.Registration(
                id="recitation-configuration",
                method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                register_options=types.DidChangeConfigurationRegistrationOptions(
                    section="recitation"
                ),
            ),
        )
        await watch_files(ls, "recitation-decisions", [f"**/{DECISIONS_FILE}"])
        # the manifests and lock files that keep each folder's own index current (without
        # this watcher, the server polls them)
        ls.folder_indexes.client_watches = await watch_files(
            ls, "recitation-manifests", WATCH_GLOBS
        )
        # the folders' code files, so that code written outside the editor is checked
        # (without this watcher, the server polls them)
        ls.file_watch.client_watches = await watch_files(ls, "recitation-files", code_globs())
        await ls.refresh_settings()
        ls.refresh_decisions()
        ls.start_watching()

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(
        ls: RecitationServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        ls.refresh_decisions()  # polling also sees it; this is sooner
        paths = [uri_to_path(c.uri) for c in params.changes]
        ls.folder_indexes.on_files_changed([p for p in paths if p is not None])
        ls.file_watch.on_client_events(params.changes)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def work_done_progress_cancel(
        ls: RecitationServer, params: types.WorkDoneProgressCancelParams
    ) -> None:
        ls.folder_indexes.cancel_token(params.token)

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: RecitationServer, params: Any) -> None:
        ls.shutdown_indexes()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(
        ls: RecitationServer, params: types.DidChangeConfigurationParams
    ) -> None:
        if not ls.client_supports("workspace.configuration"):
            pushed = plain(params.settings)
            ls.pushed_settings = pushed if isinstance(pushed, dict) else None
        await ls.refresh_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(
        ls: RecitationServer, params: types.DidChangeWorkspaceFoldersParams
    ) -> None:
        for f in params.event.removed:
            ls.scopes.remove(f.uri)
            ls.folder_indexes.forget(f.uri)
            ls.file_watch.forget(f.uri)
        for f in params.event.added:
            ls.scopes.add(f.uri, f.name)
        await ls.refresh_settings()

    # -- documents -----------------------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RecitationServer, params: types.DidOpenTextDocumentParams) -> None:
        doc = ls.open_document(params.text_document)
        scope = ls.scopes.for_uri(doc.uri)
        if scope is ls.scopes.global_scope and ls.scopes.folders and not ls.global_pulled:
            # the first document outside the folders: read the settings that apply to it
            asyncio.ensure_future(ls.refresh_settings())
        if scope.settings.enable and scope.settings.scan_on_open and doc.text.strip():
            ls.checker.add(doc.uri, PendingCheck(0, len(doc.text), whole=True))

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RecitationServer, params: types.DidChangeTextDocumentParams) -> None:
        doc = ls.documents.get_open(params.text_document.uri)
        if doc is None:
            return
        settings = ls.settings_for(doc.uri)
        moved = False
        for change in params.content_changes:
            edit = doc.apply(change)
            moved = ls.matches.on_edit(doc, edit) or moved
            ls.checker.on_edit(doc, edit)
            if settings.enable and is_insertion(edit, settings.min_insert_words):
                ls.checker.add(doc.uri, PendingCheck(edit.start, edit.new_end))
        doc.version = params.text_document.version
        if moved:
            ls.publish(doc.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RecitationServer, params: types.DidSaveTextDocumentParams) -> None:
        if params.text_document.uri.endswith("/" + DECISIONS_FILE):
            ls.refresh_decisions()
        doc = ls.documents.get_open(params.text_document.uri)
        settings = ls.settings_for(params.text_document.uri)
        if doc is not None and settings.enable and settings.scan_on_open and doc.text.strip():
            ls.checker.add(doc.uri, PendingCheck(0, len(doc.text), whole=True))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RecitationServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.close_document(params.text_document.uri)

    # -- hover and code actions ----------------------------------------------------------

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: RecitationServer, params: types.HoverParams) -> types.Hover | None:
        doc = ls.documents.get_open(params.text_document.uri)
        if doc is None:
            return None
        offset = doc.offset_at(params.position)
        found = [(m, v) for m, v in ls.judged_matches(doc.uri, offset, offset) if offset < m.end]
        if not found:
            return None
        formats = get_capability(ls.client_capabilities, "text_document.hover.content_format", None)
        if formats and types.MarkupKind.Markdown not in formats:
            contents = types.MarkupContent(
                kind=types.MarkupKind.PlainText, value=hover_plaintext(found)
            )
        else:
            link = (
                (lambda m: compare_link(doc.uri, m)) if CMD_COMPARE in ls.client_commands else None
            )
            contents = types.MarkupContent(
                kind=types.MarkupKind.Markdown, value=hover_markdown(found, link)
            )
        return types.Hover(
            contents=contents,
            range=doc.range_of(found[0][0].start, found[0][0].end),
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(
        ls: RecitationServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        doc = ls.documents.get_open(params.text_document.uri)
        if doc is None:
            return None
        start = doc.offset_at(params.range.start)
        end = doc.offset_at(params.range.end)
        found = ls.judged_matches(doc.uri, start, end)
        style = ls.settings_for(doc.uri).attribution_style
        compare = CMD_COMPARE in ls.client_commands
        diagnostics = list(params.context.diagnostics or [])
        return code_actions(doc, found, diagnostics, style, compare) or None

    # -- commands ------------------------------------------------------------------------

    @server.command(CMD_DISMISS)
    def dismiss(ls: RecitationServer, *args: Any) -> dict:
        args = tuple(plain(list(args)))
        if len(args) < 2 or not isinstance(args[0], str):
            raise JsonRpcInvalidParams("recitation.dismiss expects [uri, match id or range]")
        uri, target = args[0], args[1]
        stored = None
        if isinstance(target, str):
            stored = ls.matches.find(uri, target)
        elif isinstance(target, dict) and (doc := ls.documents.get(uri)) is not None:
            try:
                rng = ls.protocol._converter.structure(target, types.Range)
            except Exception as exc:
                raise JsonRpcInvalidParams(f"not a range: {target!r}") from exc
            a, b = doc.offset_at(rng.start), doc.offset_at(rng.end)
            stored = next(iter(ls.matches.overlapping(uri, a, b)), None)
        if stored is None:
            return {"dismissed": 0}
        return ls.dismiss(uri, stored)

    @server.command(CMD_ALLOW_SOURCE)
    def allow_source(ls: RecitationServer, *args: Any) -> dict:
        args = tuple(plain(list(args)))
        if len(args) != 2 or not all(isinstance(a, str) and a.strip() for a in args):
            raise JsonRpcInvalidParams("recitation.allowSource expects [uri, pattern]")
        uri, pattern = args
        no_path(uri)
        scope = ls.scopes.for_uri(uri)
        try:
            scope.decisions.allow(pattern.strip())
        except (DecisionsError, OSError) as exc:
            ls.show(types.MessageType.Error, f"Recitation could not allow {pattern}: {exc}")
            return {"allowed": False, "error": str(exc)}
        ls.publish_scope(scope)
        ls.show(
            types.MessageType.Info,
            f"Recitation: quotes of {pattern} are no longer flagged here "
            f"(recorded in {DECISIONS_FILE}).",
        )
        return {"allowed": True, "file": scope.decisions.to_dict()["file"]}

    @server.command(CMD_OPEN_SOURCE)
    async def open_source(ls: RecitationServer, *args: Any) -> dict:
        args = tuple(plain(list(args)))
        if len(args) != 1 or not is_web_link(args[0]):
            raise JsonRpcInvalidParams("recitation.openSource expects [an http(s) url]")
        result = await ls.window_show_document_async(
            types.ShowDocumentParams(uri=args[0], external=True)
        )
        return {"success": bool(getattr(result, "success", False))}

    @server.command(CMD_RESCAN)
    async def rescan(ls: RecitationServer, *args: Any) -> dict:
        args = tuple(plain(list(args)))
        if len(args) != 1 or not isinstance(args[0], str):
            raise JsonRpcInvalidParams("recitation.rescan expects [uri]")
        doc = ls.documents.get_open(args[0])
        if doc is None:
            raise JsonRpcInvalidParams(f"document is not open: {args[0]}")
        count = await ls.run_check(doc.uri, PendingCheck(0, len(doc.text), whole=True))
        return {"matches": count}

    # -- a folder's own index --------------------------------------------------------------

    def workspace_folder(ls: RecitationServer, command: str, args: tuple):
        """The folder a command names ([folder or document URI]; none: the first)."""
        if len(args) > 1 or (args and not isinstance(args[0], str)):
            raise JsonRpcInvalidParams(f"{command} expects [folder uri] or nothing")
        scope = ls.scopes.for_uri(args[0]) if args else ls.scopes.default()
        if scope.uri is None:
            raise JsonRpcInvalidParams(f"{command}: no workspace folder here")
        return scope

    @server.command(CMD_CHECK_FOLDER)
    async def check_folder(ls: RecitationServer, *args: Any) -> dict:
        """Every code file of a folder checked on every core (folder_check.py); what it
        found is shown as warnings of the files, open or not."""
        scope = workspace_folder(ls, CMD_CHECK_FOLDER, tuple(plain(list(args))))
        try:
            return await ls.folder_checks.check(scope)
        except FolderCheckError as exc:
            ls.show(types.MessageType.Error, f"Recitation: checking {scope.name} failed: {exc}")
            return {"failed": str(exc)}

    @server.command(CMD_BUILD_WORKSPACE_INDEX)
    def build_workspace_index(ls: RecitationServer, *args: Any) -> dict:
        scope = workspace_folder(ls, CMD_BUILD_WORKSPACE_INDEX, tuple(plain(list(args))))
        why = ls.folder_indexes.why_not(scope)
        if why:
            ls.show(types.MessageType.Warning, f"Recitation: {why}")
            return {"started": False, "reason": why}
        f = ls.folder_indexes.folder(scope)
        if f is None:
            return {"started": False, "reason": "no folder"}
        if f.job is not None:  # (asked twice: the one under way is the answer)
            return {"started": False, "running": True, "state": f.state}
        return {"started": ls.folder_indexes.start(f), "state": f.state}

    @server.command(CMD_DECLINE_WORKSPACE_INDEX)
    def decline_workspace_index(ls: RecitationServer, *args: Any) -> dict:
        scope = workspace_folder(ls, CMD_DECLINE_WORKSPACE_INDEX, tuple(plain(list(args))))
        f = ls.folder_indexes.folder(scope)
        if f is not None:
            ls.folder_indexes.decline(f)
        return {"declined": f is not None}

    @server.command(CMD_CANCEL_WORKSPACE_INDEX)
    def cancel_workspace_index(ls: RecitationServer, *args: Any) -> dict:
        scope = workspace_folder(ls, CMD_CANCEL_WORKSPACE_INDEX, tuple(plain(list(args))))
        f = ls.folder_indexes.folders.get(ls.folder_indexes.key(scope.uri or ""))
        return {"cancelled": f is not None and ls.folder_indexes.cancel(f)}

    # -- recitation/check ----------------------------------------------------------------

    @server.feature(CHECK)
    async def check(ls: RecitationServer, params: Any) -> dict:
        params = plain(params)
        if not isinstance(params, dict) or not isinstance(params.get("text"), str):
            raise JsonRpcInvalidParams("recitation/check expects {text: string, ...}")
        context = params.get("context") or ""
        uri = params.get("uri")
        min_tokens = params.get("minTokens")
        if not isinstance(context, str) or (uri is not None and not isinstance(uri, str)):
            raise JsonRpcInvalidParams("context and uri must be strings")
        if min_tokens is not None and (
            isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 1
        ):
            raise JsonRpcInvalidParams("minTokens must be a positive whole number")
        await ls.settings_known().wait()
        scope = ls.scopes.for_uri(uri) if uri else ls.scopes.default()
        handle = await ls.wait_index(scope)
        if not handle.ready:
            raise RequestFailed(f"no index: {handle.message}")
        text = params["text"]
        doc = ls.documents.get(uri) if uri else None
        language = params.get("language") or (doc.language_id if doc else "")
        if not isinstance(language, str):
            raise JsonRpcInvalidParams("language must be a string")
        try:
            matches = await handle.match(
                text, context, min_tokens or scope.settings.min_tokens, language
            )
        except LookupFailed as exc:  # never "nothing found"
            raise RequestFailed(f"not checked: {exc.reason}") from None
        decisions = scope.decisions.decisions
        out = []
        for m in matches:
            verdict = judge(
                m, QuoteIdentity.of_text(m.text), decisions, scope.settings.severity.for_kind
            )
            out.append({**m.to_dict(), "verdict": verdict.to_dict()})
        return {
            "query_words": count_words(context) + count_words(text),
            "suggestion_words": count_words(text),
            "matches": out,
        }

    # -- recitation/source -----------------------------------------------------------------

    @server.feature(SOURCE_REQUEST)
    async def source(ls: RecitationServer, params: Any) -> dict:
        try:
            return await source_result(ls, plain(params))
        except SourceParamsError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        except SourceUnavailable as exc:
            raise RequestFailed(str(exc)) from None

    # -- recitation/decisions --------------------------------------------------------------

    @server.feature(DECISIONS)
    def decisions(ls: RecitationServer, params: Any) -> dict:
        params = plain(params) if params is not None else {}
        if not isinstance(params, dict):
            raise JsonRpcInvalidParams("recitation/decisions expects {uri?, remove?}")
        uri = params.get("uri")
        remove = params.get("remove")
        if uri is not None and not isinstance(uri, str):
            raise JsonRpcInvalidParams("uri must be a string")
        no_path(uri)
        scope = ls.scopes.for_uri(uri) if uri else ls.scopes.default()
        removed = None
        if remove is not None:
            if not isinstance(remove, dict) or not (
                isinstance(remove.get("dismissed"), str) or isinstance(remove.get("allowed"), str)
            ):
                raise JsonRpcInvalidParams("remove must be {dismissed: id} or {allowed: pattern}")
            try:
                if isinstance(remove.get("dismissed"), str):
                    removed = scope.decisions.undismiss(remove["dismissed"])
                else:
                    removed = scope.decisions.disallow(remove["allowed"])
            except (DecisionsError, OSError) as exc:
                raise RequestFailed(f"cannot change the decisions: {exc}") from exc
            ls.publish_scope(scope)
        else:
            scope.decisions.refresh()
        return {
            "folder": scope.uri,
            **scope.decisions.to_dict(),
            **({"removed": removed} if removed is not None else {}),
        }
