"""The first warning's work, rehearsed when the server starts.

A new server's first warning took 30-40 ms more than later ones (bench_first_lookup.py):
not the lookup (the index rehearses its own, `Index.warm`) but what follows it, each done
once a process: the converter's functions that read the editor's didOpen and didChange, the
license database and the SPDX expression parser the verdict reads, and the converter's
functions for a diagnostic and a match notification. `rehearse` makes them all with
made-up messages and a made-up match in a document no client sees; nothing is handled,
sent or kept.
"""

from __future__ import annotations

import json
import time

from lsprotocol import types
from pygls.protocol import JsonRPCNotification, JsonRPCProtocol

from index_tools import Match, Part, Position, Range, Source, judge, pick_language

from .diagnostics import StoredMatch, to_diagnostic
from .documents import DocumentLines, TextDocument
from .protocol import MATCH, match_payload
from .settings import Settings
from .words import context_start, words_of

_TEXT = "def rehearsed(values):\n    return sorted(values)\n"  # the made-up quote
_URL = "https://example.invalid/acme/widgets/blob/0000000/src/widgets.py#L1-L2"


def _made_up_match() -> Match:
    """A match with every field a real one may fill (a range, a part, a renamed name, a
    second source): the converter makes its functions per type of value it meets."""
    source = Source("acme/widgets", "src/widgets.py", "0" * 40, "MIT OR Apache-2.0", _URL, 1, 2)
    other = Source("acme/gadgets", "lib/gadgets.py", "1" * 40, "GPL-2.0-only", _URL, 3, 4, 2, 5)
    words = len(_TEXT.split())
    where = Range(Position(0, 0), Position(1, 25))
    part = Part("boilerplate", 4, 0, 4, 30, False, [other], where, 4, False, [("vals", "values")])
    return Match(
        "recitation", words, 0, words, 0, len(_TEXT), _TEXT, 2, True, [source, other],
        where, words, False, [("items", "values")], parts=[part],
    )  # fmt: skip


def _notifications(uri: str) -> list[dict]:
    """The messages a suggestion arrives in, as the editor sends them."""
    where = {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}
    item = {"uri": uri, "languageId": "python", "version": 1, "text": _TEXT}
    changed = {"textDocument": {"uri": uri, "version": 2}, "contentChanges": []}
    changed["contentChanges"] = [{"range": where, "text": _TEXT}, {"text": _TEXT}]
    return [
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}},
        {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": changed},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didClose",
            "params": {"textDocument": {"uri": uri}},
        },
    ]


def _serialized(protocol, method: str, params) -> str:
    """A notification as `protocol.notify` turns it into JSON, not sent."""
    kind = protocol.get_message_type(method) or JsonRPCNotification
    message = kind(method=method, params=params, jsonrpc=JsonRPCProtocol.VERSION)
    return json.dumps(message, default=protocol._serialize_message)


def rehearse(protocol, settings: Settings | None = None) -> float:
    """Made-up notifications read, and a made-up match judged and made a diagnostic and a
    match notification, both turned into JSON, with `protocol`'s converter (the server's
    own); milliseconds taken."""
    began = time.perf_counter()
    settings = settings or Settings()
    converter = protocol._converter
    doc = TextDocument("file:///recitation-rehearsal.py", _TEXT, 1, "python")
    pick_language(doc.language_id, doc.text)
    words_of(_TEXT)
    context_start(_TEXT, len(_TEXT) // 2, settings.context_tokens)
    for message in _notifications(doc.uri):
        converter.structure(message, protocol.get_message_type(message["method"]))
    stored = StoredMatch.create(_made_up_match(), 0, len(_TEXT), tuple(_TEXT.split()))
    lines = DocumentLines(doc)  # (an attribution is looked for in them)
    verdict = judge(stored.match, stored.identity, None, settings.severity.for_kind, lines, 0, 1)
    diagnostic = to_diagnostic(doc, stored, verdict)
    params = types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=[diagnostic], version=1)
    range_ = converter.unstructure(doc.range_of(stored.start, stored.end))
    payload = match_payload(doc.uri, range_, stored.match.to_dict(), stored.id, _TEXT)
    # (twice: the converter's first plain notification registers a hook, which drops the
    # functions it made before)
    for _ in range(2):
        _serialized(protocol, MATCH, payload)
        _serialized(protocol, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)
    return (time.perf_counter() - began) * 1000
