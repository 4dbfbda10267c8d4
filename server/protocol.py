"""Names and payloads of Recitation's own LSP extensions (see docs/PROTOCOL.md), and the
JSON-RPC protocol class that answers malformed requests with an error instead of silence."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)

SOURCE = "recitation"

STATUS = "recitation/status"  # notification, server -> client
MATCH = "recitation/match"  # notification, server -> client
CHECK = "recitation/check"  # request, client -> server
DECISIONS = "recitation/decisions"  # request, client -> server
SOURCE_REQUEST = "recitation/source"  # request, client -> server

CMD_DISMISS = "recitation.dismiss"
CMD_OPEN_SOURCE = "recitation.openSource"
CMD_RESCAN = "recitation.rescan"
CMD_ALLOW_SOURCE = "recitation.allowSource"
# a folder's own index (workspace_index.py): build or update it now, "not now", stop it
CMD_BUILD_WORKSPACE_INDEX = "recitation.buildWorkspaceIndex"
CMD_DECLINE_WORKSPACE_INDEX = "recitation.declineWorkspaceIndex"
CMD_CANCEL_WORKSPACE_INDEX = "recitation.cancelWorkspaceIndex"
CMD_CHECK_FOLDER = "recitation.checkFolder"
COMMANDS = (
    CMD_DISMISS,
    CMD_OPEN_SOURCE,
    CMD_RESCAN,
    CMD_ALLOW_SOURCE,
    CMD_BUILD_WORKSPACE_INDEX,
    CMD_DECLINE_WORKSPACE_INDEX,
    CMD_CANCEL_WORKSPACE_INDEX,
)

STATES = ("ready", "disabled", "no-index", "error")


def is_notification_method(method: str) -> bool:
    """An LSP method that is a notification (sent without an id, never answered)."""
    message_type = types.METHOD_TO_TYPES.get(method, (None,))[0]
    return message_type is not None and "id" not in attrs.fields_dict(message_type)


def notification_with_id(method: str) -> str:
    return f"{method} is a notification: it is sent without an id, and never answered"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class PlainJson(dict):
    """JSON the server made itself (a match's dict, a payload of plain values), sent as
    it is: the JSON-RPC layer's converter would visit each of its values, which for a quote
    of vendored code (a dozen parts, each with its sources: 30 KB) took longer than writing
    the JSON."""


def _as_it_is(value: PlainJson) -> PlainJson:
    return value


def jsonable(value: Any) -> Any:
    """`value` with paths turned into strings, so that it serializes as JSON."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def plain(value: Any) -> Any:
    """Parsed JSON as plain dicts and lists, whatever container types the JSON-RPC layer
    produced (tuples, named tuples)."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def status_payload(
    state: str,
    message: str,
    scope_uri: str | None,
    index: dict | None,
    workspace_index: dict | None = None,
    watch_files: dict | None = None,
) -> dict[str, Any]:
    """`workspace_index`: the folder's own index, when one applies (workspace_index.py);
    `watch_files`: what watching the folder's files does (file_watch.py), when it is on."""
    return {
        "state": state,
        "message": message,
        "scopeUri": scope_uri,
        "index": jsonable(index) if index is not None else None,
        "workspaceIndex": jsonable(workspace_index) if workspace_index is not None else None,
        "watchFiles": jsonable(watch_files) if watch_files is not None else None,
    }


def match_payload(
    uri: str,
    range_: dict,
    match: dict,
    match_id: str,
    text: str | None = None,
    outside: bool = False,
) -> dict[str, Any]:
    """`text`: the flagged text in the document (the match's own `text` also holds the part
    of the quote that reaches back into the context); `outside`: found in code written to
    the file outside the editor (file_watch.py)."""
    return PlainJson(
        {
            "uri": uri,
            "id": match_id,
            "range": range_,
            "kind": match["kind"],
            "length": match["length"],
            "fileCount": match["file_count"],
            "fileCountExact": match["file_count_exact"],
            "text": match.get("text", "") if text is None else text,
            "sources": match.get("sources", []),
            "parts": [
                {
                    "kind": p.get("kind"),
                    "length": p.get("length"),
                    "fileCount": p.get("file_count"),
                    "fileCountExact": p.get("file_count_exact"),
                    "sources": p.get("sources", []),
                }
                for p in match.get("parts") or []
                if isinstance(p, dict)
            ],
            "outsideEditor": outside,
            "time": now_iso(),
        }
    )


class RecitationProtocol(LanguageServerProtocol):
    """Reads messages as data and answers every request exactly once.

    Only the top-level object of a body is a message: the JSON decoder's object hook (which
    pygls' readers call for every object, innermost first) leaves objects as they are, and
    `handle_message` reads the whole body as one message, so an object shaped like a
    message inside a request's params is just data. A request whose params cannot be read
    gets an InvalidParams error, a notification method sent with an id (a request by
    JSON-RPC's rule) MethodNotFound, a request after `shutdown` InvalidRequest; the server
    carries on with the next message.

    Open documents are tracked by the server itself (`documents.py`, which also keeps the
    edit history that re-bases results), so the generic in-memory copy is not kept.
    """

    def __init__(self, server, converter):
        super().__init__(server, converter)
        converter.register_unstructure_hook(PlainJson, _as_it_is)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams):
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None

    def structure_message(self, data: dict[str, Any]):
        return data  # every object of a body: read as a message only whole (below)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, dict):
            message = self.read_message(message)
            if message is None:
                return
        super().handle_message(message)

    def read_message(self, data: dict[str, Any]) -> Any:
        """A body's top-level object as a message; None when it is not one, after answering
        it with an error if it is a request."""
        method = data.get("method")
        request = "id" in data and isinstance(method, str)
        if data.get("jsonrpc") != "2.0":
            self._refuse(data, request, JsonRpcInvalidRequest("not a JSON-RPC 2.0 message"))
            return None
        if request and is_notification_method(method):
            self._refuse(data, request, JsonRpcMethodNotFound(notification_with_id(method)))
            return None
        if request and self._shutdown and method != types.EXIT:
            self._refuse(data, request, JsonRpcInvalidRequest("the server is shutting down"))
            return None
        try:
            return super().structure_message(data)
        except JsonRpcException:
            error = JsonRpcInvalidParams(f"invalid params for {method!r}")
            self._refuse(data, request, error)
            return None

    def _refuse(self, data: dict[str, Any], request: bool, error: JsonRpcException) -> None:
        if request:
            self._send_response(data["id"], None, error.to_response_error())
        else:
            log.info("message ignored: %s", error)
