"""Names and payloads of Recitation's own LSP extensions (see docs/PROTOCOL.md), and the
JSON-RPC protocol class that answers malformed requests with an error instead of silence."""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
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
COMMANDS = (CMD_DISMISS, CMD_OPEN_SOURCE, CMD_RESCAN, CMD_ALLOW_SOURCE)

STATES = ("ready", "disabled", "no-index", "error")


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


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
    state: str, message: str, scope_uri: str | None, index: dict | None
) -> dict[str, Any]:
    return {
        "state": state,
        "message": message,
        "scopeUri": scope_uri,
        "index": jsonable(index) if index is not None else None,
    }


def match_payload(
    uri: str, range_: dict, match: dict, match_id: str, text: str | None = None
) -> dict[str, Any]:
    """`text`: the flagged text in the document (the match's own `text` also holds the part
    of the quote that reaches back into the context)."""
    return {
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
        "time": now_iso(),
    }


class RecitationProtocol(LanguageServerProtocol):
    """Answers a request whose params cannot be read with an InvalidParams error, so the
    client is not left waiting; the server carries on with the next message.

    Open documents are tracked by the server itself (`documents.py`, which also keeps the
    edit history that re-bases results), so the generic in-memory copy is not kept.
    """

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
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                error = JsonRpcInvalidParams(f"invalid params for {data.get('method')!r}")
                self._send_response(data["id"], None, error.to_response_error())
            raise
